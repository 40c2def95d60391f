// What one pass over a TemplateInstance has gathered so far: the input of `decide`. Each step the
// reconciler acts out adds one field, so a pass is a sequence of observations, each decided
// afresh; nothing here holds a handle to the cluster.
import type { KubeObject } from '../../api/object-meta.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import type { ContentChoice } from '../releases/content-choice.ts';
import type { InstanceEvaluation } from '../evaluation/instance-evaluation.ts';
import type { ObjectId } from '../objects/inventory.ts';

/** What brought the pass from outside the instance, kept until a pass that saw it completes. */
export interface PassTrigger {
  kind: 'source' | 'drift';
  /** e.g. `Secret team-a/db changed`. */
  description: string;
}

/** An object that stands where a rendered one would go, as it was read. */
export interface BlockingObject {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  resourceVersion?: string;
}

/** How applying the rendered objects went (src/reconcile/instance/applier.ts). */
export type ApplyReport =
  | {
      ok: true;
      written: KubeObject[];
      /** The object each rendered one is now, aligned with the rendered objects. */
      live: KubeObject[];
      /** Objects found as rendered, so not written. */
      unchanged: number;
    }
  /**
   * Refused; `retry`: whether trying again without an input change can help. `blockedBy`: an
   * object in the way that the instance may not take over (adoption refused); the pass then
   * depends on it, so its change (the adopt annotation, its deletion) brings the next pass.
   */
  | { ok: false; message: string; retry: boolean; waiting?: false; blockedBy?: BlockingObject }
  /**
   * Waiting on the cluster: a kind this render installs is not served yet, or an earlier wave
   * is not healthy yet. `live` holds what is known of each object so far (aligned with the
   * rendered objects; undefined where nothing exists yet).
   */
  | {
      ok: false;
      message: string;
      retry: true;
      waiting: true;
      written: KubeObject[];
      live: (KubeObject | undefined)[];
      /** Objects the pass reached before it stopped and found as rendered (never the rest). */
      unchanged: number;
    };

/**
 * What the instance owns, found by label and by its record
 * (src/reconcile/instance/resource-sync.ts).
 */
export interface OwnedObjects {
  owned: ObjectId[];
  /**
   * Kinds whose LIST was Forbidden and of which nothing is recorded as applied: the operator
   * lacked the right, so it can have created none; each with the API server's message.
   */
  unlisted: string[];
}

export interface DeleteReport {
  deleted: ObjectId[];
  /** Deletes that were accepted but wait on finalizers, or that failed: kept and retried. */
  remaining: { id: ObjectId; message: string }[];
  /** Every delete was accepted by the API server (pending finalizers included). */
  allAccepted: boolean;
}

export interface Observed {
  /** The instance as the pass read it (its finalizer ensured); undefined when it is gone. */
  instance: TemplateInstance | undefined;
  now: Date;
  trigger?: PassTrigger;
  /** The instance expired and its delete was sent. */
  expired?: boolean;
  content?: ContentChoice;
  evaluation?: InstanceEvaluation;
  applied?: ApplyReport;
  /** Owned objects, listed to prune orphans or, when deleting, to delete everything. */
  owned?: OwnedObjects;
  deleted?: DeleteReport;
}

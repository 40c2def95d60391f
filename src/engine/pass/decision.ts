// The policy of one pass over a TemplateInstance, as one pure function (issue #23): from what the
// pass has observed so far, either the next step to gather or act out, or the conclusion — the
// status to write, the Events, the counts, what happens to the watches and the finalizer, and
// how the pass ends (done, look again after a wait, retry with backoff, or terminal until an
// input changes). The reconciler (src/reconcile/instance/instance-reconciler.ts) only carries steps
// out and adds their outcome to the observation; every choice is made here.
import { InstanceReason } from '../../api/condition.ts';
import type { KubeObject } from '../../api/object-meta.ts';
import type { SyncMode, Template } from '../../api/template.ts';
import type {
  RenderedResourceRef,
  TemplateInstance,
  TemplateInstanceStatus,
} from '../../api/template-instance.ts';
import { FINALIZER_INSTANCE, MAX_RESOURCES } from '../../api/well-known.ts';
import { rfc3339 } from '../shared/conditions.ts';
import type { ContentChoice } from '../releases/content-choice.ts';
import { expiryOf } from '../evaluation/expiry.ts';
import { healthOf, healthOfWritten, NOT_REPORTED_YET } from '../health/health.ts';
import type { InstanceEvaluation } from '../evaluation/instance-evaluation.ts';
import {
  parentRecord,
  recordedKinds,
  recordedNamespaces,
  type ParentRecord,
} from '../objects/applyset.ts';
import { describeObject, gvkKey, resourceKey, type ObjectId } from '../objects/inventory.ts';
import { nextInstanceStatus, withReady, type StatusInput } from './instance-status.ts';
import type { ApplyReport, DeleteReport, Observed, OwnedObjects } from './observation.ts';
import { dispositionOf } from './pass-outcome.ts';
import { renderedRef } from './rendered-refs.ts';

/** How soon to look again while waiting on the cluster (finalizers, a CRD being served). */
export const WAIT_REQUEUE_MS = 2_000;

/**
 * Longest wait for an expiry in one requeue: the resync re-enqueues long before, and Node timers
 * overflow past 24.8 days.
 */
export const MAX_EXPIRY_WAIT_MS = 12 * 3_600_000;

/** Something to gather or do before the pass can be decided further. */
export type Step =
  /** Delete the expired instance (its finalizer then removes what it owns). */
  | { step: 'expire' }
  /** Choose the Template content the instance renders (chooseContent). */
  | { step: 'choose-content' }
  /** Resolve, render and keep the instance's watches current. */
  | { step: 'evaluate' }
  /**
   * Write `record` on the instance (its finalizer and ApplySet annotations) when there is one,
   * then apply the rendered objects.
   */
  | { step: 'apply'; record?: ParentRecord; ignoreFields: string[] }
  /**
   * Find what the instance owns: by label across `gvks`, plus the `known` entries. `namespaces`:
   * those it may own objects in, for whoever may not list a kind across all of them.
   */
  | { step: 'list-owned'; gvks: string[]; known: RenderedResourceRef[]; namespaces: string[] }
  /** Delete these, in reverse install order. */
  | { step: 'delete'; objects: ObjectId[] };

export type PassEnd =
  | { kind: 'done' }
  | { kind: 'requeue'; afterMs: number }
  /** Retried with backoff: the cluster may change under the same inputs. */
  | { kind: 'retry'; message: string }
  /** Not retried: only an edit of an input (or the resync) can change the answer. */
  | { kind: 'terminal'; message: string };

export interface EventDraft {
  type: 'Normal' | 'Warning';
  reason: string;
  /** Already redacted with the evaluation's redactor. */
  message: string;
}

export interface PassCounts {
  applied: number;
  unchanged: number;
  failed: number;
  orphansDeleted: number;
  orphansPending: number;
  orphansFailed: number;
  driftReverted: number;
}

export interface Conclusion {
  step: 'conclude';
  /** The status the pass leaves; written only when it differs from the instance's. */
  status?: TemplateInstanceStatus;
  events: EventDraft[];
  counts: PassCounts;
  /** Drop the instance's watches: it is gone, being deleted, or frozen. */
  releaseWatches: boolean;
  /** The pass's trigger was handled: the next pass no longer reports it. */
  triggerHandled: boolean;
  /** Objects were written for the trigger (rotation lag is measured from it). */
  wroteForTrigger: boolean;
  /** Remove the instance's finalizer: everything it owned is gone. */
  removeFinalizer: boolean;
  end: PassEnd;
}

export type Decision = Step | Conclusion;

const NO_COUNTS: PassCounts = {
  applied: 0,
  unchanged: 0,
  failed: 0,
  orphansDeleted: 0,
  orphansPending: 0,
  orphansFailed: 0,
  driftReverted: 0,
};

const DONE: PassEnd = { kind: 'done' };
const WAIT: PassEnd = { kind: 'requeue', afterMs: WAIT_REQUEUE_MS };

function conclude(parts: Partial<Conclusion> & { end: PassEnd }): Conclusion {
  return {
    step: 'conclude',
    events: [],
    counts: NO_COUNTS,
    releaseWatches: false,
    triggerHandled: false,
    wroteForTrigger: false,
    removeFinalizer: false,
    ...parts,
  };
}

/** The next step of the pass, or how it ends. */
export function decide(observed: Observed): Decision {
  const { instance, now } = observed;
  if (!instance) return conclude({ releaseWatches: true, end: DONE });
  if (instance.metadata.deletionTimestamp) return decideDeletion(observed, instance);
  const expiry = expiryOf(instance);
  const expiresAt = expiry.ok ? expiry.value : undefined;
  if (expiresAt && expiresAt.getTime() <= now.getTime()) {
    if (!observed.expired) return { step: 'expire' };
    const message = `expired at ${rfc3339(expiresAt)}; deleting it and what it owns`;
    return conclude({ events: [{ type: 'Normal', reason: 'Expired', message }], end: DONE });
  }
  if (!observed.content) return { step: 'choose-content' };
  const decision = decideLive(observed, instance, observed.content);
  return decision.step === 'conclude' ? untilExpiry(decision, expiresAt, now) : decision;
}

/** The instance is being deleted: delete what it owns, then let it go. */
function decideDeletion(observed: Observed, instance: TemplateInstance): Decision {
  if (!instance.metadata.finalizers?.includes(FINALIZER_INSTANCE))
    return conclude({ releaseWatches: true, end: DONE });
  const { owned, deleted } = observed;
  if (!owned)
    return {
      step: 'list-owned',
      gvks: recordedKinds(instance, instance.status?.renderedResources ?? []),
      known: instance.status?.renderedResources ?? [],
      namespaces: recordedNamespaces(instance, instance.status?.renderedResources ?? []),
    };
  const deletion = deleteOrWait(owned.owned, deleted);
  if ('step' in deletion) return deletion;
  const events = unlistedEvents(owned);
  if (!deletion.allAccepted) {
    // Said where the instance owner looks, not only in the operator's log.
    const message = `cannot delete what the instance owns yet: ${deletion.remaining.map((r) => r.message).join('; ')}`;
    const reason = InstanceReason.DeleteFailed;
    return conclude({
      status: stillOwned(withReady(instance, reason, message, rfc3339(observed.now)), deletion),
      events: [...events, { type: 'Warning', reason, message }],
      releaseWatches: true,
      end: { kind: 'retry', message },
    });
  }
  // Accepted but held by finalizers: waiting, not failing.
  if (deletion.remaining.length > 0)
    return conclude({
      status: stillOwned(instance.status, deletion),
      events,
      releaseWatches: true,
      end: WAIT,
    });
  if (deletion.deleted.length > 0)
    events.push({
      type: 'Normal',
      reason: 'Pruned',
      message: `deleted ${deletion.deleted.length} resource(s) of the deleted instance`,
    });
  return conclude({ events, releaseWatches: true, removeFinalizer: true, end: DONE });
}

/**
 * The status of an instance whose deletion goes on: its recorded resources cut down to what it
 * still owns, so that the next pass does not delete again what is gone (the kinds stay tracked,
 * and the label search still finds whatever was not recorded).
 */
function stillOwned(
  status: TemplateInstanceStatus | undefined,
  deletion: DeleteReport,
): TemplateInstanceStatus {
  const left = new Set(deletion.remaining.map(({ id }) => resourceKey(id)));
  return {
    ...status,
    renderedResources: (status?.renderedResources ?? []).filter((r) => left.has(resourceKey(r))),
  };
}

/** Frozen after its first clean apply under sync mode off: nothing renders or applies again. */
export function isFrozen(instance: TemplateInstance, template: Template | undefined): boolean {
  return instance.status?.frozen === true && syncModeOf(template) === 'off';
}

/** The paths that keep their live value: ignoreFields apply under revert and strict only. */
export function ignoredFieldsUnder(template: Template | undefined): string[] {
  if (syncModeOf(template) === 'off') return [];
  return template?.spec.sync?.ignoreFields ?? [];
}

const namespaceOf = (object: KubeObject): { namespace?: string } => ({
  namespace: object.metadata.namespace,
});

const syncModeOf = (template: Template | undefined): SyncMode => template?.spec.sync?.mode ?? 'off';

/** What a live (not deleted, not expired) instance's pass does once its content is chosen. */
function decideLive(
  observed: Observed,
  instance: TemplateInstance,
  content: ContentChoice,
): Decision {
  const mode = syncModeOf(content.template);
  // Frozen: its watches are gone too.
  if (isFrozen(instance, content.template)) return conclude({ releaseWatches: true, end: DONE });
  const { evaluation } = observed;
  if (!evaluation) return { step: 'evaluate' };
  const pass = new LivePass(observed, instance, content, mode, evaluation);
  if (!evaluation.ok) return pass.failedEvaluation();
  if (!observed.applied) {
    const record = parentRecord(instance, pass.desired);
    return { step: 'apply', ...(record ? { record } : {}), ignoreFields: pass.ignoreFields() };
  }
  pass.reportDefaults();
  if (!observed.applied.ok) return pass.stopped(observed.applied);
  pass.reportWrites(observed.applied);
  const cleanup = pass.cleanup();
  if ('step' in cleanup) return cleanup;
  return pass.applied(observed.applied, cleanup);
}

/** How pruning ended: entries that stay (Failed), and whether to retry or wait. */
interface Cleanup {
  failed: RenderedResourceRef[];
  /** Something failed and must be retried with backoff. */
  retry: boolean;
  /** Deletes accepted but held by finalizers: look again soon. */
  waiting: boolean;
  note: string;
}

const NOTHING_TO_CLEAN: Cleanup = { failed: [], retry: false, waiting: false, note: '' };

/** The decisions of a live pass once evaluated, sharing its events and counts. */
class LivePass {
  readonly events: EventDraft[] = [];
  readonly counts: PassCounts = { ...NO_COUNTS };
  readonly desired: KubeObject[];
  /**
   * Kinds ever rendered, mirrored in the status (the record that counts is the ApplySet
   * annotation, written before anything is applied).
   */
  readonly trackedGVKs: string[];

  constructor(
    private readonly observed: Observed,
    private readonly instance: TemplateInstance,
    private readonly content: ContentChoice,
    private readonly mode: SyncMode,
    private readonly evaluation: InstanceEvaluation,
  ) {
    this.desired = evaluation.resources;
    const recorded = instance.status?.trackedGVKs ?? [];
    this.trackedGVKs = [...new Set([...recorded, ...this.desired.map(gvkKey)])].sort();
    if (observed.trigger?.kind === 'source')
      this.event('Normal', 'SourceChanged', observed.trigger.description);
  }

  ignoreFields(): string[] {
    return ignoredFieldsUnder(this.content.template);
  }

  private event(type: EventDraft['type'], reason: string, message: string): void {
    this.events.push({ type, reason, message: this.evaluation.redactor.redact(message) });
  }

  private status(extra: Partial<StatusInput> & { trackedGVKs: string[] }): TemplateInstanceStatus {
    const { instance, content, evaluation, mode } = this;
    return nextInstanceStatus({
      instance,
      template: content.template,
      evaluation,
      syncMode: mode,
      revisions: { revision: content.revision, latest: content.latest },
      now: rfc3339(this.observed.now),
      ...extra,
    });
  }

  private conclude(status: TemplateInstanceStatus, end: PassEnd, release = false): Conclusion {
    const handled = end.kind === 'done' || end.kind === 'requeue';
    return conclude({
      status,
      events: this.events,
      counts: this.counts,
      releaseWatches: release,
      triggerHandled: handled,
      wroteForTrigger: this.counts.applied > 0,
      end,
    });
  }

  /** Resolving or rendering failed: nothing is applied; the failure decides retry or wait. */
  failedEvaluation(): Conclusion {
    const problem = this.evaluation.problem!;
    if (problem.reason === InstanceReason.ParameterResolutionFailed)
      this.event('Warning', 'ParameterResolutionFailed', problem.message);
    const status = this.status({ trackedGVKs: this.instance.status?.trackedGVKs ?? [] });
    const kind = dispositionOf(problem);
    return this.conclude(status, { kind, message: problem.message });
  }

  reportDefaults(): void {
    for (const used of this.evaluation.resolved?.defaultsUsed ?? [])
      this.event(
        'Normal',
        'DefaultValueUsed',
        `parameter "${used.name}": used its defaultValue (${used.message})`,
      );
  }

  /** `unchanged`: the objects the pass reached and found as rendered (never those not reached). */
  reportWrites(applied: { written: KubeObject[]; unchanged: number }): void {
    const { written } = applied;
    this.counts.applied += written.length;
    this.counts.unchanged += applied.unchanged;
    if (written.length === 0) return;
    const summary = summarize(written);
    if (this.observed.trigger?.kind === 'drift') {
      this.counts.driftReverted += written.length;
      this.event('Normal', 'DriftReverted', `reverted ${written.length} resource(s): ${summary}`);
    } else this.event('Normal', 'Applied', `applied ${written.length} resource(s): ${summary}`);
  }

  /** The apply stopped: waiting on the cluster (look again soon) or refused. */
  stopped(applied: Extract<ApplyReport, { ok: false }>): Conclusion {
    const message = this.evaluation.redactor.redact(applied.message);
    const previous = this.instance.status?.renderedResources ?? [];
    const { trackedGVKs } = this;
    if (applied.waiting) {
      this.reportWrites(applied);
      const renderedResources = knownSoFar(this.desired, applied.live, previous);
      const apply = { ok: false, waiting: true, message, renderedResources };
      return this.conclude(this.status({ apply, trackedGVKs }), WAIT);
    }
    this.counts.failed += 1;
    const status = this.status({
      apply: { ok: false, message, renderedResources: previous },
      trackedGVKs,
    });
    this.event('Warning', 'ApplyFailed', message);
    return this.conclude(status, { kind: applied.retry ? 'retry' : 'terminal', message });
  }

  /**
   * Pruning after a clean apply: skipped on the first apply (nothing can be owned yet), when
   * the rendered set is what was applied last time, and when a defaultValue stood in for a
   * source that could not be read (what is missing may only be missing for now).
   */
  cleanup(): Step | Cleanup {
    if (this.evaluation.resolved?.transientFallback) {
      const note =
        '; pruning skipped this time because a defaultValue stood in for a source that could not be read';
      return { failed: [], retry: true, waiting: false, note };
    }
    if (nothingAppliedYet(this.instance)) return NOTHING_TO_CLEAN;
    const previous = this.instance.status?.renderedResources ?? [];
    const wanted = new Set(this.desired.map((o) => resourceKey(o)));
    // Label discovery (one LIST per tracked kind) only when the rendered set changed or a
    // delete is pending: otherwise everything owned is exactly what was just applied.
    const same =
      previous.length === this.desired.length &&
      previous.every((r) => !r.status && wanted.has(resourceKey(r)));
    if (same) return NOTHING_TO_CLEAN;
    const { owned } = this.observed;
    if (!owned)
      return {
        step: 'list-owned',
        gvks: recordedKinds(this.instance, [...this.desired, ...previous]),
        known: previous,
        namespaces: recordedNamespaces(this.instance, [
          ...this.desired.map(namespaceOf),
          ...previous,
        ]),
      };
    this.events.push(...unlistedEvents(owned));
    const orphans = owned.owned.filter((id) => !wanted.has(resourceKey(id)));
    if (orphans.length === 0) return NOTHING_TO_CLEAN;
    const deleted = deleteOrWait(orphans, this.observed.deleted);
    if ('step' in deleted) return deleted;
    this.counts.orphansDeleted += deleted.deleted.length;
    if (deleted.allAccepted) this.counts.orphansPending += deleted.remaining.length;
    else this.counts.orphansFailed += deleted.remaining.length;
    if (deleted.deleted.length > 0)
      this.event(
        'Normal',
        'Pruned',
        `deleted ${deleted.deleted.length} orphaned resource(s): ${summarize(deleted.deleted)}`,
      );
    if (deleted.remaining.length === 0) return NOTHING_TO_CLEAN;
    const failed = deleted.remaining.map(({ id }) => ({
      apiVersion: id.apiVersion,
      kind: id.kind,
      name: id.name,
      ...(id.namespace ? { namespace: id.namespace } : {}),
      status: 'Failed' as const,
    }));
    return {
      failed,
      retry: !deleted.allAccepted,
      waiting: deleted.allAccepted,
      note: `; ${failed.length} orphaned resource(s) could not be deleted yet and are retried`,
    };
  }

  /** Everything was applied (and pruned where due): the status, the freeze, how to end. */
  applied(applied: Extract<ApplyReport, { ok: true }>, cleanup: Cleanup): Conclusion {
    const { desired } = this;
    // What this pass wrote is judged from the write's answer, which no controller has seen yet.
    const written = new Set(applied.written.map((o) => resourceKey(o)));
    const healths = applied.live.map((o, i) =>
      written.has(resourceKey(o)) ? healthOfWritten(o, desired[i]) : healthOf(o, desired[i]),
    );
    const rendered = [
      ...applied.live.map((o, i) => renderedRef(o, '', healths[i])),
      ...cleanup.failed,
    ];
    const defaults = this.evaluation.resolved?.defaultsUsed ?? [];
    // A kind that is not served yet may be installed later: keep retrying so the instance heals.
    const unserved = defaults.some((d) => d.failure === 'NotServed');
    // An off instance freezes once what it applied is healthy too: until then its drift watches
    // bring every status change of its objects (and the resync re-evaluates a stuck one).
    const healthy = rendered.every((r) => r.health === undefined || r.health === 'Current');
    const clean = !cleanup.retry && !cleanup.waiting && !unserved && healthy;
    const freeze = freezeDecision(this.mode, clean, this.instance.status?.frozen === true);
    const message = `${desired.length} resource(s) applied${cleanup.note}`;
    const renderedResources = rendered.slice(0, MAX_RESOURCES);
    const status = this.status({
      apply: { ok: true, message, renderedResources },
      trackedGVKs: this.trackedGVKs,
      freeze,
    });
    // A workload waiting for its controller's first report is looked at again soon: where no
    // controller runs, nothing else would bring the pass that finds it Current.
    const unreported = healths.some((h) => h.message === NOT_REPORTED_YET);
    const end: PassEnd =
      cleanup.retry || unserved
        ? { kind: 'retry', message }
        : cleanup.waiting || unreported
          ? WAIT
          : DONE;
    return this.conclude(status, end, freeze === 'freeze');
  }
}

/**
 * The delete step for `objects`, or, once it ran, its report. An object already being deleted
 * is not deleted again (another DELETE would only repeat the first): it waits on its finalizers
 * like one whose delete was just accepted.
 */
function deleteOrWait(
  objects: ObjectId[],
  deleted: DeleteReport | undefined,
): { step: 'delete'; objects: ObjectId[] } | DeleteReport {
  const toDelete = objects.filter((id) => !id.terminating);
  if (!deleted && toDelete.length > 0) return { step: 'delete', objects: toDelete };
  const report = deleted ?? { deleted: [], remaining: [], allAccepted: true };
  const terminating = objects
    .filter((id) => id.terminating)
    .map((id) => ({ id, message: `${describeObject(id)} is waiting on finalizers` }));
  return { ...report, remaining: [...report.remaining, ...terminating] };
}

/** Kinds skipped because the operator may not list them (nothing of them recorded). */
function unlistedEvents(owned: OwnedObjects): EventDraft[] {
  if (owned.unlisted.length === 0) return [];
  return [
    {
      type: 'Warning',
      reason: 'ListForbidden',
      message: `not searched for objects of this instance, as the operator may not list them and none is recorded as applied: ${owned.unlisted.join('; ')}`,
    },
  ];
}

/** A pass's end, coming back by the instance's expiry at the latest. */
function untilExpiry(conclusion: Conclusion, expiresAt: Date | undefined, now: Date): Conclusion {
  const { end } = conclusion;
  if (!expiresAt || (end.kind !== 'done' && end.kind !== 'requeue')) return conclusion;
  const wait = Math.min(MAX_EXPIRY_WAIT_MS, Math.max(0, expiresAt.getTime() - now.getTime()));
  const afterMs = Math.min(end.kind === 'requeue' ? end.afterMs : Infinity, wait);
  return { ...conclusion, end: { kind: 'requeue', afterMs } };
}

/**
 * While a pass waits (an earlier wave, a CRD being served): the objects that exist so far, with
 * their health, and the previous entries of those that do not exist yet.
 */
function knownSoFar(
  desired: KubeObject[],
  live: (KubeObject | undefined)[],
  previous: RenderedResourceRef[],
): RenderedResourceRef[] {
  const known = live.flatMap((o, i) => (o ? [renderedRef(o, '', healthOf(o, desired[i]))] : []));
  const keys = new Set(known.map((r) => resourceKey(r)));
  return [...known, ...previous.filter((r) => !keys.has(resourceKey(r)))].slice(0, MAX_RESOURCES);
}

/**
 * Kinds are recorded before anything is applied: an instance that recorded none has applied
 * nothing yet, so it owns nothing a label search could find (its first pass prunes nothing).
 */
function nothingAppliedYet(instance: TemplateInstance): boolean {
  const status = instance.status;
  return !status?.trackedGVKs?.length && !status?.renderedResources?.length;
}

/** Off instances freeze after a clean apply; leaving off unfreezes them (SPEC §7). */
function freezeDecision(mode: SyncMode, clean: boolean, frozen: boolean): StatusInput['freeze'] {
  if (mode === 'off') return clean ? 'freeze' : undefined;
  return frozen ? 'unfreeze' : undefined;
}

function summarize(
  objects: { kind: string; name?: string; metadata?: { name?: string } }[],
): string {
  const names = objects.slice(0, 10).map((o) => `${o.kind}/${o.metadata?.name ?? o.name ?? ''}`);
  return objects.length > 10
    ? `${names.join(', ')} and ${objects.length - 10} more`
    : names.join(', ');
}

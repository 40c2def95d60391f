// What reconcilers read from the operator's caches (informers): cheap, eventually consistent
// lookups used to fan out and to evaluate namespace selectors; and an instance read from the API
// server when the cache cannot answer.
import type { KubeObject } from '../api/object-meta.ts';
import { API_VERSION, TEMPLATE_INSTANCE_KIND } from '../api/well-known.ts';
import { parseInstanceKeyName } from '../engine/shared/instance-key.ts';
import type { ClusterPort } from './cluster-port.ts';
import type { Template, TemplateRevision } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';

export interface CacheReader {
  /** Labels of a namespace, or undefined when it is not (yet) known. */
  namespaceLabels(name: string): Record<string, string> | undefined;
  /**
   * One instance as the cache has it (shared: never mutate it); undefined when not seen. `name`
   * is the name part of its key, which names the kind of a typed instance (ADR 0032).
   */
  instance(namespace: string, name: string): TemplateInstance | undefined;
  /**
   * The instance an object of an instance's kind stands for (as the API server returned it):
   * a typed instance read through its view; undefined when its kind is not published (any more).
   * Absent: every instance is a TemplateInstance.
   */
  readInstance?(object: KubeObject): TemplateInstance | undefined;
  /** The apiVersion and kind of the instance a key's name part names, while it is served. */
  instanceKind?(name: string): { apiVersion: string; kind: string } | undefined;
  /** Instances whose templateRef (namespace defaulted) names this Template. */
  instancesOf(templateNamespace: string, templateName: string): TemplateInstance[];
  templates(): Template[];
  /** One Template as the cache has it; undefined when the cache has not seen it (yet). */
  template(namespace: string, name: string): Template | undefined;
  /** The TemplateRevisions of one Template that the cache holds. */
  revisionsOf(templateNamespace: string, templateName: string): TemplateRevision[];
}

/** What triggered a reconcile from the outside, kept until a pass that saw it completes. */
export interface Trigger {
  kind: 'source' | 'drift';
  /** e.g. `Secret team-a/db changed`. */
  description: string;
  /** When the change was seen (ms since epoch), for the rotation-lag metric. */
  at: number;
}

/** A valueFrom source a resolution read (GET when `name` is set, LIST otherwise). */
export interface SourceAccess {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name?: string;
  /**
   * resourceVersion of each object the read returned, by `namespace/name` (`/name` when
   * cluster-scoped); empty when it found nothing; absent when the read failed otherwise. A
   * watch that starts later compares its first list with this: a difference is a change.
   */
  observed?: Record<string, string>;
}

/**
 * The watches an instance needs: its valueFrom sources, and under revert/strict the kinds it
 * rendered (drift). Implemented by the operator over the shared SourceRegistry.
 */
export interface DependencyTracker {
  track(
    instanceKey: string,
    sources: SourceAccess[],
    drift: { uid: string; gvks: string[] } | undefined,
  ): Promise<void>;
  release(instanceKey: string): void;
  /** The trigger of the next pass; it stays until `clearTrigger` (a pass that failed keeps it). */
  peekTrigger(instanceKey: string): Trigger | undefined;
  /** A pass that handled `trigger` completed; a newer trigger that arrived meanwhile stays. */
  clearTrigger(instanceKey: string, trigger: Trigger | undefined): void;
  /**
   * Called before each apply, and the function it returns with the apply's result (undefined
   * when it failed): the watch event of that write is our own, not drift.
   */
  beginWrite(object: KubeObject): (result: KubeObject | undefined) => void;
  /** A pass wrote what its trigger asked for: rotation lag is measured from the trigger. */
  applied(instanceKey: string, trigger: Trigger | undefined): void;
}

/** Counters the reconciler reports to (metrics); every method is optional to call. */
export interface ReconcileMetrics {
  applies(result: 'applied' | 'unchanged' | 'failed', count: number): void;
  orphans(result: 'deleted' | 'pending' | 'failed', count: number): void;
  driftReverted(count: number): void;
}

/** How reconcilers log: a level, a constant message, fields (never a Secret value). */
export type ReconcileLog = (
  level: 'debug' | 'info' | 'warn' | 'error',
  message: string,
  fields: Record<string, unknown>,
) => void;

/**
 * The instance a key names (`name` is the key's name part: a typed instance's names its kind,
 * ADR 0032), read from the API server and read as the engine reads instances; undefined when it
 * does not exist, or its kind is no longer published (it went with its CRD).
 */
export async function getInstance(
  cluster: Pick<ClusterPort, 'get'>,
  cache: Pick<CacheReader, 'instanceKind' | 'readInstance'> | undefined,
  namespace: string,
  keyName: string,
): Promise<TemplateInstance | undefined> {
  const { name, kind } = parseInstanceKeyName(keyName);
  const id =
    kind === undefined
      ? { apiVersion: API_VERSION, kind: TEMPLATE_INSTANCE_KIND }
      : cache?.instanceKind?.(keyName);
  if (!id) return undefined;
  const object = await cluster.get({ ...id, namespace, name });
  if (!object) return undefined;
  return cache?.readInstance ? cache.readInstance(object) : (object as unknown as TemplateInstance);
}

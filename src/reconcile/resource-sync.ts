// Applying an instance's rendered resources and removing what it no longer renders (SPEC §6):
// adoption check, the dry-run gate, apply in install order skipping unchanged objects, owned-object
// discovery by label, and deletes in reverse install order.
import type { KubeObject } from '../api/object-meta.ts';
import type { RenderedResourceRef } from '../api/template-instance.ts';
import { ANNOTATION_ADOPT, LABEL_INSTANCE_UID } from '../api/well-known.ts';
import { createHash } from 'node:crypto';
import { carryIgnoredFields, sameManagedState } from '../engine/drift.ts';
import { canonicalJson } from '../engine/instance-status.ts';
import {
  compareInstallOrder,
  describeObject,
  parseGvkKey,
  resourceKey,
  type Owner,
} from '../engine/inventory.ts';
import { isClusterError, type ClusterPort, type ObjectId } from './cluster-port.ts';

export type ApplyResult =
  | { ok: true; written: KubeObject[]; live: KubeObject[] }
  | { ok: false; message: string; retry: boolean };

export function idOf(object: KubeObject): ObjectId {
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    name: object.metadata.name ?? '',
    namespace: object.metadata.namespace,
  };
}

/** Runs `task` over `items` with at most `limit` in flight, keeping result order. */
export async function mapLimit<T, R>(
  items: T[],
  limit: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

function adoptionRefusal(live: KubeObject, owner: Owner): string | undefined {
  const holder = live.metadata.labels?.[LABEL_INSTANCE_UID];
  if (holder === owner.uid) return undefined;
  if (live.metadata.annotations?.[ANNOTATION_ADOPT] === `${owner.namespace}/${owner.name}`)
    return undefined;
  const by = holder ? ` (it belongs to another TemplateInstance, uid ${holder})` : '';
  return `${describeObject(live)} already exists and is not managed by this instance${by}; annotate it with ${ANNOTATION_ADOPT}: ${owner.namespace}/${owner.name} to let this instance adopt it`;
}

/**
 * Applies `desired` (already in install order) for `owner`: nothing is written unless every
 * object passes the adoption check and a server-side dry run; then each object whose dry-run
 * result differs from the live object is applied. Objects inside a Namespace that this render
 * creates cannot be dry-run before it exists: they are checked right after the new Namespaces
 * are applied, before anything else is written.
 */
/**
 * What was last applied, per object: rendering the same object again while the live object is
 * still at the resourceVersion our apply left it needs neither a dry run nor a write. This keeps
 * periodic resyncs of thousands of instances to one GET per object.
 */
export class AppliedMemo {
  private readonly entries = new Map<string, { hash: string; resourceVersion: string }>();

  constructor(private readonly limit = 200_000) {}

  static hash(object: KubeObject): string {
    return createHash('sha256').update(canonicalJson(object)).digest('hex');
  }

  settled(object: KubeObject, hash: string, live: KubeObject | undefined): boolean {
    const entry = this.entries.get(resourceKey(object));
    return (
      entry !== undefined &&
      entry.hash === hash &&
      entry.resourceVersion === live?.metadata.resourceVersion
    );
  }

  record(object: KubeObject, hash: string, result: KubeObject | undefined): void {
    const resourceVersion = result?.metadata.resourceVersion;
    if (!resourceVersion) return;
    if (this.entries.size >= this.limit) this.entries.clear();
    this.entries.set(resourceKey(object), { hash, resourceVersion });
  }
}

export async function applyResources(
  cluster: ClusterPort,
  owner: Owner,
  rendered: KubeObject[],
  ignoreFields: string[] = [],
  memo?: AppliedMemo,
): Promise<ApplyResult> {
  const live = await mapLimit(rendered, 8, (o) => cluster.get(idOf(o)));
  // Ignored paths keep their live value in what is applied (SPEC §7).
  const desired = rendered.map((o, i) => carryIgnoredFields(o, live[i], ignoreFields));
  const hashes = desired.map((o) => AppliedMemo.hash(o));
  const settled = desired.map((o, i) => memo?.settled(o, hashes[i]!, live[i]) ?? false);
  for (const object of live) {
    const refusal = object && adoptionRefusal(object, owner);
    if (refusal) return { ok: false, message: refusal, retry: true };
  }
  const created = new Set(
    desired.filter((o, i) => isNamespace(o) && !live[i]).map((o) => o.metadata.name),
  );
  const deferred = (o: KubeObject): boolean =>
    o.metadata.namespace !== undefined && created.has(o.metadata.namespace);
  const dryRuns = new Array<KubeObject | undefined>(desired.length);
  const gate = async (indexes: number[]): Promise<ApplyResult | undefined> => {
    for (const i of indexes) {
      try {
        dryRuns[i] = await cluster.apply(desired[i]!, { dryRun: true });
      } catch (error) {
        return rejection(desired[i]!, error, 'dry run');
      }
    }
    return undefined;
  };
  const indexes = desired.map((_, i) => i).filter((i) => !settled[i]);
  const rejected = await gate(indexes.filter((i) => !deferred(desired[i]!)));
  if (rejected) return rejected;
  const written: KubeObject[] = [];
  const result = [...live] as (KubeObject | undefined)[];
  const write = async (i: number): Promise<ApplyResult | undefined> => {
    const current = live[i];
    if (current && sameManagedState(current, dryRuns[i]!)) return undefined;
    try {
      result[i] = await cluster.apply(desired[i]!);
      written.push(result[i]);
    } catch (error) {
      return rejection(desired[i]!, error, 'apply');
    }
    return undefined;
  };
  const namespacesFirst = indexes.filter(
    (i) => isNamespace(desired[i]!) && created.has(desired[i]!.metadata.name),
  );
  for (const i of namespacesFirst) {
    const failed = await write(i);
    if (failed) return failed;
  }
  const lateRejection = await gate(indexes.filter((i) => deferred(desired[i]!)));
  if (lateRejection) return lateRejection;
  for (const i of indexes.filter((j) => !namespacesFirst.includes(j))) {
    const failed = await write(i);
    if (failed) return failed;
  }
  for (const i of indexes) memo?.record(desired[i]!, hashes[i]!, result[i]);
  return { ok: true, written, live: result.map((o, i) => o ?? dryRuns[i]!) };
}

function isNamespace(object: KubeObject): boolean {
  return object.apiVersion === 'v1' && object.kind === 'Namespace';
}

function rejection(object: KubeObject, error: unknown, stage: string): ApplyResult {
  if (!isClusterError(error)) throw error;
  const retry = error.kind !== 'Invalid';
  return {
    ok: false,
    message: `${describeObject(object)} rejected by the API server (${stage}): ${error.message}`,
    retry,
  };
}

export function renderedRef(object: KubeObject, status: '' | 'Failed' = ''): RenderedResourceRef {
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    name: object.metadata.name ?? '',
    ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
    ...(object.metadata.generation !== undefined
      ? { observedGeneration: object.metadata.generation }
      : {}),
    ...(status ? { status } : {}),
  };
}

/** Everything the instance owns: by label across `gvks`, plus the recorded `known` entries. */
export async function findOwned(
  cluster: ClusterPort,
  uid: string,
  gvks: string[],
  known: RenderedResourceRef[],
): Promise<ObjectId[]> {
  const owned = new Map<string, ObjectId>();
  const kinds = new Map<string, { apiVersion: string; kind: string }>();
  for (const key of gvks) {
    const gvk = parseGvkKey(key);
    if (gvk) kinds.set(`${gvk.apiVersion}/${gvk.kind}`, gvk);
  }
  for (const ref of known)
    kinds.set(`${ref.apiVersion}/${ref.kind}`, { apiVersion: ref.apiVersion, kind: ref.kind });
  for (const { apiVersion, kind } of kinds.values()) {
    let objects: KubeObject[];
    try {
      objects = await cluster.list(apiVersion, kind, {
        labelSelector: `${LABEL_INSTANCE_UID}=${uid}`,
      });
    } catch (error) {
      if (isClusterError(error, 'NotServed')) continue;
      throw error;
    }
    for (const o of objects) owned.set(resourceKey(o), idOf({ ...o, apiVersion, kind }));
  }
  for (const ref of known)
    owned.set(resourceKey(ref), {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      name: ref.name,
      namespace: ref.namespace,
    });
  return [...owned.values()];
}

export interface DeleteResult {
  deleted: ObjectId[];
  /** Deletes that were accepted but wait on finalizers, or that failed: kept and retried. */
  remaining: { id: ObjectId; message: string }[];
  /** Every delete was accepted by the API server (pending finalizers included). */
  allAccepted: boolean;
}

/** Deletes `objects` in reverse install order. */
export async function deleteInReverseOrder(
  cluster: ClusterPort,
  objects: ObjectId[],
): Promise<DeleteResult> {
  const ordered = [...objects].sort((a, b) => -compareInstallOrder(a, b));
  const result: DeleteResult = { deleted: [], remaining: [], allAccepted: true };
  for (const id of ordered) {
    try {
      const outcome = await cluster.delete(id);
      if (outcome === 'pending')
        result.remaining.push({ id, message: `${describeObject(id)} is waiting on finalizers` });
      else if (outcome === 'deleted') result.deleted.push(id);
    } catch (error) {
      if (!isClusterError(error)) throw error;
      if (error.kind === 'NotServed') continue;
      result.allAccepted = false;
      result.remaining.push({ id, message: `${describeObject(id)}: ${error.message}` });
    }
  }
  return result;
}

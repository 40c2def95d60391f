// What an instance owns and removing what it no longer renders (SPEC §6 steps 5–6): owned-object
// discovery by label and deletes in reverse install order. Applying is
// src/reconcile/instance/applier.ts.
import type { KubeObject } from '../../api/object-meta.ts';
import type { RenderedResourceRef } from '../../api/template-instance.ts';
import type { DeleteReport, OwnedObjects } from '../../engine/pass/observation.ts';
import { LABEL_INSTANCE_UID } from '../../api/well-known.ts';
import {
  compareInstallOrder,
  describeObject,
  parseGvkKey,
  resourceKey,
  waveOf,
} from '../../engine/objects/inventory.ts';
import { isClusterError, type ClusterPort, type ObjectId } from '../cluster-port.ts';

export function idOf(object: KubeObject): ObjectId {
  const wave = waveOf(object);
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    name: object.metadata.name ?? '',
    namespace: object.metadata.namespace,
    ...(wave !== 0 ? { wave } : {}),
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

/**
 * A kind recorded without its version (`group//Kind`, from the ApplySet's group-kinds) at a
 * version the API server serves; undefined when it serves none (nothing of it can exist).
 */
async function servedKind(
  cluster: ClusterPort,
  key: string,
): Promise<{ apiVersion: string; kind: string } | undefined> {
  const [group, version, kind] = key.split('/');
  if (version !== '' || !kind || group === undefined) return undefined;
  const served = await cluster.servedVersion(group, kind);
  if (!served) return undefined;
  return { apiVersion: group ? `${group}/${served}` : served, kind };
}

/**
 * The objects of a kind labelled with `uid`: across the cluster, or, given `namespaces`, in each
 * of them (an identity that acts for one team may list only where it writes, ADR 0035).
 */
async function listLabelled(
  cluster: ClusterPort,
  { apiVersion, kind }: { apiVersion: string; kind: string },
  uid: string,
  namespaces: string[] | undefined,
): Promise<KubeObject[]> {
  const labelSelector = `${LABEL_INSTANCE_UID}=${uid}`;
  if (!namespaces || (await cluster.scopeOf(apiVersion, kind)) !== 'Namespaced')
    return cluster.list(apiVersion, kind, { labelSelector });
  const lists = await Promise.all(
    namespaces.map((namespace) => cluster.list(apiVersion, kind, { namespace, labelSelector })),
  );
  return lists.flat();
}

/**
 * Everything the instance owns: by label across `gvks`, plus the recorded `known` entries. A
 * kind the operator may not list is skipped when nothing of it is recorded (an apply the same
 * missing right refused), so a missing permission never holds a deletion forever; recorded
 * objects of it are still returned, and their deletes say what is refused.
 */
export async function findOwned(
  cluster: ClusterPort,
  uid: string,
  gvks: string[],
  known: RenderedResourceRef[],
  namespaces?: string[],
): Promise<OwnedObjects> {
  const unlisted: string[] = [];
  const owned = new Map<string, ObjectId>();
  const kinds = new Map<string, { apiVersion: string; kind: string }>();
  for (const key of gvks) {
    const gvk = parseGvkKey(key) ?? (await servedKind(cluster, key));
    if (gvk) kinds.set(`${gvk.apiVersion}/${gvk.kind}`, gvk);
  }
  for (const ref of known)
    kinds.set(`${ref.apiVersion}/${ref.kind}`, { apiVersion: ref.apiVersion, kind: ref.kind });
  for (const { apiVersion, kind } of kinds.values()) {
    let objects: KubeObject[];
    try {
      objects = await listLabelled(cluster, { apiVersion, kind }, uid, namespaces);
    } catch (error) {
      if (isClusterError(error, 'NotServed')) continue;
      if (isClusterError(error, 'Forbidden') || isClusterError(error, 'Unauthorized')) {
        if (!known.some((r) => r.apiVersion === apiVersion && r.kind === kind))
          unlisted.push(`${kind} (${apiVersion}): ${error.message}`);
        continue;
      }
      throw error;
    }
    // The uid seen makes the delete of an orphan apply to this object only.
    for (const o of objects)
      owned.set(resourceKey(o), {
        ...idOf({ ...o, apiVersion, kind }),
        uid: o.metadata.uid,
        ...(o.metadata.deletionTimestamp ? { terminating: true } : {}),
      });
  }
  // Recorded entries fill in what the label search missed; a listed object keeps what only the
  // live object tells (its wave).
  for (const ref of known) {
    const key = resourceKey(ref);
    if (owned.has(key)) continue;
    owned.set(key, {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      name: ref.name,
      namespace: ref.namespace,
    });
  }
  return { owned: [...owned.values()], unlisted };
}

/** Deletes `objects` in reverse install order: the last wave first, and within it the reverse of SPEC §6. */
export async function deleteInReverseOrder(
  cluster: ClusterPort,
  objects: ObjectId[],
): Promise<DeleteReport> {
  const ordered = [...objects].sort((a, b) => -compareInstallOrder(a, b));
  const result: DeleteReport = { deleted: [], remaining: [], allAccepted: true };
  for (const id of ordered) {
    try {
      const outcome = await cluster.delete(id);
      if (outcome === 'pending')
        result.remaining.push({ id, message: `${describeObject(id)} is waiting on finalizers` });
      else if (outcome === 'deleted') result.deleted.push(id);
    } catch (error) {
      if (!isClusterError(error) || error.kind === 'Aborted') throw error;
      if (error.kind === 'NotServed') continue;
      result.allAccepted = false;
      result.remaining.push({ id, message: `${describeObject(id)}: ${error.message}` });
    }
  }
  return result;
}

// The writes every reconciler makes to its own object, made one way: its status only when it
// changed, and its finalizer. Both are conditional on the resourceVersion the object was read
// at: a newer version written by anyone meanwhile makes the write a Conflict (retried from a
// fresh read), never an overwrite.
import type { KubeObject, ObjectHead } from '../api/object-meta.ts';
import { canonicalJson } from '../engine/shared/canonical-json.ts';
import { mergePatchReplacing } from '../engine/shared/json-map.ts';
import type { ClusterPort } from './cluster-port.ts';

type WithStatus<S> = ObjectHead & { status?: S };

/**
 * Writes `status` when it differs from the object's; fields that disappeared are removed
 * (mergePatchReplacing). Returns the object as written, or undefined when nothing changed.
 */
export async function writeStatusIfChanged<S extends object>(
  cluster: Pick<ClusterPort, 'patchStatus'>,
  object: WithStatus<S>,
  status: S,
): Promise<KubeObject | undefined> {
  const previous = object.status ?? {};
  if (canonicalJson(previous) === canonicalJson(status)) return undefined;
  return cluster.patchStatus(object, mergePatchReplacing(previous, status));
}

/** The object with `finalizer` added (written now) or as it is when it already has it. */
export async function ensureFinalizer<T extends ObjectHead>(
  cluster: Pick<ClusterPort, 'setFinalizers'>,
  object: T,
  finalizer: string,
): Promise<T> {
  const finalizers = object.metadata.finalizers ?? [];
  if (finalizers.includes(finalizer)) return object;
  return (await cluster.setFinalizers(object, [...finalizers, finalizer])) as unknown as T;
}

/** Removes `finalizer`, when the object has it. */
export async function removeFinalizer(
  cluster: Pick<ClusterPort, 'setFinalizers'>,
  object: ObjectHead,
  finalizer: string,
): Promise<void> {
  const finalizers = object.metadata.finalizers ?? [];
  if (!finalizers.includes(finalizer)) return;
  await cluster.setFinalizers(
    object,
    finalizers.filter((f) => f !== finalizer),
  );
}

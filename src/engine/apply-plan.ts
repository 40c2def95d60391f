// The plan of one apply (SPEC §6 steps 3–4), as a pure value: which rendered objects are dry-run
// and which are written in each step. Nothing of a step is written until every dry run of that
// step passed; a later step is checked only after the writes of the earlier ones, because its
// objects live in a Namespace, or are of a kind (CRD), that an earlier step creates. The applier
// (src/reconcile/applier.ts) runs the steps; ordering features (waves) add steps here.
import type { KubeObject } from '../api/object-meta.ts';
import { groupKind, kindsDeclaredBy } from './resource-scope.ts';

/** One rendered object as the planner sees it. */
export interface PlanInput {
  object: KubeObject;
  /** The object exists in the cluster. */
  exists: boolean;
  /** Applied before and unchanged since (same content, same resourceVersion): no work at all. */
  settled: boolean;
}

export interface ApplyStep {
  /** Indexes (into the planned objects) to dry-run before anything of this step is written. */
  check: number[];
  /** Indexes to write, in install order, once every check of the step passed. */
  write: number[];
  /** Kinds (apiVersion and kind) that must be served before this step's checks can run. */
  awaitKinds: { apiVersion: string; kind: string }[];
}

export interface ApplyPlan {
  steps: ApplyStep[];
}

function isNamespace(object: KubeObject): boolean {
  return object.apiVersion === 'v1' && object.kind === 'Namespace';
}

function isCrd(object: KubeObject): boolean {
  return (
    object.kind === 'CustomResourceDefinition' &&
    object.apiVersion.startsWith('apiextensions.k8s.io/')
  );
}

/**
 * Plans the apply of `inputs` (already in install order). Settled objects are left out. When
 * the render creates a Namespace or installs a CRD that other rendered objects need, those
 * prerequisites are written in a first step (after every object that can be checked now passed
 * its dry run), and the objects that need them are checked and written in a second step.
 */
export function planApply(inputs: readonly PlanInput[]): ApplyPlan {
  const pending = inputs.map((_, i) => i).filter((i) => !inputs[i]!.settled);
  const newNamespaces = new Set(
    pending
      .filter((i) => isNamespace(inputs[i]!.object) && !inputs[i]!.exists)
      .map((i) => inputs[i]!.object.metadata.name),
  );
  const installing = pending.filter((i) => isCrd(inputs[i]!.object));
  const newKinds = kindsDeclaredBy(installing.map((i) => inputs[i]!.object));
  const needsPrerequisite = (object: KubeObject): boolean =>
    (object.metadata.namespace !== undefined && newNamespaces.has(object.metadata.namespace)) ||
    newKinds.has(groupKind(object.apiVersion, object.kind));
  const deferred = pending.filter((i) => needsPrerequisite(inputs[i]!.object));
  if (deferred.length === 0) return { steps: [{ check: pending, write: pending, awaitKinds: [] }] };

  const prerequisites = pending.filter(
    (i) =>
      (isNamespace(inputs[i]!.object) && newNamespaces.has(inputs[i]!.object.metadata.name)) ||
      installing.includes(i),
  );
  const awaitKinds = new Map<string, { apiVersion: string; kind: string }>();
  for (const i of deferred) {
    const { apiVersion, kind } = inputs[i]!.object;
    if (newKinds.has(groupKind(apiVersion, kind)))
      awaitKinds.set(`${apiVersion}/${kind}`, { apiVersion, kind });
  }
  return {
    steps: [
      { check: pending.filter((i) => !deferred.includes(i)), write: prerequisites, awaitKinds: [] },
      {
        check: deferred,
        write: pending.filter((i) => !prerequisites.includes(i)),
        awaitKinds: [...awaitKinds.values()],
      },
    ],
  };
}

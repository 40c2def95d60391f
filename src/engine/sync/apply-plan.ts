// The plan of one apply (SPEC §6 steps 3–4), as a pure value: which rendered objects are dry-run
// and which are written in each step. Nothing of a step is written until every dry run of that
// step passed; a later step is checked only after the writes of the earlier ones, because its
// objects live in a Namespace, or are of a kind (CRD), that an earlier step creates. The applier
// (src/reconcile/instance/applier.ts) runs the steps; ordering features (waves) add steps here.
import type { KubeObject } from '../../api/object-meta.ts';
import { healthOf } from '../health/health.ts';
import { describeObject } from '../objects/inventory.ts';
import { groupKind, kindsDeclaredBy } from '../objects/resource-scope.ts';

/** One rendered object as the planner sees it. */
export interface PlanInput {
  object: KubeObject;
  /** The object exists in the cluster. */
  exists: boolean;
  /** Applied before and unchanged since (same content, same resourceVersion): no work at all. */
  settled: boolean;
  /** Its `stencil.dev/wave` (default 0). */
  wave?: number;
}

export interface ApplyStep {
  /** Indexes (into the planned objects) to dry-run before anything of this step is written. */
  check: number[];
  /** Indexes to write, in install order, once every check of the step passed. */
  write: number[];
  /** Kinds (apiVersion and kind) that must be served before this step's checks can run. */
  awaitKinds: { apiVersion: string; kind: string }[];
  /** Indexes of the objects of earlier waves that must be healthy before this step runs. */
  awaitHealthy?: number[];
  /** The wave this step belongs to. */
  wave?: number;
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
 * Plans the apply of `inputs` (already in install order, so by wave). Settled objects are left
 * out. Each wave is planned on its own and waits for every object of the earlier waves to be
 * healthy. Within a wave, when the render creates a Namespace or installs a CRD that other
 * objects of it need, those prerequisites are written in a first step (after every object that
 * can be checked now passed its dry run), and the objects that need them in a second step.
 */
export function planApply(inputs: readonly PlanInput[]): ApplyPlan {
  const waves = [...new Set(inputs.map((input) => input.wave ?? 0))].sort((a, b) => a - b);
  const steps = waves.flatMap((wave) => {
    const members = inputs.map((_, i) => i).filter((i) => (inputs[i]!.wave ?? 0) === wave);
    const earlier = inputs.map((_, i) => i).filter((i) => (inputs[i]!.wave ?? 0) < wave);
    const planned = planWave(inputs, members);
    if (planned.length === 0) return [];
    if (earlier.length > 0) planned[0] = { ...planned[0]!, awaitHealthy: earlier };
    return waves.length > 1 ? planned.map((step) => ({ ...step, wave })) : planned;
  });
  return { steps };
}

/** The steps of one wave: prerequisites (new Namespaces, CRDs) first when others need them. */
function planWave(inputs: readonly PlanInput[], members: number[]): ApplyStep[] {
  const pending = members.filter((i) => !inputs[i]!.settled);
  if (pending.length === 0) return [];
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
  if (deferred.length === 0) return [{ check: pending, write: pending, awaitKinds: [] }];

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
  return [
    { check: pending.filter((i) => !deferred.includes(i)), write: prerequisites, awaitKinds: [] },
    {
      check: deferred,
      write: pending.filter((i) => !prerequisites.includes(i)),
      awaitKinds: [...awaitKinds.values()],
    },
  ];
}

/**
 * What a preview (ADR 0031: a preflight that writes nothing) can dry-run now: every unsettled
 * object but those in a Namespace this render creates, or of a kind a CRD it changes declares;
 * their dry run would fail only because the prerequisite is not written yet. Waves are not
 * waited for: nothing is written, so nothing needs to be healthy first.
 */
export function previewChecks(inputs: readonly PlanInput[]): {
  check: number[];
  deferred: number[];
} {
  const pending = inputs.flatMap((input, i) => (input.settled ? [] : [i]));
  const newNamespaces = new Set(
    inputs
      .filter((input) => isNamespace(input.object) && !input.exists)
      .map((input) => input.object.metadata.name),
  );
  const newKinds = kindsDeclaredBy(pending.map((i) => inputs[i]!.object).filter(isCrd));
  const needsPrerequisite = ({ object }: PlanInput): boolean =>
    (object.metadata.namespace !== undefined && newNamespaces.has(object.metadata.namespace)) ||
    newKinds.has(groupKind(object.apiVersion, object.kind));
  return {
    check: pending.filter((i) => !needsPrerequisite(inputs[i]!)),
    deferred: pending.filter((i) => needsPrerequisite(inputs[i]!)),
  };
}

/** Where a run of the plan stands when it reaches a step. */
export interface StepContext {
  /** The rendered objects, aligned with the plan's indexes. */
  desired: readonly KubeObject[];
  /** What the cluster holds of each, as last read or written in this pass. */
  current: readonly (KubeObject | undefined)[];
  /** Whether this pass has written anything yet. */
  wroteThisPass: boolean;
  /** Aligned with `desired`: why an object must not be applied yet (an input not observed). */
  waits?: readonly (string | undefined)[];
}

/**
 * Why `step` must wait, or undefined: the wave gate first (every object of the earlier waves it
 * awaits is Current), then the objects' own inputs. Objects written in this pass are judged in
 * the next one, from a fresh read: the answer to our own apply predates anything their
 * controller reports.
 */
export function stepWait(step: ApplyStep, context: StepContext): string | undefined {
  const wave = step.wave ?? 0;
  const earlier = step.awaitHealthy ?? [];
  if (earlier.length > 0 && context.wroteThisPass)
    return `wave ${wave} waits for the earlier waves, just applied, to report their health`;
  for (const i of earlier) {
    const live = context.current[i];
    const health = live
      ? healthOf(live, context.desired[i])
      : { status: 'InProgress', message: 'not created yet' };
    if (health.status !== 'Current')
      return `wave ${wave} waits for ${describeObject(context.desired[i]!)} (${health.status}${health.message ? `: ${health.message}` : ''})`;
  }
  // After the gate: a producer of an earlier wave that is not healthy yet is the first thing to
  // report; here it is healthy but what the object reads is not there.
  const held = [...step.check, ...step.write].map((i) => context.waits?.[i]).find((w) => w);
  return held ? `wave ${wave}: ${held}` : undefined;
}

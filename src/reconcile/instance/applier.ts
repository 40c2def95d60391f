// Executes an apply plan (src/engine/sync/apply-plan.ts) against the cluster: reads the live
// objects it applied before, refuses to take over objects it does not own, then runs each step —
// wait for the kinds it needs, dry-run its checks (the gate: one rejection and the step writes
// nothing; the answer also says whether an object not read exists), write what differs from the
// live object. SPEC §6 steps 3–4; ADRs 0026 and 0028 for what is read, and when nothing is sent at all.
import type { KubeObject } from '../../api/object-meta.ts';
import {
  ANNOTATION_ADOPT,
  ANNOTATION_APPLIED_HASH,
  LABEL_INSTANCE_UID,
} from '../../api/well-known.ts';
import {
  planApply,
  previewChecks,
  stepWait,
  type ApplyPlan,
  type ApplyStep,
  type PlanInput,
} from '../../engine/sync/apply-plan.ts';
import { carryIgnoredFields, coveredBy, sameManagedState } from '../../engine/sync/drift.ts';
import { describeObject, resourceKey, waveOf, type Owner } from '../../engine/objects/inventory.ts';
import type { ApplyReport } from '../../engine/pass/observation.ts';
import { AppliedMemo } from './applied-memo.ts';
import { isClusterError, isNamespaceTerminating, type ClusterPort } from '../cluster-port.ts';
import { idOf, mapLimit } from './resource-sync.ts';

export type ApplyResult = ApplyReport;

/** Dry runs of one step sent at once (live reads use the same bound). */
const DRY_RUNS_IN_FLIGHT = 8;

/**
 * Rendered objects are judged strictly, their dry runs and their applies alike (ADR 0030): an
 * apply must not pass where the dry run that admitted it failed, nor drop what was rendered.
 */
const STRICT = { fieldValidation: 'Strict' } as const;

function adoptionRefusal(live: KubeObject, owner: Owner): string | undefined {
  const holder = live.metadata.labels?.[LABEL_INSTANCE_UID];
  if (holder === owner.uid) return undefined;
  if (live.metadata.annotations?.[ANNOTATION_ADOPT] === `${owner.namespace}/${owner.name}`)
    return undefined;
  const by = holder ? ` (it belongs to another TemplateInstance, uid ${holder})` : '';
  return `${describeObject(live)} already exists and is not managed by this instance${by}; annotate it with ${ANNOTATION_ADOPT}: ${owner.namespace}/${owner.name} to let this instance adopt it`;
}

/**
 * An object in the way that this instance may not adopt. Only an edit of it (the adopt
 * annotation) or its deletion changes the answer, so the pass waits on it rather than retrying.
 */
function adoptionRefused(live: KubeObject, message: string): ApplyResult {
  const { name = '', namespace, resourceVersion } = live.metadata;
  const blockedBy = {
    apiVersion: live.apiVersion,
    kind: live.kind,
    name,
    namespace,
    resourceVersion,
  };
  return { ok: false, message, retry: false, blockedBy };
}

function rejection(object: KubeObject, error: unknown, stage: string): ApplyResult {
  if (!isClusterError(error) || error.kind === 'Aborted') throw error;
  return {
    ok: false,
    message: `${describeObject(object)} rejected by the API server (${stage}): ${error.message}`,
    retry: error.kind !== 'Invalid',
  };
}

export interface ApplyRequest {
  owner: Owner;
  /** The rendered objects, in install order. */
  rendered: KubeObject[];
  /** Paths that keep their live value (revert/strict). */
  ignoreFields?: string[];
  memo?: AppliedMemo;
  /** Told before each write, and the returned function after it (see DependencyTracker). */
  beginWrite?: (object: KubeObject) => (result: KubeObject | undefined) => void;
  /**
   * Aligned with `rendered`: why an object must not be applied yet (an `observed` input not
   * there), or undefined. Such an object was rendered with "" in place of the value.
   */
  waits?: readonly (string | undefined)[];
  /**
   * Resource keys (resourceKey) of what the instance applied before (its recorded resources):
   * read first. Any other object is probed by its dry run instead.
   */
  known?: ReadonlySet<string>;
}

/** One run of a plan: the state its steps share. */
class PlanRun {
  readonly written: KubeObject[] = [];
  /** Objects a write step found as rendered (settled ones are counted by the caller). */
  same = 0;
  readonly desired: KubeObject[];
  readonly live: (KubeObject | undefined)[];
  readonly dryRuns: (KubeObject | undefined)[];
  readonly result: (KubeObject | undefined)[];
  private readonly hashes: string[];

  constructor(
    private readonly cluster: ClusterPort,
    private readonly request: ApplyRequest,
    prepared: Prepared,
    /** Objects not read yet: their dry run tells whether they exist. */
    private readonly probed: ReadonlySet<number>,
  ) {
    this.desired = [...prepared.desired];
    this.hashes = [...prepared.hashes];
    this.live = [...prepared.live];
    this.dryRuns = new Array<KubeObject | undefined>(this.desired.length);
    this.result = [...prepared.live];
  }

  private waiting(message: string): ApplyResult {
    return {
      ok: false,
      waiting: true,
      retry: true,
      written: this.written,
      live: this.result,
      unchanged: this.same,
      message,
    };
  }

  /** A refused check or write ends the pass: failed, or waiting while a namespace is deleted. */
  private rejection(object: KubeObject, error: unknown, stage: string): ApplyResult {
    // Nothing can be created there until the namespace is gone; when it is the instance's own,
    // the namespace controller is about to delete the instance too. Wait, quietly.
    if (isNamespaceTerminating(error))
      return this.waiting(
        `namespace ${object.metadata.namespace ?? ''} is being deleted: ${describeObject(object)} is not applied there`,
      );
    return rejection(object, error, stage);
  }

  /** Runs one step; a result means the pass ends here (rejected or waiting). */
  async step(step: ApplyStep): Promise<ApplyResult | undefined> {
    const wait = stepWait(step, {
      desired: this.desired,
      current: this.result,
      wroteThisPass: this.written.length > 0,
      ...(this.request.waits ? { waits: this.request.waits } : {}),
    });
    if (wait) return this.waiting(wait);
    const missing = await this.awaitKinds(step.awaitKinds);
    if (missing)
      return this.waiting(
        `waiting for kind ${missing} (installed by this Template) to be served by the API server`,
      );
    const rejected = await this.check(step.check);
    if (rejected) return rejected;
    for (const i of step.write) {
      const current = this.live[i];
      if (current && sameManagedState(current, this.dryRuns[i]!)) {
        this.same++;
        continue;
      }
      const written = this.request.beginWrite?.(this.desired[i]!);
      try {
        this.result[i] = await this.cluster.apply(this.desired[i]!, STRICT);
        // Recorded before the tracker hears of it: the watch event of this write, held while
        // the apply was in flight, is recognised as ours by this record.
        this.request.memo?.record(this.desired[i]!, this.hashes[i]!, this.result[i]);
        written?.(this.result[i]);
        this.written.push(this.result[i]);
      } catch (error) {
        written?.(undefined);
        return this.rejection(this.desired[i]!, error, 'apply');
      }
    }
    return undefined;
  }

  /** The gate of a step: the dry runs, then the adoption check of what they found to exist. */
  async check(indexes: number[]): Promise<ApplyResult | undefined> {
    return (await this.dryRun(indexes)) ?? (await this.adoptProbed(indexes));
  }

  /**
   * Dry runs change nothing, so they go out together; the first rejection in install order is
   * the one reported.
   */
  private async dryRun(indexes: number[]): Promise<ApplyResult | undefined> {
    const checks = await mapLimit(indexes, DRY_RUNS_IN_FLIGHT, async (i) => {
      try {
        this.dryRuns[i] = await this.cluster.apply(this.desired[i]!, { ...STRICT, dryRun: true });
        return undefined;
      } catch (error) {
        return this.rejection(this.desired[i]!, error, 'dry run');
      }
    });
    return checks.find((c) => c !== undefined);
  }

  /**
   * Objects that were not read: a dry-run answer with a resourceVersion means the object exists.
   * Its labels in that answer are already ours (the dry run applied them), so it is read for the
   * adoption check; one that may be adopted is checked again as it would be applied over what
   * is live (ignored fields carried).
   */
  private async adoptProbed(indexes: number[]): Promise<ApplyResult | undefined> {
    const existing = indexes.filter(
      (i) => this.probed.has(i) && this.dryRuns[i]?.metadata.resourceVersion,
    );
    if (existing.length === 0) return undefined;
    const failed = await readLive(this.cluster, this.request.rendered, existing, this.live);
    if (failed) return failed;
    for (const i of existing) {
      const live = this.live[i];
      const refusal = live && adoptionRefusal(live, this.request.owner);
      if (refusal) return adoptionRefused(live, refusal);
      this.result[i] = live;
      const { desired, hash } = desiredOf(
        this.request.rendered[i]!,
        live,
        this.request.ignoreFields ?? [],
      );
      this.desired[i] = desired;
      this.hashes[i] = hash;
    }
    return this.dryRun(existing);
  }

  /**
   * The first kind not served yet, asked once: a pass never waits holding its worker; the
   * caller ends it as Waiting and the queue brings it back (requeueAfter).
   */
  private async awaitKinds(kinds: ApplyStep['awaitKinds']): Promise<string | undefined> {
    for (const { apiVersion, kind } of kinds)
      if ((await this.cluster.scopeOf(apiVersion, kind)) === undefined)
        return `${kind} (${apiVersion})`;
    return undefined;
  }
}

/** Remembers what the run wrote, or found settled by its annotation (see AppliedMemo). */
function recordSettled(
  memo: AppliedMemo | undefined,
  steps: ApplyStep[],
  run: PlanRun,
  prepared: Prepared,
): void {
  if (!memo) return;
  for (const i of new Set(steps.flatMap((s) => s.write)))
    if (run.result[i]) memo.record(run.desired[i]!, prepared.hashes[i]!, run.result[i]);
  for (const [i, input] of prepared.inputs.entries())
    if (input.settled && prepared.live[i])
      memo.record(prepared.desired[i]!, prepared.hashes[i]!, prepared.live[i]);
}

/** The live object; none when its kind is not served yet (a CRD this render installs). */
async function liveObject(
  cluster: ClusterPort,
  object: KubeObject,
): Promise<KubeObject | undefined> {
  try {
    return await cluster.get(idOf(object));
  } catch (error) {
    if (isClusterError(error, 'NotServed')) return undefined;
    throw error;
  }
}

/**
 * Reads the live objects at `indexes` into `live`; a read the API server refuses (Forbidden: the
 * operator lacks a right) is reported like a refused write, so the status says which right.
 */
async function readLive(
  cluster: ClusterPort,
  rendered: KubeObject[],
  indexes: number[],
  live: (KubeObject | undefined)[],
): Promise<ApplyResult | undefined> {
  const reads = await mapLimit(indexes, DRY_RUNS_IN_FLIGHT, async (i) => {
    try {
      live[i] = await liveObject(cluster, rendered[i]!);
      return undefined;
    } catch (error) {
      return rejection(rendered[i]!, error, 'read');
    }
  });
  return reads.find((r) => r !== undefined);
}

/** What is applied, with the hash it carries (computed before the hash is added). */
function desiredOf(
  rendered: KubeObject,
  live: KubeObject | undefined,
  ignoreFields: string[],
): { desired: KubeObject; hash: string } {
  // Ignored paths keep their live value in what is applied (SPEC §7).
  return withAppliedHash(carryIgnoredFields(rendered, live, ignoreFields));
}

/** `object` stamped with the hash of its content, and that hash (ADR 0028). */
export function withAppliedHash(object: KubeObject): { desired: KubeObject; hash: string } {
  const hash = AppliedMemo.hash(object);
  const metadata = {
    ...object.metadata,
    annotations: { ...object.metadata.annotations, [ANNOTATION_APPLIED_HASH]: hash },
  };
  return { desired: { ...object, metadata }, hash };
}

/** The live object carries the hash of exactly this content and still holds all of it. */
export function carriesAppliedHash(desired: KubeObject, hash: string, live: KubeObject): boolean {
  return live.metadata.annotations?.[ANNOTATION_APPLIED_HASH] === hash && coveredBy(desired, live);
}

/**
 * Whether an object needs no work: our record says the live object is what our last apply left
 * (same content, same resourceVersion); or, without a record of ours (a restart, a new leader),
 * the live object carries the hash of exactly this content and still holds all of it.
 */
function isSettled(
  memo: AppliedMemo | undefined,
  desired: KubeObject,
  hash: string,
  live: KubeObject | undefined,
): boolean {
  if (!live) return false;
  if (memo?.settled(desired, hash, live)) return true;
  return carriesAppliedHash(desired, hash, live);
}

/** Everything planned from what is known of the live objects so far. */
interface Prepared {
  live: (KubeObject | undefined)[];
  desired: KubeObject[];
  hashes: string[];
  inputs: PlanInput[];
  plan: ApplyPlan;
}

function prepare(request: ApplyRequest, live: (KubeObject | undefined)[]): Prepared {
  const { rendered, ignoreFields = [], memo } = request;
  const built = rendered.map((o, i) => desiredOf(o, live[i], ignoreFields));
  const desired = built.map((b) => b.desired);
  const hashes = built.map((b) => b.hash);
  const inputs = desired.map((object, i) => ({
    object,
    exists: live[i] !== undefined,
    settled: isSettled(memo, object, hashes[i]!, live[i]),
    wave: waveOf(object),
  }));
  return { live, desired, hashes, inputs, plan: planApply(inputs) };
}

/**
 * Reads what must be read before anything is checked, and plans: the objects the instance applied
 * before, Namespaces, and whatever a later step checks; the adoption check of all that was read.
 * The rest (`probed`) is checked by its dry run in the first step.
 */
async function readAndPlan(
  cluster: ClusterPort,
  request: ApplyRequest,
): Promise<ApplyResult | { prepared: Prepared; probed: Set<number> }> {
  const { owner, rendered, memo, known } = request;
  const isKnown = (o: KubeObject): boolean =>
    known?.has(resourceKey(o)) === true || memo?.has(o) === true;
  // Namespaces are always read: whether one exists decides the steps (planApply).
  const probed = new Set(
    rendered.flatMap((o, i) =>
      isKnown(o) || (o.apiVersion === 'v1' && o.kind === 'Namespace') ? [] : [i],
    ),
  );
  const live = new Array<KubeObject | undefined>(rendered.length);
  const all = rendered.map((_, i) => i);
  const failed = await readLive(
    cluster,
    rendered,
    all.filter((i) => !probed.has(i)),
    live,
  );
  if (failed) return failed;
  let prepared = prepare(request, live);
  const first = new Set(prepared.plan.steps[0]?.check ?? []);
  const late = [...probed].filter((i) => !first.has(i));
  if (late.length > 0) {
    // Checked after an earlier step writes: read now, so adoption is settled before any write.
    const lateFailed = await readLive(cluster, rendered, late, live);
    if (lateFailed) return lateFailed;
    for (const i of late) probed.delete(i);
    prepared = prepare(request, live);
  }
  for (const object of live) {
    const refusal = object && adoptionRefusal(object, owner);
    if (refusal) return adoptionRefused(object, refusal);
  }
  return { prepared, probed };
}

/**
 * Applies `rendered` for `owner`: nothing is written unless every object passes the adoption
 * check and the dry runs of its step; each object whose dry-run result differs from the live
 * object is applied. Objects that need a Namespace or a CRD of the same render are checked and
 * written in a second step, once those exist (see planApply).
 *
 * Objects the instance applied before are read first: most need no work at all. Any other is
 * not read: its dry run, which the gate sends anyway, answers whether it exists (a
 * resourceVersion), and only one that does is read for the adoption check — still before
 * anything is written, since every such object is checked in the first step.
 */
export async function applyResources(
  cluster: ClusterPort,
  request: ApplyRequest,
): Promise<ApplyResult> {
  const ready = await readAndPlan(cluster, request);
  if ('ok' in ready) return ready;
  const { prepared, probed } = ready;
  const { memo } = request;
  const run = new PlanRun(cluster, request, prepared, probed);
  // Settled objects are in no step: they count as unchanged once their wave was reached.
  const { inputs, plan } = prepared;
  const settledBefore = (wave: number): number =>
    inputs.filter((input) => input.settled && (input.wave ?? 0) < wave).length;
  for (const step of plan.steps) {
    const stopped = await run.step(step);
    // Nothing is remembered from a pass that stopped: an object of a step that did not run
    // must not look settled next time.
    if (stopped?.ok === false && stopped.waiting)
      return { ...stopped, unchanged: stopped.unchanged + settledBefore(step.wave ?? 0) };
    if (stopped) return stopped;
  }
  recordSettled(memo, plan.steps, run, prepared);
  return {
    ok: true,
    written: run.written,
    live: run.result.map((o, i) => o ?? run.dryRuns[i]!),
    unchanged: run.same + inputs.filter((input) => input.settled).length,
  };
}

/** What applying a render would do, found without writing (ADR 0031). */
export type ApplyPreview =
  { outcome: 'changed' | 'unchanged' } | { outcome: 'failed'; message: string };

/**
 * Previews `applyResources` for a preflight: the same reads, adoption check and strict dry runs,
 * and no write. Unchanged when every object is settled (ADR 0028) and none would be pruned;
 * a render our own last applies produced exactly is known unchanged without a read. Objects that
 * need a Namespace or CRD of the same render are not dry-run (see previewChecks).
 */
export async function previewApply(
  cluster: ClusterPort,
  request: ApplyRequest,
): Promise<ApplyPreview> {
  const renderedKeys = new Set(request.rendered.map((o) => resourceKey(o)));
  const pruned = [...(request.known ?? [])].some((key) => !renderedKeys.has(key));
  if (!pruned && appliedExactly(request)) return { outcome: 'unchanged' };
  const ready = await readAndPlan(cluster, request);
  if ('ok' in ready) return previewOf(ready) ?? { outcome: 'changed' };
  const { prepared, probed } = ready;
  const run = new PlanRun(cluster, request, prepared, probed);
  // An object waiting for an `observed` input was rendered with "" in its place: not judged yet.
  const checks = previewChecks(prepared.inputs).check.filter((i) => !request.waits?.[i]);
  const rejected = await run.check(checks);
  if (rejected) return previewOf(rejected) ?? { outcome: 'changed' };
  const changed = pruned || prepared.inputs.some((input) => !input.settled);
  return { outcome: changed ? 'changed' : 'unchanged' };
}

/** A refusal is a failure; a wait (a namespace being deleted) is not the render's fault. */
function previewOf(result: ApplyResult): ApplyPreview | undefined {
  if (result.ok || result.waiting) return undefined;
  return { outcome: 'failed', message: result.message };
}

/** Every object is what our last apply of it wrote (no ignored field depends on the live one). */
function appliedExactly({ rendered, memo, ignoreFields = [] }: ApplyRequest): boolean {
  if (!memo || ignoreFields.length > 0) return false;
  return rendered.every((o) => memo.lastHash(o) === AppliedMemo.hash(o));
}

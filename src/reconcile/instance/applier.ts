// Executes an apply plan (src/engine/sync/apply-plan.ts) against the cluster: reads the live
// objects, refuses to take over objects it does not own, then runs each step — wait for the kinds
// it needs, dry-run its checks (the gate: one rejection and the step writes nothing), write what
// differs from the live object. SPEC §6 steps 3–4.
import type { KubeObject } from '../../api/object-meta.ts';
import { ANNOTATION_ADOPT, LABEL_INSTANCE_UID } from '../../api/well-known.ts';
import { planApply, stepWait, type ApplyStep } from '../../engine/sync/apply-plan.ts';
import { carryIgnoredFields, sameManagedState } from '../../engine/sync/drift.ts';
import { describeObject, waveOf, type Owner } from '../../engine/objects/inventory.ts';
import type { ApplyReport } from '../../engine/pass/observation.ts';
import { AppliedMemo } from './applied-memo.ts';
import { isClusterError, isNamespaceTerminating, type ClusterPort } from '../cluster-port.ts';
import { idOf, mapLimit } from './resource-sync.ts';

export type ApplyResult = ApplyReport;

/** Dry runs of one step sent at once (live reads use the same bound). */
const DRY_RUNS_IN_FLIGHT = 8;

function adoptionRefusal(live: KubeObject, owner: Owner): string | undefined {
  const holder = live.metadata.labels?.[LABEL_INSTANCE_UID];
  if (holder === owner.uid) return undefined;
  if (live.metadata.annotations?.[ANNOTATION_ADOPT] === `${owner.namespace}/${owner.name}`)
    return undefined;
  const by = holder ? ` (it belongs to another TemplateInstance, uid ${holder})` : '';
  return `${describeObject(live)} already exists and is not managed by this instance${by}; annotate it with ${ANNOTATION_ADOPT}: ${owner.namespace}/${owner.name} to let this instance adopt it`;
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
}

/** One run of a plan: the state its steps share. */
class PlanRun {
  readonly written: KubeObject[] = [];
  /** Objects a write step found as rendered (settled ones are counted by the caller). */
  same = 0;
  readonly dryRuns: (KubeObject | undefined)[];
  readonly result: (KubeObject | undefined)[];

  constructor(
    private readonly cluster: ClusterPort,
    readonly desired: KubeObject[],
    readonly live: (KubeObject | undefined)[],
    private readonly request: Pick<ApplyRequest, 'beginWrite' | 'waits' | 'memo'>,
    private readonly hashes: string[],
  ) {
    this.dryRuns = new Array<KubeObject | undefined>(desired.length);
    this.result = [...live];
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
    // Dry runs change nothing, so they go out together; the first rejection in install order is
    // the one reported.
    const checks = await mapLimit(step.check, DRY_RUNS_IN_FLIGHT, async (i) => {
      try {
        this.dryRuns[i] = await this.cluster.apply(this.desired[i]!, { dryRun: true });
        return undefined;
      } catch (error) {
        return this.rejection(this.desired[i]!, error, 'dry run');
      }
    });
    const rejected = checks.find((c) => c !== undefined);
    if (rejected) return rejected;
    for (const i of step.write) {
      const current = this.live[i];
      if (current && sameManagedState(current, this.dryRuns[i]!)) {
        this.same++;
        continue;
      }
      const written = this.request.beginWrite?.(this.desired[i]!);
      try {
        this.result[i] = await this.cluster.apply(this.desired[i]!);
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

/** Remembers what the run wrote or found unchanged (see AppliedMemo). */
function recordWritten(
  memo: AppliedMemo | undefined,
  steps: ApplyStep[],
  run: PlanRun,
  hashes: string[],
): void {
  if (!memo) return;
  for (const i of new Set(steps.flatMap((s) => s.write)))
    if (run.result[i]) memo.record(run.desired[i]!, hashes[i]!, run.result[i]);
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
 * Applies `rendered` for `owner`: nothing is written unless every object passes the adoption
 * check and the dry runs of its step; each object whose dry-run result differs from the live
 * object is applied. Objects that need a Namespace or a CRD of the same render are checked and
 * written in a second step, once those exist (see planApply).
 */
export async function applyResources(
  cluster: ClusterPort,
  request: ApplyRequest,
): Promise<ApplyResult> {
  const { owner, rendered, ignoreFields = [], memo } = request;
  type Read = { ok: true; live: KubeObject | undefined } | { ok: false; error: unknown };
  const reads = await mapLimit(rendered, DRY_RUNS_IN_FLIGHT, async (object): Promise<Read> => {
    try {
      return { ok: true, live: await liveObject(cluster, object) };
    } catch (error) {
      return { ok: false, error };
    }
  });
  // A read the API server refuses (Forbidden: the operator lacks a right) is reported like a
  // refused write, so the instance's status says which right is missing.
  for (const [i, read] of reads.entries())
    if (!read.ok) return rejection(rendered[i]!, read.error, 'read');
  const live = reads.map((read) => (read.ok ? read.live : undefined));
  for (const object of live) {
    const refusal = object && adoptionRefusal(object, owner);
    if (refusal) return { ok: false, message: refusal, retry: true };
  }
  // Ignored paths keep their live value in what is applied (SPEC §7).
  const desired = rendered.map((o, i) => carryIgnoredFields(o, live[i], ignoreFields));
  const hashes = desired.map((o) => AppliedMemo.hash(o));
  const inputs = desired.map((object, i) => ({
    object,
    exists: live[i] !== undefined,
    settled: memo?.settled(object, hashes[i]!, live[i]) ?? false,
    wave: waveOf(object),
  }));
  const plan = planApply(inputs);
  const run = new PlanRun(cluster, desired, live, request, hashes);
  // Settled objects are in no step: they count as unchanged once their wave was reached.
  const settledBefore = (wave: number): number =>
    inputs.filter((input) => input.settled && input.wave < wave).length;
  for (const step of plan.steps) {
    const stopped = await run.step(step);
    // Nothing is remembered from a pass that stopped: an object of a step that did not run
    // must not look settled next time.
    if (stopped?.ok === false && stopped.waiting)
      return { ...stopped, unchanged: stopped.unchanged + settledBefore(step.wave ?? 0) };
    if (stopped) return stopped;
  }
  recordWritten(memo, plan.steps, run, hashes);
  return {
    ok: true,
    written: run.written,
    live: run.result.map((o, i) => o ?? run.dryRuns[i]!),
    unchanged: run.same + inputs.filter((input) => input.settled).length,
  };
}

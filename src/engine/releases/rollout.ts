// Progressive rollout of a Template's newest revision (docs/adr/0012), as pure functions: which
// stage an instance belongs to, which revision it should render, and the next rollout state from
// the instances' reported state. The Template reconciler stores the state in the Template's
// status; the instance reconciler and the event router evaluate targetRevision over it.
import { instanceKey } from '../shared/instance-key.ts';
import type { LabelSelector } from '../../api/object-meta.ts';
import type { PreflightStatus, RolloutSpec, RolloutStatus } from '../../api/template.ts';
import type { InstancePhase, TemplateInstance } from '../../api/template-instance.ts';
import { ANNOTATION_ROLLOUT } from '../../api/well-known.ts';
import { selectorMatches } from '../shared/target-namespaces.ts';

/** What the rollout needs to know of one instance of the Template. */
export interface RolloutMember {
  /** `namespace/name`. */
  key: string;
  labels: Record<string, string>;
  namespaceLabels: Record<string, string>;
  /** Creation order: creationTimestamp, then uid. */
  createdAt: string;
  uid: string;
  /** `spec.templateRef.revision`. */
  pin?: number;
  /** `status.revision`: what its last render used. */
  revision?: number;
  phase?: InstancePhase;
  /** Its status reflects its current spec (status.observedGeneration == generation). */
  current: boolean;
}

/** The rollout's view of an instance. */
export function memberOf(
  instance: TemplateInstance,
  namespaceLabels: Record<string, string>,
): RolloutMember {
  const { metadata, spec, status } = instance;
  return {
    key: instanceKey(instance),
    labels: metadata.labels ?? {},
    namespaceLabels,
    createdAt: metadata.creationTimestamp ?? '',
    uid: metadata.uid ?? '',
    pin: spec.templateRef.revision,
    revision: status?.revision,
    phase: status?.phase,
    current: status?.observedGeneration === metadata.generation,
  };
}

/** Each unpinned member's index within its stage (see stageMembers), by key. */
export function stagePositions(
  members: RolloutMember[],
  spec: RolloutSpec | undefined,
): Map<string, number> {
  const positions = new Map<string, number>();
  for (const stage of stageMembers(members, spec))
    for (const [index, member] of stage.entries()) positions.set(member.key, index);
  return positions;
}

const selects = (selector: LabelSelector | undefined, labels: Record<string, string>): boolean =>
  selector === undefined || selectorMatches(selector, labels);

/** Index of the first stage selecting the member; stages.length = the implicit last stage. */
export function stageOf(member: RolloutMember, spec: RolloutSpec | undefined): number {
  const stages = spec?.stages ?? [];
  const index = stages.findIndex(
    (s) =>
      selects(s.namespaceSelector, member.namespaceLabels) &&
      selects(s.instanceSelector, member.labels),
  );
  return index === -1 ? stages.length : index;
}

function byCreation(a: RolloutMember, b: RolloutMember): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0;
}

/** The unpinned members of each stage, in creation order. */
export function stageMembers(
  members: RolloutMember[],
  spec: RolloutSpec | undefined,
): RolloutMember[][] {
  const stages: RolloutMember[][] = Array.from(
    { length: (spec?.stages?.length ?? 0) + 1 },
    () => [],
  );
  for (const member of members)
    if (member.pin === undefined) stages[stageOf(member, spec)]!.push(member);
  for (const stage of stages) stage.sort(byCreation);
  return stages;
}

export function isProgressive(spec: RolloutSpec | undefined): boolean {
  return spec?.strategy === 'Progressive';
}

/**
 * The revision an instance should render; undefined while the Template has no revision (its
 * live spec is rendered). `position` is the member's index within its stage (stageMembers).
 * Under either strategy, a revision whose preflight runs or blocked it holds every instance on
 * the stable revision (ADR 0031); strategy All then moves them all at once.
 */
export function targetRevision(
  member: RolloutMember,
  spec: RolloutSpec | undefined,
  latest: number | undefined,
  rollout: RolloutStatus | undefined,
  position: () => number,
): number | undefined {
  if (member.pin !== undefined) return member.pin;
  if (latest === undefined) return undefined;
  if (!rollout) return latest;
  if (rollout.phase === 'Complete') return rollout.revision;
  // Never back: an instance that reached the new revision stays on it.
  if (member.revision === rollout.revision) return rollout.revision;
  if (rollout.phase === 'Preflight' || rollout.blockedByPreflight || !isProgressive(spec))
    return rollout.stableRevision;
  const stage = stageOf(member, spec);
  if (stage < rollout.stage) return rollout.revision;
  if (stage === rollout.stage && position() < rollout.admitted) return rollout.revision;
  return rollout.stableRevision;
}

/** maxUnavailable as a count: a number, or a percent of `total` (at least 1). */
export function unavailableBudget(spec: RolloutSpec | undefined, total: number): number {
  const value = spec?.maxUnavailable ?? 1;
  if (typeof value === 'number') return Math.max(1, value);
  const percent = Number.parseInt(value, 10);
  return Math.max(1, Math.floor((total * (Number.isFinite(percent) ? percent : 0)) / 100));
}

export interface RolloutInput {
  spec: RolloutSpec | undefined;
  latest: number;
  previous: RolloutStatus | undefined;
  members: RolloutMember[];
  /** The Template carries `stencil.dev/rollout: resume`. */
  resume: boolean;
  /** What the preflight of the rollout's revision found so far (ADR 0031). */
  preflight?: PreflightStatus;
}

const MAX_FAILING_NAMED = 10;

/** Ready on the rollout's revision, as of its current spec. */
const updatedAndReady = (m: RolloutMember, revision: number): boolean =>
  m.revision === revision && m.current && m.phase === 'Ready';

const failedOn = (m: RolloutMember, revision: number): boolean =>
  m.revision === revision && m.current && m.phase === 'Failed';

/**
 * The next rollout state. A new latest revision starts with its preflight (ADR 0031): no instance
 * moves until every one was checked against it, and a failing one holds the rollout under
 * preflight Block. Then strategy All completes at once; a progressive rollout admits instances of
 * the current stage (in creation order) while fewer than maxUnavailable admitted ones are not
 * Ready on the new revision, moves on when the whole stage is, and completes after the last
 * stage. A failure halts it (pauseOnFailure, default true) until resumed; a resumed rollout no
 * longer halts, and its failed instances no longer hold a slot. Resuming a preflight block lifts
 * that block only.
 */
export function planRollout(input: RolloutInput): RolloutStatus {
  const { spec, latest, previous } = input;
  const stages = stageMembers(input.members, spec);
  // The first revision a Template gets: no instance is on another one to stay on.
  if (!previous) return complete(latest, stages);
  const state = previous.revision === latest ? { ...previous } : startFrom(previous, latest);
  const next =
    state.phase === 'Preflight'
      ? afterPreflight(state, input)
      : state.phase === 'Halted'
        ? afterHalt(state, input, stages)
        : { go: state };
  if ('hold' in next) return withCounts(next.hold, stages);
  if (next.go.phase === 'Complete' || !isProgressive(spec))
    return complete(next.go.revision, stages);
  return advance(next.go, stages, spec);
}

/** Whether a rollout stays as it is (`hold`) or goes on from a state (`go`). */
type Turn = { hold: RolloutStatus } | { go: RolloutStatus };

/** A preflight holds the rollout until its report is in, and blocks it if it failed under Block. */
function afterPreflight(state: RolloutStatus, input: RolloutInput): Turn {
  const report = input.preflight?.revision === state.revision ? input.preflight : undefined;
  if (!report || report.phase === 'Running') return { hold: state };
  if (report.phase === 'Failed' && input.spec?.preflight === 'Block' && !input.resume)
    return { hold: blockedByPreflight(state, report) };
  return { go: { ...state, phase: 'Progressing' } };
}

/** A halt holds until resumed; resuming a preflight block lifts that block only. */
function afterHalt(state: RolloutStatus, input: RolloutInput, stages: RolloutMember[][]): Turn {
  if (state.blockedByPreflight) {
    if (!input.resume) return { hold: state };
    const { blockedByPreflight: _, failing: __, message: ___, ...rest } = state;
    return { go: { ...rest, phase: 'Progressing' } };
  }
  if (!input.resume) {
    // Still halted: the failing list follows what the instances report now.
    const failing = stages.flat().filter((m) => failedOn(m, state.revision));
    return { hold: failing.length > 0 ? halted(state, failing) : state };
  }
  const { failing: _, message: __, ...rest } = state;
  return { go: { ...rest, phase: 'Progressing', resumed: true } };
}

function blockedByPreflight(state: RolloutStatus, report: PreflightStatus): RolloutStatus {
  return {
    ...state,
    phase: 'Halted',
    blockedByPreflight: true,
    failing: (report.failing ?? []).map((f) => f.instance),
    message: `blocked by preflight: ${report.failed} of ${report.total} instance(s) would fail on revision ${state.revision}; fix the Template or those instances, or annotate the Template ${ANNOTATION_ROLLOUT}=resume to roll on`,
  };
}

/** A new rollout of `latest`, from the revision the previous one left as stable. */
function startFrom(previous: RolloutStatus, latest: number): RolloutStatus {
  return {
    revision: latest,
    stableRevision: previous.phase === 'Complete' ? previous.revision : previous.stableRevision,
    stage: 0,
    admitted: 0,
    phase: 'Preflight',
  };
}

/** Admits, moves through stages, halts or completes, as far as the members' state allows. */
function advance(
  initial: RolloutStatus,
  stages: RolloutMember[][],
  spec: RolloutSpec | undefined,
): RolloutStatus {
  let state = initial;
  const budget = unavailableBudget(spec, stages.flat().length);
  const R = state.revision;
  const settled = (m: RolloutMember): boolean =>
    updatedAndReady(m, R) || (state.resumed === true && failedOn(m, R));
  for (;;) {
    const current = stages[state.stage] ?? [];
    const admittedMembers = [
      ...stages.slice(0, state.stage).flat(),
      ...current.slice(0, state.admitted),
    ];
    const failing = admittedMembers.filter((m) => failedOn(m, R));
    if (failing.length > 0 && spec?.pauseOnFailure !== false && !state.resumed)
      return withCounts(halted(state, failing), stages);
    const room = Math.max(0, budget - admittedMembers.filter((m) => !settled(m)).length);
    state = { ...state, admitted: Math.min(current.length, state.admitted + room) };
    if (state.admitted < current.length || !current.every(settled)) break;
    if (state.stage >= stages.length - 1) return complete(R, stages);
    state = { ...state, stage: state.stage + 1, admitted: 0 };
  }
  const stageName = spec?.stages?.[state.stage]?.name ?? 'remaining';
  return withCounts({ ...state, stageName, failing: undefined, message: undefined }, stages);
}

function halted(state: RolloutStatus, failing: RolloutMember[]): RolloutStatus {
  return {
    ...state,
    phase: 'Halted',
    failing: failing.slice(0, MAX_FAILING_NAMED).map((m) => m.key),
    message: `halted: ${failing.length} instance(s) failed on revision ${state.revision}; fix the Template or annotate it ${ANNOTATION_ROLLOUT}=resume`,
  };
}

function complete(revision: number, stages: RolloutMember[][]): RolloutStatus {
  return withCounts(
    { revision, stableRevision: revision, stage: 0, admitted: 0, phase: 'Complete' },
    stages,
  );
}

/**
 * Progress counts while a rollout runs. A complete one reports none: counts that follow every
 * instance would make the Template's status change (a write) whenever instances come and go,
 * with nothing to decide on.
 */
function withCounts(state: RolloutStatus, stages: RolloutMember[][]): RolloutStatus {
  const all = stages.flat();
  const result: RolloutStatus =
    state.phase === 'Complete'
      ? { ...state }
      : {
          ...state,
          updated: all.filter((m) => updatedAndReady(m, state.revision)).length,
          total: all.length,
        };
  for (const key of Object.keys(result) as (keyof RolloutStatus)[])
    if (result[key] === undefined) delete result[key];
  return result;
}

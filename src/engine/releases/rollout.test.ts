import { describe, expect, it } from 'vitest';
import type { PreflightStatus, RolloutSpec, RolloutStatus } from '../../api/template.ts';
import { preflightReport } from './preflight.ts';
import {
  planRollout,
  stageMembers,
  targetRevision,
  unavailableBudget,
  type RolloutMember,
} from './rollout.ts';
import { revisionsToPrune } from './revisions.ts';

/** 20 instances, 5 in each of 4 namespaces; `canary` is labelled stage=canary. */
function fleet(revision: number): RolloutMember[] {
  const canaryLabels: Record<string, string> = { stage: 'canary' };
  return ['canary', 'b', 'c', 'd'].flatMap((ns, n) =>
    Array.from({ length: 5 }, (_, i): RolloutMember => ({
      key: `${ns}/i${i}`,
      labels: {},
      namespaceLabels: ns === 'canary' ? canaryLabels : {},
      createdAt: `2026-12-03T00:00:${String(n * 5 + i).padStart(2, '0')}Z`,
      uid: `${ns}-${i}`,
      revision,
      phase: 'Ready' as const,
      current: true,
    })),
  );
}

const progressive: RolloutSpec = {
  strategy: 'Progressive',
  maxUnavailable: 2,
  stages: [{ name: 'canary', namespaceSelector: { matchLabels: { stage: 'canary' } } }],
};

const complete1: RolloutStatus = {
  revision: 1,
  stableRevision: 1,
  stage: 0,
  admitted: 0,
  phase: 'Complete',
};

/** Plays the instance reconcilers: each member moves to its target and reports `phase`. */
function reconcileAll(
  members: RolloutMember[],
  rollout: RolloutStatus,
  phaseOn: (revision: number) => RolloutMember['phase'],
): RolloutMember[] {
  const stages = stageMembers(members, progressive);
  return members.map((m) => {
    const target = targetRevision(
      m,
      progressive,
      rollout.revision,
      rollout,
      () =>
        stages.flat().indexOf(m) -
        stages
          .slice(
            0,
            stages.findIndex((s) => s.includes(m)),
          )
          .flat().length,
    );
    return { ...m, revision: target, phase: phaseOn(target ?? 0) };
  });
}

/** A finished preflight of `revision` over 20 instances. */
function checked(revision: number, failing: string[] = []): PreflightStatus {
  return preflightReport(revision, 20, [
    ...failing.map((instance) => ({ instance, outcome: 'failed' as const, reason: 'refused' })),
    ...Array.from({ length: 20 - failing.length }, (_, i) => ({
      instance: `ok/${i}`,
      outcome: 'changed' as const,
    })),
  ]);
}

/** The Template reconciler's side: the next rollout state of revision 2 from what members report. */
const plan = (
  members: RolloutMember[],
  previous: RolloutStatus,
  resume = false,
  preflight: PreflightStatus | undefined = checked(2),
): RolloutStatus =>
  planRollout({ spec: progressive, latest: 2, previous, members, resume, preflight });

describe('a progressive rollout', () => {
  it('updates the canary stage first, at most maxUnavailable at a time, then the rest', () => {
    let members = fleet(1);
    let rollout = plan(members, complete1);
    const inFlight: number[] = [];
    const seen: string[] = [];
    for (let step = 0; step < 50 && rollout.phase !== 'Complete'; step++) {
      const before = members.filter((m) => m.revision === 2).length;
      members = reconcileAll(members, rollout, () => 'Ready');
      inFlight.push(members.filter((m) => m.revision === 2).length - before);
      seen.push(`${rollout.stage}:${rollout.admitted}`);
      rollout = plan(members, rollout);
    }
    expect(rollout).toMatchObject({ phase: 'Complete', revision: 2, stableRevision: 2 });
    expect(rollout).not.toHaveProperty('updated');
    expect(members.filter((m) => m.revision === 2 && m.phase === 'Ready')).toHaveLength(20);
    expect(Math.max(...inFlight)).toBeLessThanOrEqual(2);
    // The first five moves were the canary namespace's.
    expect(seen.slice(0, 3)).toEqual(['0:2', '0:4', '0:5']);
  });

  it('halts after a canary fails, with the other 15 untouched, and names the failing ones', () => {
    let members = fleet(1);
    let rollout = plan(members, complete1);
    for (let step = 0; step < 10; step++) {
      members = reconcileAll(members, rollout, (r) => (r === 2 ? 'Failed' : 'Ready'));
      rollout = plan(members, rollout);
    }
    expect(rollout.phase).toBe('Halted');
    expect(rollout.failing).toEqual(['canary/i0', 'canary/i1']);
    expect(members.filter((m) => !m.key.startsWith('canary/')).every((m) => m.revision === 1)).toBe(
      true,
    );
    // A resume lets it go on; failures no longer stop it.
    rollout = plan(members, rollout, true);
    expect(rollout).toMatchObject({ phase: 'Progressing', resumed: true });
  });

  it('starts a new rollout from the stable revision when a newer revision appears', () => {
    const halted: RolloutStatus = {
      revision: 2,
      stableRevision: 1,
      stage: 0,
      admitted: 2,
      phase: 'Halted',
    };
    const next = planRollout({
      spec: progressive,
      latest: 3,
      previous: halted,
      members: fleet(1),
      resume: false,
    });
    // Its preflight first: nothing moves until every instance was checked against revision 3.
    expect(next).toMatchObject({ revision: 3, stableRevision: 1, stage: 0, phase: 'Preflight' });
  });

  it('never moves a pinned instance, nor one already on the new revision back', () => {
    const [first] = fleet(1);
    const rollout: RolloutStatus = {
      revision: 2,
      stableRevision: 1,
      stage: 1,
      admitted: 0,
      phase: 'Progressing',
    };
    expect(targetRevision({ ...first!, pin: 1 }, progressive, 2, rollout, () => 0)).toBe(1);
    const later = { ...first!, namespaceLabels: {}, revision: 2 };
    expect(targetRevision(later, progressive, 2, { ...rollout, stage: 0 }, () => 9)).toBe(2);
    expect(
      targetRevision({ ...later, revision: 1 }, progressive, 2, { ...rollout, stage: 0 }, () => 9),
    ).toBe(1);
  });

  it('moves everyone at once under strategy All, and renders the live spec before any revision', () => {
    const [member] = fleet(1);
    expect(targetRevision(member!, { strategy: 'All' }, 4, undefined, () => 0)).toBe(4);
    expect(targetRevision(member!, undefined, undefined, undefined, () => 0)).toBeUndefined();
    // The released revision, not the newest: a newer one waits for its preflight.
    expect(targetRevision(member!, undefined, 4, { ...complete1, revision: 3 }, () => 0)).toBe(3);
  });

  it('reads maxUnavailable as a count or a percent, at least one', () => {
    expect(unavailableBudget({ maxUnavailable: '25%' }, 20)).toBe(5);
    expect(unavailableBudget({ maxUnavailable: '1%' }, 20)).toBe(1);
    expect(unavailableBudget({ maxUnavailable: 3 }, 20)).toBe(3);
    expect(unavailableBudget(undefined, 20)).toBe(1);
  });
});

describe('the preflight of a new revision (ADR 0031)', () => {
  const all: RolloutSpec = { strategy: 'All' };
  const members = fleet(1);
  const step = (spec: RolloutSpec, preflight?: PreflightStatus, resume = false): RolloutStatus =>
    planRollout({ spec, latest: 2, previous: complete1, members, resume, preflight });
  const targets = (spec: RolloutSpec, rollout: RolloutStatus): Set<number | undefined> =>
    new Set(members.map((m) => targetRevision(m, spec, 2, rollout, () => 0)));
  const running = preflightReport(2, 20, [{ instance: 'a/x', outcome: 'changed' }]);

  it.each([
    ['All, not checked yet', all, undefined, 'Preflight', 1],
    ['All, still running', all, running, 'Preflight', 1],
    ['All, a report of another revision', all, checked(1), 'Preflight', 1],
    ['All, passed', all, checked(2), 'Complete', 2],
    ['All, failed under Warn (default)', all, checked(2, ['a/x']), 'Complete', 2],
    ['All, failed under Block', { ...all, preflight: 'Block' }, checked(2, ['a/x']), 'Halted', 1],
    ['Progressive, running', progressive, running, 'Preflight', 1],
    ['Progressive, failed under Warn', progressive, checked(2, ['a/x']), 'Progressing', 1],
    [
      'Progressive, failed under Block',
      { ...progressive, preflight: 'Block' },
      checked(2, ['a/x']),
      'Halted',
      1,
    ],
  ] as const)('%s', (_, spec, preflight, phase, stable) => {
    const rollout = step(spec, preflight);
    expect(rollout.phase).toBe(phase);
    // Where the instances not yet admitted are: all of them, under strategy All.
    expect(targets(spec, rollout).has(stable)).toBe(true);
    if (spec.strategy !== 'Progressive') expect(targets(spec, rollout)).toEqual(new Set([stable]));
  });

  it('names the failing instances when it blocks, and a resume lifts the block only', () => {
    const block: RolloutSpec = { ...progressive, preflight: 'Block' };
    const blocked = step(block, checked(2, ['b/i3', 'a/x']));
    expect(blocked).toMatchObject({ phase: 'Halted', blockedByPreflight: true });
    expect(blocked.failing).toEqual(['a/x', 'b/i3']);
    expect(blocked.message).toMatch(/2 of 20 instance\(s\) would fail on revision 2/);
    // Held on the next pass too, without a resume.
    const again = planRollout({
      spec: block,
      latest: 2,
      previous: blocked,
      members,
      resume: false,
      preflight: checked(2, ['a/x', 'b/i3']),
    });
    expect(again).toMatchObject({ phase: 'Halted', blockedByPreflight: true });
    const resumed = planRollout({
      spec: block,
      latest: 2,
      previous: blocked,
      members,
      resume: true,
    });
    expect(resumed.phase).toBe('Progressing');
    // A later canary failure still halts it: the resume was of the preflight's block.
    expect(resumed.resumed).toBeUndefined();
    expect(resumed.blockedByPreflight).toBeUndefined();
    const allResumed = planRollout({
      spec: { strategy: 'All', preflight: 'Block' },
      latest: 2,
      previous: { ...blocked },
      members,
      resume: true,
    });
    expect(allResumed).toMatchObject({ phase: 'Complete', revision: 2 });
  });

  it('starts over for a newer revision that arrives during a preflight', () => {
    const inPreflight = step(all, running);
    const next = planRollout({
      spec: all,
      latest: 3,
      previous: inPreflight,
      members,
      resume: false,
      preflight: checked(2),
    });
    expect(next).toMatchObject({ phase: 'Preflight', revision: 3, stableRevision: 1 });
  });
});

describe('the revision history', () => {
  it('prunes the oldest beyond the limit, never one that is kept', () => {
    expect(revisionsToPrune([1, 2, 3, 4, 5], 2, new Set([5]))).toEqual([1, 2, 3]);
    expect(revisionsToPrune([1, 2, 3, 4, 5], 2, new Set([1, 5]))).toEqual([2, 3]);
    expect(revisionsToPrune([1, 2], 10, new Set())).toEqual([]);
  });
});

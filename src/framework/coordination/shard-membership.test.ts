import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { microTime } from './leader-election.ts';
import {
  ShardMembership,
  viewId,
  type MemberLease,
  type MemberLeaseStore,
} from './shard-membership.ts';

/** The member Leases in memory, as the API server would keep them. */
class MemoryMemberStore implements MemberLeaseStore {
  readonly leases = new Map<string, MemberLease>();

  renew(
    identity: string,
    renewTime: string,
    leaseDurationSeconds: number,
    view: string,
  ): Promise<void> {
    this.leases.set(identity, { identity, renewTime, leaseDurationSeconds, view });
    return Promise.resolve();
  }

  list(): Promise<MemberLease[]> {
    return Promise.resolve([...this.leases.values()].map((l) => ({ ...l })));
  }

  remove(identity: string): Promise<void> {
    this.leases.delete(identity);
    return Promise.resolve();
  }
}

const NAMESPACES = Array.from({ length: 30 }, (_, i) => `team-${i}`);

interface Replica {
  membership: ShardMembership;
  gained: string[];
  lost: boolean;
}

function replica(identity: string, store: MemberLeaseStore, clock: { now: number }): Replica {
  const r: Replica = { membership: undefined as never, gained: [], lost: false };
  r.membership = new ShardMembership({
    identity,
    store,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    now: () => clock.now,
    hooks: {
      narrowed: () => Promise.resolve(),
      widened: (gained) => r.gained.push(...NAMESPACES.filter(gained)),
      lost: () => (r.lost = true),
    },
  });
  return r;
}

function owners(replicas: Replica[], namespace: string): Replica[] {
  return replicas.filter(
    (r) => r.membership.writeRefusal() === undefined && r.membership.owns(namespace),
  );
}

describe('ShardMembership', () => {
  it('a lone replica owns every namespace after its first round', async () => {
    const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
    const a = replica('a', new MemoryMemberStore(), clock);
    await a.membership.round();
    expect(NAMESPACES.every((ns) => a.membership.owns(ns))).toBe(true);
    expect(a.gained).toEqual(NAMESPACES);
  });

  it('a joining replica starts its namespaces only after the old owner published the new view', async () => {
    const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
    const store = new MemoryMemberStore();
    const a = replica('a', store, clock);
    const b = replica('b', store, clock);
    await a.membership.round();
    await b.membership.round();
    // b has published {a, b}; a has not seen b yet, so b waits and a keeps everything.
    expect(NAMESPACES.filter((ns) => b.membership.owns(ns))).toEqual([]);
    expect(NAMESPACES.every((ns) => a.membership.owns(ns))).toBe(true);
    await a.membership.round(); // a lets go of b's namespaces and publishes {a, b}
    expect(store.leases.get('a')?.view).toBe(viewId(['a', 'b']));
    await b.membership.round();
    const bs = NAMESPACES.filter((ns) => b.membership.owns(ns));
    expect(bs.length).toBeGreaterThan(0);
    expect(b.gained).toEqual(bs);
    for (const ns of NAMESPACES) expect(owners([a, b], ns)).toHaveLength(1);
  });

  it('a replica that stops renewing is dropped after a lease duration, and fenced before that', async () => {
    const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
    const store = new MemoryMemberStore();
    const [a, b] = [replica('a', store, clock), replica('b', store, clock)];
    for (let i = 0; i < 3; i++) for (const r of [a, b]) await r.membership.round();
    const bs = NAMESPACES.filter((ns) => b.membership.owns(ns));
    expect(bs.length).toBeGreaterThan(0);
    clock.now += 10_001;
    expect(b.membership.writeRefusal()).toMatch(/renew deadline/);
    await a.membership.round();
    expect(bs.some((ns) => a.membership.owns(ns))).toBe(false); // not yet: b's Lease is live
    clock.now += 5_000;
    await a.membership.round();
    expect(bs.every((ns) => a.membership.owns(ns))).toBe(true);
  });

  it('leaving removes the Lease so the others take over at their next round', async () => {
    const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
    const store = new MemoryMemberStore();
    const [a, b] = [replica('a', store, clock), replica('b', store, clock)];
    for (let i = 0; i < 3; i++) for (const r of [a, b]) await r.membership.round();
    await b.membership.leave();
    await a.membership.round();
    expect(NAMESPACES.every((ns) => a.membership.owns(ns))).toBe(true);
  });

  it('publishes a view only once its drain succeeded, retrying a failed drain next round', async () => {
    const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
    const store = new MemoryMemberStore();
    const a = replica('a', store, clock);
    await a.membership.round();
    const before = store.leases.get('a')?.view;
    let failing = true;
    const hooks = (
      a.membership as unknown as { options: { hooks: { narrowed: () => Promise<void> } } }
    ).options.hooks;
    hooks.narrowed = () =>
      failing ? Promise.reject(new Error('drain failed')) : Promise.resolve();
    await store.renew('b', microTime(clock.now), 15, '');
    await a.membership.round(); // b joined; the drain fails: nothing published
    expect(store.leases.get('a')?.view).toBe(before);
    failing = false;
    await a.membership.round();
    expect(store.leases.get('a')?.view).toBe(viewId(['a', 'b']));
  });

  it('a replica whose renewals keep failing leaves the group', async () => {
    const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
    const store = new MemoryMemberStore();
    const a = replica('a', store, clock);
    await a.membership.round();
    store.renew = () => Promise.reject(new Error('unreachable'));
    clock.now += 10_001;
    await a.membership.round();
    expect(a.lost).toBe(true);
    expect(NAMESPACES.some((ns) => a.membership.owns(ns))).toBe(false);
  });

  const step = fc.oneof(
    fc.record({ kind: fc.constant('round' as const), who: fc.nat(4) }),
    fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 6_000 }) }),
    fc.record({ kind: fc.constant('leave' as const), who: fc.nat(4) }),
  );

  test.prop([fc.array(step, { minLength: 1, maxLength: 120 })], { numRuns: 150 })(
    'no namespace is ever owned by two replicas that may still write, whatever the interleaving',
    async (steps) => {
      const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
      const store = new MemoryMemberStore();
      // Replicas that stop being given rounds are the stalled or partitioned ones.
      const replicas = ['a', 'b', 'c', 'd', 'e'].map((id) => replica(id, store, clock));
      const left = new Set<number>();
      for (const s of steps) {
        if (s.kind === 'tick') clock.now += s.ms;
        else if (left.has(s.who)) continue;
        else if (s.kind === 'round') await replicas[s.who]!.membership.round();
        else {
          left.add(s.who);
          await replicas[s.who]!.membership.leave();
        }
        for (const ns of NAMESPACES) expect(owners(replicas, ns).length).toBeLessThanOrEqual(1);
      }
    },
  );
});

import { describe, expect, it, vi } from 'vitest';
import {
  LeaderElector,
  type LeaderElectorOptions,
  type Lease,
  type LeaseStore,
} from './leader-election.ts';

/** A Lease in memory whose writes can be made to fail. */
class MemoryLeaseStore implements LeaseStore {
  lease: Lease | undefined;
  failing = false;

  get(): Promise<Lease | undefined> {
    return this.failing ? Promise.reject(new Error('unreachable')) : Promise.resolve(this.lease);
  }

  create(lease: Lease): Promise<Lease> {
    this.lease = { ...lease, metadata: { ...lease.metadata, resourceVersion: '1' } };
    return Promise.resolve(this.lease);
  }

  update(lease: Lease): Promise<Lease> {
    if (this.failing) return Promise.reject(new Error('unreachable'));
    this.lease = lease;
    return Promise.resolve(lease);
  }
}

function elector(
  store: MemoryLeaseStore,
  clock: { now: number } | undefined,
  lost: string[],
  options: Partial<LeaderElectorOptions> = {},
): LeaderElector {
  return new LeaderElector({
    identity: 'me',
    name: 'lease',
    namespace: 'ns',
    store,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 60_000,
    onStartedLeading: () => undefined,
    onStoppedLeading: () => lost.push('lost'),
    ...(clock ? { now: () => clock.now } : {}),
    ...options,
  });
}

async function tick(e: LeaderElector): Promise<void> {
  await (e as unknown as { tick(): Promise<void> }).tick();
}

describe('LeaderElector write fencing', () => {
  it('refuses writes before leading', () => {
    const e = elector(new MemoryLeaseStore(), { now: 0 }, []);
    expect(e.writeRefusal()).toBe('this replica does not hold the leader Lease');
  });

  it('allows writes only until the renew deadline after the last renewal, before the Lease can expire', async () => {
    const store = new MemoryLeaseStore();
    const clock = { now: 1_000 };
    const lost: string[] = [];
    const e = elector(store, clock, lost);
    await tick(e);
    expect(e.writeRefusal()).toBeUndefined();
    store.failing = true;
    clock.now += 9_000;
    await tick(e);
    expect(e.writeRefusal()).toBeUndefined();
    clock.now += 1_001; // past the renew deadline, still before the 15 s lease duration
    expect(e.writeRefusal()).toMatch(/last renewed 10001 ms ago \(renew deadline 10000 ms\)/);
    await tick(e);
    expect(lost).toEqual(['lost']);
    expect(e.writeRefusal()).toBe('this replica does not hold the leader Lease');
    await e.release();
  });

  it('gives up for good when another holder took the Lease', async () => {
    const store = new MemoryLeaseStore();
    const clock = { now: 0 };
    const lost: string[] = [];
    const e = elector(store, clock, lost);
    await tick(e);
    store.lease = { ...store.lease!, spec: { ...store.lease!.spec, holderIdentity: 'other' } };
    await tick(e);
    expect(lost).toEqual(['lost']);
    expect(e.isLeader()).toBe(false);
    await e.release();
  });
});

describe('LeaderElector against a failing API server', () => {
  it('a candidate backs off from the retry period to the lease duration, and says so twice', async () => {
    vi.useFakeTimers();
    try {
      const store = new MemoryLeaseStore();
      store.failing = true;
      let gets = 0;
      const get = store.get.bind(store);
      store.get = () => (gets++, get());
      const logs: string[] = [];
      const e = elector(store, undefined, [], {
        retryPeriodMs: 2_000,
        log: (level, message) => logs.push(`${level} ${message}`),
      });
      e.start();
      await vi.advanceTimersByTimeAsync(60_000);
      // Every 2 s would be 31 attempts; 2, 4, 8 then 15 s (less 20 %) at most: 0, 1.6, 4.8,
      // 11.2, 23.2, 35.2, 47.2, 59.2 s.
      expect(gets).toBeLessThanOrEqual(8);
      expect(gets).toBeGreaterThanOrEqual(6);
      store.failing = false;
      await vi.advanceTimersByTimeAsync(15_000);
      expect(e.isLeader()).toBe(true);
      expect(logs).toEqual([
        'warn leader Lease renewal failing; retrying with backoff, said again when it recovers',
        'info leader Lease renewal recovered',
        'info became leader',
      ]);
      await e.release();
    } finally {
      vi.useRealTimers();
    }
  });
});

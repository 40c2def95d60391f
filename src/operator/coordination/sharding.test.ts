import { describe, expect, it } from 'vitest';
import { parseRequestKey, requestKey } from '../../framework/reconciler.ts';
import type { Logger } from '../../log.ts';
import { ShardHandoff, type ShardedController } from './sharding.ts';

type FakeController = ShardedController & {
  enqueued: string[];
  aborted: string[];
  abortedAll: boolean;
};

/** A controller whose cache holds `cached` and whose queue holds `queued` (keys). */
function controller(cached: string[], queued: string[] = cached): FakeController {
  const fake: FakeController = {
    enqueued: [] as string[],
    aborted: [] as string[],
    abortedAll: false,
    requests: () => cached.map(parseRequestKey),
    enqueue: (request) => void fake.enqueued.push(requestKey(request)),
    abortWhere: (matches) => {
      fake.aborted.push(...queued.filter(matches));
      return Promise.resolve();
    },
    abortNow: () => {
      fake.abortedAll = true;
      return Promise.resolve();
    },
  };
  return fake;
}

interface Setup {
  handoff: ShardHandoff;
  instances: FakeController;
  templates: FakeController;
  sets: FakeController;
  calls: { released: string[]; handedOff: [string, number][]; webhook: number };
  lines: string[];
}

function setup(owned: string[], tracked: string[] = []): Setup {
  const instances = controller(['a/i1', 'b/i2', 'b/i3', 'c/i4']);
  const templates = controller(['a/t', 'b/t', 'c/t']);
  // A Set is cluster-scoped: its key's namespace is "".
  const sets = controller(['/s1', '/s2']);
  const calls = { released: [] as string[], handedOff: [] as [string, number][], webhook: 0 };
  const lines: string[] = [];
  const log = (message: string): void => void lines.push(message);
  const handoff = new ShardHandoff({
    owns: (namespace) => owned.includes(namespace),
    controllers: [instances, templates, sets],
    instances,
    tracks: (key) => tracked.includes(key),
    release: (key) => void calls.released.push(key),
    clusterScopeGained: () => void calls.webhook++,
    handedOff: (direction, count) => void calls.handedOff.push([direction, count]),
    log: { debug: log, info: log, warn: log, error: log } as unknown as Logger,
  });
  return { handoff, instances, templates, sets, calls, lines };
}

describe('the shard hand-off when the namespaces owned narrow', () => {
  it('aborts the keys of namespaces no longer owned, in every controller, and keeps the rest', async () => {
    const { handoff, instances, templates, sets } = setup(['a']);
    await handoff.narrowed();
    expect(instances.aborted).toEqual(['b/i2', 'b/i3', 'c/i4']);
    expect(templates.aborted).toEqual(['b/t', 'c/t']);
    // The cluster-scoped key went elsewhere: the Sets go with it.
    expect(sets.aborted).toEqual(['/s1', '/s2']);
    expect(instances.enqueued).toEqual([]);
  });

  it("keeps the Sets while it owns namespace ''", async () => {
    const { handoff, sets } = setup(['a', '']);
    await handoff.narrowed();
    expect(sets.aborted).toEqual([]);
  });

  it('releases the dependency watches of the instances handed over, and counts those', async () => {
    const { handoff, calls, lines } = setup(['a'], ['a/i1', 'b/i2', 'c/i4']);
    await handoff.narrowed();
    // a/i1 stays here; b/i3 had no watches to release.
    expect(calls.released).toEqual(['b/i2', 'c/i4']);
    expect(calls.handedOff).toEqual([['out', 2]]);
    expect(lines).toEqual(['shard handed instances over']);
  });

  it('counts nothing when nothing it handed over had watches', async () => {
    const { handoff, calls, lines } = setup(['a'], ['a/i1']);
    await handoff.narrowed();
    expect(calls.released).toEqual([]);
    expect(calls.handedOff).toEqual([]);
    expect(lines).toEqual([]);
  });
});

describe('the shard hand-off when the namespaces owned widen', () => {
  it('enqueues every object of every controller in the namespaces gained', () => {
    const { handoff, instances, templates, sets, calls } = setup([]);
    handoff.widened((namespace) => namespace === 'b');
    expect(instances.enqueued).toEqual(['b/i2', 'b/i3']);
    expect(templates.enqueued).toEqual(['b/t']);
    expect(sets.enqueued).toEqual([]);
    expect(calls.webhook).toBe(0);
  });

  it("runs the Sets and writes the webhook's configuration when it gains namespace ''", () => {
    const { handoff, instances, sets, calls } = setup([]);
    handoff.widened((namespace) => namespace === '');
    expect(sets.enqueued).toEqual(['/s1', '/s2']);
    expect(instances.enqueued).toEqual([]);
    expect(calls.webhook).toBe(1);
  });

  it('counts the instances taken over as a handoff only after its first namespaces', () => {
    const { handoff, calls, lines } = setup([]);
    handoff.widened((namespace) => namespace === 'a' || namespace === '');
    expect(calls.handedOff).toEqual([]);
    expect(lines).toEqual(['shard took instances over']);
    handoff.widened((namespace) => namespace === 'b');
    expect(calls.handedOff).toEqual([['in', 2]]);
    handoff.widened((namespace) => namespace === 'no-instances');
    expect(calls.handedOff).toEqual([['in', 2]]);
  });
});

describe('the shard hand-off when membership is lost', () => {
  it('aborts every controller at once', () => {
    const { handoff, instances, templates, sets, lines } = setup(['a', '']);
    handoff.lost('the shard member Lease could not be renewed within the renew deadline');
    expect([instances.abortedAll, templates.abortedAll, sets.abortedAll]).toEqual([
      true,
      true,
      true,
    ]);
    expect(lines).toEqual(['left the shard group']);
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { KubeObject } from '../../api/object-meta.ts';
import type { WatchKey } from '../dependency-key.ts';
import {
  Informer,
  type ListResult,
  type ListWatchSource,
  type WatchEventType,
} from './informer.ts';
import { SourceRegistry, type ChangeNotice } from './source-registry.ts';

/** The registry is told which label names an object's owner: any label will do. */
const OWNER_LABEL = 'example.com/owner-uid';

const secret = (name: string, resourceVersion: string, uid?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: {
    name,
    namespace: 'ns',
    resourceVersion,
    ...(uid ? { labels: { [OWNER_LABEL]: uid } } : {}),
  },
});

/** A scripted API server per watch: lists return `listing`; watch streams are kept for the test. */
class FakeSource implements ListWatchSource {
  listing: ListResult = { items: [], resourceVersion: '1' };
  /** Lists never answer (a kind the operator may not list, a stalled API server). */
  hanging = false;
  readonly streams: ((type: WatchEventType, object: unknown) => void)[] = [];

  list(): Promise<ListResult> {
    return this.hanging ? new Promise(() => undefined) : Promise.resolve(this.listing);
  }

  watch(
    _path: string,
    _query: unknown,
    onEvent: (type: WatchEventType, object: unknown) => void,
  ): Promise<{ abort(): void }> {
    this.streams.push(onEvent);
    return Promise.resolve({ abort: () => undefined });
  }
}

function registryOver(source: FakeSource): {
  registry: SourceRegistry;
  notices: ChangeNotice[];
  started: WatchKey[];
  selectors: (string | undefined)[];
  informers: Informer[];
} {
  const notices: ChangeNotice[] = [];
  const informers: Informer[] = [];
  const started: WatchKey[] = [];
  const selectors: (string | undefined)[] = [];
  const registry = new SourceRegistry(
    (key, onEvent, labelSelector) => {
      started.push(key);
      selectors.push(labelSelector);
      const informer = new Informer(source, { path: `/${key.type}/${key.kind}` });
      informers.push(informer);
      informer.addHandlers({
        add: (o, origin) => onEvent('ADDED', o, origin),
        update: (o, old, origin) => onEvent('MODIFIED', o, origin, old),
        delete: (o, origin) => onEvent('DELETED', o, origin),
      });
      void informer.start();
      return Promise.resolve(informer);
    },
    (notice) => notices.push(notice),
    OWNER_LABEL,
  );
  return { registry, notices, started, selectors, informers };
}

/**
 * Lets the watches list and the registry catch up, without the clock moving: the fake source
 * answers from memory, so one turn of the real event loop (which advanceTimersByTimeAsync takes
 * before it ticks) drains those promise chains. The informers' own timers (the watchdog) stay
 * on the fake clock and never fire.
 */
async function settle(): Promise<void> {
  await vi.advanceTimersByTimeAsync(0);
}

const summary = (notices: ChangeNotice[]): string[] =>
  notices.map(
    (n) => `${n.dependent} ${n.dependency.type} ${n.type} ${n.object.metadata.name} (${n.origin})`,
  );

const get = (name: string) =>
  ({ type: 'source', apiVersion: 'v1', kind: 'Secret', namespace: 'ns', name }) as const;

describe('the source registry', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('does not report what a new watch lists as a change when it matches what the dependent read', async () => {
    const source = new FakeSource();
    source.listing = { items: [secret('db', '5')], resourceVersion: '5' };
    const { registry, notices, informers } = registryOver(source);
    await registry.set('ns/a', [{ key: get('db'), observed: { 'ns/db': '5' } }]);
    await registry.set('ns/b', [{ key: get('db'), observed: { 'ns/db': '5' } }]);
    await settle();
    // The one watch has listed, so the catch-up has compared both reads: nothing was missed.
    expect(informers).toHaveLength(1);
    expect(informers[0]!.hasSynced()).toBe(true);
    expect(notices).toEqual([]);
    source.streams[0]!('MODIFIED', secret('db', '6'));
    expect(summary(notices)).toEqual([
      'ns/a source MODIFIED db (watch)',
      'ns/b source MODIFIED db (watch)',
    ]);
  });

  it('reports what changed between the read and the first list, including deletions', async () => {
    const source = new FakeSource();
    source.listing = { items: [secret('db', '7'), secret('new', '8')], resourceVersion: '8' };
    const { registry, notices } = registryOver(source);
    await registry.set('ns/a', [
      { key: get('db'), observed: { 'ns/db': '5' } },
      { key: get('new'), observed: {} },
      { key: get('old'), observed: { 'ns/old': '3' } },
    ]);
    await settle();
    expect(summary(notices)).toEqual([
      'ns/a source MODIFIED db (catch-up)',
      'ns/a source ADDED new (catch-up)',
      'ns/a source DELETED old (catch-up)',
    ]);
  });

  it('compares a dependent that joins a running watch with the watch cache', async () => {
    const source = new FakeSource();
    source.listing = { items: [secret('db', '5')], resourceVersion: '5' };
    const { registry, notices, started } = registryOver(source);
    await registry.set('ns/a', [{ key: get('db'), observed: { 'ns/db': '5' } }]);
    await settle();
    await registry.set('ns/b', [{ key: get('db'), observed: { 'ns/db': '5' } }]);
    await registry.set('ns/c', [{ key: get('db'), observed: { 'ns/db': '4' } }]);
    expect(started).toHaveLength(1);
    expect(summary(notices)).toEqual(['ns/c source MODIFIED db (catch-up)']);
  });

  it('routes by typed key: GET by name, LIST any object, drift by the owner label it is given', async () => {
    const source = new FakeSource();
    const { registry, notices, started, selectors } = registryOver(source);
    const list = { type: 'source', apiVersion: 'v1', kind: 'Secret', namespace: 'ns' } as const;
    const drift = { type: 'drift', apiVersion: 'v1', kind: 'Secret', ownerUid: 'u1' } as const;
    await registry.set('ns/get', [{ key: get('db') }]);
    await registry.set('ns/list', [{ key: list }]);
    await registry.set('ns/drift', [{ key: drift }]);
    await settle();
    expect(started.map((k) => k.type)).toEqual(['source', 'drift']);
    expect(selectors).toEqual([undefined, OWNER_LABEL]);
    const [sources, drifts] = source.streams;
    sources!('ADDED', secret('other', '2'));
    sources!('ADDED', secret('db', '3'));
    drifts!('MODIFIED', secret('rendered', '4', 'u2'));
    drifts!('DELETED', secret('rendered', '5', 'u1'));
    expect(summary(notices).sort()).toEqual([
      'ns/drift drift DELETED rendered (watch)',
      'ns/get source ADDED db (watch)',
      'ns/list source ADDED db (watch)',
      'ns/list source ADDED other (watch)',
    ]);
  });

  it('tells the owner an object named before when its owner label is rewritten', async () => {
    const source = new FakeSource();
    const { registry, notices } = registryOver(source);
    const drift = { type: 'drift', apiVersion: 'v1', kind: 'Secret', ownerUid: 'u1' } as const;
    await registry.set('ns/drift', [{ key: drift }]);
    await settle();
    const [drifts] = source.streams;
    drifts!('ADDED', secret('rendered', '4', 'u1'));
    drifts!('MODIFIED', secret('rendered', '5', 'nobody'));
    expect(summary(notices)).toEqual([
      'ns/drift drift ADDED rendered (watch)',
      'ns/drift drift MODIFIED rendered (watch)',
    ]);
  });

  it('stops a watch when its last dependent lets go, and forgets released dependents', async () => {
    const source = new FakeSource();
    const { registry } = registryOver(source);
    await registry.set('ns/a', [{ key: get('db') }]);
    await registry.set('ns/b', [{ key: get('db') }]);
    expect(registry.activeWatches).toBe(1);
    registry.release('ns/a');
    expect(registry.dependenciesOf('ns/a')).toEqual([]);
    expect(registry.dependenciesOf('ns/b')).toEqual([get('db')]);
    await registry.set('ns/b', []);
    expect(registry.activeWatches).toBe(0);
  });

  it('a hold starts the watch, wants the object it names, and keeps the watch until released', async () => {
    const source = new FakeSource();
    source.listing = { items: [secret('db', '5')], resourceVersion: '5' };
    const { registry, started } = registryOver(source);
    const ref = { apiVersion: 'v1', kind: 'Secret', namespace: 'ns', name: 'db' };
    const hold = registry.hold(ref, 1_000);
    expect(registry.wants(ref)).toBe(true);
    expect(registry.wants({ ...ref, name: 'other' })).toBe(false);
    await settle();
    await expect(hold.listed).resolves.toBe(true);
    expect(started).toHaveLength(1);
    expect(registry.watchedSource(ref)?.metadata.resourceVersion).toBe('5');
    // The pass registers what it read before it lets go: the same watch runs on.
    await registry.set('ns/a', [{ key: get('db'), observed: { 'ns/db': '5' } }]);
    hold.release();
    hold.release();
    expect(registry.activeWatches).toBe(1);
    expect(registry.wants(ref)).toBe(true);
    registry.release('ns/a');
    expect(registry.activeWatches).toBe(0);
    expect(registry.wants(ref)).toBe(false);
    // A hold alone: released, the watch stops.
    const alone = registry.hold(ref, 1_000);
    await settle();
    expect(registry.activeWatches).toBe(1);
    alone.release();
    expect(registry.activeWatches).toBe(0);
    expect(started).toHaveLength(2);
  });

  it('a watch that did not list in time kept one hold waiting, and keeps no other waiting', async () => {
    const source = new FakeSource();
    source.hanging = true;
    const { registry } = registryOver(source);
    const ref = { apiVersion: 'v1', kind: 'Secret', namespace: 'ns', name: 'db' };
    const first = registry.hold(ref, 2_000);
    let answer: boolean | undefined;
    void first.listed.then((listed) => (answer = listed));
    await vi.advanceTimersByTimeAsync(1_999);
    expect(answer).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(answer).toBe(false);
    const second = registry.hold(ref, 2_000);
    await expect(second.listed).resolves.toBe(false);
    first.release();
    second.release();
    expect(registry.activeWatches).toBe(0);
  });
});

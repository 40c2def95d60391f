import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { KubeObject } from '../../api/object-meta.ts';
import { LIST_WATCH_BACKOFF, mostAttemptsWithin } from '../backoff.ts';
import {
  Informer,
  type ListResult,
  type ListWatchSource,
  type WatchEventType,
} from './informer.ts';

const cm = (name: string, resourceVersion: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', resourceVersion },
});

interface Watch {
  resourceVersion: string;
  sendInitialEvents?: boolean;
  metadataOnly?: boolean;
  emit: (type: WatchEventType, object: unknown) => void;
  done: (error: unknown) => void;
}

/** A scripted API server: lists return `listing`, watches are handed to the test. */
class FakeSource implements ListWatchSource {
  lists = 0;
  /** When each list was asked for, by the (fake) clock. */
  readonly listedAt: number[] = [];
  listing: ListResult = { items: [], resourceVersion: '1' };
  failLists = 0;
  readonly watches: Watch[] = [];
  /** What each list asked for: metadata only or whole objects. */
  readonly listedMetadataOnly: (boolean | undefined)[] = [];

  list(_path: string, _labelSelector?: string, metadataOnly?: boolean): Promise<ListResult> {
    this.lists++;
    this.listedMetadataOnly.push(metadataOnly);
    this.listedAt.push(Date.now());
    if (this.failLists > 0) {
      this.failLists--;
      return Promise.reject(Object.assign(new Error('connection refused'), { statusCode: 0 }));
    }
    return Promise.resolve(this.listing);
  }

  watch(
    _path: string,
    query: { resourceVersion: string; sendInitialEvents?: boolean; metadataOnly?: boolean },
    onEvent: Watch['emit'],
    onDone: Watch['done'],
  ): Promise<{ abort(): void }> {
    this.watches.push({
      resourceVersion: query.resourceVersion,
      sendInitialEvents: query.sendInitialEvents,
      metadataOnly: query.metadataOnly,
      emit: onEvent,
      done: onDone,
    });
    return Promise.resolve({
      abort: () => onDone(Object.assign(new Error('aborted'), { name: 'AbortError' })),
    });
  }
}

/**
 * Lets the informer do all it can without the clock moving: the fake source answers from
 * memory, so one turn of the real event loop (which advanceTimersByTimeAsync takes before it
 * ticks) drains every list → watch chain. Retries wait on the fake clock, so a test sees exactly
 * when they happen, and the watchdog (minutes) never fires on its own.
 */
async function flush(): Promise<void> {
  await vi.advanceTimersByTimeAsync(0);
}

describe('the informer', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lists, then watches from the list resourceVersion, keeping the cache current', async () => {
    const source = new FakeSource();
    source.listing = { items: [cm('a', '5')], resourceVersion: '7' };
    const informer = new Informer(source, { path: '/api/v1/configmaps' });
    const seen: string[] = [];
    informer.addHandlers({
      add: (o) => seen.push(`add ${o.metadata.name}`),
      update: (o) => seen.push(`update ${o.metadata.name}`),
      delete: (o) => seen.push(`delete ${o.metadata.name}`),
    });
    await informer.start();
    await flush();
    expect(source.watches).toHaveLength(1);
    expect(source.watches[0]!.resourceVersion).toBe('7');
    source.watches[0]!.emit('ADDED', cm('b', '8'));
    source.watches[0]!.emit('MODIFIED', cm('a', '9'));
    source.watches[0]!.emit('DELETED', cm('b', '10'));
    expect(seen).toEqual(['add a', 'add b', 'update a', 'delete b']);
    expect(informer.list().map((o) => o.metadata.name)).toEqual(['a']);
    informer.stop();
  });

  it('keeps no managedFields, from the list or from the watch (the bulk of a cached object)', async () => {
    const withFields = (name: string, resourceVersion: string): KubeObject => ({
      ...cm(name, resourceVersion),
      metadata: {
        ...cm(name, resourceVersion).metadata,
        labels: { app: name },
        managedFields: [{ manager: 'some-controller', fieldsV1: { 'f:data': {} } }],
      } as KubeObject['metadata'],
    });
    const source = new FakeSource();
    source.listing = { items: [withFields('a', '5')], resourceVersion: '7' };
    const informer = new Informer(source, { path: '/api/v1/configmaps' });
    const handed: KubeObject[] = [];
    informer.addHandlers({ add: (o) => handed.push(o) });
    await informer.start();
    await flush();
    expect(source.watches).toHaveLength(1);
    source.watches[0]!.emit('ADDED', withFields('b', '8'));
    for (const object of [...informer.list(), ...handed]) {
      expect(object.metadata).not.toHaveProperty('managedFields');
      expect(object.metadata.labels).toEqual({ app: object.metadata.name });
    }
    expect(handed).toHaveLength(2);
    informer.stop();
  });

  it('keeps identity, version and labels only in a metadata-only cache (no annotations)', async () => {
    const secretMeta = (name: string, resourceVersion: string): KubeObject => ({
      apiVersion: 'meta.k8s.io/v1',
      kind: 'PartialObjectMetadata',
      metadata: {
        name,
        namespace: 'ns',
        uid: `uid-${name}`,
        resourceVersion,
        labels: { app: name },
        // kubectl apply keeps the whole applied Secret, data included, in this annotation.
        annotations: {
          'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"k":"czNjcjN0"}}',
        },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u' }],
        creationTimestamp: '2026-12-03T00:00:00Z',
      },
    });
    const source = new FakeSource();
    source.listing = { items: [secretMeta('a', '5')], resourceVersion: '7' };
    const informer = new Informer(source, { path: '/api/v1/secrets', metadataOnly: true });
    const handed: KubeObject[] = [];
    informer.addHandlers({ add: (o) => handed.push(o), update: (o) => handed.push(o) });
    await informer.start();
    await flush();
    expect(source.watches).toHaveLength(1);
    expect(source.listedMetadataOnly).toEqual([true]);
    expect(source.watches[0]!.metadataOnly).toBe(true);
    source.watches[0]!.emit('ADDED', secretMeta('b', '8'));
    source.watches[0]!.emit('MODIFIED', secretMeta('a', '9'));
    expect(handed).toHaveLength(3);
    for (const object of [...informer.list(), ...handed]) {
      const { name } = object.metadata;
      expect(JSON.parse(JSON.stringify(object.metadata))).toEqual({
        name,
        namespace: 'ns',
        uid: `uid-${name}`,
        resourceVersion: object.metadata.resourceVersion,
        labels: { app: name },
      });
    }
    informer.stop();
  });

  it('with `received`, asks for whole objects and shows each to it, yet caches metadata only', async () => {
    const withData = (name: string, resourceVersion: string): KubeObject => ({
      ...cm(name, resourceVersion),
      data: { setting: `${name}@${resourceVersion}` },
    });
    const source = new FakeSource();
    source.listing = { items: [withData('a', '5')], resourceVersion: '7' };
    const seen: unknown[] = [];
    const informer = new Informer(source, {
      path: '/api/v1/namespaces/ns/configmaps',
      metadataOnly: true,
      received: (o) => seen.push(o),
    });
    await informer.start();
    await flush();
    source.watches[0]!.emit('MODIFIED', withData('a', '8'));
    expect(source.listedMetadataOnly).toEqual([false]);
    expect(source.watches.map((w) => w.metadataOnly)).toEqual([false]);
    expect(seen.map((o) => (o as { data: unknown }).data)).toEqual([
      { setting: 'a@5' },
      { setting: 'a@8' },
    ]);
    expect(informer.get('ns', 'a')).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', namespace: 'ns', resourceVersion: '8' },
    });
    informer.stop();
  });

  it('re-watches from the last resourceVersion after a normal close, without relisting (no replay)', async () => {
    const source = new FakeSource();
    const informer = new Informer(source, { path: '/x' });
    await informer.start();
    await flush();
    expect(source.watches).toHaveLength(1);
    source.watches[0]!.emit('ADDED', cm('a', '12'));
    source.watches[0]!.emit('BOOKMARK', { metadata: { resourceVersion: '15' } });
    source.watches[0]!.done(null);
    await flush();
    expect(source.watches).toHaveLength(2);
    expect(source.watches[1]!.resourceVersion).toBe('15');
    expect(source.lists).toBe(1);
    informer.stop();
  });

  it('relists on 410 Gone and emits only the differences', async () => {
    const source = new FakeSource();
    source.listing = { items: [cm('a', '1'), cm('b', '1')], resourceVersion: '1' };
    const informer = new Informer(source, { path: '/x' });
    const seen: string[] = [];
    await informer.start();
    informer.addHandlers({
      add: (o) => seen.push(`add ${o.metadata.name}`),
      update: (o) => seen.push(`update ${o.metadata.name}`),
      delete: (o) => seen.push(`delete ${o.metadata.name}`),
    });
    await flush();
    expect(source.watches).toHaveLength(1);
    source.listing = { items: [cm('a', '1'), cm('c', '3')], resourceVersion: '3' };
    await vi.advanceTimersByTimeAsync(5_000); // the watch ran a while: not a 410 at once
    source.watches[0]!.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
    source.watches[0]!.done(null);
    await flush();
    expect(source.watches).toHaveLength(2);
    expect(source.lists).toBe(2);
    expect(seen).toEqual(['delete b', 'add c']);
    expect(source.watches[1]!.resourceVersion).toBe('3');
    informer.stop();
  });

  it('marks the first list as initial-list, and what a relist after 410 finds as relist', async () => {
    const source = new FakeSource();
    source.listing = { items: [cm('a', '1'), cm('b', '1'), cm('c', '1')], resourceVersion: '1' };
    const informer = new Informer(source, { path: '/x' });
    const seen: string[] = [];
    informer.addHandlers({
      add: (o, origin) => seen.push(`${origin} add ${o.metadata.name}`),
      update: (o, _old, origin) => seen.push(`${origin} update ${o.metadata.name}`),
      delete: (o, origin) => seen.push(`${origin} delete ${o.metadata.name}`),
    });
    await informer.start();
    await flush();
    expect(source.watches).toHaveLength(1);
    source.watches[0]!.emit('MODIFIED', cm('a', '2'));
    // a is unchanged since the watch saw it, b changed in the gap, c was deleted, d created.
    source.listing = { items: [cm('a', '2'), cm('b', '4'), cm('d', '5')], resourceVersion: '5' };
    source.watches[0]!.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
    source.watches[0]!.done(null);
    await flush();
    expect(source.watches).toHaveLength(2);
    expect(seen).toEqual([
      'initial-list add a',
      'initial-list add b',
      'initial-list add c',
      'watch update a',
      'relist delete c',
      'relist update b',
      'relist add d',
    ]);
    informer.stop();
  });

  it('keeps marking the first list initial when it needed retries', async () => {
    const source = new FakeSource();
    source.failLists = 1;
    source.listing = { items: [cm('a', '1')], resourceVersion: '1' };
    const informer = new Informer(source, { path: '/x' });
    const origins: string[] = [];
    informer.addHandlers({ add: (_o, origin) => origins.push(origin) });
    const started = informer.start();
    await flush();
    expect(source.lists).toBe(1);
    // The first retry waits at most 800 ms (its base, less up to 20 % jitter).
    await vi.advanceTimersByTimeAsync(800);
    await started;
    expect(source.lists).toBe(2);
    expect(origins).toEqual(['initial-list']);
    informer.stop();
  });

  it('keeps secondary indexes current through lists, watch events, relists and deletes', async () => {
    const labelled = (name: string, rv: string, team?: string): KubeObject => ({
      ...cm(name, rv),
      metadata: { ...cm(name, rv).metadata, ...(team ? { labels: { team } } : {}) },
    });
    const source = new FakeSource();
    source.listing = {
      items: [labelled('a', '1', 'red'), labelled('b', '1')],
      resourceVersion: '1',
    };
    const informer = new Informer(source, { path: '/x' });
    const team = (o: KubeObject): string[] => (o.metadata.labels ? [o.metadata.labels.team!] : []);
    const names = (value: string): string[] =>
      informer
        .byIndex('team', value)
        .map((o) => o.metadata.name ?? '')
        .sort();
    await informer.start();
    informer.addIndex('team', team);
    expect(names('red')).toEqual(['a']);
    await flush();
    expect(source.watches).toHaveLength(1);
    source.watches[0]!.emit('MODIFIED', labelled('a', '2', 'blue'));
    source.watches[0]!.emit('MODIFIED', labelled('b', '2', 'red'));
    source.watches[0]!.emit('ADDED', labelled('c', '3', 'red'));
    expect(names('red')).toEqual(['b', 'c']);
    expect(names('blue')).toEqual(['a']);
    source.watches[0]!.emit('DELETED', labelled('c', '4', 'red'));
    expect(names('red')).toEqual(['b']);
    source.listing = { items: [labelled('a', '5', 'red')], resourceVersion: '5' };
    source.watches[0]!.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
    source.watches[0]!.done(null);
    await flush();
    expect(source.watches).toHaveLength(2);
    expect(names('red')).toEqual(['a']);
    expect(names('blue')).toEqual([]);
    expect(() => informer.byIndex('missing', 'x')).toThrow(/does not exist/);
    informer.stop();
  });

  it('retries with backoff after errors instead of giving up or exiting', async () => {
    const source = new FakeSource();
    source.failLists = 2;
    const informer = new Informer(source, { path: '/x' });
    const started = informer.start();
    await flush();
    expect(source.lists).toBe(1);
    // client-go's reflector: base 800 ms doubling per failure, each less up to 20 % jitter: the
    // first retry comes 640–800 ms after the failure, the second 1 280–1 600 ms after the first.
    await vi.advanceTimersByTimeAsync(639);
    expect(source.lists).toBe(1);
    await vi.advanceTimersByTimeAsync(161);
    expect(source.lists).toBe(2);
    await vi.advanceTimersByTimeAsync(1_600);
    await started;
    expect(source.lists).toBe(3);
    const [first, second, third] = source.listedAt;
    expect(second! - first!).toBeGreaterThanOrEqual(640);
    expect(second! - first!).toBeLessThanOrEqual(800);
    expect(third! - second!).toBeGreaterThanOrEqual(1_280);
    expect(third! - second!).toBeLessThanOrEqual(1_600);
    expect(source.watches).toHaveLength(1);
    source.watches[0]!.done(Object.assign(new Error('socket hang up'), { statusCode: 500 }));
    // A failed watch is not reopened at once either, but within its backoff, which the
    // successful list reset: its first failure, 640–800 ms.
    await flush();
    expect(source.watches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(639);
    expect(source.watches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(161);
    expect(source.watches).toHaveLength(2);
    expect(source.lists).toBe(3);
    informer.stop();
  });

  describe('against a failing API server', () => {
    /** Every attempt answered with `error`: lists, and watches at once. */
    class FailingSource extends FakeSource {
      attempts: number[] = [];
      failing = true;
      constructor(
        private readonly error: () => Error,
        readonly streamingLists = true,
      ) {
        super();
      }
      override list(
        path: string,
        labelSelector?: string,
        metadataOnly?: boolean,
      ): Promise<ListResult> {
        this.attempts.push(Date.now());
        if (this.failing) return Promise.reject(this.error());
        return super.list(path, labelSelector, metadataOnly);
      }
      override watch(
        path: string,
        query: { resourceVersion: string; sendInitialEvents?: boolean; metadataOnly?: boolean },
        onEvent: Watch['emit'],
        onDone: Watch['done'],
        onOpen?: () => void,
      ): Promise<{ abort(): void }> {
        this.attempts.push(Date.now());
        const handle = super.watch(path, query, onEvent, onDone);
        if (this.failing) queueMicrotask(() => onDone(this.error()));
        else onOpen?.();
        return handle;
      }
    }
    const unavailable = (): Error =>
      Object.assign(new Error('watch /x: HTTP 503'), { statusCode: 503 });

    const mostAttemptsIn = (ms: number): number => mostAttemptsWithin(LIST_WATCH_BACKOFF, ms);

    for (const [what, error, streaming] of [
      ['a streaming list answered 503', unavailable, true],
      [
        'a LIST refused a connection',
        () => Object.assign(new Error('connect ECONNREFUSED'), { statusCode: 0 }),
        false,
      ],
    ] as const) {
      it(`${what}: attempts spaced by backoff, one warning, one line when it recovers`, async () => {
        const source = new FailingSource(error, streaming);
        const logs: string[] = [];
        const health: string[] = [];
        const informer = new Informer(source, {
          path: '/x',
          log: (level, message) => logs.push(`${level} ${message}`),
          health: {
            started: () => health.push('started'),
            failed: (_name, since) => health.push(`failed since ${since}`),
            recovered: () => health.push('recovered'),
            stopped: () => health.push('stopped'),
          },
        });
        const startedAt = Date.now();
        void informer.start();
        await vi.advanceTimersByTimeAsync(60_000);
        // 7 at most in a minute: at 0, 0.64, 1.92, 4.48, 9.6, 19.8 and 40.3 s (the next, 64.3 s).
        expect(mostAttemptsIn(60_000)).toBe(7);
        expect(source.attempts.length).toBeLessThanOrEqual(mostAttemptsIn(60_000));
        expect(source.attempts.length).toBeGreaterThanOrEqual(6);
        expect(logs).toEqual([
          'warn list/watch failing; retrying with backoff, said again when it recovers',
        ]);
        expect(informer.failingSince()).toBe(startedAt);
        expect(health[0]).toBe('started');
        expect(new Set(health.slice(1))).toEqual(new Set([`failed since ${startedAt}`]));

        source.failing = false;
        await vi.advanceTimersByTimeAsync(30_000);
        if (streaming)
          source.watches.at(-1)!.emit('BOOKMARK', {
            metadata: {
              resourceVersion: '9',
              annotations: { 'k8s.io/initial-events-end': 'true' },
            },
          });
        expect(informer.hasSynced()).toBe(true);
        expect(logs.slice(1)).toEqual(['info list/watch recovered']);
        expect(informer.failingSince()).toBeUndefined();
        expect(health.at(-1)).toBe('recovered');
        informer.stop();
        expect(health.at(-1)).toBe('stopped');
      });
    }

    it('a watch that closes at once with no event is a failure, not a loop', async () => {
      const source = new FakeSource();
      const informer = new Informer(source, { path: '/x' });
      await informer.start();
      await flush();
      const deadline = Date.now() + 10_000;
      let closed = 0;
      while (Date.now() < deadline) {
        if (source.watches.length > closed) source.watches[closed++]!.done(null);
        await vi.advanceTimersByTimeAsync(10);
      }
      // At 0, 0.64+, 1.92+, 4.48+ and 9.6+ s: five watches in ten seconds at most, not thousands.
      expect(source.watches.length).toBeLessThanOrEqual(5);
      expect(source.watches.length).toBeGreaterThanOrEqual(4);
      informer.stop();
    });

    it('a watch closed at once over and over backs off, even with the list in between', async () => {
      const source = new FakeSource();
      const informer = new Informer(source, { path: '/x' });
      await informer.start();
      await flush();
      let closed = 0;
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const watch = source.watches.at(-1)!;
        watch.done(Object.assign(new Error('gone'), { statusCode: 410 }));
        closed++;
        await vi.advanceTimersByTimeAsync(1_000);
        while (source.watches.at(-1) === watch && Date.now() < deadline)
          await vi.advanceTimersByTimeAsync(1_000);
      }
      // Each 410 at once relists after a backoff that only grows while nothing else succeeds
      // but the list: at most one relist per 640 ms, the list resetting it each time.
      expect(source.lists).toBeLessThanOrEqual(closed + 1);
      expect(closed).toBeLessThanOrEqual(60);
      informer.stop();
    });

    it('a resumed watch answered 410 at once relists at once: a restarted API server', async () => {
      const source = new FakeSource();
      const logs: string[] = [];
      const informer = new Informer(source, {
        path: '/x',
        log: (level, message) => logs.push(`${level} ${message}`),
      });
      await informer.start();
      await flush();
      source.watches[0]!.emit('MODIFIED', cm('a', '12'));
      // The server goes away, then comes back with a fresh watch cache: the resumed watch, from
      // version 12, is told 410 at once.
      source.watches[0]!.done(Object.assign(new Error('cut'), { statusCode: 0 }));
      await vi.advanceTimersByTimeAsync(800);
      expect(source.watches[1]!.resourceVersion).toBe('12');
      source.watches[1]!.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
      source.watches[1]!.done(null);
      await flush();
      expect(source.lists).toBe(2);
      expect(logs).toEqual([
        'warn list/watch failing; retrying with backoff, said again when it recovers',
        'info list/watch recovered',
      ]);
      informer.stop();
    });

    it('waits as long as a 429 asks (Retry-After), if that is longer than its backoff', async () => {
      const source = new FailingSource(() =>
        Object.assign(new Error('HTTP 429'), { statusCode: 429, retryAfterMs: 7_000 }),
      );
      const informer = new Informer(source, { path: '/x' });
      void informer.start();
      await vi.advanceTimersByTimeAsync(20_000);
      // at 0, 7, 14 s
      expect(source.attempts).toHaveLength(3);
      informer.stop();
    });

    it('restarts a watch gone silent as a failure: said once, then backs off', async () => {
      const source = new FakeSource();
      const logs: string[] = [];
      const informer = new Informer(source, {
        path: '/x',
        watchTimeoutSeconds: 10,
        log: (level, message) => logs.push(`${level} ${message}`),
      });
      await informer.start();
      await flush();
      await vi.advanceTimersByTimeAsync(70_001);
      expect(source.watches).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(800);
      expect(source.watches).toHaveLength(2);
      expect(logs).toEqual([
        'warn list/watch failing; retrying with backoff, said again when it recovers',
      ]);
      informer.stop();
    });

    it('starts its backoff afresh after two minutes without a failure, not after a watch resumed', async () => {
      const source = new FailingSource(unavailable, false);
      source.failing = false;
      const informer = new Informer(source, { path: '/x' });
      await informer.start();
      await flush();
      const cut = (): void =>
        source.watches.at(-1)!.done(Object.assign(new Error('cut'), { statusCode: 0 }));
      // An outage of four failed watches, then the watch resumes (no list).
      source.failing = true;
      cut();
      await vi.advanceTimersByTimeAsync(12_000);
      source.failing = false;
      await vi.advanceTimersByTimeAsync(20_000);
      const resumed = source.watches.length;
      // A minute later it fails again: the backoff goes on from where it was.
      await vi.advanceTimersByTimeAsync(60_000);
      cut();
      await vi.advanceTimersByTimeAsync(5_000);
      expect(source.watches.length).toBe(resumed);
      // After two healthy minutes, a failure starts again at 800 ms.
      await vi.advanceTimersByTimeAsync(10 * 60_000);
      const before = source.watches.length;
      await vi.advanceTimersByTimeAsync(3 * 60_000);
      cut();
      await vi.advanceTimersByTimeAsync(800);
      expect(source.watches.length).toBe(before + 1);
      informer.stop();
    });
  });

  it('survives a handler that throws', async () => {
    const source = new FakeSource();
    const logged: string[] = [];
    const informer = new Informer(source, { path: '/x', log: (_l, m) => logged.push(m) });
    informer.addHandlers({
      add: () => {
        throw new Error('bug');
      },
    });
    const seen: string[] = [];
    informer.addHandlers({ add: (o) => seen.push(o.metadata.name ?? '') });
    await informer.start();
    await flush();
    expect(source.watches).toHaveLength(1);
    source.watches[0]!.emit('ADDED', cm('a', '2'));
    expect(seen).toEqual(['a']);
    expect(logged).toContain('informer handler threw');
    informer.stop();
  });

  describe('streaming lists (sendInitialEvents)', () => {
    class StreamingSource extends FakeSource {
      readonly streamingLists = true;
    }
    /** Every event the informer hands its handlers, as `<type> <name> <origin>`. */
    const recordEvents = (informer: Informer): string[] => {
      const seen: string[] = [];
      informer.addHandlers({
        add: (o, origin) => seen.push(`add ${o.metadata.name} ${origin}`),
        update: (o, _old, origin) => seen.push(`update ${o.metadata.name} ${origin}`),
        delete: (o, origin) => seen.push(`delete ${o.metadata.name} ${origin}`),
      });
      return seen;
    };
    const endOfInitialEvents = (resourceVersion: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { resourceVersion, annotations: { 'k8s.io/initial-events-end': 'true' } },
    });

    it('fills the cache from the initial events, syncs at their bookmark, then keeps watching', async () => {
      const source = new StreamingSource();
      const informer = new Informer(source, { path: '/api/v1/configmaps' });
      const seen = recordEvents(informer);
      const started = informer.start();
      await flush();
      expect(source.lists).toBe(0);
      const stream = source.watches[0]!;
      expect(stream.sendInitialEvents).toBe(true);
      stream.emit('ADDED', cm('a', '5'));
      stream.emit('ADDED', cm('b', '6'));
      expect(informer.hasSynced()).toBe(false);
      stream.emit('BOOKMARK', endOfInitialEvents('7'));
      await started;
      expect(informer.hasSynced()).toBe(true);
      stream.emit('MODIFIED', cm('a', '8'));
      expect(seen).toEqual(['add a initial-list', 'add b initial-list', 'update a watch']);
      // A watch that closes normally resumes from the last resourceVersion, without initial events.
      stream.done(undefined);
      await flush();
      expect(source.watches[1]).toMatchObject({
        resourceVersion: '8',
        sendInitialEvents: undefined,
      });
      expect(source.lists).toBe(0);
      informer.stop();
    });

    it('a server without streaming lists (refused, or no end bookmark): LIST from then on', async () => {
      const source = new StreamingSource();
      source.listing = { items: [cm('a', '5')], resourceVersion: '7' };
      const informer = new Informer(source, { path: '/api/v1/configmaps' });
      const started = informer.start();
      await flush();
      source.watches[0]!.done(Object.assign(new Error('HTTP 422'), { statusCode: 422 }));
      await started;
      expect(source.lists).toBe(1);
      expect(informer.list().map((o) => o.metadata.name)).toEqual(['a']);
      expect(source.watches[1]).toMatchObject({
        resourceVersion: '7',
        sendInitialEvents: undefined,
      });
      // After 410 Gone (the watch ran a while) it lists again rather than streaming.
      await vi.advanceTimersByTimeAsync(5_000);
      source.watches[1]!.done(Object.assign(new Error('gone'), { statusCode: 410 }));
      await flush();
      expect(source.lists).toBe(2);
      informer.stop();
    });

    it('a relist after 410 Gone streams again and reports only what moved', async () => {
      const source = new StreamingSource();
      const informer = new Informer(source, { path: '/api/v1/configmaps' });
      const seen = recordEvents(informer);
      const started = informer.start();
      await flush();
      source.watches[0]!.emit('ADDED', cm('a', '5'));
      source.watches[0]!.emit('ADDED', cm('b', '6'));
      source.watches[0]!.emit('BOOKMARK', endOfInitialEvents('7'));
      await started;
      source.watches[0]!.done(Object.assign(new Error('gone'), { statusCode: 410 }));
      await flush();
      const again = source.watches[1]!;
      expect(again.sendInitialEvents).toBe(true);
      again.emit('ADDED', cm('a', '9'));
      again.emit('BOOKMARK', endOfInitialEvents('10'));
      expect(seen.slice(2)).toEqual(['delete b relist', 'update a relist']);
      expect(source.lists).toBe(0);
      informer.stop();
    });
  });
});

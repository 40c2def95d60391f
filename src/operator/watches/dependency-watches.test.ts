import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/object-meta.ts';
import { DependencyWatches } from './dependency-watches.ts';
import type { ChangeNotice } from '../../framework/watches/source-registry.ts';
import type { Discovery } from '../../kube/discovery.ts';
import { AppliedMemo } from '../../reconcile/instance/applied-memo.ts';
import { SourceValues } from '../../reconcile/instance/source-values.ts';
import { Informer, type ListWatchSource } from '../../framework/watches/informer.ts';
import type { OperatorShell, WatchTarget } from '../../framework/watches/operator-shell.ts';

const object = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'ns', resourceVersion: '2' },
});

function watches(): {
  tracker: DependencyWatches;
  change: (n: Partial<ChangeNotice>) => void;
  /** What the applier does after a successful write, before it tells the tracker. */
  recorded: (written: KubeObject) => KubeObject;
} {
  let clock = 0;
  const applied = new AppliedMemo();
  const tracker = new DependencyWatches({
    shell: () => undefined,
    discovery: {} as Discovery,
    enqueue: () => undefined,
    now: () => ++clock,
    applied,
  });
  // The registry's notify callback, as a watch event would reach it.
  const notify = (tracker.registry as unknown as { notify: (n: ChangeNotice) => void }).notify;
  const change = (n: Partial<ChangeNotice>): void =>
    notify({
      dependent: 'ns/i',
      type: 'MODIFIED',
      origin: 'watch',
      object: object('db'),
      dependency: { type: 'source', apiVersion: 'v1', kind: 'Secret', namespace: 'ns' },
      ...n,
    });
  const recorded = (written: KubeObject): KubeObject => {
    applied.record(written, AppliedMemo.hash(written), written);
    return written;
  };
  return { tracker, change, recorded };
}

const asMetadata = (o: KubeObject): KubeObject => ({
  ...o,
  apiVersion: 'meta.k8s.io/v1',
  kind: 'PartialObjectMetadata',
});

const drift = { type: 'drift', apiVersion: 'v1', kind: 'ConfigMap', ownerUid: 'u' } as const;

describe('reconcile triggers', () => {
  it('stay until a pass that handled them completes', () => {
    const { tracker, change } = watches();
    change({});
    const trigger = tracker.peekTrigger('ns/i');
    expect(trigger).toMatchObject({ kind: 'source', description: 'Secret ns/db changed' });
    // A pass that throws never clears it: the retry sees the same trigger.
    expect(tracker.peekTrigger('ns/i')).toBe(trigger);
    tracker.clearTrigger('ns/i', trigger);
    expect(tracker.peekTrigger('ns/i')).toBeUndefined();
  });

  it('keep a newer change that arrived while a pass ran for the next pass', () => {
    const { tracker, change } = watches();
    change({});
    const handled = tracker.peekTrigger('ns/i');
    change({ object: object('other') });
    tracker.clearTrigger('ns/i', handled);
    expect(tracker.peekTrigger('ns/i')?.description).toBe('Secret ns/other changed');
  });

  it('report a source change before drift, and keep the drift for the pass after', () => {
    const { tracker, change } = watches();
    change({ dependency: drift, object: object('cm'), type: 'DELETED' });
    change({});
    const first = tracker.peekTrigger('ns/i');
    expect(first?.kind).toBe('source');
    tracker.clearTrigger('ns/i', first);
    expect(tracker.peekTrigger('ns/i')).toMatchObject({
      kind: 'drift',
      description: 'ConfigMap ns/cm was deleted',
    });
  });

  it('do not count our own writes as drift', () => {
    const { tracker, change, recorded } = watches();
    const written = { ...object('cm'), apiVersion: 'v1', kind: 'ConfigMap' };
    tracker.beginWrite(written)(recorded(written));
    // Drift watches carry metadata only: the event names PartialObjectMetadata, not the kind.
    change({ dependency: drift, object: asMetadata(written) });
    expect(tracker.peekTrigger('ns/i')).toBeUndefined();
  });

  it('hold a drift event that arrives before our apply returns, and drop it when it was ours', () => {
    const { tracker, change, recorded } = watches();
    const written = { ...object('cm'), apiVersion: 'v1', kind: 'ConfigMap' };
    const done = tracker.beginWrite(written);
    change({ dependency: drift, object: asMetadata(written) });
    expect(tracker.peekTrigger('ns/i')).toBeUndefined();
    done(recorded(written));
    expect(tracker.peekTrigger('ns/i')).toBeUndefined();
  });

  it('deliver a held drift event that was not our write once the apply returns', () => {
    const { tracker, change, recorded } = watches();
    const written = { ...object('cm'), apiVersion: 'v1', kind: 'ConfigMap' };
    const done = tracker.beginWrite(written);
    const theirs = { ...written, metadata: { ...written.metadata, resourceVersion: '9' } };
    change({ dependency: drift, object: asMetadata(theirs) });
    done(recorded(written));
    expect(tracker.peekTrigger('ns/i')?.kind).toBe('drift');
  });

  it('deliver a held drift event when our apply failed', () => {
    const { tracker, change } = watches();
    const written = { ...object('cm'), apiVersion: 'v1', kind: 'ConfigMap' };
    const done = tracker.beginWrite(written);
    change({ dependency: drift, object: asMetadata(written) });
    done(undefined);
    expect(tracker.peekTrigger('ns/i')?.kind).toBe('drift');
  });
});

describe('source watches and kept values (ADR 0027)', () => {
  /** A shell whose watches run real informers over a scripted API server. */
  function withShell(listing: KubeObject[]): {
    tracker: DependencyWatches;
    values: SourceValues;
    wire: Record<string, boolean | undefined>;
  } {
    const values = new SourceValues();
    const wire: Record<string, boolean | undefined> = {};
    const source: ListWatchSource = {
      list: (path, _selector, metadataOnly) => {
        wire[path] = metadataOnly;
        const kind = path.endsWith('/secrets') ? 'Secret' : 'ConfigMap';
        // List items come without their kind, as the API server sends them.
        const items = listing
          .filter((o) => o.kind === kind)
          .map((o) => ({ ...o, apiVersion: undefined, kind: undefined }) as never);
        return Promise.resolve({ items, resourceVersion: '9' });
      },
      watch: () => Promise.resolve({ abort: () => undefined }),
    };
    const shell = {
      watchDynamic: (target: WatchTarget) => {
        const informer = new Informer(source, {
          path: `/api/v1/namespaces/ns/${target.plural}`,
          metadataOnly: target.metadataOnly,
          received: target.received,
        });
        void informer.start();
        return informer;
      },
    } as unknown as OperatorShell;
    const discovery = {
      resourceFor: (_: string, kind: string) =>
        Promise.resolve({ plural: `${kind.toLowerCase()}s`, scope: 'Namespaced' }),
    } as unknown as Discovery;
    const tracker = new DependencyWatches({
      shell: () => shell,
      discovery,
      enqueue: () => undefined,
      values,
    });
    return { tracker, values, wire };
  }

  const withData = (kind: string, name: string): KubeObject => ({
    apiVersion: 'v1',
    kind,
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: '5' },
    data: { k: name },
  });
  const read = (kind: string, name: string) =>
    ({ apiVersion: 'v1', kind, namespace: 'ns', name }) as const;

  it('keep the ConfigMaps a dependent or a hold names, from the watch itself; never a Secret', async () => {
    const { tracker, values, wire } = withShell([
      withData('ConfigMap', 'shared'),
      withData('ConfigMap', 'unrelated'),
      withData('Secret', 'db'),
    ]);
    const hold = tracker.registry.hold(read('ConfigMap', 'shared'), 1_000);
    await expect(hold.listed).resolves.toBe(true);
    expect(values.get('uid-shared', '5')).toMatchObject({
      kind: 'ConfigMap',
      data: { k: 'shared' },
    });
    expect(values.get('uid-unrelated', '5')).toBeUndefined();
    await tracker.track('ns/i', [read('ConfigMap', 'shared'), read('Secret', 'db')], undefined);
    hold.release();
    await new Promise((r) => setImmediate(r));
    // ConfigMaps come whole (their values are kept); Secrets as metadata only, on the wire too.
    expect(wire).toEqual({
      '/api/v1/namespaces/ns/configmaps': false,
      '/api/v1/namespaces/ns/secrets': true,
    });
    expect(values.kinds()).toEqual(['v1/ConfigMap']);
    expect(tracker.registry.activeWatches).toBe(2);
  });
});

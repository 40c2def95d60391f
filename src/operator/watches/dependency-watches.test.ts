import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/object-meta.ts';
import { DependencyWatches } from './dependency-watches.ts';
import type { ChangeNotice } from '../../framework/watches/source-registry.ts';
import type { Discovery } from '../../kube/discovery.ts';
import { AppliedMemo } from '../../reconcile/instance/applied-memo.ts';

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

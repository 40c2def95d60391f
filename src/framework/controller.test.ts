import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/object-meta.ts';
import { Controller, KindCache, requestOf, watch, type Change, type Watch } from './controller.ts';
import { Informer, type ListWatchSource, type WatchEventType } from './watches/informer.ts';
import type { EventHandler, OperatorShell, WatchTarget } from './watches/operator-shell.ts';
import type { Request } from './reconciler.ts';

const cm = (namespace: string, name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, resourceVersion: '1', labels },
});

interface FakeShell {
  shell: Pick<OperatorShell, 'watch'>;
  /** `namespace/plural` of each informer started (`*`: across namespaces). */
  paths: string[];
  synced: () => Promise<unknown>;
  emit: (path: string, type: WatchEventType, object: KubeObject) => void;
}

/** Lists what `objects` holds under each path; each watch's events are the test's to send. */
function fakeShell(objects: Record<string, KubeObject[]>): FakeShell {
  const emits = new Map<string, (type: WatchEventType, object: unknown) => void>();
  const informers: Informer<KubeObject>[] = [];
  const source: ListWatchSource = {
    list: (path) => Promise.resolve({ items: objects[path] ?? [], resourceVersion: '1' }),
    watch: (path, _query, onEvent) => {
      emits.set(path, onEvent);
      return Promise.resolve({ abort: () => undefined });
    },
  };
  const paths: string[] = [];
  const shell = {
    watch: (target: WatchTarget, handler: EventHandler<KubeObject>): Informer<KubeObject> => {
      const path = `${target.namespace ?? '*'}/${target.plural}`;
      paths.push(path);
      const informer = new Informer<KubeObject>(source, { path });
      // The shell hands dot-i's events on: only their type and object are read.
      const event = (type: string, object: KubeObject): never => ({ type, object }) as never;
      informer.addHandlers({
        add: (object, origin) => handler(event('ADDED', object), undefined, origin),
        update: (object, old, origin) => handler(event('MODIFIED', object), old, origin),
        delete: (object, origin) => handler(event('DELETED', object), undefined, origin),
      });
      void informer.start();
      informers.push(informer);
      return informer;
    },
  } as Pick<OperatorShell, 'watch'>;
  return {
    shell,
    paths,
    synced: () => Promise.all(informers.map((i) => i.waitForSync())),
    emit: (path: string, type: WatchEventType, object: KubeObject) =>
      emits.get(path)!(type, object),
  };
}

/** A controller of `kind` whose reconciler records the keys it was asked for. */
function recording(
  kind: KindCache<KubeObject>,
  watches: Watch[],
): { controller: Controller; reconciled: string[] } {
  const reconciled: string[] = [];
  const controller = new Controller({
    name: 'test',
    kind,
    watches,
    concurrency: 1,
    reconciler: {
      reconcile: (request) => {
        reconciled.push(`${request.namespace}/${request.name}`);
        return Promise.resolve({});
      },
    },
  });
  return { controller, reconciled };
}

const byApp = { app: (o: KubeObject) => [o.metadata.labels?.app ?? ''].filter(Boolean) };

/** The cache of namespaced ConfigMaps the tests reconcile. */
const configMapCache = (): KindCache<KubeObject> =>
  new KindCache<KubeObject>({ group: '', version: 'v1', plural: 'configmaps', namespaced: true });

describe('a kind cache', () => {
  it('watches a namespaced kind in each namespace, a cluster-wide one once, and reads across', async () => {
    const { shell, paths, synced } = fakeShell({
      'a/configmaps': [cm('a', 'x', { app: 'web' })],
      'b/configmaps': [cm('b', 'y', { app: 'web' }), cm('b', 'z')],
      '*/namespaces': [cm('', 'a'), cm('', 'b')],
    });
    const configMaps = new KindCache<KubeObject>({
      group: '',
      version: 'v1',
      plural: 'configmaps',
      namespaced: true,
      indexes: byApp,
    });
    const namespaces = new KindCache<KubeObject>({
      group: '',
      version: 'v1',
      plural: 'namespaces',
      namespaced: false,
    });
    configMaps.watch(shell, ['a', 'b']);
    namespaces.watch(shell, ['a', 'b']);
    await synced();
    expect(paths).toEqual(['a/configmaps', 'b/configmaps', '*/namespaces']);
    expect(configMaps.list().map((o) => o.metadata.name)).toEqual(['x', 'y', 'z']);
    expect(configMaps.get('b', 'z')?.metadata.name).toBe('z');
    expect(configMaps.byIndex('app', 'web').map((o) => o.metadata.name)).toEqual(['x', 'y']);
    expect(namespaces.list()).toHaveLength(2);
  });
});

describe('a controller', () => {
  it('enqueues what each of its watches routes to it, from kinds other controllers watch too', async () => {
    const { shell, synced, emit } = fakeShell({ '*/configmaps': [cm('a', 'x')] });
    const configMaps = configMapCache();
    const changes: Change<KubeObject>[] = [];
    const own = recording(configMaps, [
      watch(configMaps, (change) => {
        changes.push(change);
        return change.type === 'DELETED' ? [] : [requestOf(change.object)];
      }),
    ]);
    // Another controller reconciles what the label names, from the same informer.
    const other = recording(configMaps, [
      watch(configMaps, ({ object }): Request[] =>
        object.metadata.labels?.owner
          ? [{ namespace: '', name: object.metadata.labels.owner }]
          : [],
      ),
    ]);
    configMaps.watch(shell, undefined);
    await synced();
    const labelled = cm('a', 'x', { owner: 'o' });
    emit('*/configmaps', 'MODIFIED', {
      ...labelled,
      metadata: { ...labelled.metadata, resourceVersion: '2' },
    });
    emit('*/configmaps', 'DELETED', cm('a', 'x'));
    // Changes before start wait in the queue.
    expect(own.reconciled).toEqual([]);
    own.controller.start();
    other.controller.start();
    await Promise.all([own.controller.queue.idle(), other.controller.queue.idle()]);
    expect(own.reconciled).toEqual(['a/x']);
    expect(other.reconciled).toEqual(['/o']);
    expect(changes.map((c) => [c.type, c.origin, c.old?.metadata.resourceVersion])).toEqual([
      ['ADDED', 'initial-list', undefined],
      ['MODIFIED', 'watch', '1'],
      ['DELETED', 'watch', undefined],
    ]);
  });

  it('resyncs a request per object of its kind', async () => {
    const { shell, synced } = fakeShell({ '*/configmaps': [cm('a', 'x'), cm('b', 'y')] });
    const configMaps = configMapCache();
    const { controller, reconciled } = recording(configMaps, []);
    configMaps.watch(shell, undefined);
    await synced();
    expect(controller.requests()).toEqual([
      { namespace: 'a', name: 'x' },
      { namespace: 'b', name: 'y' },
    ]);
    controller.start();
    controller.resync();
    await controller.queue.idle();
    expect(reconciled.sort()).toEqual(['a/x', 'b/y']);
  });

  it('resyncs behind the changes, and a change promotes a key the resync queued', async () => {
    const { shell, synced } = fakeShell({
      '*/configmaps': [cm('a', 'x'), cm('b', 'y'), cm('c', 'z')],
    });
    const configMaps = configMapCache();
    const { controller, reconciled } = recording(configMaps, []);
    configMaps.watch(shell, undefined);
    await synced();
    controller.resync();
    controller.enqueue({ namespace: 'c', name: 'z' });
    controller.enqueue({ namespace: 'd', name: 'new' });
    controller.start();
    await controller.queue.idle();
    expect(reconciled).toEqual(['c/z', 'd/new', 'a/x', 'b/y']);
  });
});

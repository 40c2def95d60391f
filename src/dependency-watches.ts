// The DependencyTracker over the shared SourceRegistry: valueFrom sources (GET and LIST) and, for
// revert/strict instances, their rendered kinds (drift, by the instance-uid label). A change
// re-enqueues exactly the instances that depend on it, and is remembered as the trigger of
// their next reconcile (for the SourceChanged / DriftReverted Events and the rotation lag).
import type { KubeObject } from './api/object-meta.ts';
import { LABEL_INSTANCE_UID } from './api/well-known.ts';
import { parseGvkKey, resourceKey } from './engine/inventory.ts';
import type { OperatorShell } from './framework/operator-shell.ts';
import {
  SourceRegistry,
  type ChangeNotice,
  type Dependency,
  type WatchKey,
} from './framework/source-registry.ts';
import type { Discovery } from './kube/discovery.ts';
import type { DependencyTracker, Trigger } from './reconcile/reader.ts';

export interface DependencyWatchOptions {
  shell: () => OperatorShell | undefined;
  discovery: Discovery;
  enqueue: (instanceKey: string) => void;
  onRotationLag?: (ms: number) => void;
  now?: () => number;
}

export class DependencyWatches implements DependencyTracker {
  readonly registry: SourceRegistry;
  private readonly triggers = new Map<string, Trigger>();
  /** resourceVersions our own applies produced: their watch events are not drift. */
  private readonly ownWrites = new Map<string, string>();

  constructor(private readonly options: DependencyWatchOptions) {
    this.registry = new SourceRegistry(
      (key, onChange) => this.startWatch(key, onChange),
      (notice) => this.onChange(notice),
    );
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  private async startWatch(
    key: WatchKey,
    onChange: (type: ChangeNotice['type'], object: KubeObject) => void,
  ): ReturnType<ConstructorParameters<typeof SourceRegistry>[0]> {
    const shell = this.options.shell();
    const info = await this.options.discovery.resourceFor(key.apiVersion, key.kind);
    if (!shell || !info) return undefined;
    const [group, version] = key.apiVersion.includes('/')
      ? key.apiVersion.split('/')
      : ['', key.apiVersion];
    return shell.watchDynamic(
      {
        group: group ?? '',
        version: version ?? '',
        plural: info.plural,
        namespace: info.scope === 'Namespaced' ? key.namespace : undefined,
        labelSelector: key.labelSelector,
        metadataOnly: true,
      },
      (event) => onChange(event.type, event.object as unknown as KubeObject),
    );
  }

  private onChange(notice: ChangeNotice): void {
    const drift = notice.key.labelSelector === LABEL_INSTANCE_UID;
    if (drift && notice.type !== 'DELETED' && this.isOwnWrite(notice.object)) return;
    const { namespace, name } = notice.object.metadata;
    const description = `${notice.key.kind} ${namespace ? `${namespace}/` : ''}${name ?? ''} ${notice.type === 'DELETED' ? 'was deleted' : 'changed'}`;
    // The latest change wins: rotation lag is measured from the change the apply carries.
    this.triggers.set(notice.dependent, {
      kind: drift ? 'drift' : 'source',
      description,
      at: this.now(),
    });
    this.options.enqueue(notice.dependent);
  }

  async track(
    instanceKey: string,
    sources: { apiVersion: string; kind: string; namespace?: string; name?: string }[],
    drift: { uid: string; gvks: string[] } | undefined,
  ): Promise<void> {
    const sourceDeps: Dependency[] = sources.map((s) => ({
      key: { apiVersion: s.apiVersion, kind: s.kind, namespace: s.namespace },
      name: s.name,
    }));
    const driftDeps: Dependency[] = (drift?.gvks ?? []).flatMap((g) => {
      const gvk = parseGvkKey(g);
      return gvk
        ? [
            {
              key: { ...gvk, labelSelector: LABEL_INSTANCE_UID },
              label: { key: LABEL_INSTANCE_UID, value: drift!.uid },
            },
          ]
        : [];
    });
    await this.registry.set(instanceKey, sourceDeps, 'sources');
    await this.registry.set(instanceKey, driftDeps, 'drift');
  }

  release(instanceKey: string): void {
    this.registry.release(instanceKey);
    this.triggers.delete(instanceKey);
  }

  takeTrigger(instanceKey: string): Trigger | undefined {
    const trigger = this.triggers.get(instanceKey);
    this.triggers.delete(instanceKey);
    return trigger;
  }

  applied(_instanceKey: string, trigger: Trigger | undefined, written: KubeObject[]): void {
    for (const object of written) {
      if (object.metadata.resourceVersion)
        this.ownWrites.set(resourceKey(object), object.metadata.resourceVersion);
    }
    if (this.ownWrites.size > 100_000) this.ownWrites.clear();
    if (trigger?.kind === 'source') this.options.onRotationLag?.(this.now() - trigger.at);
  }

  private isOwnWrite(object: KubeObject): boolean {
    const key = resourceKey({ ...object, apiVersion: object.apiVersion ?? '' });
    const ours = this.ownWrites.get(key);
    if (ours === undefined || ours !== object.metadata.resourceVersion) return false;
    this.ownWrites.delete(key);
    return true;
  }
}

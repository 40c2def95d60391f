// The DependencyTracker over the shared SourceRegistry: valueFrom sources (GET and LIST) and, for
// every instance not frozen, their rendered kinds (drift and health, by the instance-uid label).
// A change re-enqueues exactly the instances that depend on it, and is remembered as the trigger
// of their next reconcile (for the SourceChanged / DriftReverted Events and the rotation lag).
import type { KubeObject } from '../../api/object-meta.ts';
import { LABEL_INSTANCE_UID } from '../../api/well-known.ts';
import type { AppliedMemo } from '../../reconcile/instance/applied-memo.ts';
import { keepable, type SourceValues } from '../../reconcile/instance/source-values.ts';
import { parseGvkKey, resourceKey } from '../../engine/objects/inventory.ts';
import { groupVersionOf } from '../../engine/objects/resource-scope.ts';
import type { Dependency, DependencyKey, WatchKey } from '../../framework/dependency-key.ts';
import type { OperatorShell } from '../../framework/watches/operator-shell.ts';
import {
  SourceRegistry,
  type ChangeNotice,
  type WatchStarter,
} from '../../framework/watches/source-registry.ts';
import type { Discovery } from '../../kube/discovery.ts';
import type { DependencyTracker, SourceAccess, Trigger } from '../../reconcile/reader.ts';

export interface DependencyWatchOptions {
  shell: () => OperatorShell | undefined;
  discovery: Discovery;
  enqueue: (instanceKey: string) => void;
  onRotationLag?: (ms: number) => void;
  now?: () => number;
  /**
   * The record of what our applies produced (the instance reconciler's AppliedMemo): a watch
   * event at a resourceVersion it holds is our own write, not drift.
   */
  applied?: Pick<AppliedMemo, 'producedBy'>;
  /**
   * Source values kept between passes (ADR 0027): the source watches of kinds it may keep bring
   * the objects some dependent (or hold) names, so a pass need not read them.
   */
  values?: Pick<SourceValues, 'put'>;
}

/**
 * The triggers waiting for an instance's next completed pass, one per kind: within a kind the
 * newer replaces the older (rotation lag is measured from the change the apply carries); across
 * kinds both wait, and a source change is reported first (it owes a SourceChanged Event and a
 * rotation lag; the apply it causes reverts any drift too).
 */
type PendingTriggers = Partial<Record<Trigger['kind'], Trigger>>;

export class DependencyWatches implements DependencyTracker {
  readonly registry: SourceRegistry;
  private readonly triggers = new Map<string, PendingTriggers>();
  /**
   * Objects with one of our applies in flight, and the last drift event seen for each meanwhile:
   * the watch may deliver the event of our write before the apply's response arrives, so such an
   * event waits for the response to tell whose write it was.
   */
  private readonly writing = new Map<string, ChangeNotice | undefined>();

  constructor(private readonly options: DependencyWatchOptions) {
    // What an instance rendered carries its uid in this label (stamped by the engine): the
    // framework's drift watches select and route on it.
    this.registry = new SourceRegistry(
      (key, onEvent, labelSelector) => this.startWatch(key, onEvent, labelSelector),
      (notice) => this.onChange(notice),
      LABEL_INSTANCE_UID,
    );
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  private async startWatch(
    key: WatchKey,
    onEvent: Parameters<WatchStarter>[1],
    labelSelector: string | undefined,
  ): ReturnType<WatchStarter> {
    const shell = this.options.shell();
    const info = await this.options.discovery.resourceFor(key.apiVersion, key.kind);
    if (!shell || !info) return undefined;
    const { group, version } = groupVersionOf(key.apiVersion);
    const { values } = this.options;
    // Never a Secret's: keepable() is by kind, so its watch stays metadata only on the wire too.
    const keeps = key.type === 'source' && values && keepable(key.apiVersion, key.kind);
    const wanted = this.registry.wantedBy(key);
    return shell.watchDynamic(
      {
        group,
        version,
        plural: info.plural,
        namespace: info.scope === 'Namespaced' ? key.namespace : undefined,
        labelSelector,
        metadataOnly: true,
        received: keeps
          ? (object) => {
              // A list's items may come without their kind: the watch's kind is theirs.
              if (wanted(object.metadata.name ?? ''))
                values.put({ ...object, apiVersion: key.apiVersion, kind: key.kind });
            }
          : undefined,
      },
      (event, old, origin) => onEvent(event.type, event.object, origin, old),
    );
  }

  private onChange(notice: ChangeNotice): void {
    const { dependency, object } = notice;
    const drift = dependency.type === 'drift';
    if (drift && notice.type !== 'DELETED') {
      const key = driftKey(dependency, object);
      if (this.writing.has(key)) {
        this.writing.set(key, notice);
        return;
      }
      if (this.isOwnWrite(key, object)) return;
    }
    const { namespace, name } = object.metadata;
    const description = `${dependency.kind} ${namespace ? `${namespace}/` : ''}${name ?? ''} ${notice.type === 'DELETED' ? 'was deleted' : 'changed'}`;
    const kind = drift ? 'drift' : 'source';
    const pending = this.triggers.get(notice.dependent) ?? {};
    this.triggers.set(notice.dependent, {
      ...pending,
      [kind]: { kind, description, at: this.now() },
    });
    this.options.enqueue(notice.dependent);
  }

  async track(
    instanceKey: string,
    sources: SourceAccess[],
    drift: { uid: string; gvks: string[] } | undefined,
  ): Promise<void> {
    const sourceDeps: Dependency[] = sources.map((s) => ({
      key: {
        type: 'source',
        apiVersion: s.apiVersion,
        kind: s.kind,
        namespace: s.namespace,
        name: s.name,
      },
      observed: s.observed,
    }));
    const driftDeps: Dependency[] = (drift?.gvks ?? []).flatMap((g) => {
      const gvk = parseGvkKey(g);
      return gvk ? [{ key: { type: 'drift', ...gvk, ownerUid: drift!.uid } }] : [];
    });
    await this.registry.set(instanceKey, [...sourceDeps, ...driftDeps]);
  }

  release(instanceKey: string): void {
    this.registry.release(instanceKey);
    this.triggers.delete(instanceKey);
  }

  peekTrigger(instanceKey: string): Trigger | undefined {
    const pending = this.triggers.get(instanceKey);
    return pending?.source ?? pending?.drift;
  }

  clearTrigger(instanceKey: string, handled: Trigger | undefined): void {
    const pending = this.triggers.get(instanceKey);
    // A change seen while the pass ran replaced the trigger: it stays for the next pass.
    if (!handled || !pending || pending[handled.kind] !== handled) return;
    const rest: PendingTriggers = { ...pending };
    delete rest[handled.kind];
    if (rest.source ?? rest.drift) this.triggers.set(instanceKey, rest);
    else this.triggers.delete(instanceKey);
  }

  beginWrite(object: KubeObject): (result: KubeObject | undefined) => void {
    const key = resourceKey(object);
    this.writing.set(key, undefined);
    return () => {
      const held = this.writing.get(key);
      this.writing.delete(key);
      // The applier recorded `result` before calling this: a held event of it is ours.
      if (held) this.onChange(held);
    };
  }

  applied(_instanceKey: string, trigger: Trigger | undefined): void {
    if (trigger?.kind === 'source') this.options.onRotationLag?.(this.now() - trigger.at);
  }

  private isOwnWrite(key: string, object: KubeObject): boolean {
    return this.options.applied?.producedBy(key, object.metadata.resourceVersion) ?? false;
  }
}

/** Drift watches carry metadata only: the kind comes from the dependency, not the event. */
function driftKey(dependency: DependencyKey, object: KubeObject): string {
  return resourceKey({ ...object, apiVersion: dependency.apiVersion, kind: dependency.kind });
}

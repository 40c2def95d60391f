// TemplateInstanceSets in the operator (ADR 0014): their informer, their controller, the cache
// view their reconciler reads, and the routing of the other caches' events to them: a namespace
// added, removed or relabelled (or its override annotations changed) re-evaluates every Set; a
// stamped instance's change its Set; a Template's change the Sets that reference it.
import type { ObjectHead } from '../api/object-meta.ts';
import type { Template } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import type { TemplateInstanceSet } from '../api/template-instance-set.ts';
import {
  GROUP,
  INSTANCE_SET_FIELD_MANAGER,
  LABEL_INSTANCE_SET,
  PARAMETER_OVERRIDE_PREFIX,
  TEMPLATE_INSTANCE_SET_PLURAL,
  VERSION,
} from '../api/well-known.ts';
import type { NamespaceView } from '../engine/instance-set.ts';
import { Controller } from '../framework/controller.ts';
import type { Informer } from '../framework/informer.ts';
import type { OperatorShell } from '../framework/operator-shell.ts';
import type { QueueObserver } from '../framework/work-queue.ts';
import type { KubeCluster } from '../kube/cluster.ts';
import type { Logger } from '../log.ts';
import {
  InstanceSetReconciler,
  type InstanceSetCache,
} from '../reconcile/instance-set-reconciler.ts';
import type { CacheHandlers, OperatorCaches } from './caches.ts';
import { specOrMetadataChanged } from './event-routing.ts';

export interface InstanceSetsOptions {
  cluster: KubeCluster;
  caches: OperatorCaches;
  /** The namespaces the operator watches (undefined: all): a Set stamps into these only. */
  namespaces?: string[];
  concurrency: number;
  observer?: QueueObserver;
  /** Which Set keys this replica may process (a sharded replica: the owner of namespace ""). */
  admit?: (key: string) => boolean;
  log: Logger;
  now: () => Date;
}

/** Only the override annotations are kept of a namespace: they are all a Set reads. */
function overrideAnnotations(namespace: ObjectHead): Record<string, string> {
  return Object.fromEntries(
    Object.entries(namespace.metadata.annotations ?? {}).filter(([key]) =>
      key.startsWith(PARAMETER_OVERRIDE_PREFIX),
    ),
  );
}

function namespaceView(namespace: ObjectHead): NamespaceView {
  return {
    name: namespace.metadata.name ?? '',
    labels: namespace.metadata.labels ?? {},
    annotations: overrideAnnotations(namespace),
    terminating: namespace.metadata.deletionTimestamp !== undefined,
  };
}

/** What a Set judges an instance by: its spec, metadata, readiness and the generation seen. */
export function instanceChanged(
  instance: TemplateInstance,
  old: TemplateInstance | undefined,
): boolean {
  if (specOrMetadataChanged(instance, old)) return true;
  const ready = (i: TemplateInstance | undefined): string =>
    JSON.stringify([
      i?.status?.phase,
      i?.status?.observedGeneration,
      i?.status?.conditions?.find((c) => c.type === 'Ready'),
    ]);
  return ready(instance) !== ready(old);
}

export function namespaceChanged(namespace: ObjectHead, old: ObjectHead | undefined): boolean {
  if (!old) return true;
  const view = (n: ObjectHead): string => JSON.stringify(namespaceView(n));
  return view(namespace) !== view(old);
}

export class InstanceSets {
  readonly controller: Controller;
  private informer: Informer<TemplateInstanceSet> | undefined;
  private readonly watched: Set<string> | undefined;

  constructor(private readonly options: InstanceSetsOptions) {
    this.watched = options.namespaces && new Set(options.namespaces);
    const cache: InstanceSetCache = {
      namespaces: () =>
        options.caches
          .namespaces()
          .filter((n) => !this.watched || this.watched.has(n.metadata.name ?? ''))
          .map(namespaceView),
      instancesOfSet: (name) => options.caches.instancesOfSet(name),
      instance: (namespace, name) => options.caches.instance(namespace, name),
    };
    this.controller = new Controller({
      name: 'templateinstanceset',
      reconciler: new InstanceSetReconciler({
        cluster: options.cluster,
        stamper: options.cluster.withFieldManager(INSTANCE_SET_FIELD_MANAGER),
        cache,
        now: options.now,
        log: (level, message, fields) => options.log[level](message, fields),
      }),
      concurrency: options.concurrency,
      observer: options.observer,
      admit: options.admit,
    });
  }

  /** Starts the (cluster-wide) informer of Sets; part of cache readiness. */
  watch(shell: OperatorShell): void {
    this.informer = shell.watch<TemplateInstanceSet>(
      { group: GROUP, version: VERSION, plural: TEMPLATE_INSTANCE_SET_PLURAL },
      (event, old) => {
        if (String(event.type) === 'DELETED' || specOrMetadataChanged(event.object, old))
          this.enqueue(event.object.metadata.name);
      },
    );
  }

  /** `handlers`, plus what the Sets learn from the same events. */
  routing(handlers: CacheHandlers): CacheHandlers {
    return {
      ...handlers,
      instance: (event, old, origin) => {
        handlers.instance(event, old, origin);
        const set = event.object.metadata.labels?.[LABEL_INSTANCE_SET];
        const before = old?.metadata.labels?.[LABEL_INSTANCE_SET];
        if (before && before !== set) this.enqueue(before);
        if (set && (String(event.type) !== 'MODIFIED' || instanceChanged(event.object, old)))
          this.enqueue(set);
      },
      namespace: (event, old, origin) => {
        handlers.namespace(event, old, origin);
        if (String(event.type) !== 'MODIFIED' || namespaceChanged(event.object, old)) this.resync();
      },
      template: (event, old, origin) => {
        handlers.template(event, old, origin);
        if (String(event.type) === 'MODIFIED' && !specOrMetadataChanged(event.object, old)) return;
        this.enqueueUsersOf(event.object);
      },
    };
  }

  private enqueueUsersOf(template: Template): void {
    const { namespace, name } = template.metadata;
    for (const set of this.informer?.list() ?? []) {
      const ref = set.spec.template?.spec?.templateRef;
      if (ref?.namespace === namespace && ref?.name === name) this.enqueue(set.metadata.name);
    }
  }

  private enqueue(name: string | undefined): void {
    if (name) this.controller.enqueue({ namespace: '', name });
  }

  /** Enqueues every Set (namespace changes, the periodic resync). */
  resync(): void {
    for (const set of this.informer?.list() ?? []) this.enqueue(set.metadata.name);
  }
}

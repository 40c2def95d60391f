// Wires the operator together: informers (through the dot-i shell) → controllers → reconcilers,
// the fan-out between Templates, instances and namespaces, and the periodic resync.
import type { KubeObject } from './api/object-meta.ts';
import type { Template } from './api/template.ts';
import type { TemplateInstance } from './api/template-instance.ts';
import { GROUP, TEMPLATE_INSTANCE_PLURAL, TEMPLATE_PLURAL, VERSION } from './api/well-known.ts';
import { templateRefOf } from './engine/instance-evaluation.ts';
import { Controller } from './framework/controller.ts';
import { parseRequestKey } from './framework/reconciler.ts';
import { DependencyWatches } from './dependency-watches.ts';
import type { Informer } from './framework/informer.ts';
import { OperatorShell } from './framework/operator-shell.ts';
import type { QueueObserver } from './framework/work-queue.ts';
import type { KubeConnection } from './kube/connection.ts';
import type { Logger } from './log.ts';
import { InstanceReconciler } from './reconcile/instance-reconciler.ts';
import type { CacheReader } from './reconcile/reader.ts';
import { TemplateReconciler } from './reconcile/template-reconciler.ts';
import { StrictWebhook, type StrictWebhookOptions } from './webhook/strict-webhook.ts';
import { LeaderElector } from './framework/leader-election.ts';
import { KubeLeaseStore } from './kube/lease-store.ts';
import type { StencilMetrics } from './metrics.ts';
import type { ReconcileMetrics } from './reconcile/reader.ts';

/** The strict-mode webhook: where it listens, how the API server reaches it, where its certificate lives. */
export type WebhookOptions = Pick<
  StrictWebhookOptions,
  | 'endpoint'
  | 'port'
  | 'host'
  | 'namespace'
  | 'secretName'
  | 'configurationName'
  | 'certDir'
  | 'breakGlassGroups'
>;

export interface LeaderElectionOptions {
  identity: string;
  namespace: string;
  name?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Leadership was lost: the process should exit so it restarts clean (client-go's choice). */
  onLost: () => void;
}

export interface OperatorOptions {
  metrics?: StencilMetrics;
  /** Only the holder of the Lease reconciles; others keep warm caches and serve the webhook. */
  leaderElection?: LeaderElectionOptions;
  /** Serve the strict-mode admission webhook (SPEC §7). */
  webhook?: WebhookOptions;
  /** Called with the time from a source change to the apply it caused (ms). */
  onRotationLag?: (ms: number) => void;
  connection: KubeConnection;
  /** Namespaces to watch; undefined = all. */
  namespaces?: string[];
  concurrency: number;
  resyncSeconds: number;
  log: Logger;
  now?: () => Date;
}

/** Status-only updates (including our own status writes) do not need another reconcile. */
function specOrMetadataChanged(object: KubeObject, old: KubeObject | undefined): boolean {
  if (!old) return true;
  const a = object.metadata;
  const b = old.metadata;
  return (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    JSON.stringify(a.annotations ?? {}) !== JSON.stringify(b.annotations ?? {}) ||
    JSON.stringify(a.labels ?? {}) !== JSON.stringify(b.labels ?? {}) ||
    JSON.stringify(a.finalizers ?? []) !== JSON.stringify(b.finalizers ?? [])
  );
}

function requestOf(object: { metadata: KubeObject['metadata'] }): {
  namespace: string;
  name: string;
} {
  return { namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' };
}

function queueObserver(log: Logger, controller: string): QueueObserver {
  return {
    onProcessed: (key, outcome, ms, error) => {
      const [namespace, name] = key.split('/');
      if (outcome === 'success') log.debug('reconciled', { controller, namespace, name, ms });
      else
        log.info(
          outcome === 'terminal'
            ? 'reconcile stopped until an input changes'
            : 'reconcile failed; will retry',
          { controller, namespace, name, ms, error: (error as Error)?.message ?? String(error) },
        );
    },
  };
}

export class StencilOperator {
  readonly instances: Controller;
  readonly templates: Controller;
  private shell: OperatorShell | undefined;
  private readonly instanceInformers: Informer[] = [];
  private readonly templateInformers: Informer[] = [];
  private namespaceInformer: Informer | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  /** The strict-mode webhook, when configured. */
  webhook: StrictWebhook | undefined;
  private elector: LeaderElector | undefined;
  private leading = false;
  readonly dependencies: DependencyWatches;

  private readonly cache: CacheReader = this.cacheReader();

  constructor(private readonly options: OperatorOptions) {
    const cache = this.cache;
    this.dependencies = new DependencyWatches({
      shell: () => this.shell,
      discovery: options.connection.cluster.discovery,
      enqueue: (key) => this.instances.enqueue(parseRequestKey(key)),
      onRotationLag: (ms) => {
        options.metrics?.rotationLag.observe(ms / 1000);
        options.onRotationLag?.(ms);
      },
    });
    const metrics = options.metrics;
    const reconcileMetrics: ReconcileMetrics | undefined = metrics && {
      applies: (result, count) => metrics.applies.inc({ result }, count),
      orphans: (result, count) => metrics.orphanDeletes.inc({ result }, count),
      driftReverted: (count) => metrics.driftReverts.inc(count),
    };
    const tracker = this.dependencies;
    const now = options.now ?? (() => new Date());
    const { cluster } = options.connection;
    const log = (
      level: 'debug' | 'info' | 'warn' | 'error',
      message: string,
      fields: Record<string, unknown>,
    ): void => options.log[level](message, fields);
    this.instances = new Controller({
      name: 'templateinstance',
      reconciler: new InstanceReconciler({
        cluster,
        cache,
        tracker,
        metrics: reconcileMetrics,
        now,
        log,
      }),
      concurrency: options.concurrency,
      observer: this.observer('templateinstance'),
    });
    this.templates = new Controller({
      name: 'template',
      reconciler: new TemplateReconciler({ cluster, cache, now }),
      concurrency: Math.max(1, Math.ceil(options.concurrency / 4)),
      observer: this.observer('template'),
    });
  }

  private observer(controller: string): QueueObserver {
    const logging = queueObserver(this.options.log, controller);
    return this.options.metrics ? this.options.metrics.queueObserver(controller, logging) : logging;
  }

  private cacheReader(): CacheReader {
    return {
      namespaceLabels: (name) => this.namespaceInformer?.get('', name)?.metadata.labels,
      instancesOf: (namespace, name) =>
        this.allInstances().filter((i) => {
          const ref = templateRefOf(i);
          return ref.namespace === namespace && ref.name === name;
        }),
      templates: () => this.templateInformers.flatMap((i) => i.list() as unknown as Template[]),
    };
  }

  private allInstances(): TemplateInstance[] {
    return this.instanceInformers.flatMap((i) => i.list() as unknown as TemplateInstance[]);
  }

  /** Starts the watches, waits for the caches, then starts reconciling. */
  async start(): Promise<void> {
    const { connection, log } = this.options;
    const shellLog = (
      level: 'info' | 'warn' | 'error',
      message: string,
      fields?: Record<string, unknown>,
    ): void => log[level](message, fields);
    this.shell = new OperatorShell(
      connection.kubeConfig,
      connection.listWatch,
      (shell) => this.watch(shell),
      shellLog,
    );
    await this.shell.start();
    await this.shell.waitForSync();
    if (this.options.leaderElection) this.campaign(this.options.leaderElection);
    else this.lead();
    if (this.options.webhook) await this.startWebhook(this.options.webhook);
    this.resyncTimer = setInterval(() => this.resyncAll(), this.options.resyncSeconds * 1000);
    this.resyncTimer.unref();
    log.info('operator started', {
      namespaces: this.options.namespaces ?? 'all',
      concurrency: this.options.concurrency,
    });
  }

  /** Starts reconciling (the leader, or the only replica). */
  private lead(): void {
    this.leading = true;
    this.options.metrics?.leader.set(1);
    this.instances.start();
    this.templates.start();
    void this.webhook?.refresh();
  }

  private campaign(options: LeaderElectionOptions): void {
    const { http, cluster } = this.options.connection;
    const name = options.name ?? 'stencil-leader';
    this.options.metrics?.leader.set(0);
    this.elector = new LeaderElector({
      ...options,
      name,
      store: new KubeLeaseStore(http, options.namespace, name),
      onStartedLeading: () => this.lead(),
      onStoppedLeading: () => {
        this.leading = false;
        this.options.metrics?.leader.set(0);
        // Abort in-flight work at once: no drain may outlive the Lease (the fence below refuses
        // any write that still gets through).
        void this.instances.abortNow();
        void this.templates.abortNow();
        options.onLost();
      },
      log: (level, message, fields) => this.options.log[level](message, fields),
    });
    const elector = this.elector;
    cluster.fenceWrites(() => elector.writeRefusal());
    this.elector.start();
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** Sets the gauges that are read off the caches, just before a scrape. */
  refreshGauges(): void {
    const metrics = this.options.metrics;
    if (!metrics) return;
    metrics.instances.reset();
    for (const instance of this.allInstances())
      metrics.instances.inc({ phase: instance.status?.phase ?? 'Pending' });
    metrics.sourceWatches.reset();
    for (const key of this.dependencies.registry.watchKeys())
      metrics.sourceWatches.inc({ kind: key.type === 'drift' ? `${key.kind} (drift)` : key.kind });
  }

  private async startWebhook(options: WebhookOptions): Promise<void> {
    const { cluster } = this.options.connection;
    const log = (
      level: 'info' | 'warn' | 'error',
      message: string,
      fields?: Record<string, unknown>,
    ): void => this.options.log[level](message, fields);
    this.webhook = new StrictWebhook({ cluster, log, mayWrite: () => this.leading, ...options });
    await this.webhook.start(await cluster.identity());
  }

  private watch(shell: OperatorShell): Promise<void> {
    const scopes = this.options.namespaces ?? [undefined];
    for (const namespace of scopes) {
      this.instanceInformers.push(
        shell.watch(
          { group: GROUP, version: VERSION, plural: TEMPLATE_INSTANCE_PLURAL, namespace },
          (event, old) => this.onInstance(event.type, event.object as KubeObject, old),
        ),
      );
      this.templateInformers.push(
        shell.watch(
          { group: GROUP, version: VERSION, plural: TEMPLATE_PLURAL, namespace },
          (event, old) => this.onTemplate(event.type, event.object as KubeObject, old),
        ),
      );
    }
    this.namespaceInformer = shell.watch(
      { group: '', version: 'v1', plural: 'namespaces' },
      (event, old) => this.onNamespace(event.type, event.object as KubeObject, old),
    );
    return Promise.resolve();
  }

  private onInstance(type: string, object: KubeObject, old: KubeObject | undefined): void {
    if (type === 'DELETED') {
      const ref = templateRefOf(object as unknown as TemplateInstance);
      this.templates.enqueue(ref);
      return;
    }
    if (specOrMetadataChanged(object, old)) this.instances.enqueue(requestOf(object));
  }

  private onTemplate(type: string, object: KubeObject, old: KubeObject | undefined): void {
    if (type !== 'DELETED' && !specOrMetadataChanged(object, old)) return;
    this.templates.enqueue(requestOf(object));
    for (const instance of this.cache.instancesOf(
      object.metadata.namespace ?? '',
      object.metadata.name ?? '',
    )) {
      this.instances.enqueue(requestOf(instance));
    }
  }

  private onNamespace(type: string, object: KubeObject, old: KubeObject | undefined): void {
    if (
      old &&
      JSON.stringify(old.metadata.labels ?? {}) === JSON.stringify(object.metadata.labels ?? {})
    )
      return;
    const name = object.metadata.name ?? '';
    for (const instance of this.allInstances().filter((i) => i.metadata.namespace === name)) {
      this.instances.enqueue(requestOf(instance));
    }
  }

  /** Enqueues every known instance and Template (the periodic resync). */
  resyncAll(): void {
    for (const informer of this.templateInformers)
      for (const o of informer.list()) this.templates.enqueue(requestOf(o));
    for (const informer of this.instanceInformers)
      for (const o of informer.list()) this.instances.enqueue(requestOf(o));
  }

  ready(): boolean {
    return this.shell?.hasSynced() ?? false;
  }

  /** Resolves once no reconcile is running (keys may still be waiting for a retry). */
  async idle(): Promise<void> {
    await Promise.all([this.instances.queue.idle(), this.templates.queue.idle()]);
  }

  /** Stops taking work, lets in-flight reconciles finish (bounded), stops the watches. */
  async stop(graceMs = 10_000): Promise<void> {
    clearInterval(this.resyncTimer);
    await Promise.all([this.instances.shutdown(graceMs), this.templates.shutdown(graceMs)]);
    await this.webhook?.stop();
    await this.elector
      ?.release()
      .catch((error: unknown) =>
        this.options.log.warn('could not release the lease', { error: String(error) }),
      );
    this.shell?.stopWatches();
    this.options.log.info('operator stopped');
  }
}

// The operator: its caches (informers through the dot-i shell) → event routing → controllers →
// reconcilers, plus the dependency watches, leader election, the shard hand-off, the strict-mode
// webhook, the gauges and the periodic resync. Each concern lives in its own module of this
// folder; every controller is declared the same way (framework/controller.ts): the kind it
// reconciles, its watches, its reconciler and its queue.
import type { KubeObject } from '../api/object-meta.ts';
import {
  INSTANCE_SET_FIELD_MANAGER,
  LABEL_MANAGED_BY,
  MANAGED_BY_STENCIL,
} from '../api/well-known.ts';
import {
  publishedCrdOf,
  publisherOfCrd,
  type ApiAllowance,
} from '../engine/typed-api/api-names.ts';
import { Controller, KindCache, type ControllerOptions } from '../framework/controller.ts';
import type { LeaderElector } from '../framework/coordination/leader-election.ts';
import { OperatorShell } from '../framework/watches/operator-shell.ts';
import { parseRequestKey } from '../framework/reconciler.ts';
import type { QueueObserver } from '../framework/work-queue.ts';
import { ClusterSchemas, type ClusterSchemasOptions } from '../kube/cluster-schemas.ts';
import type { KubeConnection } from '../kube/connection.ts';
import { ServedResources } from '../kube/served-resources.ts';
import { KubernetesSchemas } from '../engine/object-schema/kubernetes-schemas.ts';
import { OfflineSchemas } from '../engine/object-schema/object-schema.ts';
import { schemaFileReader } from '../kubernetes-schema-files.ts';
import type { Logger } from '../log.ts';
import type { StencilMetrics } from '../metrics.ts';
import { AppliedMemo } from '../reconcile/instance/applied-memo.ts';
import { SourceValues } from '../reconcile/instance/source-values.ts';
import type { SourceCache } from '../reconcile/instance/cluster-source.ts';
import { InstanceReconciler } from '../reconcile/instance/instance-reconciler.ts';
import { InstanceSetReconciler } from '../reconcile/instance-set-reconciler.ts';
import type { ReconcileMetrics } from '../reconcile/reader.ts';
import { EventSender } from '../reconcile/instance/event-sender.ts';
import type { AuthorizeSources } from '../reconcile/instance/requester-authorization.ts';
import { CachedReadAccess } from '../reconcile/instance/tenant-access.ts';
import { EXTRA_IMPERSONATED_BY } from '../api/well-known.ts';
import {
  serviceAccountUsername,
  type ServiceAccountRef,
  type TenancyPolicy,
} from '../engine/shared/acting-identity.ts';
import type { Impersonation } from '../reconcile/cluster-port.ts';
import { TemplateReconciler } from '../reconcile/template-reconciler.ts';
import { PreflightRunner } from '../reconcile/preflight.ts';
import type { StrictWebhook } from '../webhook/strict-webhook.ts';
import { OperatorCaches } from './watches/caches.ts';
import { DependencyWatches } from './watches/dependency-watches.ts';
import {
  instanceRequest,
  instanceWatches,
  publishedKindWatches,
  templateWatches,
} from './watches/event-routing.ts';
import { setCache, setWatches } from './watches/instance-sets.ts';
import { groupKindOf } from './watches/published-kinds.ts';
import { refreshGauges } from './gauges.ts';
import { campaign, type LeaderElectionOptions } from './coordination/leadership.ts';
import { queueLogging } from './queue-logging.ts';
import { RenderPool } from './render-pool/render-pool.ts';
import {
  createShard,
  ShardHandoff,
  type Shard,
  type ShardingOptions,
} from './coordination/sharding.ts';
import type { WebhookOptions } from './webhook-lifecycle.ts';

export type { LeaderElectionOptions } from './coordination/leadership.ts';
export type { WebhookOptions } from './webhook-lifecycle.ts';
export type { ShardingOptions } from './coordination/sharding.ts';

export interface OperatorOptions {
  metrics?: StencilMetrics;
  /** Only the holder of the Lease reconciles; others keep warm caches and serve the webhook. */
  leaderElection?: LeaderElectionOptions;
  /** Split the namespaces across replicas (ADR 0015); exclusive with `leaderElection`. */
  sharding?: ShardingOptions;
  /** Serve the admission webhook: strict mode (SPEC §7), and requesters when `requester`. */
  webhook?: WebhookOptions;
  /** Whose rights a valueFrom read needs besides the operator's (ADR 0020); default operator. */
  authorizeSources?: AuthorizeSources;
  /**
   * Who a Template's requests are made as (ADR 0035). Absent: the operator itself, as in
   * single-team mode.
   */
  tenancy?: TenancyPolicy;
  /** Called with the time from a source change to the apply it caused (ms). */
  onRotationLag?: (ms: number) => void;
  connection: KubeConnection;
  /** Namespaces to watch; undefined = all. */
  namespaces?: string[];
  concurrency: number;
  resyncSeconds: number;
  /** Renders run in worker threads with this deadline (default 5 s, 2 workers). */
  render?: { timeoutMs: number; workers?: number };
  /**
   * How the API server's published schemas are kept (ADR 0030); the built-in bundle
   * (schemas/kubernetes) is read only when they cannot be.
   */
  schemas?: Omit<ClusterSchemasOptions, 'log'>;
  /**
   * Which Template namespaces may publish which API groups (--api-groups, ADR 0032). Empty or
   * absent: no Template may publish a kind, and CRDs are not watched at all.
   */
  apiGroups?: ApiAllowance;
  log: Logger;
  now?: () => Date;
}

function reconcileMetrics(metrics: StencilMetrics | undefined): ReconcileMetrics | undefined {
  return (
    metrics && {
      applies: (result, count) => metrics.applies.inc({ result }, count),
      orphans: (result, count) => metrics.orphanDeletes.inc({ result }, count),
      driftReverted: (count) => metrics.driftReverts.inc(count),
    }
  );
}

/** The render deadline unless configured (--render-timeout). */
const DEFAULT_RENDER_TIMEOUT_MS = 5_000;

/**
 * How long a pass's first read of a kept source kind (a ConfigMap) waits for the source watch of
 * its namespace to list, which brings the object, before reading it itself (ADR 0027): well over
 * a list on a busy API server, and paid once per watch that never lists (see SourceRegistry.hold).
 */
const SOURCE_WATCH_WAIT_MS = 2_000;

/** How long a stop waits for the Events still queued (within the shutdown's own bound). */
const EVENT_DRAIN_MS = 2_000;

export class StencilOperator {
  readonly instances: Controller;
  readonly templates: Controller;
  /** TemplateInstanceSets (ADR 0014). */
  readonly sets: Controller;
  readonly dependencies: DependencyWatches;
  /** The strict-mode webhook, when configured. */
  webhook: StrictWebhook | undefined;
  private readonly caches = new OperatorCaches();
  /** Source values kept between passes (ADR 0027); never a Secret's. */
  readonly sourceValues = new SourceValues();
  private readonly events = new EventSender(1_000, () =>
    this.options.log.warn('too many Events waiting to be sent; one was dropped'),
  );
  private shell: OperatorShell | undefined;
  private readonly renders: RenderPool;
  private resyncTimer: NodeJS.Timeout | undefined;
  private elector: LeaderElector | undefined;
  private leading = false;
  private readonly shard: Shard | undefined;
  /** The API server's published schemas, that rendered objects are checked against. */
  readonly publishedSchemas: ClusterSchemas;

  constructor(private readonly options: OperatorOptions) {
    this.shard = options.sharding && createShard(options.sharding, options.connection, options.log);
    // One record of what our applies produced: the applier skips what is settled, and the drift
    // watches know the events of our own writes.
    const applied = new AppliedMemo();
    this.dependencies = new DependencyWatches({
      applied,
      values: this.sourceValues,
      shell: () => this.shell,
      discovery: options.connection.cluster.discovery,
      enqueue: (key) => this.instances.enqueue(parseRequestKey(key)),
      onRotationLag: (ms) => {
        options.metrics?.rotationLag.observe(ms / 1000);
        options.onRotationLag?.(ms);
      },
    });
    const now = options.now ?? (() => new Date());
    const { cluster } = options.connection;
    const { metrics } = options;
    if (metrics)
      options.connection.http.onAttempt((verb, status) =>
        metrics.apiRequests.inc({ verb, code: String(status) }),
      );
    const cache = this.caches;
    this.publishedSchemas = new ClusterSchemas(
      options.connection.http,
      new OfflineSchemas(new KubernetesSchemas(schemaFileReader())),
      { ...options.schemas, log: (level, message, fields) => options.log[level](message, fields) },
    );
    const { schemas } = this.publishedSchemas;
    this.renders = new RenderPool({
      timeoutMs: options.render?.timeoutMs ?? DEFAULT_RENDER_TIMEOUT_MS,
      size: options.render?.workers,
      onWorkerError: (error) =>
        // Its message may quote what it rendered: the class only.
        options.log.warn('a render worker crashed; it is replaced', {
          error: error instanceof Error ? error.name : 'unknown',
        }),
    });
    // What the names of a published kind are checked against (ADR 0032).
    const served = new ServedResources(options.connection.http);
    // Whether an account a Template acts as may read what the caches keep (ADR 0035).
    const cachedReads = new CachedReadAccess(cluster);
    const sourceCache: SourceCache = {
      values: this.sourceValues,
      watched: (ref) => this.dependencies.registry.watchedSource(ref),
      hold: (ref) => this.dependencies.registry.hold(ref, SOURCE_WATCH_WAIT_MS),
    };
    this.instances = this.controller({
      name: 'templateinstance',
      // TemplateInstances and typed instances, in one queue (ADR 0032).
      kind: { list: () => cache.instances() },
      requestOf: instanceRequest,
      watches: instanceWatches(cache),
      reconciler: new InstanceReconciler({
        cluster,
        cache,
        tracker: this.dependencies,
        applied,
        schemas,
        metrics: reconcileMetrics(options.metrics),
        events: this.events,
        renderer: this.renders.render,
        authorizeSources: options.authorizeSources,
        sourceCache,
        tenancy: options.tenancy,
        cachedReads,
        impersonation: (account) => this.impersonation(account),
        now,
        log: (level, message, fields) => options.log[level](message, fields),
      }),
      concurrency: options.concurrency,
    });
    this.templates = this.controller({
      name: 'template',
      kind: cache.kinds.templates,
      watches: templateWatches(cache),
      reconciler: new TemplateReconciler({
        cluster,
        cache,
        schemas,
        renderer: this.renders.render,
        unpublished: (apiVersions) => this.publishedSchemas.unpublished(apiVersions),
        apiGroups: options.apiGroups,
        publishedBy: (namespace, name) => cache.publishedBy(namespace, name),
        servedResources: () => served.list(),
        preflight: new PreflightRunner({
          cache,
          applied,
          schemas,
          renderer: this.renders.render,
          authorizeSources: options.authorizeSources,
          sourceCache,
          tenancy: options.tenancy,
          cachedReads,
          impersonation: (account) => this.impersonation(account),
          changesWaiting: () => this.instances.queue.waiting('change') > 0,
        }),
        now,
      }),
      concurrency: Math.max(1, Math.ceil(options.concurrency / 4)),
    });
    this.sets = this.controller({
      name: 'templateinstanceset',
      kind: cache.kinds.sets,
      watches: setWatches(cache),
      reconciler: new InstanceSetReconciler({
        cluster,
        stamper: cluster.withFieldManager(INSTANCE_SET_FIELD_MANAGER),
        // A Set stamps only into the namespaces the operator watches.
        cache: setCache(cache, options.namespaces),
        now,
        log: (level, message, fields) => options.log[level](message, fields),
      }),
      concurrency: 1,
    });
  }

  /** Who the operator is to the API server: asked once, again after a failure. */
  private username: Promise<string> | undefined;

  /**
   * A request as `account`, marked as the operator's (the extra strict mode recognises, ADR
   * 0035): only the operator may impersonate that extra with its own username as the value.
   */
  private async impersonation(account: ServiceAccountRef): Promise<Impersonation> {
    this.username ??= this.options.connection.cluster.identity().catch((error: unknown) => {
      this.username = undefined;
      throw error;
    });
    return {
      username: serviceAccountUsername(account),
      extra: { [EXTRA_IMPERSONATED_BY]: [await this.username] },
    };
  }

  /**
   * Every controller takes the keys this replica owns (a Set is cluster-scoped: its key's
   * namespace is "", owned by one shard), and logs and counts its outcomes.
   */
  private controller(declaration: Omit<ControllerOptions, 'admit' | 'observer'>): Controller {
    return new Controller({
      ...declaration,
      admit: (key) => this.owns(parseRequestKey(key).namespace),
      observer: this.observer(declaration.name),
    });
  }

  /** Whether this replica reconciles `namespace` (always, unless sharded). */
  owns(namespace: string): boolean {
    return this.shard?.owns(namespace) ?? true;
  }

  private observer(controller: string): QueueObserver {
    const logging = queueLogging(this.options.log, controller, {
      readsSecrets: controller === 'templateinstance',
    });
    return this.options.metrics ? this.options.metrics.queueObserver(controller, logging) : logging;
  }

  /** Starts the watches, waits for the caches, then starts reconciling. */
  async start(): Promise<void> {
    const { connection, log } = this.options;
    this.shell = new OperatorShell(
      connection.kubeConfig,
      connection.listWatch,
      (shell) => {
        this.caches.watch(shell, this.options.namespaces);
        if ((this.options.apiGroups?.size ?? 0) > 0) this.watchPublishedKinds(shell);
        return Promise.resolve();
      },
      (level, message, fields) => log[level](message, fields),
      this.options.metrics?.informerHealth(),
    );
    await this.shell.start();
    await this.shell.waitForSync();
    if (this.options.leaderElection) this.campaign(this.options.leaderElection);
    else this.lead();
    if (this.shard) await this.shard.start(this.handoff());
    // Loaded only when configured: the webhook and its certificate code (node-forge) are 1.5 MiB
    // of heap that an operator without it does not need (issue #25).
    if (this.options.webhook) {
      const { startStrictWebhook } = await import('./webhook-lifecycle.ts');
      this.webhook = await startStrictWebhook(
        { ...this.options.webhook, namespaces: this.options.namespaces, cache: this.caches },
        connection.cluster,
        log,
        // One replica writes the webhook's configuration: the leader, or the shard that owns
        // the cluster-scoped key.
        () => this.leading && this.owns(''),
      );
    }
    this.resyncTimer = setInterval(() => this.resyncAll(), this.options.resyncSeconds * 1000);
    this.resyncTimer.unref();
    log.info('operator started', {
      namespaces: this.options.namespaces ?? 'all',
      concurrency: this.options.concurrency,
    });
  }

  /**
   * Watches the CRDs Stencil keeps for published kinds (ADR 0032): while one is Established its
   * kind's informers run, routed to the instance and Template controllers as TemplateInstances
   * are; when it goes, they stop. Its Template hears of each change, and of each change of the
   * kind's ClusterRoles, so a hand edit of either is put back by the Template's next pass.
   */
  private watchPublishedKinds(shell: OperatorShell): void {
    const generated = `${LABEL_MANAGED_BY}=${MANAGED_BY_STENCIL}`;
    const crds = new KindCache<KubeObject>({
      group: 'apiextensions.k8s.io',
      version: 'v1',
      plural: 'customresourcedefinitions',
      namespaced: false,
      labelSelector: generated,
    });
    const { published } = this.caches;
    crds.onChange(({ type, object }) => {
      const spec = type === 'DELETED' ? undefined : publishedCrdOf(object);
      const names =
        (object.spec as { group?: string; names?: { kind?: string } } | undefined) ?? {};
      const groupKind = groupKindOf({ kind: names.names?.kind ?? '', group: names.group ?? '' });
      if (!spec) {
        if (published.get(groupKind))
          this.options.log.info('stopped watching a published kind', { kind: groupKind });
        published.remove(groupKind);
      } else
        published.add(spec, (kind) => {
          const routes = publishedKindWatches(this.caches, kind);
          this.instances.connect(routes.instances);
          this.templates.connect(routes.templates);
          this.options.log.info('watching a published kind', {
            kind: groupKind,
            version: spec.version,
            template: `${spec.publisher.namespace}/${spec.publisher.name}`,
          });
          return kind.cache.watchDynamic(shell, this.options.namespaces);
        });
      const publisher = publisherOfCrd(object);
      if (publisher) this.templates.enqueue(publisher);
    });
    crds.watch(shell, undefined);
    const roles = new KindCache<KubeObject>({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      plural: 'clusterroles',
      namespaced: false,
      labelSelector: generated,
    });
    roles.onChange(({ object }) => {
      const publisher = publisherOfCrd(object);
      if (publisher) this.templates.enqueue(publisher);
    });
    roles.watch(shell, undefined);
  }

  /** Starts reconciling (the leader, or the only replica). */
  private lead(): void {
    this.leading = true;
    this.options.metrics?.leader.set(1);
    for (const controller of this.controllers) controller.start();
    void this.webhook?.refresh();
  }

  private campaign(options: LeaderElectionOptions): void {
    this.options.metrics?.leader.set(0);
    this.elector = campaign(options, this.options.connection, this.options.log, {
      onStartedLeading: () => this.lead(),
      onStoppedLeading: () => {
        this.leading = false;
        this.options.metrics?.leader.set(0);
        // Abort in-flight work at once: no drain may outlive the Lease (the write fence refuses
        // any write that still gets through).
        for (const controller of this.controllers) void controller.abortNow();
      },
    });
  }

  /** What a change of the namespaces this shard owns does to the controllers (sharding.ts). */
  private handoff(): ShardHandoff {
    return new ShardHandoff({
      owns: (namespace) => this.owns(namespace),
      controllers: this.controllers,
      instances: this.instances,
      tracks: (key) => this.dependencies.registry.tracks(key),
      release: (key) => this.dependencies.release(key),
      clusterScopeGained: () => void this.webhook?.refresh(),
      handedOff: (direction, count) =>
        this.options.metrics?.shardHandoffs.inc({ direction }, count),
      log: this.options.log,
    });
  }

  private get controllers(): Controller[] {
    return [this.instances, this.templates, this.sets];
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** Sets the gauges that are read off the caches, just before a scrape. */
  refreshGauges(): void {
    const metrics = this.options.metrics;
    if (!metrics) return;
    // A shard member reports the instances it owns, so the replicas' series add up.
    const instances = this.caches.instances().filter((i) => this.owns(i.metadata.namespace ?? ''));
    refreshGauges(metrics, instances, this.dependencies.registry.watchKeys());
    if (this.shard) {
      metrics.shardMembers.set(this.shard.members());
      metrics.shardKeys.set(instances.length);
    }
  }

  /** Enqueues every known instance, Template and Set (the periodic resync). */
  resyncAll(): void {
    for (const controller of this.controllers) controller.resync();
  }

  ready(): boolean {
    return this.shell?.hasSynced() ?? false;
  }

  /**
   * Nothing queued and nothing running: the start-up pass is over, or there was none. A replica
   * that does not lead reconciles nothing, so it is quiet.
   */
  quiet(): boolean {
    return (
      !this.leading || this.controllers.every((c) => c.queue.depth === 0 && c.queue.active === 0)
    );
  }

  /**
   * Resolves once no reconcile is running and the Events they recorded were sent (keys may still
   * be waiting for a retry).
   */
  async idle(): Promise<void> {
    await Promise.all(this.controllers.map((c) => c.queue.idle()));
    await this.events.drain(EVENT_DRAIN_MS);
  }

  /** Stops taking work, lets in-flight reconciles finish (bounded), stops the watches. */
  async stop(graceMs = 10_000): Promise<void> {
    clearInterval(this.resyncTimer);
    await Promise.all(this.controllers.map((c) => c.shutdown(graceMs)));
    await this.renders.close();
    await this.events.drain(EVENT_DRAIN_MS);
    await this.webhook?.stop();
    await this.elector
      ?.release()
      .catch((error: unknown) =>
        this.options.log.warn('could not release the lease', { error: String(error) }),
      );
    await this.shard
      ?.leave()
      .catch((error: unknown) =>
        this.options.log.warn('could not remove the shard member Lease', { error: String(error) }),
      );
    this.caches.published.stopAll();
    this.shell?.stopWatches();
    this.options.log.info('operator stopped');
  }
}

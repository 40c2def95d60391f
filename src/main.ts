// `stencil run`: the composition root of the operator process — config, logger, connection,
// metrics, probes, operator — and its lifecycle: start; on SIGTERM/SIGINT stop taking work,
// finish in-flight reconciles (bounded), release the Lease and exit 0; exit 1 on lost leadership.
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { Session } from 'node:inspector/promises';
import { hostname } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { existsSync, readFileSync } from 'node:fs';
import { ConfigError, loadConfig, type OperatorConfig } from './config.ts';
import { connect } from './kube/connection.ts';
import {
  closeServer,
  parseBindAddress,
  startMetricsServer,
  startProbeServer,
} from './http-servers.ts';
import { createLogger, type Logger } from './log.ts';
import { StencilMetrics } from './metrics.ts';
import {
  StencilOperator,
  type LeaderElectionOptions,
  type ShardingOptions,
  type WebhookOptions,
} from './operator/stencil-operator.ts';

/** Heap growth since the last release after which a quiet operator releases memory again. */
const RELEASE_AFTER_GROWTH_BYTES = 32 * 2 ** 20;

/**
 * When the operator has nothing to do after its start, and again after any burst of work that
 * grew V8's heap by 32 MiB (a wave of new instances, a Template change that re-rendered them
 * all), one full garbage collection that returns to the system what the busy time left behind
 * (issue #25, docs/benchmarks.md "Idle memory"). V8 grows its young generation to the maximum
 * while modules load, caches fill and passes run, and gives that back only at a scavenge under a
 * low allocation rate, which an idle operator may not reach for minutes; until then it is some
 * 25–40 MiB of RSS. The collection is the one the inspector protocol offers
 * (HeapProfiler.collectGarbage, a memory-reducing GC, no flags needed), on a session inside this
 * process: a pause of well under a second at 10,000 instances, taken only when nothing is queued
 * or running. Returns a function that stops it.
 */
function releaseMemoryWhenQuiet(operator: StencilOperator, log: Logger): () => void {
  let releasing = false;
  /** The heap after the last release; none yet: release at the first quiet moment. */
  let baseline: number | undefined;
  const check = setInterval(() => {
    const quiet = operator.quiet();
    const heap = getHeapStatistics().total_heap_size;
    const grown = baseline === undefined || heap - baseline >= RELEASE_AFTER_GROWTH_BYTES;
    if (releasing || !quiet || !grown) return;
    releasing = true;
    const before = process.memoryUsage.rss();
    const session = new Session();
    session.connect();
    void session
      .post('HeapProfiler.collectGarbage')
      .then(() =>
        log.debug('memory released', {
          rssMiB: Math.round(before / 2 ** 20),
          afterMiB: Math.round(process.memoryUsage.rss() / 2 ** 20),
        }),
      )
      .catch((error: unknown) => log.debug('memory not released', { error: String(error) }))
      .finally(() => {
        session.disconnect();
        baseline = getHeapStatistics().total_heap_size;
        releasing = false;
      });
  }, 1_000);
  check.unref();
  return () => clearInterval(check);
}

/** How long in-flight reconciles may run after SIGTERM. */
const SHUTDOWN_GRACE_MS = 20_000;

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The operator's own namespace: the flag, else the in-cluster ServiceAccount's, else stencil-system. */
function operatorNamespace(config: OperatorConfig): string {
  if (config.operatorNamespace) return config.operatorNamespace;
  return existsSync(SERVICE_ACCOUNT_NAMESPACE)
    ? readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim()
    : 'stencil-system';
}

function webhookOptions(config: OperatorConfig, log: Logger): WebhookOptions | undefined {
  if (config.webhookPort === 0) return undefined;
  const endpoint = config.webhookUrl
    ? { url: config.webhookUrl }
    : config.webhookService
      ? { service: config.webhookService }
      : undefined;
  if (!endpoint) {
    log.warn('strict-mode webhook disabled: set --webhook-service (in a cluster) or --webhook-url');
    return undefined;
  }
  return {
    endpoint,
    port: config.webhookPort,
    namespace: operatorNamespace(config),
    certDir: config.webhookCertDir,
    configurations: config.webhookConfigurations,
    breakGlassGroups: config.webhookBreakGlassGroups,
    requester: config.authorizeSources === 'requester',
    typedGroups: [...new Set([...config.apiGroups.values()].flatMap((groups) => [...groups]))],
  };
}

/** Lease timing from its duration, in client-go's default proportions (15 s / 10 s / 2 s). */
function leaseTiming(config: OperatorConfig): {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
} {
  const ms = config.leaseDurationSeconds * 1000;
  return {
    leaseDurationMs: ms,
    renewDeadlineMs: Math.round((ms * 2) / 3),
    retryPeriodMs: Math.round((ms * 2) / 15),
  };
}

function leaderElection(
  config: OperatorConfig,
  identity: string,
  onLost: () => void,
): LeaderElectionOptions | undefined {
  if (!config.leaderElect) return undefined;
  const shard = config.sharding?.mode === 'static' ? config.sharding : undefined;
  return {
    identity,
    namespace: operatorNamespace(config),
    // Each fixed shard elects its own leader.
    name: shard ? `stencil-leader-shard-${shard.index}-of-${shard.count}` : undefined,
    ...leaseTiming(config),
    onLost,
  };
}

function shardingOptions(
  config: OperatorConfig,
  identity: string,
  onLost: () => void,
): ShardingOptions | undefined {
  if (config.sharding?.mode !== 'auto') return config.sharding;
  return {
    mode: 'auto',
    identity,
    namespace: operatorNamespace(config),
    ...leaseTiming(config),
    onLost,
  };
}

function shardName(config: OperatorConfig, identity: string): string | undefined {
  const sharding = config.sharding;
  if (!sharding) return undefined;
  return sharding.mode === 'auto' ? identity : `${sharding.index}/${sharding.count}`;
}

/**
 * A kubeconfig that cannot be loaded, said as a usage error naming the file. Only the file
 * system's error code is quoted: a parser's message may quote the file, and a kubeconfig holds
 * tokens and keys.
 */
function kubeconfigError(path: string | undefined, error: unknown): ConfigError {
  const where = path ? `--kubeconfig ${path}` : 'the kubeconfig ($KUBECONFIG or ~/.kube/config)';
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const why =
    code === 'ENOENT'
      ? 'no such file'
      : code === 'EACCES'
        ? 'permission denied'
        : typeof code === 'string' && /^E[A-Z]+$/.test(code)
          ? code
          : 'not a kubeconfig the client can use';
  return new ConfigError(`cannot load ${where}: ${why}`);
}

export async function runOperator(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const config = loadConfig(argv, env);
  const identity = `${hostname()}-${randomBytes(4).toString('hex')}`;
  const root = createLogger({ level: config.logLevel, format: config.logFormat });
  const shard = shardName(config, identity);
  const log = shard ? root.child({ shard }) : root;
  const connection = await connect(config.kubeconfig, identity, {
    qps: config.kubeQps,
    burst: config.kubeBurst,
  }).catch((error: unknown) => {
    throw kubeconfigError(config.kubeconfig, error);
  });
  const metrics = new StencilMetrics();
  let onLost!: () => void;
  // The leader or shard member Lease was lost.
  const lostLease = new Promise<void>((resolve) => (onLost = resolve));
  const operator = new StencilOperator({
    connection,
    namespaces: config.namespaces,
    concurrency: config.concurrency,
    resyncSeconds: config.resyncSeconds,
    render: { timeoutMs: config.renderTimeoutSeconds * 1000, workers: config.renderWorkers },
    log,
    metrics,
    webhook: webhookOptions(config, log),
    authorizeSources: config.authorizeSources,
    tenancy: config.tenancy,
    apiGroups: config.apiGroups,
    leaderElection: leaderElection(config, identity, () => onLost()),
    sharding: shardingOptions(config, identity, () => onLost()),
  });
  if (config.tenancy.actAs === 'operator')
    log.warn(
      "single-team mode (--act-as=operator): every Template acts with the operator's own rights, so whoever may write a Template may do all the operator may; give each Template a ServiceAccount instead (docs/operations.md, Tenancy)",
    );
  const servers = await startServers(config, operator, metrics);
  await operator.start();
  const cancelRelease = releaseMemoryWhenQuiet(operator, log);
  const reason = await Promise.race([
    new Promise<string>((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
    }),
    lostLease.then(() => 'lost its Lease'),
  ]);
  log.info('shutting down', { reason });
  cancelRelease();
  // A replica that lost its Lease has already aborted its reconciles: nothing to drain.
  await operator.stop(reason === 'lost its Lease' ? 0 : SHUTDOWN_GRACE_MS);
  await Promise.all(servers.map(closeServer));
  connection.http.close();
  return reason === 'lost its Lease' ? 1 : 0;
}

async function startServers(
  config: OperatorConfig,
  operator: StencilOperator,
  metrics: StencilMetrics,
): Promise<Server[]> {
  const servers: Server[] = [];
  const probes = parseBindAddress(config.healthProbeBindAddress);
  if (probes) servers.push(await startProbeServer(probes, () => operator.ready()));
  const scrape = parseBindAddress(config.metricsBindAddress);
  if (scrape) {
    servers.push(
      await startMetricsServer(scrape, async () => {
        operator.refreshGauges();
        return {
          contentType: metrics.registry.contentType,
          body: await metrics.registry.metrics(),
        };
      }),
    );
  }
  return servers;
}

// The rows of issue #10 for one size N, in the order one run goes through them: cold converge,
// memory and watches, steady state, fan-in rotation, single rotation, restart, and the limit.
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { total } from './prometheus-text.ts';
import {
  requestCounts,
  requestsBetween,
  watchesByResource,
  type RequestSummary,
} from './apiserver-requests.ts';
import { ConfigMapWatch } from './configmap-watch.ts';
import { InstanceWatch } from './instance-watch.ts';
import { runFloor, runLimit, type Timed } from './limit.ts';
import { ProcessCpu, type CpuShare } from './process-cpu.ts';
import {
  settled,
  startOperatorProcess,
  successfulReconciles,
  type OperatorProcess,
} from './operator-process.ts';
import { benchCluster, percentile, until, type BenchCluster } from './support.ts';
import {
  CLIENT_CONCURRENCY,
  inParallel,
  instanceObject,
  passwordHash,
  passwordSecret,
  prepare,
  sharedConfigMap,
  workload,
  type Workload,
} from './workload.ts';

/** The operator's default `--concurrency`; the limit runs at the same. */
export const OPERATOR_CONCURRENCY = 8;

export interface Latencies {
  samples: number;
  p50: number;
  p99: number;
  max: number;
}

export interface SizeResult {
  size: number;
  namespaces: number;
  resyncSeconds: number;
  createSeconds: number;
  convergeSeconds: number;
  /** The operator's requests while converging (the benchmark's own creates left out). */
  convergeRequests: RequestSummary;
  limitSeconds: number;
  /** bench/limit.ts runFloor; absent in results kept from before the row existed. */
  floorSeconds?: number;
  /** Where the CPU of each timed phase went (bench/process-cpu.ts); absent without /proc. */
  cpu?: { converge?: CpuShare; limit?: CpuShare; floor?: CpuShare };
  steady: RequestSummary & { reconciles: number };
  restart: RequestSummary & { seconds: number };
  /** Absent in results kept from before the row existed. */
  handover?: RequestSummary & { seconds: number };
  fanIn: Latencies;
  rotation: Latencies;
  memory: { idleRss: number; rss: number; heap: number };
  watches: { operator: Record<string, number>; apiserver: Record<string, number> };
  /** 1-minute load average at the start and end of this size's run (2 cores: > 2 is contention). */
  load: [number, number];
}

export interface RowOptions {
  rotations: number;
  /** Resync period of the steady-state row; default 1.5 × the restart time. */
  resyncSeconds?: number;
  logDir: string;
  operatorConcurrency?: number;
  /** Writes a CPU profile (per operator process) and a heap snapshot after convergence here. */
  profileDir?: string;
  log: (line: string) => void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function latencies(values: number[]): Latencies {
  return {
    samples: values.length,
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    max: Math.max(...values),
  };
}

function gauge(metrics: string, name: string): number {
  return total(metrics, name);
}

export function byLabel(metrics: string, name: string, label: string): Record<string, number> {
  const result: Record<string, number> = {};
  for (const line of metrics.split('\n')) {
    const match = new RegExp(`^${name}\\{${label}="([^"]*)"\\} (\\S+)$`).exec(line);
    if (match && Number(match[2]) > 0) result[match[1]!] = Number(match[2]);
  }
  return result;
}

/** WATCH connections opened since `before` (the API server's own informers hold the rest). */
function watchesAdded(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  const added: Record<string, number> = {};
  for (const [resource, n] of Object.entries(after)) {
    const delta = n - (before[resource] ?? 0);
    if (delta > 0) added[resource] = delta;
  }
  return added;
}

export type ColdConverge = Pick<
  SizeResult,
  'createSeconds' | 'convergeSeconds' | 'convergeRequests'
>;

/**
 * Creates the N instances with 16 parallel clients and times until every one of them has been
 * seen Ready (whichever operator replica owns it).
 */
export async function coldConverge(cluster: BenchCluster, w: Workload): Promise<ColdConverge> {
  // The end is seen on a watch of the instances, as a user would see it: polling the operator's
  // /metrics five times a second cost it some 5 % of its CPU during the converge and rounded the
  // end up to the next poll.
  const namespaces = new Set(w.namespaces);
  const watch = await InstanceWatch.open(cluster.userHttp);
  try {
    const before = await requestCounts(cluster.plane);
    const started = performance.now();
    let created = 0;
    const ready = watch.allReady((namespace) => namespaces.has(namespace), w.size, 1_200_000);
    const creating = inParallel(w.size, CLIENT_CONCURRENCY, async (k) => {
      await cluster.user.apply(instanceObject(w, k));
    }).then(() => (created = performance.now()));
    const converged = await ready;
    await creating;
    const after = await requestCounts(cluster.plane);
    return {
      createSeconds: (created - started) / 1000,
      convergeSeconds: (converged - started) / 1000,
      // The benchmark creates instances with server-side apply; the operator never applies one.
      convergeRequests: requestsBetween(before, after, (key) => key === 'APPLY templateinstances'),
    };
  } finally {
    watch.close();
  }
}

/** Waits until a freshly started operator has reconciled every instance once. */
async function reconciledAll(operator: OperatorProcess, size: number): Promise<void> {
  await until(async () => {
    await sleep(200);
    return successfulReconciles(await operator.scrape()) >= size;
  }, 1_800_000);
}

/**
 * Two resync periods of an operator that has converged and settled: what it sends when nothing
 * changes. The period must exceed one full pass over the instances, or the queue never drains.
 */
async function steadyState(
  cluster: BenchCluster,
  operator: OperatorProcess,
  resyncSeconds: number,
): Promise<SizeResult['steady']> {
  const before = await requestCounts(cluster.plane);
  const reconcilesBefore = successfulReconciles(await operator.scrape());
  await sleep(2 * resyncSeconds * 1000);
  await settled(operator);
  const after = await requestCounts(cluster.plane);
  const summary = requestsBetween(before, after);
  return {
    ...summary,
    reads: summary.reads / 2,
    reconciles: successfulReconciles(await operator.scrape()) - reconcilesBefore,
  };
}

/**
 * The shared ConfigMap of the first namespace changes; every instance there must follow (its
 * rendered ConfigMap, named after the instance, shows the new value).
 */
export async function fanInRotation(
  cluster: Pick<BenchCluster, 'user' | 'userHttp'>,
  w: Workload,
): Promise<Latencies> {
  const namespace = w.namespaces[0]!;
  const names: string[] = [];
  for (let k = 0; k < w.size; k++)
    if (w.instance(k).namespace === namespace) names.push(w.instance(k).name);
  const watch = await ConfigMapWatch.open(cluster.userHttp, namespace);
  try {
    const started = performance.now();
    await cluster.user.apply(sharedConfigMap(namespace, 'v1'));
    const seen = await Promise.all(names.map((n) => watch.until(n, (d) => d.shared === 'v1')));
    return latencies(seen.map((at) => at - started));
  } finally {
    watch.close();
  }
}

/** One instance's Secret rotated `count` times, one after another, with all N present. */
export async function singleRotation(
  cluster: Pick<BenchCluster, 'user' | 'userHttp'>,
  w: Workload,
  count: number,
): Promise<Latencies> {
  const k = Math.min(1, w.size - 1);
  const { namespace, name } = w.instance(k);
  const watch = await ConfigMapWatch.open(cluster.userHttp, namespace);
  const lags: number[] = [];
  try {
    for (let i = 1; i <= count; i++) {
      const password = `rotated-${i}`;
      const hash = passwordHash(password);
      const started = performance.now();
      await cluster.user.apply(passwordSecret(namespace, k, password));
      lags.push((await watch.until(name, (d) => d.passwordHash === hash, 60_000)) - started);
    }
  } finally {
    watch.close();
  }
  return latencies(lags);
}

async function restart(
  cluster: BenchCluster,
  operator: OperatorProcess,
  w: Workload,
  start: () => Promise<OperatorProcess>,
): Promise<{ operator: OperatorProcess; result: SizeResult['restart'] }> {
  await operator.stop();
  const before = await requestCounts(cluster.plane);
  const started = performance.now();
  const next = await start();
  await reconciledAll(next, w.size);
  const seconds = (performance.now() - started) / 1000;
  await settled(next);
  const after = await requestCounts(cluster.plane);
  return { operator: next, result: { ...requestsBetween(before, after), seconds } };
}

/**
 * A leader with --leader-elect, once settled, gets a standby beside it, then steps down (SIGTERM
 * releases the Lease). Timed from the leader's stop until the standby has reconciled every
 * instance; the requests are everything sent in between (the Lease is not an operator resource
 * here). The standby's caches of instances and Templates are warm, its source watches are not.
 */
async function leaderHandover(
  cluster: BenchCluster,
  w: Workload,
  start: (leads: boolean) => Promise<OperatorProcess>,
): Promise<{ operator: OperatorProcess; result: SizeResult['restart'] }> {
  const leader = await start(true);
  let standby: OperatorProcess | undefined;
  try {
    await reconciledAll(leader, w.size);
    await settled(leader);
    standby = await start(false);
  } finally {
    if (!standby) await leader.stop();
  }
  const before = await requestCounts(cluster.plane);
  const started = performance.now();
  await leader.stop();
  await reconciledAll(standby, w.size);
  const seconds = (performance.now() - started) / 1000;
  await settled(standby);
  const after = await requestCounts(cluster.plane);
  return { operator: standby, result: { ...requestsBetween(before, after), seconds } };
}

/**
 * Runs every row at one size against a fresh control plane. The operator runs with the default
 * resync period (600 s) except for the steady-state row, which restarts it with a period just
 * above one full pass (1.5 × the restart time) so two periods stay short.
 */
export async function runSize(size: number, options: RowOptions): Promise<SizeResult> {
  const load0 = loadavg()[0] ?? 0;
  const cluster = await benchCluster({}, { inProcessOperator: false });
  const w = workload(size);
  const concurrency = options.operatorConcurrency ?? OPERATOR_CONCURRENCY;
  // Node creates the CPU profile's directory only when it writes the profile, at exit; the heap
  // snapshot comes first and needs it to exist.
  if (options.profileDir) mkdirSync(options.profileDir, { recursive: true });
  const start = (resyncSeconds = 600, leads?: boolean): Promise<OperatorProcess> =>
    startOperatorProcess({
      kubeconfig: cluster.plane.kubeconfigPath,
      resyncSeconds,
      logPath: join(options.logDir, `operator-${size}.log`),
      nodeArgs: options.profileDir
        ? [
            '--cpu-prof',
            `--cpu-prof-dir=${options.profileDir}`,
            '--heapsnapshot-signal=SIGUSR2',
            `--diagnostic-dir=${options.profileDir}`,
          ]
        : undefined,
      extraArgs: [
        ...(options.operatorConcurrency ? [`--concurrency=${concurrency}`] : []),
        ...(leads === undefined ? [] : ['--leader-elect', '--operator-namespace=default']),
      ],
      leads,
    });
  let operator: OperatorProcess | undefined;
  let result: SizeResult;
  const cpu = new ProcessCpu(cluster.plane, () => operator);
  try {
    options.log(`N=${size}: preparing ${w.namespaces.length} namespaces and ${size} Secrets`);
    await prepare(cluster.user, w);
    const serverWatches = await watchesByResource(cluster.plane);
    operator = await start();
    await settled(operator);
    const idleRss = gauge(await operator.scrape(), 'stencil_process_resident_memory_bytes');
    options.log(`N=${size}: cold converge`);
    const convergeFrom = cpu.read();
    const cold = await coldConverge(cluster, w);
    const convergeCpu = ProcessCpu.share(convergeFrom, cpu.read(), size);
    options.log(`N=${size}: all Ready after ${cold.convergeSeconds.toFixed(1)} s; settling`);
    await settled(operator);
    const metrics = await operator.scrape();
    const memory = {
      idleRss,
      rss: gauge(metrics, 'stencil_process_resident_memory_bytes'),
      heap: gauge(metrics, 'stencil_nodejs_heap_size_used_bytes'),
    };
    const watches = {
      operator: byLabel(metrics, 'stencil_source_watches', 'kind'),
      apiserver: watchesAdded(serverWatches, await watchesByResource(cluster.plane)),
    };
    if (options.profileDir) await operator.heapSnapshot();
    options.log(`N=${size}: fan-in rotation`);
    const fanIn = await fanInRotation(cluster, w);
    await settled(operator);
    options.log(`N=${size}: ${options.rotations} single rotations`);
    const rotation = await singleRotation(cluster, w, options.rotations);
    await settled(operator);
    options.log(`N=${size}: restart`);
    const restarted = await restart(cluster, operator, w, () => start());
    operator = restarted.operator;
    await operator.stop();
    options.log(`N=${size}: leader handover`);
    const handedOver = await leaderHandover(cluster, w, (leads) => start(600, leads));
    operator = handedOver.operator;
    await operator.stop();
    const resyncSeconds =
      options.resyncSeconds ?? Math.max(10, Math.ceil(1.5 * restarted.result.seconds));
    options.log(`N=${size}: steady state over two resync periods (${resyncSeconds} s)`);
    operator = await start(resyncSeconds);
    await reconciledAll(operator, size);
    await settled(operator);
    const steady = await steadyState(cluster, operator, resyncSeconds);
    await operator.stop();
    operator = undefined;
    options.log(`N=${size}: the limit`);
    const limit = await runLimit(cluster.admin, size, concurrency, cpu);
    result = {
      size,
      namespaces: w.namespaces.length,
      resyncSeconds,
      ...cold,
      limitSeconds: limit.ms / 1000,
      cpu: { converge: convergeCpu, limit: limit.cpu },
      steady,
      restart: restarted.result,
      handover: handedOver.result,
      fanIn,
      rotation,
      memory,
      watches,
      load: [load0, loadavg()[0] ?? 0],
    };
  } finally {
    await operator?.stop();
    await cluster.stop();
  }
  options.log(`N=${size}: the floor, on a fresh control plane as the converge had`);
  const floor = await floorOnFreshPlane(size, concurrency);
  return {
    ...result,
    floorSeconds: floor.ms / 1000,
    cpu: { ...result.cpu, floor: floor.cpu },
  };
}

/**
 * The floor runs where the converge ran: on a cluster holding only the prepared namespaces and
 * Secrets. After the converge and the limit, 2N Services would already exist, and every Service
 * creation costs the API server more the more exist (its ClusterIP allocator counts them all).
 */
async function floorOnFreshPlane(size: number, concurrency: number): Promise<Timed> {
  const cluster = await benchCluster({}, { inProcessOperator: false });
  try {
    const cpu = new ProcessCpu(cluster.plane);
    return await runFloor(cluster.user, cluster.admin, size, concurrency, { cpu });
  } finally {
    await cluster.stop();
  }
}

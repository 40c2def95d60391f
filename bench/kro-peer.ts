// The kro peer row of issue #25: the scale workload (bench/workload.ts) rendered by kro v0.9.4
// instead of Stencil, on a fresh control plane of its own, counted the way Stencil's rows are.
// kro's controller runs as its own process (the binary built from tools/kro) with its defaults:
// one instance worker (--dynamic-controller-concurrent-reconciles=1), client QPS 100 / burst 150,
// a 10-hour resync; leader election off (the binary's default); logging at `error` (the chart's
// is `info`; kro has no `warn`, Stencil's rows run at `warn`).
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { KubeObject } from '../src/api/object-meta.ts';
import type { KubeHttp } from '../src/kube/http.ts';
import { ensureKro, kroCrdFiles, kroVersion } from '../tools/control-plane/binaries.ts';
import { freePort } from '../tools/control-plane/control-plane.ts';
import { installCrds } from '../tools/control-plane/crds.ts';
import { launch, terminate } from '../tools/control-plane/processes.ts';
import {
  requestCounts,
  requestsBetween,
  watchesByResource,
  type RequestSummary,
} from './apiserver-requests.ts';
import { total } from './prometheus-text.ts';
import { fanInRotation, singleRotation, type Latencies } from './scale-rows.ts';
import {
  benchCluster,
  object,
  quietFor,
  until,
  type Activity,
  type BenchCluster,
} from './support.ts';
import {
  CLIENT_CONCURRENCY,
  inParallel,
  prepareSources,
  workload,
  type Workload,
} from './workload.ts';

/** What kro reads and writes here: its own kinds and CRDs, the instances, the sources, the output. */
export const KRO_RESOURCES: ReadonlySet<string> = new Set([
  'resourcegraphdefinitions',
  'graphrevisions',
  'customresourcedefinitions',
  'benchapps',
  'configmaps',
  'secrets',
  'services',
  'events',
]);

const RGD_FILE = join(import.meta.dirname, 'kro', 'bench-app.rgd.yaml');
const INSTANCES = '/apis/kro.run/v1alpha1';
const MiB = 1024 * 1024;

/** The flags kro runs with here; everything else is the binary's default. */
export const KRO_FLAGS = ['--leader-elect=false', '--zap-devel=false', '--zap-log-level=error'];

/** A latency row, or why it could not be measured. */
export type Measured = Latencies | { reason: string };

export interface KroResult {
  size: number;
  namespaces: number;
  version: string;
  flags: string[];
  createSeconds: number;
  convergeSeconds: number;
  /** kro's requests while converging (the benchmark's own creates left out). */
  convergeRequests: RequestSummary;
  requestsPerInstance: { writes: number; dryRuns: number; reads: number };
  /** process_resident_memory_bytes after converging and settling, and before the first instance. */
  rssMiB: number;
  idleRssMiB: number;
  /** WATCH connections the API server holds that were not there before kro started. */
  watches: Record<string, number>;
  /** Requests over IDLE_SECONDS once settled, nothing changing. */
  idle: RequestSummary & { seconds: number };
  fanIn: Measured;
  rotation: Measured;
  load: [number, number];
}

export interface KroOptions {
  rotations: number;
  logDir: string;
  log: (line: string) => void;
  /** Flags added to KRO_FLAGS (e.g. a sensitivity run with more workers). */
  extraArgs?: string[];
}

const IDLE_SECONDS = 30;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface KroProcess {
  pid: number;
  scrape(): Promise<string>;
  stop(): Promise<void>;
}

async function startKro(
  binary: string,
  kubeconfig: string,
  logPath: string,
  extra: string[],
): Promise<KroProcess> {
  const port = await freePort();
  const managed = launch(
    'kro',
    binary,
    [
      `--kubeconfig=${kubeconfig}`,
      `--metrics-bind-address=127.0.0.1:${port}`,
      '--health-probe-bind-address=0',
      ...KRO_FLAGS,
      ...extra,
    ],
    logPath,
  );
  const scrape = async (): Promise<string> => {
    if (managed.exited !== undefined)
      throw new Error(`kro exited (${managed.exited}); see ${logPath}`);
    return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  };
  await until(async () => {
    if (managed.exited !== undefined) throw new Error(`kro exited at start; see ${logPath}`);
    return (await scrape().catch(() => '')).includes('process_resident_memory_bytes');
  }, 60_000);
  return { pid: managed.child.pid ?? 0, scrape, stop: () => terminate(managed) };
}

/** Instance reconciles kro finished (any result), and keys queued or waiting, for `settled`. */
function activity(metrics: string): Activity {
  return {
    reconciles:
      total(metrics, 'instance_reconcile_total') +
      total(metrics, 'controller_runtime_reconcile_total'),
    depth: total(metrics, 'dynamic_controller_queue_length') + total(metrics, 'workqueue_depth'),
  };
}

/**
 * Waits until kro has nothing to do: empty queues and no reconcile finished for `quietMs`, longer
 * than kro's delayed requeue (--instance-requeue-interval, 3 s), whose keys are in no queue.
 */
async function settled(kro: KroProcess, quietMs = 4_000, timeoutMs = 600_000): Promise<void> {
  await quietFor(async () => activity(await kro.scrape()), quietMs, timeoutMs);
}

interface Instance {
  metadata: { namespace: string; name: string; resourceVersion: string };
  status?: { state?: string; conditions?: { type: string; status: string }[] };
}

const isReady = (i: Instance): boolean =>
  i.status?.state === 'ACTIVE' &&
  (i.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/**
 * The benchmark's own eyes on the instances (kro has no gauge of Ready instances): one
 * cluster-wide watch, reopened from the last resourceVersion if the server closes it.
 */
class ReadyWatch {
  private readonly ready = new Set<string>();
  private resourceVersion = '';
  private stream: { abort(): void } | undefined;
  private closed = false;

  constructor(private readonly http: KubeHttp) {}

  async open(): Promise<void> {
    const list = await this.http.request<{
      metadata: { resourceVersion: string };
      items: Instance[];
    }>({ method: 'GET', path: `${INSTANCES}/benchapps` });
    for (const item of list.items) this.see(item);
    this.resourceVersion = list.metadata.resourceVersion;
    await this.watch();
  }

  private async watch(): Promise<void> {
    this.stream = await this.http.stream(
      {
        path: `${INSTANCES}/benchapps`,
        query: { watch: '1', resourceVersion: this.resourceVersion },
      },
      (line) => {
        const event = line as { type?: string; object?: Instance };
        // An ERROR event (the resourceVersion is too old) ends the watch: list again.
        if (event.type === 'ERROR') this.resourceVersion = '';
        if (event.type === 'ERROR' || !event.object?.metadata) return;
        this.resourceVersion = event.object.metadata.resourceVersion;
        if (event.type === 'DELETED') this.ready.delete(key(event.object));
        else this.see(event.object);
      },
      () => {
        if (this.closed) return;
        // Reopened from where it stopped; a new LIST (counted as kro's) only after an ERROR.
        setTimeout(() => {
          (this.resourceVersion ? this.watch() : this.open()).catch(() => undefined);
        }, 200);
      },
    );
  }

  private see(item: Instance): void {
    if (isReady(item)) this.ready.add(key(item));
    else this.ready.delete(key(item));
  }

  get count(): number {
    return this.ready.size;
  }

  close(): void {
    this.closed = true;
    this.stream?.abort();
  }
}

const key = (i: Instance): string => `${i.metadata.namespace}/${i.metadata.name}`;

export function kroInstance(w: Workload, k: number): KubeObject {
  const { namespace, name } = w.instance(k);
  return object({
    apiVersion: 'kro.run/v1alpha1',
    kind: 'BenchApp',
    metadata: { name, namespace },
    spec: { passwordSecret: `db-${k}` },
  });
}

/** Applies the ResourceGraphDefinition and waits until kro serves BenchApp and has settled. */
async function installGraph(cluster: BenchCluster, kro: KroProcess): Promise<void> {
  const rgd = parse(readFileSync(RGD_FILE, 'utf8')) as KubeObject;
  await cluster.user.apply(rgd);
  await until(async () => {
    await sleep(200);
    const live = (await cluster.user.get({
      apiVersion: 'kro.run/v1alpha1',
      kind: 'ResourceGraphDefinition',
      name: 'bench-app',
    })) as { status?: Instance['status'] } | undefined;
    const status = live?.status;
    return (
      status?.state === 'Active' &&
      (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
    );
  }, 60_000);
  await settled(kro);
}

/** Creates the N instances with 16 parallel clients (POST) and times until the watch sees N Ready. */
async function coldConverge(
  cluster: BenchCluster,
  w: Workload,
): Promise<Pick<KroResult, 'createSeconds' | 'convergeSeconds' | 'convergeRequests'>> {
  const watch = new ReadyWatch(cluster.userHttp);
  await watch.open();
  try {
    const before = await requestCounts(cluster.plane, KRO_RESOURCES);
    const started = performance.now();
    let created = 0;
    const creating = inParallel(w.size, CLIENT_CONCURRENCY, async (k) => {
      const { namespace } = w.instance(k);
      await cluster.userHttp.request({
        method: 'POST',
        path: `${INSTANCES}/namespaces/${namespace}/benchapps`,
        body: kroInstance(w, k),
      });
    }).then(() => (created = performance.now()));
    await until(async () => {
      await sleep(100);
      return watch.count === w.size;
    }, 3_600_000);
    const converged = performance.now();
    await creating;
    const after = await requestCounts(cluster.plane, KRO_RESOURCES);
    return {
      createSeconds: (created - started) / 1000,
      convergeSeconds: (converged - started) / 1000,
      // kro never creates an instance; the benchmark creates them with POST.
      convergeRequests: requestsBetween(before, after, (k) => k === 'POST benchapps'),
    };
  } finally {
    watch.close();
  }
}

async function measured(what: () => Promise<Latencies>): Promise<Measured> {
  try {
    return await what();
  } catch (error) {
    return { reason: error instanceof Error ? error.message : String(error) };
  }
}

function watchesAdded(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  const added: Record<string, number> = {};
  for (const [resource, n] of Object.entries(after))
    if (n - (before[resource] ?? 0) > 0) added[resource] = n - (before[resource] ?? 0);
  return added;
}

/** The kro peer row at one size, on a fresh control plane of its own. */
export async function runKroPeer(size: number, options: KroOptions): Promise<KroResult> {
  // Built (the first time) before the plane starts, not while it waits.
  const binary = await ensureKro(options.log);
  const load0 = loadavg()[0] ?? 0;
  const cluster = await benchCluster(
    {},
    {
      inProcessOperator: false,
      installCrds: async (plane) => installCrds(plane, await kroCrdFiles()),
    },
  );
  const w = workload(size);
  let kro: KroProcess | undefined;
  try {
    options.log(`kro N=${size}: preparing ${w.namespaces.length} namespaces and ${size} Secrets`);
    await prepareSources(cluster.user, w);
    const serverWatches = await watchesByResource(cluster.plane);
    const flags = [...KRO_FLAGS, ...(options.extraArgs ?? [])];
    kro = await startKro(
      binary,
      cluster.plane.kubeconfigPath,
      join(options.logDir, `kro-${size}.log`),
      options.extraArgs ?? [],
    );
    await installGraph(cluster, kro);
    const idleRss = total(await kro.scrape(), 'process_resident_memory_bytes');
    options.log(`kro N=${size}: cold converge`);
    const cold = await coldConverge(cluster, w);
    options.log(`kro N=${size}: all Ready after ${cold.convergeSeconds.toFixed(1)} s; settling`);
    await settled(kro);
    const rss = total(await kro.scrape(), 'process_resident_memory_bytes');
    const watches = watchesAdded(serverWatches, await watchesByResource(cluster.plane));
    options.log(`kro N=${size}: ${IDLE_SECONDS} s idle`);
    const idleBefore = await requestCounts(cluster.plane, KRO_RESOURCES);
    await sleep(IDLE_SECONDS * 1000);
    const idle = requestsBetween(idleBefore, await requestCounts(cluster.plane, KRO_RESOURCES));
    options.log(`kro N=${size}: fan-in rotation`);
    const fanIn = await measured(() => fanInRotation(cluster, w));
    await settled(kro);
    options.log(`kro N=${size}: ${options.rotations} single rotations`);
    const rotation = await measured(() => singleRotation(cluster, w, options.rotations));
    const q = cold.convergeRequests;
    return {
      size,
      namespaces: w.namespaces.length,
      version: kroVersion(),
      flags,
      ...cold,
      requestsPerInstance: {
        writes: q.writes / size,
        dryRuns: q.dryRuns / size,
        reads: q.reads / size,
      },
      rssMiB: rss / MiB,
      idleRssMiB: idleRss / MiB,
      watches,
      idle: { ...idle, seconds: IDLE_SECONDS },
      fanIn,
      rotation,
      load: [load0, loadavg()[0] ?? 0],
    };
  } finally {
    await kro?.stop();
    await cluster.stop();
  }
}

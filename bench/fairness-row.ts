// The fairness row of issue #25: while a noisy tenant's wave of N instances (50 namespaces
// `noisy-*`) is being converged, how long a quiet tenant (5 namespaces `quiet-*`, one creation
// every 0.6 s over all five, so one every 3 s per namespace) waits for a new instance to be
// Ready and for a Secret rotation to reach its rendered ConfigMap. With one FIFO work queue the
// quiet work waits behind the whole wave; a namespace-fair queue should serve it within a second.
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import type { KubeCluster } from '../src/kube/cluster.ts';
import { connect } from '../src/kube/connection.ts';
import { ConfigMapWatch } from './configmap-watch.ts';
import { InstanceWatch } from './instance-watch.ts';
import { settled, startOperatorProcess, type OperatorProcess } from './operator-process.ts';
import { total } from './prometheus-text.ts';
import { OPERATOR_CONCURRENCY } from './scale-rows.ts';
import { benchCluster } from './support.ts';
import {
  CLIENT_CONCURRENCY,
  inParallel,
  instanceObject,
  passwordHash,
  passwordSecret,
  prepare,
  workload,
  type Workload,
} from './workload.ts';

export const QUIET_NAMESPACES = 5;
/** The quiet tenant's pace: one creation every 0.6 s, the first 2 s after the wave's first. */
export const QUIET_START_MS = 2_000;
export const QUIET_EVERY_MS = 600;
/** A rotation follows each creation by this much (of an earlier quiet instance already Ready). */
export const ROTATION_OFFSET_MS = 300;
/**
 * Quiet instances created and Ready before the wave (4 per quiet namespace): the first rotations'
 * targets, so rotations start with the wave and not only once a new quiet instance is Ready.
 */
export const QUIET_RESIDENTS = 20;
/** At least this many quiet creations and rotations, even if the wave is over before. */
export const QUIET_MIN = 20;
/** Quiet instances (and their Secrets) prepared beforehand; creations stop when they run out. */
export const QUIET_POOL = 250;

/** One quiet creation or rotation. Times in ms; `at` counts from the wave's first creation. */
export interface QuietSample {
  namespace: string;
  name: string;
  at: number;
  /** From just before the request to the watch event that showed the result. */
  ms: number;
  /** Started before the last noisy instance was seen Ready. */
  duringWave: boolean;
}

export interface FairnessResult {
  /** `--fairness-label`: names the table's column (e.g. before / after a change). */
  label: string;
  /** ISO time of the run's start. */
  measuredAt: string;
  commit: string;
  size: number;
  namespaces: number;
  quietNamespaces: number;
  /** Quiet instances Ready before the wave (rotation targets from its start). */
  quietResidents: number;
  concurrency: number;
  /** Seconds from the wave's first creation until the 16 creators were done. */
  createSeconds: number;
  /** Seconds from the wave's first creation until its last instance was seen Ready. */
  convergeSeconds: number;
  ready: QuietSample[];
  rotations: QuietSample[];
  /** Rotation turns that found no quiet instance Ready and not already rotating. */
  rotationTurnsSkipped: number;
  /** Creations stopped because the QUIET_POOL prepared instances were used up. */
  poolExhausted: boolean;
  /** Times the API server closed one of the benchmark's instance watches and it resumed. */
  watchRestarts: { wave: number; quiet: number };
  /** 1-minute load average at the start and end of the row (2 cores: > 2 is contention). */
  load: [number, number];
  /**
   * The longest event-loop delay during the wave, in seconds: the operator's (its
   * `nodejs_eventloop_lag_max_seconds`, which each scrape resets) and this benchmark's own,
   * whose watches time the samples. Absent in results kept from before it was measured.
   */
  eventLoopMax?: { operator: number; bench: number };
  /**
   * What happened second by second of the wave (index 0: its first second), to tell a stall of
   * the whole system (nothing completes) from the queue's order (the wave goes on, the quiet
   * tenant waits): noisy instances first seen Ready, events on the benchmark's wave watch, and
   * from the operator's /metrics (scraped every TRACE_EVERY_MS) successful reconciles, the
   * largest work-queue depth and the longest event-loop delay in ms. Absent in older results.
   */
  trace?: {
    noisyReady: number[];
    waveEvents: number[];
    reconciles: number[];
    queueDepth: number[];
    operatorLoopMaxMs: number[];
  };
}

/** How often the operator is scraped during the wave for the trace. */
const TRACE_EVERY_MS = 250;

/** Per second from `start`, over `seconds` seconds: the points of each second, combined. */
function perSecond(
  points: { at: number; value: number }[],
  start: number,
  seconds: number,
  combine: (a: number, b: number) => number,
): number[] {
  const out = new Array<number>(seconds).fill(0);
  for (const { at, value } of points) {
    const i = Math.floor((at - start) / 1000);
    if (i >= 0 && i < seconds) out[i] = combine(out[i]!, value);
  }
  return out;
}
const sum = (a: number, b: number): number => a + b;
const count = (times: number[]): { at: number; value: number }[] =>
  times.map((at) => ({ at, value: 1 }));

export interface FairnessOptions {
  /** The table's column for this run; default the commit. */
  label?: string;
  operatorConcurrency?: number;
  logDir: string;
  log: (line: string) => void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The short commit of the checkout the bench runs from (shared by the rows that record it). */
export function commitOf(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: import.meta.dirname,
      encoding: 'utf8',
    }).trim();
  } catch {
    return 'unknown';
  }
}

/** The quiet tenant: instance k lives in quiet-(k mod 5), reads Secret db-k there. */
export function quietWorkload(size: number): Workload {
  const namespaces = Array.from({ length: QUIET_NAMESPACES }, (_, n) => `quiet-${n}`);
  return {
    size,
    namespaces,
    instance: (k) => ({ namespace: namespaces[k % namespaces.length]!, name: `app-${k}` }),
  };
}

/**
 * The quiet tenant: its resident instances, then its turns during (and, until QUIET_MIN of each
 * have started, after) the wave; the caller awaits `done()` once the wave is over.
 */
class QuietTenant {
  readonly ready: QuietSample[] = [];
  readonly rotations: QuietSample[] = [];
  rotationTurnsSkipped = 0;
  created = 0;
  rotationsStarted = 0;
  /** Ready quiet instances not being rotated, the longest idle first. */
  private readonly idle: number[] = [];
  private readonly tasks: Promise<void>[] = [];
  private readonly rotationCount = new Map<number, number>();
  failure: Error | undefined;

  constructor(
    private readonly w: Workload,
    private readonly client: KubeCluster,
    /** Per quiet namespace: its own watch, so no noisy event comes before a quiet one. */
    private readonly instances: Map<string, InstanceWatch>,
    private readonly configMaps: Map<string, ConfigMapWatch>,
  ) {}

  /** The performance.now() of the wave's first creation: samples count from it. */
  waveStart = 0;

  private track(task: Promise<void>): void {
    this.tasks.push(task.catch((error: unknown) => this.fail(error)));
  }

  fail(error: unknown): void {
    this.failure ??= error instanceof Error ? error : new Error(String(error));
  }

  /** Creates the resident quiet instances and waits until each is Ready: not timed. */
  async residents(count: number): Promise<void> {
    await inParallel(count, CLIENT_CONCURRENCY, async (k) => {
      const { namespace, name } = this.w.instance(k);
      const ready = this.instances.get(namespace)!.until(namespace, name, 'Ready', 300_000);
      await this.client.apply(instanceObject(this.w, k));
      await ready;
    });
    for (let k = 0; k < count; k++) this.idle.push(k);
  }

  create(): void {
    const k = QUIET_RESIDENTS + this.created++;
    const { namespace, name } = this.w.instance(k);
    // The wait is registered before the request, so no event can come before it.
    const ready = this.instances.get(namespace)!.until(namespace, name, 'Ready', 900_000);
    this.timed(this.ready, k, ready, () => this.client.apply(instanceObject(this.w, k)));
  }

  /**
   * Times `write` from just before its request until `shown` (a watch event, already awaited
   * for), as a sample of `into`; instance k is then idle again, the first to be rotated next.
   */
  private timed(
    into: QuietSample[],
    k: number,
    shown: Promise<number>,
    write: () => Promise<unknown>,
  ): void {
    const { namespace, name } = this.w.instance(k);
    this.track(
      (async () => {
        const started = performance.now();
        await write();
        const at = await shown;
        into.push({
          namespace,
          name,
          at: started - this.waveStart,
          ms: at - started,
          duringWave: true,
        });
        this.idle.push(k);
      })(),
    );
  }

  /** Rotates the Secret of the quiet instance Ready and idle longest; false if there is none. */
  rotate(): boolean {
    const k = this.idle.shift();
    if (k === undefined) {
      this.rotationTurnsSkipped += 1;
      return false;
    }
    this.rotationsStarted += 1;
    const n = (this.rotationCount.get(k) ?? 0) + 1;
    this.rotationCount.set(k, n);
    const { namespace, name } = this.w.instance(k);
    const password = `rotated-${k}-${n}`;
    const hash = passwordHash(password);
    const shown = this.configMaps
      .get(namespace)!
      .until(name, (d) => d.passwordHash === hash, 900_000);
    this.timed(this.rotations, k, shown, () =>
      this.client.apply(passwordSecret(namespace, k, password)),
    );
    return true;
  }

  async done(): Promise<void> {
    await Promise.all(this.tasks);
    if (this.failure) throw this.failure;
  }
}

/**
 * Runs the row against a fresh control plane and its own operator process (the default flags,
 * as the scale rows start it): prepares both tenants untimed, then creates the noisy wave with
 * 16 parallel clients while the quiet tenant creates and rotates on its own client.
 */
export async function runFairness(size: number, options: FairnessOptions): Promise<FairnessResult> {
  const measuredAt = new Date().toISOString();
  const load0 = loadavg()[0] ?? 0;
  const cluster = await benchCluster({}, { inProcessOperator: false });
  const noisy = workload(size, 'noisy');
  const quiet = quietWorkload(QUIET_RESIDENTS + QUIET_POOL);
  const concurrency = options.operatorConcurrency ?? OPERATOR_CONCURRENCY;
  const quietConnection = await connect(cluster.plane.userKubeconfigPath);
  let operator: OperatorProcess | undefined;
  const watches: { close(): void }[] = [];
  try {
    options.log(
      `fairness: preparing ${noisy.namespaces.length} noisy namespaces and ${size} Secrets, ` +
        `${QUIET_NAMESPACES} quiet namespaces and ${quiet.size} Secrets`,
    );
    await prepare(cluster.user, noisy);
    await prepare(cluster.user, quiet);
    operator = await startOperatorProcess({
      kubeconfig: cluster.plane.kubeconfigPath,
      resyncSeconds: 600,
      logPath: join(options.logDir, `fairness-${size}.log`),
      extraArgs: options.operatorConcurrency ? [`--concurrency=${concurrency}`] : [],
    });
    await settled(operator);
    // The wave's end: one watch over every namespace, counting the noisy instances seen Ready
    // (`stencil_instances` cannot tell them from the quiet ones). The quiet tenant watches its own.
    const wave = await InstanceWatch.open(cluster.userHttp);
    watches.push(wave);
    const quietInstances = new Map<string, InstanceWatch>();
    for (const namespace of quiet.namespaces) {
      const watch = await InstanceWatch.open(quietConnection.http, namespace);
      watches.push(watch);
      quietInstances.set(namespace, watch);
    }
    const configMaps = new Map<string, ConfigMapWatch>();
    for (const namespace of quiet.namespaces) {
      const watch = await ConfigMapWatch.open(quietConnection.http, namespace);
      watches.push(watch);
      configMaps.set(namespace, watch);
    }
    const tenant = new QuietTenant(quiet, quietConnection.cluster, quietInstances, configMaps);
    options.log(`fairness: ${QUIET_RESIDENTS} resident quiet instances`);
    await tenant.residents(QUIET_RESIDENTS);
    await settled(operator);
    options.log(`fairness: the wave of ${size} noisy instances, the quiet tenant beside it`);
    // A scrape resets the operator's event-loop maximum: what the next one reads is the wave's.
    await operator.scrape();
    const benchLoop = monitorEventLoopDelay({ resolution: 10 });
    benchLoop.enable();
    const waveStart = performance.now();
    tenant.waveStart = waveStart;
    const scrapes: { at: number; reconciles: number; depth: number; loopMs: number }[] = [];
    let tracing = true;
    const tracer = (async () => {
      while (tracing) {
        const text = await operator.scrape().catch(() => '');
        if (text)
          scrapes.push({
            at: performance.now(),
            reconciles: total(text, 'stencil_reconcile_total', { result: 'success' }),
            depth: total(text, 'stencil_workqueue_depth'),
            loopMs: total(text, 'stencil_nodejs_eventloop_lag_max_seconds') * 1000,
          });
        await sleep(TRACE_EVERY_MS);
      }
    })();
    let waveEnd: number | undefined;
    let createdAt = 0;
    const creating = inParallel(size, CLIENT_CONCURRENCY, async (k) => {
      await cluster.user.apply(instanceObject(noisy, k));
    }).then(() => void (createdAt = performance.now()));
    const waveReady = wave
      .allReady((namespace) => namespace.startsWith('noisy-'), size)
      .then((at) => void (waveEnd = at));
    creating.catch((error: unknown) => tenant.fail(error));
    waveReady.catch((error: unknown) => tenant.fail(error));
    await quietTurns(tenant, waveStart, () => waveEnd !== undefined);
    options.log(
      `fairness: ${tenant.created} quiet creations and ${tenant.rotationsStarted} rotations ` +
        `started; waiting for the last`,
    );
    await tenant.done();
    await creating;
    await waveReady;
    benchLoop.disable();
    tracing = false;
    await tracer;
    const end = waveEnd!;
    const seconds = Math.ceil((end - waveStart) / 1000) + 1;
    type Point = { at: number; value: number };
    const at = (value: (p: (typeof scrapes)[number], i: number) => number): Point[] =>
      scrapes.map((p, i) => ({ at: p.at, value: value(p, i) }));
    const trace = {
      noisyReady: perSecond(count([...wave.firstReady.values()]), waveStart, seconds, sum),
      waveEvents: perSecond(count(wave.eventTimes), waveStart, seconds, sum),
      reconciles: perSecond(
        at((p, i) => (i === 0 ? 0 : p.reconciles - scrapes[i - 1]!.reconciles)),
        waveStart,
        seconds,
        sum,
      ),
      queueDepth: perSecond(
        at((p) => p.depth),
        waveStart,
        seconds,
        Math.max,
      ),
      operatorLoopMaxMs: perSecond(
        at((p) => Math.round(p.loopMs)),
        waveStart,
        seconds,
        Math.max,
      ),
    };
    // Each scrape reset the operator's maximum: the wave's is the largest of them.
    const eventLoopMax = {
      operator: Math.max(0, ...scrapes.map((p) => p.loopMs)) / 1000,
      bench: benchLoop.max / 1e9,
    };
    const during = (s: QuietSample): QuietSample => ({ ...s, duringWave: waveStart + s.at < end });
    const commit = commitOf();
    const result: FairnessResult = {
      label: options.label ?? commit,
      measuredAt,
      commit,
      size,
      namespaces: noisy.namespaces.length,
      quietNamespaces: QUIET_NAMESPACES,
      quietResidents: QUIET_RESIDENTS,
      concurrency,
      createSeconds: (createdAt - waveStart) / 1000,
      convergeSeconds: (end - waveStart) / 1000,
      ready: tenant.ready.map(during).sort((a, b) => a.at - b.at),
      rotations: tenant.rotations.map(during).sort((a, b) => a.at - b.at),
      rotationTurnsSkipped: tenant.rotationTurnsSkipped,
      poolExhausted: tenant.created >= QUIET_POOL,
      watchRestarts: {
        wave: wave.restarts,
        quiet: [...quietInstances.values()].reduce((n, w) => n + w.restarts, 0),
      },
      load: [load0, loadavg()[0] ?? 0],
      eventLoopMax,
      trace,
    };
    options.log(
      `fairness: wave Ready after ${result.convergeSeconds.toFixed(1)} s; quiet creations ` +
        `during the wave ${result.ready.filter((s) => s.duringWave).length}, rotations ` +
        `${result.rotations.filter((s) => s.duringWave).length}; instance watches resumed ` +
        `${result.watchRestarts.wave} + ${result.watchRestarts.quiet} times`,
    );
    return result;
  } finally {
    for (const watch of watches) watch.close();
    quietConnection.http.close();
    await operator?.stop();
    await cluster.stop();
  }
}

/**
 * The quiet tenant's schedule: turn i creates at QUIET_START_MS + i × QUIET_EVERY_MS from the
 * wave's start and rotates ROTATION_OFFSET_MS later. Creations go on while the wave runs (up to
 * the pool) and until QUIET_MIN; rotations the same. Turns are on the clock, not on the previous
 * turn's result, so a slow answer never slows the tenant down.
 */
async function quietTurns(
  tenant: QuietTenant,
  waveStart: number,
  waveOver: () => boolean,
): Promise<void> {
  const at = async (ms: number): Promise<void> => {
    await sleep(Math.max(0, waveStart + ms - performance.now()));
    if (tenant.failure) throw tenant.failure;
  };
  for (let turn = 0; ; turn++) {
    const createDue = tenant.created < QUIET_MIN || (!waveOver() && tenant.created < QUIET_POOL);
    const rotateDue = tenant.rotationsStarted < QUIET_MIN || !waveOver();
    if (!createDue && !rotateDue) return;
    if (turn * QUIET_EVERY_MS > 1_800_000) throw new Error('the quiet tenant ran for 30 min');
    await at(QUIET_START_MS + turn * QUIET_EVERY_MS);
    if (createDue) tenant.create();
    await at(QUIET_START_MS + turn * QUIET_EVERY_MS + ROTATION_OFFSET_MS);
    if (rotateDue) tenant.rotate();
  }
}

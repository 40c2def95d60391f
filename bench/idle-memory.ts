// `npm run bench:idle` (issue #25): the operator's memory when idle. Each run starts a fresh
// control plane with the CRDs and the built operator as its own process (default flags), waits
// until it leads, its queues are empty and it has been quiet for --settle seconds, then reads
// RSS and threads from /proc and the V8 figures from its /metrics (the median of five readings a
// second apart). Last, the bench asks the operator for a full GC and reads RSS and heap again:
// what the process holds, whatever the state of its garbage collector. Prints every run and the
// median of the runs.
//
//   npm run bench:idle -- [--runs 3] [--settle 20] [--instances N] [--heap-snapshot DIR]
//                         [--root DIR] [--trace] [--node-arg=FLAG ...] [-- stencil run flags]
//
// --instances N: after the idle reading, the scale workload's Template and N instances
// (bench/workload.ts), then the same readings once they are Ready and settled: what renders
// leave behind (the render workers among it). --root measures another checkout's build (its
// dist/cli.js and config/crd), e.g. an older commit in a git worktree, against this checkout's
// control plane. --heap-snapshot writes a heap snapshot of the main thread per run, as
// `npm run bench -- --profile` does, and prints what holds the heap (bench/heap-summary.ts).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeCluster } from '../src/kube/cluster.ts';
import { connect } from '../src/kube/connection.ts';
import { startControlPlane, type ControlPlane } from '../tools/control-plane/control-plane.ts';
import { installCrds } from '../tools/control-plane/crds.ts';
import { summarizeHeapSnapshot } from './heap-summary.ts';
import { startOperatorProcess, settled, type OperatorProcess } from './operator-process.ts';
import { samples, total } from './prometheus-text.ts';
import { median, until } from './support.ts';
import { CLIENT_CONCURRENCY, inParallel, instanceObject, prepare, workload } from './workload.ts';

const { values, positionals } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    /** Seconds the operator stays idle before it is read. */
    settle: { type: 'string', default: '20' },
    instances: { type: 'string', default: '0' },
    root: { type: 'string' },
    'heap-snapshot': { type: 'string' },
    /** Logs RSS, heap and threads every second while the operator settles. */
    trace: { type: 'boolean', default: false },
    /** A node flag for the operator (repeatable), e.g. --node-arg=--trace-gc. */
    'node-arg': { type: 'string', multiple: true, default: [] },
  },
  allowPositionals: true,
});

const root = resolve(values.root ?? join(import.meta.dirname, '..'));
const runs = Number(values.runs);
const settleMs = Number(values.settle) * 1000;
const instances = Number(values.instances);
const snapshotDir = values['heap-snapshot'] && resolve(values['heap-snapshot']);
const log = (line: string): void =>
  console.error(`[idle ${new Date().toISOString().slice(11, 19)}] ${line}`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const MiB = 1024 * 1024;
const mib = (bytes: number): string => (Number.isNaN(bytes) ? '—' : (bytes / MiB).toFixed(1));

interface Figures {
  rss: number;
  rssAnon: number;
  rssFile: number;
  /** Peak RSS since the process started (VmHWM). */
  peakRss: number;
  threads: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  /** NaN where the operator does not export it (older commits). */
  arrayBuffers: number;
}

interface Run {
  idle: Figures;
  /** After --instances were created, Ready and settled. */
  loaded?: Figures;
  /** RSS and heap used 3 s after the full GC the bench asks for last. */
  afterGc: { rss: number; heapUsed: number };
}

/**
 * Node flags that let the bench ask the operator for a full GC (gc() on SIGWINCH, a signal the
 * operator does not use) without changing anything else it does. A plain gc() leaves the young
 * generation as large as it grew; the minor GC that follows, at the idle allocation rate, lets
 * V8 shrink it, as its own next scavenge would.
 */
const GC_SIGNAL = 'SIGWINCH';
const GC_ON_SIGNAL = [
  '--expose-gc',
  `--import=data:text/javascript,${encodeURIComponent(
    `process.on('${GC_SIGNAL}', () => { globalThis.gc(); setTimeout(() => globalThis.gc({ type: 'minor' }), 500); });`,
  )}`,
];

/** VmRSS and friends from /proc/PID/status, in bytes (threads as a count). */
function procStatus(
  pid: number,
): Pick<Figures, 'rss' | 'rssAnon' | 'rssFile' | 'peakRss' | 'threads'> {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => {
    const match = new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text);
    return match ? Number(match[1]) : NaN;
  };
  return {
    rss: field('VmRSS') * 1024,
    rssAnon: field('RssAnon') * 1024,
    rssFile: field('RssFile') * 1024,
    peakRss: field('VmHWM') * 1024,
    threads: field('Threads'),
  };
}

function gauge(metrics: string, name: string): number {
  const found = samples(metrics, name);
  return found.length === 0 ? NaN : found.reduce((sum, s) => sum + s.value, 0);
}

/** Every figure as the median over `rows`. */
function medianOf<T extends object>(rows: T[]): T {
  const keys = Object.keys(rows[0]!) as (keyof T)[];
  return Object.fromEntries(keys.map((k) => [k, median(rows.map((r) => r[k] as number))])) as T;
}

function crdFiles(checkout: string): string[] {
  const dir = join(checkout, 'config', 'crd');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => join(dir, f));
}

/** Lets the operator stay idle for --settle seconds, then reads it five times a second apart. */
async function read(operator: OperatorProcess): Promise<Figures> {
  await settled(operator);
  for (const end = Date.now() + settleMs; Date.now() < end;) {
    await sleep(Math.min(1_000, end - Date.now()));
    if (!values.trace) continue;
    const status = procStatus(operator.pid);
    const heap = gauge(await operator.scrape(), 'stencil_nodejs_heap_size_used_bytes');
    log(`  rss ${mib(status.rss)} heap ${mib(heap)} threads ${status.threads}`);
  }
  const readings: Figures[] = [];
  for (let i = 0; i < 5; i++) {
    if (i > 0) await sleep(1_000);
    const metrics = await operator.scrape();
    readings.push({
      ...procStatus(operator.pid),
      heapUsed: gauge(metrics, 'stencil_nodejs_heap_size_used_bytes'),
      heapTotal: gauge(metrics, 'stencil_nodejs_heap_size_total_bytes'),
      external: gauge(metrics, 'stencil_nodejs_external_memory_bytes'),
      arrayBuffers: gauge(metrics, 'stencil_nodejs_array_buffers_bytes'),
    });
  }
  return medianOf(readings);
}

/** The scale workload's Template and `count` instances, until all are Ready. */
async function createInstances(plane: ControlPlane, operator: OperatorProcess): Promise<void> {
  const connection = await connect(plane.userKubeconfigPath);
  try {
    const user = new KubeCluster(connection.http, 'bench', 'bench-user');
    const w = workload(instances);
    await prepare(user, w);
    await inParallel(instances, CLIENT_CONCURRENCY, async (k) => {
      await user.apply(instanceObject(w, k));
    });
    await until(async () => {
      await sleep(200);
      return total(await operator.scrape(), 'stencil_instances', { phase: 'Ready' }) === instances;
    }, 600_000);
  } finally {
    connection.http.close();
  }
}

async function measureOnce(run: number, logDir: string): Promise<Run> {
  const plane = await startControlPlane({ log: (line) => log(line) });
  try {
    await installCrds(plane, crdFiles(root));
    const dir = snapshotDir && join(snapshotDir, `run-${run}`);
    if (dir) mkdirSync(dir, { recursive: true });
    const operator = await startOperatorProcess({
      kubeconfig: plane.kubeconfigPath,
      resyncSeconds: 600,
      logPath: join(logDir, `operator-${run}.log`),
      entry: join(root, 'dist', 'cli.js'),
      nodeArgs: [
        ...values['node-arg'],
        ...GC_ON_SIGNAL,
        ...(dir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`] : []),
      ],
      extraArgs: positionals,
    });
    try {
      log(`run ${run}: leading; reading it once idle for ${settleMs / 1000} s`);
      const idle = await read(operator);
      let loaded: Figures | undefined;
      if (instances > 0) {
        log(`run ${run}: ${instances} instances`);
        await createInstances(plane, operator);
        loaded = await read(operator);
      }
      process.kill(operator.pid, GC_SIGNAL);
      await sleep(3_000);
      const afterGc = {
        rss: procStatus(operator.pid).rss,
        heapUsed: gauge(await operator.scrape(), 'stencil_nodejs_heap_size_used_bytes'),
      };
      if (dir) {
        await operator.heapSnapshot();
        const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot'));
        if (file) console.log(summarizeHeapSnapshot(join(dir, file)));
        else log(`run ${run}: no heap snapshot was written in ${dir}`);
      }
      return { idle, loaded, afterGc };
    } finally {
      await operator.stop();
    }
  } finally {
    await plane.stop();
  }
}

const HEADER = 'MiB              RSS   anon   file   peak   heap  heapT    ext  arrBuf  threads';

function row(label: string, f: Figures): string {
  return [
    label.padEnd(14),
    ...[f.rss, f.rssAnon, f.rssFile, f.peakRss, f.heapUsed, f.heapTotal, f.external].map((v) =>
      mib(v).padStart(6),
    ),
    mib(f.arrayBuffers).padStart(7),
    String(f.threads).padStart(8),
  ].join(' ');
}

const gcRow = (label: string, g: Run['afterGc']): string =>
  `${label.padEnd(14)} RSS ${mib(g.rss)}, heap used ${mib(g.heapUsed)}`;

const logDir = mkdtempSync(join(tmpdir(), 'stencil-idle-'));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
log(`measuring ${root} (${runs} runs); operator logs in ${logDir}`);
const loadBefore = loadavg();
const results: Run[] = [];
for (let run = 1; run <= runs; run++) results.push(await measureOnce(run, logDir));
const loadAfter = loadavg();

const loads = (l: number[]): string => l.map((x) => x.toFixed(2)).join(' ');
const label = (i: number): string => `run ${i + 1}`;
const lines = [
  `\nIdle operator: ${root}${positionals.length ? ` ${positionals.join(' ')}` : ''}`,
  `load average ${loads(loadBefore)} before, ${loads(loadAfter)} after`,
  `Idle, ${settleMs / 1000} s after settling:`,
  HEADER,
  ...results.map((r, i) => row(label(i), r.idle)),
  row('median', medianOf(results.map((r) => r.idle))),
];
if (instances > 0) {
  const loaded = results.map((r) => r.loaded!);
  lines.push(
    `With ${instances} instances, Ready and settled:`,
    HEADER,
    ...loaded.map((f, i) => row(label(i), f)),
    row('median', medianOf(loaded)),
  );
}
lines.push(
  'After a full GC:',
  ...results.map((r, i) => gcRow(label(i), r.afterGc)),
  gcRow('median', medianOf(results.map((r) => r.afterGc))),
);
console.log(lines.join('\n'));

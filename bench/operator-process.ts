// `stencil run` as its own process (the built dist/cli.js) for the benchmark: started with the
// default flags plus the ones a row needs, observed only through its /metrics endpoint.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../tools/control-plane/control-plane.ts';
import { total } from './prometheus-text.ts';
import { quietFor, until, type Activity } from './support.ts';

const root = join(import.meta.dirname, '..');
const sleepMs = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface OperatorProcess {
  pid: number;
  scrape(): Promise<string>;
  /** Asks a process started with --heapsnapshot-signal=SIGUSR2 for a snapshot; waits for it. */
  heapSnapshot(): Promise<void>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

export interface OperatorProcessOptions {
  kubeconfig: string;
  resyncSeconds: number;
  /** Appended operator logs (`logLevel` and above). */
  logPath: string;
  /** Default warn; the sharding row reads the info line `shard view settled`. */
  logLevel?: 'info' | 'warn';
  /** Extra node flags, e.g. --cpu-prof. */
  nodeArgs?: string[];
  extraArgs?: string[];
  /** The built CLI to run; default this checkout's dist/cli.js (bench:idle measures others). */
  entry?: string;
  /**
   * Whether the start waits for the process to lead (default). A standby, started with
   * --leader-elect beside a leader, is waited for until it campaigns (`stencil_leader 0`).
   */
  leads?: boolean;
}

export async function startOperatorProcess(
  options: OperatorProcessOptions,
): Promise<OperatorProcess> {
  const metricsPort = await freePort();
  const log = openSync(options.logPath, 'a');
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      options.entry ?? join(root, 'dist', 'cli.js'),
      'run',
      `--kubeconfig=${options.kubeconfig}`,
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      '--health-probe-bind-address=0',
      '--webhook-port=0',
      `--log-level=${options.logLevel ?? 'warn'}`,
      `--resync-period=${options.resyncSeconds}`,
      ...(options.extraArgs ?? []),
    ],
    // Single-team mode (the operator's own rights), as every run of record so far measured:
    // the benchmark's namespaces give no ServiceAccount to act as (ADR 0035). As an environment
    // variable, so an older build that has no such flag (bench:idle) runs unchanged.
    { stdio: ['ignore', log, log], env: { ...process.env, STENCIL_ACT_AS: 'operator' } },
  );
  closeSync(log);
  // The operator must not outlive the benchmark (an interrupted run, a thrown row).
  const orphanGuard = (): void => void child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      process.off('exit', orphanGuard);
      resolve();
    }),
  );
  let running = true;
  void exited.then(() => (running = false));
  const scrape = async (): Promise<string> => {
    // A busy or paused process (a heap snapshot) may drop a scrape: try again while it runs.
    for (let attempt = 1; ; attempt++) {
      if (!running) throw new Error(`the operator exited; see ${options.logPath}`);
      try {
        return await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      } catch (error) {
        if (attempt >= 5) throw error;
        await sleepMs(500);
      }
    }
  };
  await until(async () => {
    if (!running) throw new Error(`the operator exited at start; see ${options.logPath}`);
    return (await scrape().catch(() => '')).includes(
      `stencil_leader ${options.leads === false ? 0 : 1}`,
    );
  }, 60_000);
  return {
    pid: child.pid ?? 0,
    scrape,
    heapSnapshot: async () => {
      child.kill('SIGUSR2');
      // Writing the snapshot blocks the process: the next scrape answers once it is written.
      await sleepMs(1_000);
      await scrape();
    },
    stop: async () => {
      if (running) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Instance reconciles that ended well since the process started. */
export function successfulReconciles(metrics: string): number {
  return total(metrics, 'stencil_reconcile_total', {
    controller: 'templateinstance',
    result: 'success',
  });
}

/** Reconciles of any result and the keys still waiting, for both controllers. */
function activity(metrics: string): Activity {
  return {
    reconciles: total(metrics, 'stencil_reconcile_total'),
    depth: total(metrics, 'stencil_workqueue_depth'),
  };
}

/** Waits until the operator has nothing to do (`quietFor`). */
export async function settled(
  operator: OperatorProcess,
  quietMs = 1_500,
  timeoutMs = 300_000,
): Promise<void> {
  await quietFor(async () => activity(await operator.scrape()), quietMs, timeoutMs);
}

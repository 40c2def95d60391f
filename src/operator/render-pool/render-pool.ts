// Renders in worker threads with a CPU deadline (docs/adr/0018-render-pool.md). Node runs one
// event loop: a render that takes seconds on it would stop every other tenant's reconcile, every
// watch and the Lease renewal. A worker past the deadline is terminated and replaced, and the
// render fails with RenderTimeout; nothing else waits for it. Workers start on demand, and one
// that has rendered nothing for a while is terminated unless it is the last (issue #25): a loaded
// worker is a V8 isolate of its own with the engine in it, some 15–22 MiB of RSS.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { InstanceReason } from '../../api/condition.ts';
import type { RenderJob, RenderRunner } from '../../engine/render/render-job.ts';
import type { RenderOutcome } from '../../engine/render/render.ts';
import { FairQueue } from '../../framework/fair-queue.ts';

export interface RenderPoolOptions {
  /** Worker threads (default: 2, or 1 on one core). */
  size?: number;
  /** Wall-clock deadline of one render once a worker has taken it. */
  timeoutMs: number;
  /**
   * A worker idle this long is terminated, unless it is the only one left (kept warm, so a lone
   * change renders at once). Default 30 s.
   */
  idleMs?: number;
  /** Where worker crashes are reported (their messages may quote Secret data: class only). */
  onWorkerError?: (error: unknown) => void;
}

/** A render the pool waits to give a worker. */
interface Task {
  job: RenderJob;
  resolve: (outcome: RenderOutcome) => void;
}

interface Slot {
  worker: Worker;
  /** Loaded and listening: the deadline covers rendering, not starting a thread. */
  ready: boolean;
  task?: Task;
  timer?: NodeJS.Timeout;
  /** Set while the worker is loaded and has no render: its retirement, unless it is the last. */
  idleTimer?: NodeJS.Timeout;
}

const DEFAULT_IDLE_MS = 30_000;

const NOTHING_TAINTED = new Map<string, string>();

/**
 * A worker on the script beside this module: JavaScript in dist/; under tsx and vitest the
 * TypeScript source, through tsx's loader registered in the worker first (Node 20 does not apply
 * an `--import` loader to a worker's own entry module).
 */
function startWorker(): Worker {
  const limits = { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } };
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./render-worker.js', import.meta.url), limits);
  const script = new URL('./render-worker.ts', import.meta.url).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(script)}); });`;
  return new Worker(boot, { ...limits, eval: true });
}

/**
 * Heap of one worker: a render is bounded to about 4 MiB of output and 256 Mi characters of
 * helper work (ADR 0007), so this is room to spare, and a render that still runs away takes its
 * worker down, not the operator.
 */
const WORKER_HEAP_MB = 256;

function failed(
  message: string,
  reason: string = InstanceReason.TemplateExecutionFailed,
): RenderOutcome {
  return {
    ok: false,
    problems: [{ path: 'spec.handlebars', reason, message }],
    tainted: NOTHING_TAINTED,
  };
}

export class RenderPool {
  private readonly slots: Slot[] = [];
  /**
   * Renders waiting for a worker, by id, served fairly across namespaces (ADR 0024's queue): one
   * namespace's renders that each run to the deadline must not hold another's for all of them.
   */
  private readonly waiting = new Map<string, Task>();
  private readonly order = new FairQueue();
  private nextId = 0;
  private readonly size: number;
  private closed = false;

  constructor(private readonly options: RenderPoolOptions) {
    this.size = Math.max(1, options.size ?? Math.min(2, availableParallelism()));
  }

  /** The pool as the evaluation's renderer. */
  readonly render: RenderRunner = (job) =>
    new Promise<RenderOutcome>((resolve) => {
      if (this.closed) {
        resolve(failed('the operator is shutting down; the render was not run'));
        return;
      }
      const id = String(this.nextId++);
      this.waiting.set(id, { job, resolve });
      this.order.push(id, job.context.instance.namespace);
      this.dispatch();
    });

  /** Terminates every worker; renders still waiting fail. */
  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.takeWaiting())
      task.resolve(failed('the operator is shutting down; the render was not run'));
    const stopped = failed('the operator is shutting down; the render was stopped');
    await Promise.all(
      this.slots.splice(0).map((slot) => {
        slot.task?.resolve(stopped);
        return this.retire(slot);
      }),
    );
  }

  /** Every render still waiting, taken out of the queue. */
  private takeWaiting(): Task[] {
    const tasks = [...this.waiting.values()];
    this.waiting.clear();
    this.order.clear();
    return tasks;
  }

  private dispatch(): void {
    while (this.waiting.size > 0) {
      const slot = this.slots.find((s) => s.ready && s.task === undefined);
      if (!slot) {
        // A free slot is starting (it dispatches when ready), or one may start now.
        if (!this.slots.some((s) => !s.ready)) this.spawn();
        return;
      }
      const id = this.order.pop()!.key;
      const task = this.waiting.get(id)!;
      this.waiting.delete(id);
      clearTimeout(slot.idleTimer);
      slot.task = task;
      slot.worker.ref();
      slot.timer = setTimeout(() => this.timedOut(slot), this.options.timeoutMs);
      slot.worker.postMessage(task.job);
    }
  }

  private spawn(): void {
    if (this.slots.length >= this.size) return;
    const slot: Slot = { worker: startWorker(), ready: false };
    slot.worker.on('message', (message: RenderOutcome | 'ready') => {
      if (message !== 'ready') return this.finish(slot, message);
      slot.ready = true;
      this.dispatch();
      this.idle(slot);
    });
    slot.worker.on('error', (error) => {
      this.options.onWorkerError?.(error);
      if (!slot.ready) {
        // It could not even start: fail what waits rather than start another that fails too.
        for (const task of this.takeWaiting())
          task.resolve(failed('the render worker could not start'));
      }
      this.replace(slot, failed('the render worker crashed (out of memory or an internal error)'));
    });
    slot.worker.on('exit', () => {
      if (this.slots.includes(slot))
        this.replace(slot, failed('the render worker stopped unexpectedly'));
    });
    // Ref'd while it starts or renders (a render awaited keeps the process alive), unref'd idle.
    this.slots.push(slot);
  }

  private finish(slot: Slot, outcome: RenderOutcome): void {
    const task = slot.task;
    clearTimeout(slot.timer);
    slot.task = undefined;
    task?.resolve(outcome);
    this.dispatch();
    this.idle(slot);
  }

  /** A slot left without a render: unref'd, and terminated if it stays idle (not the last). */
  private idle(slot: Slot): void {
    if (slot.task) return;
    slot.worker.unref();
    clearTimeout(slot.idleTimer);
    slot.idleTimer = setTimeout(() => {
      if (slot.task || this.slots.length <= 1 || !this.slots.includes(slot)) return;
      this.slots.splice(this.slots.indexOf(slot), 1);
      void this.retire(slot);
    }, this.options.idleMs ?? DEFAULT_IDLE_MS);
    slot.idleTimer.unref();
  }

  /** Workers running now (loaded or starting), for tests and the bench. */
  get workers(): number {
    return this.slots.length;
  }

  private timedOut(slot: Slot): void {
    const task = slot.task;
    if (!task) return;
    const seconds = this.options.timeoutMs / 1000;
    this.replace(
      slot,
      failed(
        `rendering Template ${task.job.template} took longer than ${seconds} s (--render-timeout) and was stopped; nothing was applied`,
        InstanceReason.RenderTimeout,
      ),
    );
  }

  /** Fails the slot's render, terminates its worker, and lets a new one take the next render. */
  private replace(slot: Slot, outcome: RenderOutcome): void {
    const index = this.slots.indexOf(slot);
    if (index === -1) return;
    this.slots.splice(index, 1);
    clearTimeout(slot.timer);
    slot.task?.resolve(outcome);
    slot.task = undefined;
    void this.retire(slot);
    if (!this.closed) this.dispatch();
  }

  private async retire(slot: Slot): Promise<void> {
    clearTimeout(slot.timer);
    clearTimeout(slot.idleTimer);
    slot.worker.removeAllListeners();
    slot.worker.on('error', () => undefined);
    await slot.worker.terminate();
  }
}

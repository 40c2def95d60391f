// A keyed, de-duplicating work queue with per-key serialisation and bounded concurrency: a key
// is never processed twice at once, a key added while processing runs once more afterwards,
// failures retry with per-key backoff, and `requeueAfter` schedules the earliest next pass.
// Which waiting key goes next is the FairQueue's: fair across namespaces, changes before the
// resync (ADR 0024).
import { setMaxListeners } from 'node:events';
import { Backoff, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.ts';
import { FairQueue, type QueueClass } from './fair-queue.ts';
import { TerminalError, type Result } from './reconciler.ts';

export type { QueueClass } from './fair-queue.ts';

export type Handler = (key: string, signal: AbortSignal) => Promise<Result>;

/** Hooks for metrics and logs; every hook is optional and must not throw. */
export interface QueueObserver {
  onDepth?(depth: number): void;
  onProcessed?(
    key: string,
    /** `aborted`: the key was taken away mid-pass (abortWhere), and is not retried here. */
    outcome: 'success' | 'error' | 'terminal' | 'aborted',
    ms: number,
    error?: unknown,
  ): void;
  onRetry?(key: string, delayMs: number): void;
  /** From when the key was queued (a promotion keeps the time) to its dispatch, from `cls`. */
  onQueueLatency?(ms: number, cls: QueueClass): void;
}

/**
 * The flow a key is served in: the namespace of a `namespace/name` request key. Cluster-scoped
 * keys (`/name`) and keys without a slash share the flow "".
 */
function flowOf(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}

export interface WorkQueueOptions {
  concurrency: number;
  backoff?: BackoffOptions;
  observer?: QueueObserver;
  /**
   * Whether this queue may process `key` now (a sharded replica: does it own the key's
   * namespace). Asked when a key is added and again when it would start; a refused key is
   * dropped, since whoever may process it has its own queue.
   */
  admit?: (key: string) => boolean;
  /** Injected for tests; defaults to the real clock. */
  now?: () => number;
}

export class WorkQueue {
  private readonly pending = new FairQueue();
  /** When each waiting key was first added (a promotion to `change` keeps it). */
  private readonly queued = new Map<string, number>();
  /** Keys in flight, each with its own abort (a key handed to another shard stops alone). */
  private readonly processing = new Map<string, { abort: AbortController; done: Promise<void> }>();
  /** Keys added while in flight, with the highest class they were added with meanwhile. */
  private readonly dirty = new Map<string, QueueClass>();
  private readonly delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly backoff: Backoff;
  private readonly abort = new AbortController();
  private readonly idleWaiters: (() => void)[] = [];
  private stopping = false;
  private running = false;

  constructor(
    private readonly handler: Handler,
    private readonly options: WorkQueueOptions,
  ) {
    this.backoff = new Backoff(options.backoff ?? DEFAULT_BACKOFF);
    // Every request in flight listens on the signal until it completes: passes run concurrently
    // and each may have several requests out, far more than the default warning threshold of 10.
    setMaxListeners(Math.max(10, options.concurrency * 64), this.abort.signal);
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** Keys waiting, both classes. */
  get depth(): number {
    return this.pending.size;
  }

  /** Keys waiting in one class (background work yields while changes wait, ADR 0031). */
  waiting(cls: QueueClass): number {
    return this.pending.sizeOf(cls);
  }

  get active(): number {
    return this.processing.size;
  }

  retries(key: string): number {
    return this.backoff.retries(key);
  }

  /**
   * Queues `key` unless it is already waiting; a key being processed runs again afterwards.
   * `change` (an input changed) is served before `resync` (the periodic pass); a waiting resync
   * key added as a change is promoted, never the other way round.
   */
  add(key: string, cls: QueueClass = 'change'): void {
    if (this.stopping || !this.admits(key)) return;
    if (this.processing.has(key)) {
      if (this.dirty.get(key) !== 'change') this.dirty.set(key, cls);
      return;
    }
    const waiting = this.pending.has(key);
    this.pending.push(key, flowOf(key), cls);
    if (waiting) return;
    this.queued.set(key, this.now());
    this.options.observer?.onDepth?.(this.pending.size);
    this.pump();
  }

  /**
   * Queues `key` as a change after `ms`; an earlier pending deadline for the key wins. Retries
   * and `requeueAfter` are the key's own follow-up, so they do not wait behind the resync; they
   * cannot crowd out other namespaces either, since a namespace still gets one key per round.
   */
  addAfter(key: string, ms: number): void {
    if (this.stopping) return;
    if (ms <= 0) return this.add(key);
    const at = this.now() + ms;
    const existing = this.delayed.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.delayed.set(key, { at, timer });
  }

  private admits(key: string): boolean {
    return this.options.admit?.(key) ?? true;
  }

  start(): void {
    this.running = true;
    this.pump();
  }

  private pump(): void {
    while (
      this.running &&
      !this.stopping &&
      this.processing.size < this.options.concurrency &&
      this.pending.size > 0
    ) {
      const { key, cls } = this.pending.pop()!;
      const enqueuedAt = this.queued.get(key) ?? this.now();
      this.queued.delete(key);
      if (!this.admits(key)) continue;
      const abort = new AbortController();
      setMaxListeners(64, abort.signal);
      const entry = { abort, done: Promise.resolve() };
      this.processing.set(key, entry);
      this.options.observer?.onDepth?.(this.pending.size);
      this.options.observer?.onQueueLatency?.(this.now() - enqueuedAt, cls);
      entry.done = this.process(key, abort.signal);
    }
    if (this.processing.size === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
  }

  private async process(key: string, own: AbortSignal): Promise<void> {
    const started = this.now();
    // The queue-wide signal stays in the pass's signal: work a pass leaves behind (its Events,
    // sent after it returns) is bound to it, and a lost Lease must cancel that too.
    const signal = AbortSignal.any([this.abort.signal, own]);
    setMaxListeners(64, signal);
    try {
      const result = await this.handler(key, signal);
      this.backoff.forget(key);
      this.options.observer?.onProcessed?.(key, 'success', this.now() - started);
      if (result.requeueAfter !== undefined) this.addAfter(key, result.requeueAfter);
    } catch (error) {
      this.failed(key, error, own.aborted, this.now() - started);
    } finally {
      this.processing.delete(key);
      const again = this.dirty.get(key);
      if (again) {
        this.dirty.delete(key);
        this.add(key, again);
      }
      this.pump();
    }
  }

  private failed(key: string, error: unknown, handedAway: boolean, ms: number): void {
    const observer = this.options.observer;
    if (handedAway) {
      // abortWhere: whoever owns the key now reconciles it; no retry here.
      this.backoff.forget(key);
      observer?.onProcessed?.(key, 'aborted', ms, error);
    } else if (error instanceof TerminalError) {
      this.backoff.forget(key);
      observer?.onProcessed?.(key, 'terminal', ms, error);
    } else {
      const delay = this.backoff.next(key);
      observer?.onProcessed?.(key, 'error', ms, error);
      observer?.onRetry?.(key, delay);
      this.addAfter(key, delay);
    }
  }

  /**
   * Forgets the waiting keys that match and aborts the matching ones in flight (this replica no
   * longer owns them); resolves when those have finished.
   */
  abortWhere(matches: (key: string) => boolean): Promise<void> {
    for (const key of [...this.pending.keys()]) {
      if (!matches(key)) continue;
      this.pending.delete(key);
      this.queued.delete(key);
    }
    for (const [key, { timer }] of this.delayed) {
      if (!matches(key)) continue;
      clearTimeout(timer);
      this.delayed.delete(key);
    }
    this.options.observer?.onDepth?.(this.pending.size);
    const draining: Promise<void>[] = [];
    for (const [key, entry] of this.processing) {
      if (!matches(key)) continue;
      this.dirty.delete(key);
      entry.abort.abort();
      draining.push(entry.done);
    }
    return Promise.all(draining).then(() => undefined);
  }

  /** Resolves when nothing is being processed (queued keys may remain while paused). */
  idle(): Promise<void> {
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stops taking work and signals every in-flight key to abort at once (lost leadership: no
   * write may follow). Resolves when nothing is in flight any more.
   */
  abortNow(): Promise<void> {
    return this.shutdown(0);
  }

  /**
   * Stops taking work, lets in-flight keys finish for up to `graceMs`, then signals them to
   * abort. Resolves when nothing is in flight or the grace period has passed.
   */
  async shutdown(graceMs: number): Promise<void> {
    this.stopping = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    this.pending.clear();
    this.queued.clear();
    if (graceMs <= 0) {
      this.abort.abort();
      return this.idle();
    }
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.abort.abort();
        resolve();
      }, graceMs);
    });
    await Promise.race([this.idle(), grace]);
    clearTimeout(timer);
  }
}

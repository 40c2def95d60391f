// A keyed, de-duplicating work queue with per-key serialisation and bounded concurrency: a key
// is never processed twice at once, a key added while processing runs once more afterwards,
// failures retry with per-key backoff, and `requeueAfter` schedules the earliest next pass.
import { setMaxListeners } from 'node:events';
import { Backoff, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.ts';
import { TerminalError, type Result } from './reconciler.ts';

export type Handler = (key: string, signal: AbortSignal) => Promise<Result>;

/** Hooks for metrics and logs; every hook is optional and must not throw. */
export interface QueueObserver {
  onDepth?(depth: number): void;
  onProcessed?(
    key: string,
    outcome: 'success' | 'error' | 'terminal',
    ms: number,
    error?: unknown,
  ): void;
  onRetry?(key: string, delayMs: number): void;
  onQueueLatency?(ms: number): void;
}

export interface WorkQueueOptions {
  concurrency: number;
  backoff?: BackoffOptions;
  observer?: QueueObserver;
  /** Injected for tests; defaults to the real clock. */
  now?: () => number;
}

export class WorkQueue {
  private readonly pending: string[] = [];
  private readonly queued = new Map<string, number>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
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

  get depth(): number {
    return this.pending.length;
  }

  get active(): number {
    return this.processing.size;
  }

  retries(key: string): number {
    return this.backoff.retries(key);
  }

  /** Queues `key` unless it is already waiting; a key being processed runs again afterwards. */
  add(key: string): void {
    if (this.stopping) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.set(key, this.now());
    this.pending.push(key);
    this.options.observer?.onDepth?.(this.pending.length);
    this.pump();
  }

  /** Queues `key` after `ms`; an earlier pending deadline for the key wins. */
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

  start(): void {
    this.running = true;
    this.pump();
  }

  private pump(): void {
    while (
      this.running &&
      !this.stopping &&
      this.processing.size < this.options.concurrency &&
      this.pending.length > 0
    ) {
      const key = this.pending.shift()!;
      const enqueuedAt = this.queued.get(key) ?? this.now();
      this.queued.delete(key);
      this.processing.add(key);
      this.options.observer?.onDepth?.(this.pending.length);
      this.options.observer?.onQueueLatency?.(this.now() - enqueuedAt);
      void this.process(key);
    }
    if (this.processing.size === 0) this.idleWaiters.splice(0).forEach((resolve) => resolve());
  }

  private async process(key: string): Promise<void> {
    const started = this.now();
    try {
      const result = await this.handler(key, this.abort.signal);
      this.backoff.forget(key);
      this.options.observer?.onProcessed?.(key, 'success', this.now() - started);
      if (result.requeueAfter !== undefined) this.addAfter(key, result.requeueAfter);
    } catch (error) {
      if (error instanceof TerminalError) {
        this.backoff.forget(key);
        this.options.observer?.onProcessed?.(key, 'terminal', this.now() - started, error);
      } else {
        const delay = this.backoff.next(key);
        this.options.observer?.onProcessed?.(key, 'error', this.now() - started, error);
        this.options.observer?.onRetry?.(key, delay);
        this.addAfter(key, delay);
      }
    } finally {
      this.processing.delete(key);
      if (this.dirty.delete(key)) this.add(key);
      this.pump();
    }
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
    this.pending.length = 0;
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

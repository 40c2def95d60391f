import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TerminalError, type Result } from './reconciler.ts';
import { WorkQueue } from './work-queue.ts';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Lets every pass that can run without the clock moving run: the handlers here answer from
 * memory, so one turn of the real event loop (which advanceTimersByTimeAsync takes before it
 * ticks) drains their promise chains. The queue's own timers (backoff, requeueAfter, grace)
 * fire only when a test moves the fake clock, so their timing is asserted to the millisecond.
 */
async function tick(): Promise<void> {
  await vi.advanceTimersByTimeAsync(0);
}

describe('the work queue', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs a key once however often it is added while waiting', async () => {
    const runs: string[] = [];
    const queue = new WorkQueue(
      async (key) => {
        runs.push(key);
        return {};
      },
      { concurrency: 1 },
    );
    queue.add('a');
    queue.add('a');
    queue.add('b');
    queue.add('a');
    queue.start();
    await tick();
    await queue.idle();
    expect(runs).toEqual(['a', 'b']);
  });

  it('never processes the same key twice at once, and reruns a key changed while it ran', async () => {
    const gate = deferred();
    let inFlight = 0;
    let maxInFlight = 0;
    const runs: string[] = [];
    const queue = new WorkQueue(
      async (key) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        runs.push(key);
        if (runs.length === 1) await gate.promise;
        inFlight--;
        return {};
      },
      { concurrency: 4 },
    );
    queue.start();
    queue.add('a');
    await tick();
    queue.add('a');
    queue.add('a');
    await tick();
    expect(runs).toEqual(['a']);
    gate.resolve();
    await tick();
    await queue.idle();
    expect(runs).toEqual(['a', 'a']);
    expect(maxInFlight).toBe(1);
  });

  it('bounds concurrency across keys', async () => {
    const gate = deferred();
    let inFlight = 0;
    let maxInFlight = 0;
    const queue = new WorkQueue(
      async () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await gate.promise;
        inFlight--;
        return {};
      },
      { concurrency: 3 },
    );
    queue.start();
    for (const key of ['a', 'b', 'c', 'd', 'e']) queue.add(key);
    await tick();
    expect(queue.active).toBe(3);
    expect(queue.depth).toBe(2);
    gate.resolve();
    await tick();
    await queue.idle();
    expect(maxInFlight).toBe(3);
  });

  it('retries a failing key with growing backoff, and forgets it on success', async () => {
    const attempts: number[] = [];
    const delays: number[] = [];
    const queue = new WorkQueue(
      async () => {
        attempts.push(Date.now());
        if (attempts.length < 3) throw new Error('boom');
        return {};
      },
      {
        concurrency: 1,
        backoff: { baseMs: 20, maxMs: 1000, jitter: 0 },
        observer: { onRetry: (_k, d) => delays.push(d) },
      },
    );
    const start = Date.now();
    queue.start();
    queue.add('a');
    await tick();
    expect(attempts).toHaveLength(1);
    // The first retry waits its 20 ms, not a moment less.
    await vi.advanceTimersByTimeAsync(19);
    expect(attempts).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts).toHaveLength(2);
    // The second waits twice as long.
    await vi.advanceTimersByTimeAsync(39);
    expect(attempts).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(attempts.map((at) => at - start)).toEqual([0, 20, 60]);
    await queue.idle();
    expect(delays).toEqual([20, 40]);
    expect(queue.retries('a')).toBe(0);
    // Success forgot the key: nothing more is scheduled.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(attempts).toHaveLength(3);
  });

  it('does not retry a TerminalError', async () => {
    let attempts = 0;
    const queue = new WorkQueue(
      async () => {
        attempts++;
        throw new TerminalError('bad input');
      },
      { concurrency: 1, backoff: { baseMs: 1, maxMs: 1, jitter: 0 } },
    );
    queue.start();
    queue.add('a');
    await tick();
    expect(attempts).toBe(1);
    // A plain error would be retried after 1 ms; a minute later there has been no second try.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(attempts).toBe(1);
    expect(queue.retries('a')).toBe(0);
  });

  it('honours requeueAfter, keeping the earliest deadline', async () => {
    const runs: number[] = [];
    let first = true;
    const queue = new WorkQueue(
      async (): Promise<Result> => {
        runs.push(Date.now());
        if (first) {
          first = false;
          return { requeueAfter: 30 };
        }
        return {};
      },
      { concurrency: 1 },
    );
    const start = Date.now();
    queue.start();
    queue.add('a');
    queue.addAfter('a', 10_000);
    await tick();
    expect(runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(29);
    expect(runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs.map((at) => at - start)).toEqual([0, 30]);
    // The later deadline (10 s) was replaced by the earlier one, not kept beside it.
    await vi.advanceTimersByTimeAsync(20_000);
    expect(runs).toHaveLength(2);
  });

  it('finishes in-flight work on shutdown and takes no more', async () => {
    const gate = deferred();
    const runs: string[] = [];
    const queue = new WorkQueue(
      async (key) => {
        runs.push(key);
        await gate.promise;
        return {};
      },
      { concurrency: 1 },
    );
    queue.start();
    queue.add('a');
    queue.add('b');
    await tick();
    const stopped = queue.shutdown(1_000);
    queue.add('c');
    gate.resolve();
    await stopped;
    expect(runs).toEqual(['a']);
  });

  it('aborts in-flight work when the grace period runs out, and not before', async () => {
    let aborted = false;
    const queue = new WorkQueue(
      async (_key, signal) => {
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        aborted = signal.aborted;
        return {};
      },
      { concurrency: 1 },
    );
    queue.start();
    queue.add('a');
    await tick();
    let stopped = false;
    const stopping = queue.shutdown(20).then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(19);
    expect(aborted).toBe(false);
    expect(stopped).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await stopping;
    expect(aborted).toBe(true);
  });

  it("serves a quiet namespace's key next, ahead of another namespace's backlog", async () => {
    const runs: string[] = [];
    const latency: number[] = [];
    const queue = new WorkQueue(
      async (key) => {
        runs.push(key);
        // A quiet tenant creates an instance while the noisy ones' backlog is being worked off.
        if (runs.length === 5) queue.add('quiet-0/x');
        await new Promise((resolve) => setTimeout(resolve, 10));
        return {};
      },
      { concurrency: 1, observer: { onQueueLatency: (ms) => latency.push(ms) } },
    );
    for (let i = 0; i < 50; i++) for (const ns of ['noisy-a', 'noisy-b']) queue.add(`${ns}/${i}`);
    queue.start();
    await vi.advanceTimersByTimeAsync(2_000);
    await queue.idle();
    expect(runs).toHaveLength(101);
    expect(runs.slice(0, 7)).toEqual([
      'noisy-a/0',
      'noisy-b/0',
      'noisy-a/1',
      'noisy-b/1',
      'noisy-a/2',
      'quiet-0/x',
      'noisy-b/2',
    ]);
    // It waited for the pass in flight when it came, and no longer.
    expect(latency[5]).toBe(10);
  });

  it('serves changes before the resync, promotes a resync key that changes, and reruns a key with the highest class it was added with', async () => {
    const gate = deferred();
    const runs: string[] = [];
    const queue = new WorkQueue(
      async (key) => {
        runs.push(`${key} ${dispatched}`);
        if (runs.length === 1) await gate.promise;
        return {};
      },
      { concurrency: 1, observer: { onQueueLatency: (_ms, cls) => (dispatched = cls) } },
    );
    let dispatched = '';
    queue.start();
    queue.add('a/1', 'resync');
    await tick();
    // While a/1 runs: it is added again, as a resync and then as a change.
    queue.add('a/1', 'resync');
    queue.add('a/1');
    queue.add('b/1', 'resync');
    queue.add('b/2', 'resync');
    queue.add('c/1');
    queue.add('b/2');
    queue.add('c/1', 'resync');
    expect(queue.depth).toBe(3);
    gate.resolve();
    await tick();
    await queue.idle();
    expect(runs).toEqual(['a/1 resync', 'c/1 change', 'b/2 change', 'a/1 change', 'b/1 resync']);
  });

  it('abortWhere stops exactly the matching keys, in flight or waiting, and does not retry them', async () => {
    const started: string[] = [];
    const aborted: string[] = [];
    const release = deferred();
    const queue = new WorkQueue(
      async (key, signal) => {
        started.push(key);
        await new Promise<void>((resolve, reject) => {
          signal.addEventListener('abort', () => {
            aborted.push(key);
            reject(new Error('aborted'));
          });
          void release.promise.then(resolve);
        });
        return {};
      },
      { concurrency: 2 },
    );
    queue.add('lost/a');
    queue.add('kept/b');
    queue.add('lost/c'); // waiting: concurrency 2
    queue.addAfter('lost/d', 60_000);
    queue.start();
    await tick();
    expect(started).toEqual(['lost/a', 'kept/b']);
    await queue.abortWhere((key) => key.startsWith('lost/'));
    expect(aborted).toEqual(['lost/a']);
    expect(queue.retries('lost/a')).toBe(0);
    release.resolve();
    await tick();
    await queue.idle();
    expect(started).toEqual(['lost/a', 'kept/b']);
    expect(queue.depth).toBe(0);
  });
});

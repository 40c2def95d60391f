// The work queue's per-key guarantees over random interleavings of adds and completions, with a
// handler whose passes end only when the test says so.
import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import type { QueueClass } from './fair-queue.ts';
import { TerminalError } from './reconciler.ts';
import { WorkQueue } from './work-queue.ts';

type Op =
  | { type: 'add'; key: string; cls: QueueClass }
  | { type: 'complete'; pick: number; outcome: 'success' | 'error' | 'terminal' };

const key = fc
  .record({ ns: fc.constantFrom('a', 'b', 'c'), name: fc.constantFrom('x', 'y', 'z') })
  .map(({ ns, name }) => `${ns}/${name}`);

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    type: fc.constant('add' as const),
    key,
    cls: fc.constantFrom<QueueClass>('change', 'resync'),
  }),
  fc.record({
    type: fc.constant('complete' as const),
    pick: fc.nat(),
    outcome: fc.constantFrom('success' as const, 'error' as const, 'terminal' as const),
  }),
);

/** What the queue owes each key: nothing, a pass (of a class), or the rest of one running. */
type Owed =
  | { state: 'idle' }
  | { state: 'waiting'; cls: QueueClass }
  | { state: 'running'; again: QueueClass | undefined };

const higher = (a: QueueClass | undefined, b: QueueClass): QueueClass =>
  a === 'change' || b === 'change' ? 'change' : 'resync';

/** Lets every pass that can start, start (the handler's promises settle in microtasks). */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('the work queue, over random operations', () => {
  test.prop([fc.integer({ min: 1, max: 4 }), fc.array(op, { maxLength: 80, size: 'large' })], {
    numRuns: 150,
  })(
    'never runs a key twice at once, runs a key added while running once more, and idles no slot',
    async (concurrency, ops) => {
      const owed = new Map<string, Owed>();
      const running = new Map<string, (outcome: Op & { type: 'complete' }) => void>();
      let dispatchedAs: QueueClass | undefined;
      const queue = new WorkQueue(
        (key) => {
          // Per-key serialisation, and a pass only for a key that was owed one, of that class.
          expect(running.has(key)).toBe(false);
          const was = owed.get(key);
          expect(was).toEqual({ state: 'waiting', cls: dispatchedAs });
          owed.set(key, { state: 'running', again: undefined });
          return new Promise((resolve, reject) => {
            running.set(key, ({ outcome }) => {
              running.delete(key);
              const now = owed.get(key);
              if (now?.state !== 'running') throw new Error(`${key} was not running`);
              owed.set(key, now.again ? { state: 'waiting', cls: now.again } : { state: 'idle' });
              if (outcome === 'success') resolve({});
              else reject(outcome === 'error' ? new Error('boom') : new TerminalError('bad'));
            });
          });
        },
        {
          concurrency,
          // Retries are scheduled but never due within the test.
          backoff: { baseMs: 3_600_000, maxMs: 3_600_000, jitter: 0 },
          observer: { onQueueLatency: (_ms, cls) => (dispatchedAs = cls) },
        },
      );
      const check = (): void => {
        const states = [...owed.values()];
        const busy = states.filter((o) => o.state === 'running').length;
        const waiting = states.filter((o) => o.state === 'waiting').length;
        expect(queue.active).toBe(busy);
        expect(queue.depth).toBe(waiting);
        // Work conserving: a slot stays free only when nothing waits.
        expect(busy).toBe(Math.min(concurrency, busy + waiting));
      };
      queue.start();
      for (const op of ops) {
        if (op.type === 'add') {
          const was = owed.get(op.key) ?? { state: 'idle' };
          if (was.state === 'running') was.again = higher(was.again, op.cls);
          else if (was.state === 'waiting') was.cls = higher(was.cls, op.cls);
          else owed.set(op.key, { state: 'waiting', cls: op.cls });
          queue.add(op.key, op.cls);
        } else {
          const keys = [...running.keys()];
          if (keys.length > 0) running.get(keys[op.pick % keys.length]!)!(op);
        }
        await settle();
        check();
      }
      // Drained: every pass owed ran, each added-while-running key once more.
      while (running.size > 0) {
        for (const complete of [...running.values()])
          complete({ type: 'complete', pick: 0, outcome: 'success' });
        await settle();
        check();
      }
      await queue.idle();
      expect([...owed.values()].every((o) => o.state === 'idle')).toBe(true);
      await queue.shutdown(0);
    },
  );
});

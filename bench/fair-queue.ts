// `npm run bench:queue`: what the fair work queue's ordering (ADR 0024) costs per push and per
// pop, for 100,000 keys over 1,000 namespaces, beside the FIFO it replaced; and where a quiet
// namespace's key is served behind a backlog, which is what it is for. Printed, not asserted:
// the figures depend on the machine.
import { performance } from 'node:perf_hooks';
import { FairQueue, type QueueClass } from '../src/framework/fair-queue.ts';

const KEYS = 100_000;
const NAMESPACES = 1_000;
const RUNS = 7;

interface Key {
  key: string;
  ns: string;
}

/** The keys in creation order, namespaces interleaved: the k-th key of each, then the next. */
const keys: Key[] = Array.from({ length: KEYS }, (_, i) => {
  const ns = `noisy-${i % NAMESPACES}`;
  return { key: `${ns}/app-${Math.floor(i / NAMESPACES)}`, ns };
});

/** The queue this replaced: an array, and a set of what waits in it. */
class Fifo {
  private readonly pending: string[] = [];
  private readonly queued = new Set<string>();

  push(key: string): void {
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.pending.push(key);
  }

  pop(): string | undefined {
    const key = this.pending.shift();
    if (key !== undefined) this.queued.delete(key);
    return key;
  }
}

interface Queue {
  push(key: Key, i: number): void;
  pop(): unknown;
}

const fair = (cls: (i: number) => QueueClass) => (): Queue => {
  const queue = new FairQueue();
  return { push: ({ key, ns }, i) => queue.push(key, ns, cls(i)), pop: () => queue.pop() };
};

const fifo = (): Queue => {
  const queue = new Fifo();
  return { push: ({ key }) => queue.push(key), pop: () => queue.pop() };
};

/** ns per push and per pop, best of RUNS (the first run also warms the JIT): all in, all out. */
function bulk(make: () => Queue): { push: number; pop: number } {
  let push = Infinity;
  let pop = Infinity;
  for (let run = 0; run < RUNS; run++) {
    const queue = make();
    const start = performance.now();
    keys.forEach((key, i) => queue.push(key, i));
    const pushed = performance.now();
    for (let i = 0; i < KEYS; i++) queue.pop();
    const popped = performance.now();
    push = Math.min(push, ((pushed - start) * 1e6) / KEYS);
    pop = Math.min(pop, ((popped - pushed) * 1e6) / KEYS);
  }
  return { push, pop };
}

/** ns per operation with 10,000 waiting throughout: one push and one pop per step. */
function steady(make: () => Queue): number {
  const window = 10_000;
  let best = Infinity;
  for (let run = 0; run < RUNS; run++) {
    const queue = make();
    keys.slice(0, window).forEach((key, i) => queue.push(key, i));
    const start = performance.now();
    for (let i = window; i < KEYS; i++) {
      queue.push(keys[i]!, i);
      queue.pop();
    }
    best = Math.min(best, ((performance.now() - start) * 1e6) / (2 * (KEYS - window)));
  }
  return best;
}

const row = (label: string, push: number, pop: number): string =>
  `${label.padEnd(44)} ${push.toFixed(0).padStart(8)} ${pop.toFixed(0).padStart(8)}`;

console.log(
  `${KEYS.toLocaleString('en')} keys over ${NAMESPACES.toLocaleString('en')} namespaces, best of ${RUNS} runs, ns per op`,
);
console.log(`${'scenario'.padEnd(44)} ${'push'.padStart(8)} ${'pop'.padStart(8)}`);
const allChange = bulk(fair(() => 'change'));
console.log(row('fair, all in then all out', allChange.push, allChange.pop));
const halfResync = bulk(fair((i) => (i % 2 === 0 ? 'change' : 'resync')));
console.log(row('fair, half of them resync', halfResync.push, halfResync.pop));
const fairSteady = steady(fair(() => 'change'));
console.log(row('fair, steady with 10,000 waiting (push+pop)', fairSteady, fairSteady));
const old = bulk(fifo);
console.log(row('FIFO it replaced, all in then all out', old.push, old.pop));
const oldSteady = steady(fifo);
console.log(row('FIFO, steady with 10,000 waiting (push+pop)', oldSteady, oldSteady));

// Issue #25's measurement in miniature: 1,000 keys over 50 noisy namespaces, three dispatches
// go by, then a quiet namespace adds one key. How many keys are served before it?
function servedBefore(make: () => Queue): number {
  const queue = make();
  for (let i = 0; i < 1_000; i++)
    queue.push({ key: `noisy-${i % 50}/app-${i}`, ns: `noisy-${i % 50}` }, i);
  for (let i = 0; i < 3; i++) queue.pop();
  queue.push({ key: 'quiet-0/app', ns: 'quiet-0' }, 1_000);
  let before = 0;
  for (;;) {
    const next = queue.pop();
    const key = typeof next === 'string' ? next : (next as { key: string } | undefined)?.key;
    if (key === 'quiet-0/app' || key === undefined) return before;
    before++;
  }
}
console.log(
  `quiet key behind 1,000 keys of 50 namespaces: served after ${servedBefore(fair(() => 'change'))} others (FIFO: ${servedBefore(fifo)})`,
);

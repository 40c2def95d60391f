import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { CREDIT, FairQueue, RESYNC_SHARE, type Popped, type QueueClass } from './fair-queue.ts';

/** Pushes `namespace/name` keys, the namespace being the flow (as the WorkQueue does). */
function push(queue: FairQueue, key: string, cls: QueueClass = 'change'): void {
  queue.push(key, key.slice(0, key.indexOf('/')), cls);
}

function drain(queue: FairQueue): string[] {
  const keys: string[] = [];
  for (let next = queue.pop(); next; next = queue.pop()) keys.push(next.key);
  return keys;
}

function backlog(namespaces: number, perNamespace: number, prefix = 'noisy'): string[] {
  const keys: string[] = [];
  for (let ns = 0; ns < namespaces; ns++)
    for (let i = 0; i < perNamespace; i++) keys.push(`${prefix}-${ns}/k${i}`);
  return keys;
}

describe('the fair queue', () => {
  it('serves one key per namespace per round, FIFO inside a namespace', () => {
    const queue = new FairQueue();
    for (const key of ['a/1', 'a/2', 'a/3', 'b/1', 'b/2', 'c/1']) push(queue, key);
    expect(drain(queue)).toEqual(['a/1', 'b/1', 'c/1', 'a/2', 'b/2', 'a/3']);
  });

  it('does not move a waiting key that is added again', () => {
    const queue = new FairQueue();
    for (const key of ['a/1', 'a/2', 'a/1', 'b/1', 'a/1']) push(queue, key);
    expect(queue.size).toBe(3);
    expect(drain(queue)).toEqual(['a/1', 'b/1', 'a/2']);
  });

  it("serves an idle namespace's keys ahead of the round in progress, up to the credit", () => {
    const queue = new FairQueue();
    for (const key of backlog(10, 20)) push(queue, key);
    // Round 0 and half of round 1.
    for (let i = 0; i < 15; i++) queue.pop();
    push(queue, 'quiet/x');
    expect(queue.pop()?.key).toBe('quiet/x');
    push(queue, 'quiet/y');
    expect(queue.pop()?.key).toBe('quiet/y');
    expect(CREDIT).toBe(2);
    // Served at V - 2 and V - 1, it is not credited again until V moves: its third key waits
    // for the five heads left in round 1.
    push(queue, 'quiet/z');
    const next = drain(queue);
    expect(next.indexOf('quiet/z')).toBe(5);
    expect(next.slice(0, 5)).toEqual([
      'noisy-5/k1',
      'noisy-6/k1',
      'noisy-7/k1',
      'noisy-8/k1',
      'noisy-9/k1',
    ]);
  });

  it('charges nobody for what it was served while nothing else waited', () => {
    const queue = new FairQueue();
    // Quiet namespaces busy on an otherwise empty queue: four keys each, all served.
    for (let k = 0; k < 4; k++) for (let n = 0; n < 5; n++) push(queue, `quiet-${n}/r${k}`);
    drain(queue);
    // Then a wave in 50 other namespaces; a quiet key arriving mid-round goes first.
    for (const key of backlog(50, 20)) push(queue, key);
    for (let i = 0; i < 10; i++) queue.pop();
    push(queue, 'quiet-0/new');
    expect(queue.pop()?.key).toBe('quiet-0/new');
  });

  it('credits an idle namespace during the very first round too', () => {
    const queue = new FairQueue();
    for (const key of backlog(50, 20)) push(queue, key);
    for (let i = 0; i < 3; i++) queue.pop();
    push(queue, 'quiet-0/x');
    expect(queue.pop()?.key).toBe('quiet-0/x');
  });

  it('serves changes before the resync', () => {
    const queue = new FairQueue();
    push(queue, 'a/r1', 'resync');
    push(queue, 'a/r2', 'resync');
    push(queue, 'b/c1');
    push(queue, 'a/c1');
    expect(drain(queue)).toEqual(['b/c1', 'a/c1', 'a/r1', 'a/r2']);
  });

  it('gives the resync one dispatch in eight under a constant load of changes', () => {
    const queue = new FairQueue();
    for (const key of backlog(5, 10, 'resync')) push(queue, key, 'resync');
    let change = 0;
    const classes: QueueClass[] = [];
    for (let i = 0; i < 10 * RESYNC_SHARE; i++) {
      push(queue, `busy-${change % 3}/c${change++}`);
      push(queue, `busy-${change % 3}/c${change++}`);
      classes.push(queue.pop()!.cls);
    }
    const resync = classes.flatMap((cls, i) => (cls === 'resync' ? [i] : []));
    expect(resync).toEqual(Array.from({ length: 10 }, (_, i) => (i + 1) * RESYNC_SHARE - 1));
  });

  it('promotes a waiting resync key added as a change, and never demotes one', () => {
    const queue = new FairQueue();
    push(queue, 'a/1', 'resync');
    push(queue, 'a/2', 'resync');
    push(queue, 'b/1');
    push(queue, 'a/2');
    expect(queue.classOf('a/2')).toBe('change');
    push(queue, 'b/1', 'resync');
    expect(queue.classOf('b/1')).toBe('change');
    expect(queue.size).toBe(3);
    const popped: Popped[] = [];
    for (let next = queue.pop(); next; next = queue.pop()) popped.push(next);
    expect(popped).toEqual([
      { key: 'b/1', cls: 'change' },
      { key: 'a/2', cls: 'change' },
      { key: 'a/1', cls: 'resync' },
    ]);
  });

  it('deletes a waiting key from anywhere in its namespace, the keys behind it moving up', () => {
    const queue = new FairQueue();
    for (const key of ['a/1', 'a/2', 'a/3', 'b/1', 'b/2', 'b/3']) push(queue, key);
    expect(queue.delete('a/1')).toBe(true);
    expect(queue.delete('b/2')).toBe(true);
    expect(queue.delete('b/2')).toBe(false);
    expect(queue.has('b/2')).toBe(false);
    expect(drain(queue)).toEqual(['a/2', 'b/1', 'a/3', 'b/3']);
  });

  it('forgets a namespace once V has moved past it, and keeps it until then', () => {
    const queue = new FairQueue();
    // A namespace with a long backlog keeps the queue from emptying (which forgets everything).
    for (let k = 0; k < 10; k++) push(queue, `busy/k${k}`);
    for (const key of backlog(1000, 3)) push(queue, key);
    // Three rounds: every namespace served at tags 0, 1 and 2; busy's head is at 3.
    for (let i = 0; i < 3 * 1001; i++) queue.pop();
    expect(queue.trackedFlows).toBe(1001);
    // Served at tag 2 with V = 2, F = 3: a new key of theirs waits behind a fresh namespace
    // (V - CREDIT = 0) and behind busy's head, which has the same tag and came first.
    push(queue, 'noisy-0/again');
    push(queue, 'fresh/x');
    expect([queue.pop(), queue.pop(), queue.pop()].map((p) => p?.key)).toEqual([
      'fresh/x',
      'busy/k3',
      'noisy-0/again',
    ]);
    // Once V has moved on by CREDIT past their F, the others' state is what a fresh one has.
    queue.pop();
    queue.pop();
    expect(queue.trackedFlows).toBeLessThanOrEqual(3);
  });

  it('starts over once nothing waits: V and every F are forgotten', () => {
    const queue = new FairQueue();
    for (const key of backlog(10, 3)) push(queue, key);
    drain(queue);
    expect(queue.trackedFlows).toBe(0);
    // As on a new queue: round-robin from the first key.
    for (const key of ['a/1', 'a/2', 'noisy-0/x', 'b/1']) push(queue, key);
    expect(drain(queue)).toEqual(['a/1', 'noisy-0/x', 'b/1', 'a/2']);
  });

  it('handles 10,000 keys over 1,000 namespaces in round-robin order', () => {
    const queue = new FairQueue();
    for (const key of backlog(1000, 10)) push(queue, key);
    const keys = drain(queue);
    expect(keys).toHaveLength(10_000);
    expect(keys.slice(0, 3)).toEqual(['noisy-0/k0', 'noisy-1/k0', 'noisy-2/k0']);
    expect(keys[1000]).toBe('noisy-0/k1');
    expect(keys.at(-1)).toBe('noisy-999/k9');
  });
});

// Properties over random operations. Keys are `ns<i>/k<j>`, so a key has one namespace.

type Op =
  | { type: 'push'; ns: number; name: number; cls: QueueClass }
  | { type: 'pop' }
  | { type: 'delete'; ns: number; name: number };

interface Scenario {
  namespaces: number;
  ops: Op[];
}

const op = (namespaces: number, pops: number, deletes: boolean): fc.Arbitrary<Op> => {
  const ns = fc.nat(namespaces - 1);
  const name = fc.nat(11);
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        type: fc.constant('push' as const),
        ns,
        name,
        cls: fc.constantFrom<QueueClass>('change', 'change', 'resync'),
      }),
    },
    { weight: pops, arbitrary: fc.constant({ type: 'pop' as const }) },
    {
      weight: deletes ? 1 : 0,
      arbitrary: fc.record({ type: fc.constant('delete' as const), ns, name }),
    },
  );
};

/**
 * Random operations over 1 to 8 namespaces of 12 keys each. How often a run pops varies, so
 * that some runs keep every namespace backlogged and others keep namespaces going idle.
 */
const scenario = (deletes = false): fc.Arbitrary<Scenario> =>
  fc
    .record({ namespaces: fc.integer({ min: 1, max: 8 }), pops: fc.integer({ min: 1, max: 8 }) })
    .chain(({ namespaces, pops }) =>
      fc
        .array(op(namespaces, pops, deletes), { minLength: 1, maxLength: 300, size: 'large' })
        .map((ops) => ({ namespaces, ops })),
    );

const keyOf = (ns: number, name: number): string => `ns${ns}/k${name}`;

/**
 * The dispatches a key waits at most (its own included), with N namespaces and p keys of its
 * namespace and class ahead of it when it entered its class (see ADR 0024):
 *   within its class, D = (N - 1)(p + 2 + CREDIT) + p others go first: every other namespace's tags rise
 *   by at least one per key served, start no lower than V - CREDIT, and the key's tag is at most
 *   V + 1 + p when it arrives;
 *   a change waits for D changes and the resync dispatches squeezed between them: one at once
 *   at most, then one after every RESYNC_SHARE - 1 changes;
 *   a resync key gets one dispatch in RESYNC_SHARE while it waits.
 */
function bound(namespaces: number, cls: QueueClass, ahead: number): number {
  const d = (namespaces - 1) * (ahead + 2 + CREDIT) + ahead;
  return cls === 'change' ? d + 2 + Math.floor(d / (RESYNC_SHARE - 1)) : RESYNC_SHARE * (d + 1);
}

interface Waiting {
  ns: number;
  cls: QueueClass;
  /** When it entered its class, in operations (orders FIFO) and in dispatches (the bound). */
  entered: number;
  poppedBefore: number;
  bound: number;
}

/** Runs `ops` then drains the queue, checking the bound and FIFO order at every dispatch. */
function run({ namespaces, ops }: Scenario): void {
  const queue = new FairQueue();
  const waiting = new Map<string, Waiting>();
  const lastEntered = new Map<string, number>();
  let pops = 0;
  const pop = (): boolean => {
    const next = queue.pop();
    if (!next) return false;
    pops++;
    const entry = waiting.get(next.key)!;
    waiting.delete(next.key);
    expect(next.cls).toBe(entry.cls);
    expect(pops - entry.poppedBefore).toBeLessThanOrEqual(entry.bound);
    const flow = `${entry.ns}/${entry.cls}`;
    expect(entry.entered).toBeGreaterThan(lastEntered.get(flow) ?? -1);
    lastEntered.set(flow, entry.entered);
    return true;
  };
  ops.forEach((op, at) => {
    if (op.type === 'pop') return void pop();
    const key = keyOf(op.ns, op.name);
    if (op.type === 'delete') {
      expect(queue.delete(key)).toBe(waiting.delete(key));
      return;
    }
    const before = waiting.get(key);
    queue.push(key, `ns${op.ns}`, op.cls);
    if (before && (before.cls === op.cls || op.cls === 'resync')) return;
    if (before) waiting.delete(key);
    const ahead = [...waiting.values()].filter((w) => w.ns === op.ns && w.cls === op.cls).length;
    waiting.set(key, {
      ns: op.ns,
      cls: op.cls,
      entered: at,
      poppedBefore: pops,
      bound: bound(namespaces, op.cls, ahead),
    });
  });
  expect(queue.size).toBe(waiting.size);
  while (pop());
  expect(waiting.size).toBe(0);
}

/** A namespace in one class of the reference: its keys, its head's tag, and F once served. */
interface ReferenceFlow {
  keys: string[];
  start: number;
  finish: number | undefined;
}

/**
 * The specification, literally and slowly: every namespace's state kept forever, the next head
 * found by scanning. A key that leaves gives its slot to the keys behind it.
 */
class ReferenceQueue {
  private readonly classes = {
    change: { virtual: undefined as number | undefined, flows: new Map<string, ReferenceFlow>() },
    resync: { virtual: undefined as number | undefined, flows: new Map<string, ReferenceFlow>() },
  };
  private readonly where = new Map<string, { flow: string; cls: QueueClass; seq: number }>();
  private seq = 0;
  private streak = 0;

  push(key: string, flow: string, cls: QueueClass): void {
    const at = this.where.get(key);
    if (at && (at.cls === cls || cls === 'resync')) return;
    if (at) this.delete(key);
    const queue = this.classes[cls];
    const state = queue.flows.get(flow) ?? { keys: [], start: 0, finish: undefined };
    queue.flows.set(flow, state);
    // Nothing of this class waits: it starts over, with no V and no F.
    if (![...this.where.values()].some((w) => w.cls === cls)) {
      queue.virtual = undefined;
      for (const other of queue.flows.values()) other.finish = undefined;
    }
    if (state.keys.length === 0) {
      // No V before the first dispatch; no F before a namespace's first.
      const base = queue.virtual === undefined ? 0 : queue.virtual - CREDIT;
      state.start = Math.max(state.finish ?? base, base);
    }
    state.keys.push(key);
    this.where.set(key, { flow, cls, seq: this.seq++ });
  }

  delete(key: string): boolean {
    const at = this.where.get(key);
    if (!at) return false;
    this.where.delete(key);
    const keys = this.classes[at.cls].flows.get(at.flow)!.keys;
    keys.splice(keys.indexOf(key), 1);
    return true;
  }

  pop(): Popped | undefined {
    const waiting = (cls: QueueClass): boolean =>
      [...this.where.values()].some((w) => w.cls === cls);
    let cls: QueueClass;
    if (waiting('resync') && (!waiting('change') || this.streak >= RESYNC_SHARE - 1)) {
      cls = 'resync';
      this.streak = 0;
    } else if (waiting('change')) {
      cls = 'change';
      this.streak = waiting('resync') ? this.streak + 1 : 0;
    } else return undefined;
    const queue = this.classes[cls];
    const seqOf = (flow: ReferenceFlow): number => this.where.get(flow.keys[0]!)!.seq;
    let best: ReferenceFlow | undefined;
    for (const flow of queue.flows.values()) {
      if (flow.keys.length === 0) continue;
      if (
        !best ||
        flow.start < best.start ||
        (flow.start === best.start && seqOf(flow) < seqOf(best))
      )
        best = flow;
    }
    const key = best!.keys.shift()!;
    queue.virtual = Math.max(queue.virtual ?? best!.start, best!.start);
    best!.finish = best!.start + 1;
    best!.start += 1;
    this.where.delete(key);
    return { key, cls };
  }
}

describe('the fair queue, over random operations', () => {
  test.prop([scenario()], { numRuns: 300 })(
    'serves every key within its bound, FIFO inside a namespace and class',
    (o) => run(o),
  );

  test.prop([scenario(true)], { numRuns: 300 })('keeps the bound and FIFO with deletions', (o) =>
    run(o),
  );

  test.prop([scenario(true)], { numRuns: 300 })(
    'dispatches exactly as the specification that never forgets a namespace',
    ({ ops: o }) => {
      const queue = new FairQueue();
      const reference = new ReferenceQueue();
      for (const op of [...o, ...Array<Op>(o.length).fill({ type: 'pop' })]) {
        if (op.type === 'pop') {
          expect(queue.pop()).toEqual(reference.pop());
          continue;
        }
        const key = keyOf(op.ns, op.name);
        if (op.type === 'delete') expect(queue.delete(key)).toBe(reference.delete(key));
        else {
          queue.push(key, `ns${op.ns}`, op.cls);
          reference.push(key, `ns${op.ns}`, op.cls);
        }
      }
      expect(queue.size).toBe(0);
    },
  );
});

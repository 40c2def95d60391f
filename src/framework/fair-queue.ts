// The waiting keys of a work queue, served fairly across flows (namespaces) and by class (ADR
// 0024). One FIFO let a namespace that created a thousand instances hold a quiet namespace's key
// for 25 s; here each flow gets one key per round, and a flow that was idle goes ahead of the
// round in progress. This module orders keys only: processing, retries and timing are the
// WorkQueue's.
//
// Per class, start-time fair queuing: a key's start tag S is where its flow's turn falls in
// virtual time. A backlogged flow's keys take consecutive tags; a flow with nothing waiting
// starts at max(F, V - CREDIT), where F is one past the tag it was last served at and V the
// largest tag served so far. The head with the smallest tag is served first (ties: the earlier
// arrival). A waiting head's tag is never below V - CREDIT and never above V + 1, which is what
// bounds the wait (see the ADR).
//
// A flow never served has no F (not 0), and there is no V before the first dispatch (keys then
// start at 0): with F = 0, a quiet namespace arriving while the very first round is served
// would tie with that round and wait for a key of every other namespace.

export type QueueClass = 'change' | 'resync';

/**
 * How far ahead of the round in progress a flow that was idle starts (CFS's sleeper credit): two
 * keys, because a tenant's changes often come in pairs (a Secret and the instance reading it, an
 * instance and its Template), and the second should not wait a round behind the first.
 */
export const CREDIT = 2;

/** While resync keys wait, at least one dispatch in this many serves them. */
export const RESYNC_SHARE = 8;

export interface Popped {
  key: string;
  cls: QueueClass;
}

interface Entry {
  readonly key: string;
  readonly flow: Flow;
  readonly cls: QueueClass;
  /** Arrival order, across classes: breaks ties between equal tags. */
  readonly seq: number;
  prev: Entry | undefined;
  next: Entry | undefined;
}

interface Flow {
  readonly name: string;
  /** A doubly linked FIFO: a promoted or aborted key leaves from the middle in O(1). */
  head: Entry | undefined;
  tail: Entry | undefined;
  /**
   * The head's start tag. The keys behind it are implicitly at start + 1, start + 2, ...: a key
   * that leaves (promoted, aborted) gives its slot to the keys behind it.
   */
  start: number;
  /** One past the tag this flow was last served at (F). */
  finish: number;
  /** Position in the heap, -1 while the flow has nothing waiting. */
  index: number;
}

/** One class: its flows, a heap of the flows with keys waiting, and its virtual time. */
class FairClass {
  private readonly flows = new Map<string, Flow>();
  /**
   * Flows with nothing waiting whose finish tag still matters (F > V - CREDIT): such a flow was
   * served in this round or the last, and must not get the idle credit again until V moves.
   * Once F <= V - CREDIT, max(F, V' - CREDIT) = V' - CREDIT for every later V' >= V, which is
   * what a flow never seen gets: its state can go. (Forgetting at F <= V, as first sketched,
   * would hand a flow served at V - 1 the credit twice in one round.)
   */
  private readonly idle = new Set<Flow>();
  private readonly heap: Flow[] = [];
  /** V; undefined until the first dispatch. */
  private virtual: number | undefined;
  private waiting = 0;

  get size(): number {
    return this.waiting;
  }

  get tracked(): number {
    return this.flows.size;
  }

  append(entry: Entry): void {
    const flow = entry.flow;
    entry.prev = flow.tail;
    if (flow.tail) {
      flow.tail.next = entry;
      flow.tail = entry;
    } else {
      flow.head = flow.tail = entry;
      flow.start = Math.max(flow.finish, this.base());
      this.idle.delete(flow);
      this.heapPush(flow);
    }
    this.waiting++;
  }

  /** The flow named `name` in this class, created with the state of a flow never seen. */
  flow(name: string): Flow {
    let flow = this.flows.get(name);
    if (!flow) {
      flow = { name, head: undefined, tail: undefined, start: 0, finish: -Infinity, index: -1 };
      this.flows.set(name, flow);
    }
    return flow;
  }

  pop(): Entry | undefined {
    const flow = this.heap[0];
    if (!flow) return undefined;
    const entry = flow.head!;
    const tag = flow.start;
    flow.finish = tag + 1;
    if (this.virtual === undefined || tag > this.virtual) {
      this.virtual = tag;
      this.sweep();
    }
    // After V moved: the last key out starts the class over.
    this.unlink(entry);
    if (flow.head) flow.start = tag + 1;
    // A flow still waiting has a new head one tag on: it can only move down the heap.
    if (flow.head) this.heapDown(flow.index);
    return entry;
  }

  remove(entry: Entry): void {
    const flow = entry.flow;
    const wasHead = flow.head === entry;
    this.unlink(entry);
    // The next key inherits the head's tag; only its arrival (the tie-break) grew.
    if (wasHead && flow.head) this.heapDown(flow.index);
  }

  clear(): void {
    this.flows.clear();
    this.idle.clear();
    this.heap.length = 0;
    this.waiting = 0;
  }

  private unlink(entry: Entry): void {
    const flow = entry.flow;
    if (entry.prev) entry.prev.next = entry.next;
    else flow.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    else flow.tail = entry.prev;
    entry.prev = entry.next = undefined;
    this.waiting--;
    if (flow.head) return;
    this.heapRemove(flow);
    if (this.waiting === 0) {
      // Nothing waits: start over as a new queue (no V, no F). Service given while nobody else
      // wanted any is owed to nobody. Kept, the F of namespaces busy on an otherwise empty
      // queue, and V with them, stay ahead of the namespaces that arrive next: those start at
      // V - CREDIT, so the busy ones' next keys waited rounds behind them (the bench's
      // fairness row: 2.8 s instead of 0.3 s while V caught up).
      this.flows.clear();
      this.idle.clear();
      this.virtual = undefined;
    } else if (flow.finish <= this.base()) this.flows.delete(flow.name);
    else this.idle.add(flow);
  }

  /** Where a flow with nothing waiting starts at the earliest: V - CREDIT. */
  private base(): number {
    return this.virtual === undefined ? 0 : this.virtual - CREDIT;
  }

  /**
   * Forgets the idle flows V has moved past. An idle flow's F is at most V + 1 when it empties,
   * so it is looked at on at most two moves of V: amortised O(1) per dispatch.
   */
  private sweep(): void {
    const base = this.base();
    for (const flow of this.idle) {
      if (flow.finish > base) continue;
      this.idle.delete(flow);
      this.flows.delete(flow.name);
    }
  }

  private before(a: Flow, b: Flow): boolean {
    return a.start !== b.start ? a.start < b.start : a.head!.seq < b.head!.seq;
  }

  private heapPush(flow: Flow): void {
    flow.index = this.heap.length;
    this.heap.push(flow);
    this.heapUp(flow.index);
  }

  private heapRemove(flow: Flow): void {
    const at = flow.index;
    const last = this.heap.pop()!;
    flow.index = -1;
    if (last === flow) return;
    this.heap[at] = last;
    last.index = at;
    this.heapUp(at);
    this.heapDown(last.index);
  }

  private heapUp(at: number): void {
    const heap = this.heap;
    const flow = heap[at]!;
    while (at > 0) {
      const parentAt = (at - 1) >> 1;
      const parent = heap[parentAt]!;
      if (!this.before(flow, parent)) break;
      heap[at] = parent;
      parent.index = at;
      at = parentAt;
    }
    heap[at] = flow;
    flow.index = at;
  }

  private heapDown(at: number): void {
    const heap = this.heap;
    const flow = heap[at]!;
    for (;;) {
      let childAt = 2 * at + 1;
      if (childAt >= heap.length) break;
      const right = childAt + 1;
      if (right < heap.length && this.before(heap[right]!, heap[childAt]!)) childAt = right;
      const child = heap[childAt]!;
      if (!this.before(child, flow)) break;
      heap[at] = child;
      child.index = at;
      at = childAt;
    }
    heap[at] = flow;
    flow.index = at;
  }
}

/**
 * Waiting keys, each once, in one of two classes: `change` (an input changed) is served before
 * `resync` (the periodic pass over everything), but resync keys get at least one dispatch in
 * RESYNC_SHARE while they wait, so a constant stream of changes cannot starve them.
 */
export class FairQueue {
  private readonly classes: Record<QueueClass, FairClass> = {
    change: new FairClass(),
    resync: new FairClass(),
  };
  private readonly entries = new Map<string, Entry>();
  private seq = 0;
  /** Change dispatches in a row while resync keys were waiting. */
  private changeStreak = 0;

  get size(): number {
    return this.entries.size;
  }

  /** Flows whose state is held, both classes: those waiting and those served in the last round or two. */
  get trackedFlows(): number {
    return this.classes.change.tracked + this.classes.resync.tracked;
  }

  /** Keys waiting in one class. */
  sizeOf(cls: QueueClass): number {
    return this.classes[cls].size;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  classOf(key: string): QueueClass | undefined {
    return this.entries.get(key)?.cls;
  }

  /**
   * Queues `key` at the tail of `flow` in `cls`. A key already waiting keeps its place, except
   * that a resync key added as a change moves to the change class (as a new arrival there):
   * something changed, and it should not wait behind the resync.
   */
  push(key: string, flow: string, cls: QueueClass = 'change'): void {
    const waiting = this.entries.get(key);
    if (waiting) {
      if (waiting.cls === cls || cls === 'resync') return;
      this.delete(key);
    }
    const queue = this.classes[cls];
    const entry: Entry = {
      key,
      flow: queue.flow(flow),
      cls,
      seq: this.seq++,
      prev: undefined,
      next: undefined,
    };
    this.entries.set(key, entry);
    queue.append(entry);
  }

  pop(): Popped | undefined {
    const cls = this.nextClass();
    if (!cls) return undefined;
    const entry = this.classes[cls].pop()!;
    this.entries.delete(entry.key);
    return { key: entry.key, cls };
  }

  delete(key: string): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    this.entries.delete(key);
    this.classes[entry.cls].remove(entry);
    return true;
  }

  /** The waiting keys, in no particular order. */
  keys(): IterableIterator<string> {
    return this.entries.keys();
  }

  clear(): void {
    this.entries.clear();
    this.classes.change.clear();
    this.classes.resync.clear();
    this.changeStreak = 0;
  }

  private nextClass(): QueueClass | undefined {
    const { change, resync } = this.classes;
    if (resync.size > 0 && (change.size === 0 || this.changeStreak >= RESYNC_SHARE - 1)) {
      this.changeStreak = 0;
      return 'resync';
    }
    if (change.size === 0) return undefined;
    this.changeStreak = resync.size > 0 ? this.changeStreak + 1 : 0;
    return 'change';
  }
}

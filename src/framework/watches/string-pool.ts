// Strings that many cached objects repeat, kept once. JSON.parse makes a new string for every
// value it reads, so 3,000 cached instances held 3,000 copies each of their condition reasons
// and messages, of `meta.k8s.io/v1` and `PartialObjectMetadata` (five per instance), of their
// namespace and label values: about 1.4 KiB per instance in a heap snapshot. Pooling the short
// ones as objects enter a cache keeps one copy of each.

/** Short strings by value, one copy each; emptied when full, so unique values cannot pile up. */
export class StringPool {
  private readonly pool = new Map<string, string>();

  /**
   * `capacity`: distinct strings kept before the pool starts over; the frequent ones come back
   * at once. `maxLength`: longer strings are rarely repeated (and not pooled).
   */
  constructor(
    private readonly capacity = 20_000,
    private readonly maxLength = 128,
  ) {}

  get size(): number {
    return this.pool.size;
  }

  /** The pooled copy of `value` (itself, the first time it is seen). */
  string(value: string): string {
    if (value.length > this.maxLength) return value;
    const pooled = this.pool.get(value);
    if (pooled !== undefined) return pooled;
    if (this.pool.size >= this.capacity) this.pool.clear();
    this.pool.set(value, value);
    return value;
  }

  /**
   * Replaces, in place, each short string in a tree of plain objects and arrays (a freshly
   * parsed object that nothing else holds yet) by its pooled copy; returns the tree.
   */
  strings<T>(tree: T): T {
    // A frozen tree (shared by design) is left alone: assigning to it would throw.
    if (tree === null || typeof tree !== 'object' || Object.isFrozen(tree)) return tree;
    if (Array.isArray(tree)) {
      for (let i = 0; i < tree.length; i++) {
        const item: unknown = tree[i];
        if (typeof item === 'string') tree[i] = this.string(item);
        else if (item !== null && typeof item === 'object') this.strings(item);
      }
    } else {
      const record = tree as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        const item = record[key];
        if (typeof item === 'string') record[key] = this.string(item);
        else if (item !== null && typeof item === 'object') this.strings(item);
      }
    }
    return tree;
  }
}

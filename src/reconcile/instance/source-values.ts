// Source values kept between passes (ADR 0027): a ConfigMap, or any object an objectFieldRef
// reads, that many instances read (a namespace's shared settings) is fetched once per version.
// An entry is used only when a synced source watch shows the object at the very
// resourceVersion the entry holds, so a cached value is never staler than the watch that would
// re-enqueue its readers on a change. Secrets are never kept: not as a rule applied to values,
// but by kind, so nothing read from a Secret can enter this cache.
import type { KubeObject } from '../../api/object-meta.ts';
import { groupOf } from '../../engine/objects/resource-scope.ts';

/** What the watches know of an object: its uid and resourceVersion (metadata only). */
export type WatchedSource = (ref: {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}) => { metadata: { uid?: string; resourceVersion?: string } } | undefined;

/** Whether objects of this kind may be kept: every kind but the core group's Secret. */
export function keepable(apiVersion: string, kind: string): boolean {
  return !(groupOf(apiVersion) === '' && kind === 'Secret');
}

interface Entry {
  resourceVersion: string;
  object: KubeObject;
  bytes: number;
}

/**
 * Objects by uid at one resourceVersion each, least recently used dropped first once the total
 * (JSON length) passes `maxBytes`; one object larger than a quarter of it is not kept at all.
 */
export class SourceValues {
  private readonly entries = new Map<string, Entry>();
  /** Reads in flight by uid and resourceVersion: passes that miss together share one GET. */
  private readonly loading = new Map<string, Promise<KubeObject | undefined>>();
  private bytes = 0;

  constructor(private readonly maxBytes = 32 * 1024 * 1024) {}

  get size(): number {
    return this.entries.size;
  }

  /** Kinds of what is kept, for tests that prove no Secret is. */
  kinds(): string[] {
    return [...this.entries.values()].map((e) => `${e.object.apiVersion}/${e.object.kind}`);
  }

  /** The object at `uid` if it is kept at exactly `resourceVersion`. */
  get(uid: string, resourceVersion: string): KubeObject | undefined {
    const entry = this.entries.get(uid);
    if (!entry || entry.resourceVersion !== resourceVersion) return undefined;
    // Most recently used last: re-inserting moves it to the end of the Map's order.
    this.entries.delete(uid);
    this.entries.set(uid, entry);
    return entry.object;
  }

  /**
   * The object kept at `uid` and `resourceVersion`, or what `read` returns (kept for the next
   * reader); readers that miss at once (every instance a ConfigMap change re-enqueued) share
   * one read.
   */
  load(
    uid: string,
    resourceVersion: string,
    read: () => Promise<KubeObject | undefined>,
  ): Promise<KubeObject | undefined> {
    const kept = this.get(uid, resourceVersion);
    if (kept) return Promise.resolve(kept);
    const key = `${uid}@${resourceVersion}`;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = read()
        .then((object) => {
          if (object) this.put(object);
          return object;
        })
        .finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  put(object: KubeObject): void {
    const { uid, resourceVersion } = object.metadata;
    if (!uid || !resourceVersion || !keepable(object.apiVersion, object.kind)) return;
    // Kept already (a relist shows every object again): not copied a second time.
    if (this.entries.get(uid)?.resourceVersion === resourceVersion) return;
    const bytes = JSON.stringify(object).length;
    this.forget(uid);
    if (bytes > this.maxBytes / 4) return;
    // Shared by every pass that reads it: frozen, so a reader that changed it would fail loudly.
    this.entries.set(uid, { resourceVersion, object: deepFreeze(structuredClone(object)), bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }

  private forget(uid: string): void {
    const entry = this.entries.get(uid);
    if (!entry) return;
    this.entries.delete(uid);
    this.bytes -= entry.bytes;
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

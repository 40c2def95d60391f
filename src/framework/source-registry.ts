// One shared registry of watches on the objects instances depend on (their valueFrom sources,
// and under revert/strict the resources they rendered). Watches are keyed by (kind, namespace,
// selector), so their number is bounded by distinct keys, not by dependents; they are reference
// counted and stopped when their last dependent lets go. Informers cache metadata only.
import type { KubeObject } from '../api/object-meta.ts';
import type { Informer } from './informer.ts';

export interface WatchKey {
  apiVersion: string;
  kind: string;
  /** Absent = all namespaces (or a cluster-scoped kind). */
  namespace?: string;
  labelSelector?: string;
}

/** What a dependent cares about within a watch: one object by name, or by a label value. */
export interface Dependency {
  key: WatchKey;
  /** GET mode: only this object; absent = any object of the watch (LIST mode). */
  name?: string;
  /** Only objects carrying this label value. */
  label?: { key: string; value: string };
}

export interface ChangeNotice {
  dependent: string;
  object: KubeObject;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  key: WatchKey;
}

/** Starts an informer for a key; `undefined` when the kind is not served (retried on next set). */
export type WatchStarter = (
  key: WatchKey,
  onChange: (type: ChangeNotice['type'], object: KubeObject) => void,
) => Promise<Informer | undefined>;

interface Entry {
  key: WatchKey;
  informer?: Informer;
  starting?: Promise<void>;
  dependents: Map<string, Dependency[]>;
}

export function watchKeyId(key: WatchKey): string {
  return `${key.apiVersion}|${key.kind}|${key.namespace ?? '*'}|${key.labelSelector ?? ''}`;
}

function matches(dependency: Dependency, object: KubeObject): boolean {
  if (dependency.name !== undefined && dependency.name !== object.metadata.name) return false;
  if (dependency.label && object.metadata.labels?.[dependency.label.key] !== dependency.label.value)
    return false;
  return true;
}

export class SourceRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly byDependent = new Map<string, Set<string>>();

  constructor(
    private readonly start: WatchStarter,
    private readonly notify: (notice: ChangeNotice) => void,
  ) {}

  /** Number of running watch connections. */
  get activeWatches(): number {
    return [...this.entries.values()].filter((e) => e.informer).length;
  }

  /** Keys of the running watches (for metrics and tests). */
  watchKeys(): WatchKey[] {
    return [...this.entries.values()].filter((e) => e.informer).map((e) => e.key);
  }

  /** The watch keys `dependent` holds, across groups. */
  dependenciesOf(dependent: string): WatchKey[] {
    const ids = [...this.byDependent]
      .filter(([tag]) => tag.slice(tag.indexOf('\u0000') + 1) === dependent)
      .flatMap(([, set]) => [...set]);
    return ids.flatMap((id) => {
      const entry = this.entries.get(id);
      return entry ? [entry.key] : [];
    });
  }

  /**
   * Replaces what `dependent` depends on within `group` (e.g. 'sources' or 'drift'); starts
   * missing watches and stops those nobody needs any more.
   */
  async set(dependent: string, dependencies: Dependency[], group = 'sources'): Promise<void> {
    const tag = `${group}\u0000${dependent}`;
    const wanted = new Map<string, Dependency[]>();
    for (const d of dependencies) {
      const id = watchKeyId(d.key);
      wanted.set(id, [...(wanted.get(id) ?? []), d]);
    }
    const previous = this.byDependent.get(tag) ?? new Set<string>();
    for (const id of previous) if (!wanted.has(id)) this.drop(id, tag);
    for (const [id, deps] of wanted) {
      let entry = this.entries.get(id);
      if (!entry) {
        entry = { key: deps[0]!.key, dependents: new Map() };
        this.entries.set(id, entry);
      }
      entry.dependents.set(tag, deps);
    }
    this.byDependent.set(tag, new Set(wanted.keys()));
    await Promise.all([...wanted.keys()].map((id) => this.ensureStarted(id)));
  }

  /** Forgets every dependency of `dependent` in every group. */
  release(dependent: string): void {
    for (const [tag, ids] of [...this.byDependent]) {
      if (tag.slice(tag.indexOf('\u0000') + 1) !== dependent) continue;
      for (const id of ids) this.drop(id, tag);
      this.byDependent.delete(tag);
    }
  }

  private drop(id: string, tag: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.dependents.delete(tag);
    if (entry.dependents.size === 0) {
      entry.informer?.stop();
      this.entries.delete(id);
    }
  }

  private ensureStarted(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry || entry.informer) return Promise.resolve();
    entry.starting ??= this.start(entry.key, (type, object) => this.route(id, type, object))
      .then((informer) => {
        const current = this.entries.get(id);
        if (current === entry) entry.informer = informer;
        else informer?.stop();
      })
      .finally(() => {
        entry.starting = undefined;
      });
    return entry.starting;
  }

  private route(id: string, type: ChangeNotice['type'], object: KubeObject): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    for (const [tag, deps] of entry.dependents) {
      if (!deps.some((d) => matches(d, object))) continue;
      this.notify({
        dependent: tag.slice(tag.indexOf('\u0000') + 1),
        object,
        type,
        key: entry.key,
      });
    }
  }
}

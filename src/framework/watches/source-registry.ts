// One shared registry of watches on the objects dependents depend on (objects they read, and the
// objects they own, found by an owner label the caller names), routed by typed DependencyKeys.
// Watches are keyed by WatchKey, so their number is bounded by distinct keys, not by dependents;
// they are reference counted and stopped when their last dependent lets go. Informers cache
// metadata.
import type { KubeObject } from '../../api/object-meta.ts';
import {
  concerns,
  labelSelectorOf,
  nameRoute,
  routeOf,
  routesOf,
  watchKeyId,
  watchKeyOf,
  type Dependency,
  type DependencyKey,
  type WatchKey,
} from '../dependency-key.ts';
import { objectKey, type EventOrigin, type Informer } from './informer.ts';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface ChangeNotice {
  dependent: string;
  /** The dependency of `dependent` the change concerns. */
  dependency: DependencyKey;
  object: KubeObject;
  type: ChangeType;
  /** `catch-up`: the watch's state differs from what the dependent recorded when it registered. */
  origin: Exclude<EventOrigin, 'initial-list'> | 'catch-up';
}

/**
 * Starts an informer for a key, listing and watching with `labelSelector` (the owner label for a
 * drift watch); `undefined` when the kind is not served (retried on next set).
 */
export type WatchStarter = (
  key: WatchKey,
  /** `previous`: the object before a MODIFIED event, when the watch has it. */
  onEvent: (
    type: ChangeType,
    object: KubeObject,
    origin: EventOrigin,
    previous?: KubeObject,
  ) => void,
  labelSelector: string | undefined,
) => Promise<Informer | undefined>;

interface Entry {
  /** `watchKeyId(key)`: kept once here, and shared by every dependent's record of it. */
  id: string;
  key: WatchKey;
  informer?: Informer;
  starting?: Promise<void>;
  dependents: Map<string, Dependency[]>;
  /** Dependents by routing value (owner uid, object name, `*`): an event reaches only these. */
  routes: Map<string, Members>;
  /** Holds by object name (see `hold`): they keep the watch running as dependents do. */
  holds: Map<string, number>;
  /** A hold waited for this watch's first list in vain: later holds do not wait for it. */
  slow?: boolean;
}

/** A source object a pass is reading: what `hold` keeps watched. */
export interface SourceRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

export interface Hold {
  /** True once the watch has its first list; false if it cannot start or did not list in time. */
  listed: Promise<boolean>;
  release(): void;
}

export class SourceRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly byDependent = new Map<string, Set<string>>();

  /**
   * `ownerLabel`: the label whose value is the uid of an object's owner; drift dependencies match
   * it, and drift watches select on it.
   */
  constructor(
    private readonly start: WatchStarter,
    private readonly notify: (notice: ChangeNotice) => void,
    private readonly ownerLabel: string,
  ) {}

  /** Number of running watch connections. */
  get activeWatches(): number {
    return [...this.entries.values()].filter((e) => e.informer).length;
  }

  /** Keys of the running watches (for metrics and tests). */
  watchKeys(): WatchKey[] {
    return [...this.entries.values()].filter((e) => e.informer).map((e) => e.key);
  }

  /**
   * What a synced source watch holds of one object (its metadata: uid, resourceVersion), or
   * undefined when no synced watch covers its kind and namespace, or the watch has not seen it.
   */
  watchedSource(ref: SourceRef): KubeObject | undefined {
    const entry = this.entries.get(watchKeyId(sourceKey(ref)));
    if (!entry?.informer?.hasSynced()) return undefined;
    return entry.informer.get(ref.namespace ?? '', ref.name);
  }

  /**
   * Whether the source watch of `ref`'s kind and namespace wants `ref`'s object: a dependent
   * reads it by name, or a hold names it. Only such objects' values are worth keeping.
   */
  wants(ref: SourceRef): boolean {
    return this.wantedBy(sourceKey(ref))(ref.name);
  }

  /**
   * `wants` for one watch, its id found once rather than for every object its events bring:
   * what its `received` callback asks.
   */
  wantedBy(key: WatchKey): (name: string) => boolean {
    const id = watchKeyId(key);
    return (name) => {
      const entry = this.entries.get(id);
      return !!entry && (entry.routes.has(nameRoute(name)) || entry.holds.has(name));
    };
  }

  /**
   * Keeps the source watch of `ref`'s kind and namespace running until `release` (starting it
   * when none runs), and has it want `ref`'s object: a pass that reads an object before it
   * depends on it (its first read) waits for the watch's list, which brings the object, instead
   * of reading it itself. A watch that kept one hold waiting `waitMs` in vain (its kind cannot
   * be watched, say) keeps no other waiting until it lists.
   */
  hold(ref: SourceRef, waitMs: number): Hold {
    const key = sourceKey(ref);
    const id = watchKeyId(key);
    let entry = this.entries.get(id);
    if (!entry) {
      entry = this.newEntry(key);
      this.entries.set(id, entry);
    }
    const held = entry;
    held.holds.set(ref.name, (held.holds.get(ref.name) ?? 0) + 1);
    let released = false;
    return {
      listed: this.ensureStarted(id).then(() => listedWithin(held, waitMs)),
      release: () => {
        if (released) return;
        released = true;
        const count = (held.holds.get(ref.name) ?? 1) - 1;
        if (count > 0) held.holds.set(ref.name, count);
        else held.holds.delete(ref.name);
        this.stopIfUnused(id, held);
      },
    };
  }

  /** Whether `dependent` depends on anything now. */
  tracks(dependent: string): boolean {
    return this.byDependent.has(dependent);
  }

  /** What `dependent` depends on now. */
  dependenciesOf(dependent: string): DependencyKey[] {
    return [...(this.byDependent.get(dependent) ?? [])].flatMap(
      (id) =>
        this.entries
          .get(id)
          ?.dependents.get(dependent)
          ?.map((d) => d.key) ?? [],
    );
  }

  /**
   * Replaces what `dependent` depends on; starts missing watches and stops those nobody needs
   * any more. What the dependent recorded as read is checked against a watch's cache once the
   * watch has its first list (at once when it already has): a difference is a change it missed.
   */
  async set(dependent: string, dependencies: Dependency[]): Promise<void> {
    const wanted = new Map<string, Dependency[]>();
    for (const d of dependencies) {
      const id = watchKeyId(watchKeyOf(d.key));
      wanted.set(id, [...(wanted.get(id) ?? []), d]);
    }
    for (const id of this.byDependent.get(dependent) ?? [])
      if (!wanted.has(id)) this.drop(id, dependent);
    for (const [id, deps] of wanted) {
      let entry = this.entries.get(id);
      if (!entry) {
        entry = this.newEntry(watchKeyOf(deps[0]!.key));
        this.entries.set(id, entry);
      }
      unroute(entry, dependent);
      entry.dependents.set(dependent, deps);
      for (const d of deps) {
        const route = routeOf(d.key);
        entry.routes.set(route, withMember(entry.routes.get(route), dependent));
      }
      if (entry.informer?.hasSynced()) this.catchUp(entry, dependent, deps);
    }
    // The entries' own ids, not this call's copies: one string per watch, not per dependent.
    const ids = [...wanted.keys()].map((id) => this.entries.get(id)!.id);
    if (wanted.size > 0) this.byDependent.set(dependent, new Set(ids));
    else this.byDependent.delete(dependent);
    await Promise.all([...wanted.keys()].map((id) => this.ensureStarted(id)));
  }

  /** Forgets every dependency of `dependent`. */
  release(dependent: string): void {
    for (const id of this.byDependent.get(dependent) ?? []) this.drop(id, dependent);
    this.byDependent.delete(dependent);
  }

  private newEntry(key: WatchKey): Entry {
    return { id: watchKeyId(key), key, dependents: new Map(), routes: new Map(), holds: new Map() };
  }

  private drop(id: string, dependent: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    unroute(entry, dependent);
    entry.dependents.delete(dependent);
    this.stopIfUnused(id, entry);
  }

  /** Stops the watch nobody depends on and nothing holds. */
  private stopIfUnused(id: string, entry: Entry): void {
    if (entry.dependents.size > 0 || entry.holds.size > 0 || this.entries.get(id) !== entry) return;
    entry.informer?.stop();
    this.entries.delete(id);
  }

  private ensureStarted(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry || entry.informer) return Promise.resolve();
    entry.starting ??= this.start(
      entry.key,
      (type, object, origin, previous) => this.route(id, type, object, origin, previous),
      labelSelectorOf(entry.key, this.ownerLabel),
    )
      .then((informer) => {
        if (this.entries.get(id) !== entry) {
          informer?.stop();
          return;
        }
        entry.informer = informer;
        void informer?.waitForSync().then(() => {
          if (this.entries.get(id) !== entry) return;
          for (const [dependent, deps] of entry.dependents) this.catchUp(entry, dependent, deps);
        });
      })
      .finally(() => {
        entry.starting = undefined;
      });
    return entry.starting;
  }

  /**
   * An initial list reports what existed before the watch, which its dependents read
   * themselves: it is not routed as a change. `catchUp` reports what differs from their reads.
   */
  private route(
    id: string,
    type: ChangeType,
    object: KubeObject,
    origin: EventOrigin,
    previous?: KubeObject,
  ): void {
    if (origin === 'initial-list') return;
    const entry = this.entries.get(id);
    if (!entry) return;
    // A drift event also reaches the owner the object named before: someone who rewrites the
    // owner label (and the data with it) must not slip the change past the instance that owns it.
    const versions = previous ? [object, previous] : [object];
    const reached = new Set(
      versions.flatMap((version) =>
        routesOf(entry.key.type, version, this.ownerLabel).flatMap((r) =>
          membersOf(entry.routes.get(r)),
        ),
      ),
    );
    for (const dependent of reached) {
      const dependency = entry.dependents
        .get(dependent)
        ?.find((d) => versions.some((version) => concerns(d.key, version, this.ownerLabel)));
      if (dependency) this.notify({ dependent, dependency: dependency.key, object, type, origin });
    }
  }

  /** Reports each object whose cached version differs from what `dependent` recorded reading. */
  private catchUp(entry: Entry, dependent: string, deps: Dependency[]): void {
    const cached = entry.informer?.list() ?? [];
    for (const dependency of deps) {
      if (!dependency.observed) continue;
      const unseen = new Map(Object.entries(dependency.observed));
      for (const object of cached) {
        if (!concerns(dependency.key, object, this.ownerLabel)) continue;
        const key = objectKey(object);
        const read = unseen.get(key);
        unseen.delete(key);
        if (read === object.metadata.resourceVersion) continue;
        const type = read === undefined ? 'ADDED' : 'MODIFIED';
        this.notify({ dependent, dependency: dependency.key, object, type, origin: 'catch-up' });
      }
      for (const key of unseen.keys()) {
        const object = gone(entry.key, key);
        this.notify({
          dependent,
          dependency: dependency.key,
          object,
          type: 'DELETED',
          origin: 'catch-up',
        });
      }
    }
  }
}

/** The source watch that sees `ref`'s object: its kind in its namespace. */
function sourceKey({ apiVersion, kind, namespace }: SourceRef): WatchKey {
  return { type: 'source', apiVersion, kind, namespace };
}

/** Whether the entry's watch has listed, waiting at most `waitMs` (see `SourceRegistry.hold`). */
async function listedWithin(entry: Entry, waitMs: number): Promise<boolean> {
  const informer = entry.informer;
  if (!informer) return false;
  if (informer.hasSynced()) return true;
  if (entry.slow) return false;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), waitMs);
    timer.unref?.();
  });
  const listed = await Promise.race([informer.waitForSync().then(() => true), timedOut]);
  clearTimeout(timer);
  if (!listed) entry.slow = true;
  return listed;
}

/** A stand-in for an object that was read but is no longer there (only its identity is known). */
function gone(key: WatchKey, objectKeyText: string): KubeObject {
  const slash = objectKeyText.indexOf('/');
  const namespace = objectKeyText.slice(0, slash);
  return {
    apiVersion: key.apiVersion,
    kind: key.kind,
    metadata: { name: objectKeyText.slice(slash + 1), ...(namespace ? { namespace } : {}) },
  };
}

function unroute(entry: Entry, dependent: string): void {
  for (const d of entry.dependents.get(dependent) ?? []) {
    const route = routeOf(d.key);
    const rest = withoutMember(entry.routes.get(route), dependent);
    if (rest === undefined) entry.routes.delete(route);
    else entry.routes.set(route, rest);
  }
}

/**
 * The dependents of one route: most routes have one (a drift route is one owner's uid, a
 * Secret is read by one instance), held as the string itself; a Set only for two or more. At
 * 10,000 instances that is some 40,000 one-member Sets (about 140 bytes each) not made.
 */
type Members = string | Set<string>;

function withMember(members: Members | undefined, dependent: string): Members {
  if (members === undefined || members === dependent) return dependent;
  if (typeof members === 'string') return new Set([members, dependent]);
  return members.add(dependent);
}

function withoutMember(members: Members | undefined, dependent: string): Members | undefined {
  if (members === undefined || members === dependent) return undefined;
  if (typeof members === 'string') return members;
  members.delete(dependent);
  if (members.size > 1) return members;
  return members.values().next().value;
}

function membersOf(members: Members | undefined): string[] {
  if (members === undefined) return [];
  return typeof members === 'string' ? [members] : [...members];
}

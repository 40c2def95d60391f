// A resilient list+watch cache of one resource collection. It relists on 410 Gone, re-watches
// from the last resourceVersion after a normal close (no replay storm), backs off on every
// failure (a list, a watch, a streaming list cut short, a watch that closes at once or goes
// silent), says once when it starts failing and once when it recovers, and never lets a
// handler's exception escape. Secondary indexes (e.g. Pods by the node they run on) are kept
// current with the cache.
import type { KubeObject, ObjectHead } from '../../api/object-meta.ts';
import { Backoff, LIST_WATCH_BACKOFF } from '../backoff.ts';
import { FailureStreak } from '../failure-streak.ts';
import { StringPool } from './string-pool.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface ListResult {
  items: KubeObject[];
  resourceVersion: string;
}

export interface WatchHandle {
  abort(): void;
}

/** The parameters of one watch request. */
export interface WatchQuery {
  resourceVersion: string;
  labelSelector?: string;
  timeoutSeconds: number;
  metadataOnly?: boolean;
  /** Start with every existing object as ADDED, then a bookmark marking their end. */
  sendInitialEvents?: boolean;
}

/** What an informer needs from the API server (implemented in src/kube). */
export interface ListWatchSource {
  /**
   * The source can list by watching (KEP-3157 streaming lists: `sendInitialEvents`): the
   * informer then fills its cache from the watch's initial events instead of a LIST.
   */
  readonly streamingLists?: boolean;
  list(path: string, labelSelector?: string, metadataOnly?: boolean): Promise<ListResult>;
  watch(
    path: string,
    query: WatchQuery,
    onEvent: (type: WatchEventType, object: unknown) => void,
    onDone: (error: unknown) => void,
    /** The server accepted the watch (its response began): it is answering again. */
    onOpen?: () => void,
  ): Promise<WatchHandle>;
}

/**
 * Told of an informer's failures, for metrics, by its name (path and label selector): its start,
 * each failure with when the streak began, the streak's end, and its stop (its series can go).
 */
export interface InformerHealth {
  started(informer: string): void;
  failed(informer: string, since: number): void;
  recovered(informer: string): void;
  stopped(informer: string): void;
}

/**
 * Where an event came from. `initial-list`: the first list of a new informer reports what
 * already existed, not a change. `relist`: a list after 410 Gone; only objects whose
 * resourceVersion moved (or that appeared or vanished) are reported, so each is a real change.
 * `watch`: the watch stream.
 */
export type EventOrigin = 'initial-list' | 'relist' | 'watch';

export interface InformerHandlers<T extends ObjectHead = KubeObject> {
  add?(object: T, origin: EventOrigin): void;
  update?(object: T, old: T, origin: EventOrigin): void;
  delete?(object: T, origin: EventOrigin): void;
}

/** The values an object is filed under in a secondary index (none: not in the index). */
export type IndexFunction<T> = (object: T) => string[];

interface Index<T> {
  valuesOf: IndexFunction<T>;
  /** index value → object key → object */
  buckets: Map<string, Map<string, T>>;
}

export interface InformerOptions<T extends ObjectHead = KubeObject> {
  /** Collection path, e.g. `/apis/apps/v1/namespaces/default/deployments`. */
  path: string;
  labelSelector?: string;
  /** Cache PartialObjectMetadata only (enough to notice changes; never holds Secret data). */
  metadataOnly?: boolean;
  /**
   * Shown each object as the API server sent it, before the cache keeps its part. With
   * `metadataOnly`, the watch then asks for whole objects (so this sees them) and only the cache
   * keeps metadata: how the source watches of kept kinds bring values (ADR 0027).
   */
  received?: (object: T) => void;
  /** Server-side watch timeout; a watch silent for longer than this plus slack is restarted. */
  watchTimeoutSeconds?: number;
  log?: (
    level: 'info' | 'warn' | 'error',
    message: string,
    fields?: Record<string, unknown>,
  ) => void;
  health?: InformerHealth;
}

/**
 * A watch that ends sooner than this after it was asked for, having delivered nothing, failed
 * (client-go's "very short watch"): an endpoint that accepts and closes at once must meet the
 * backoff, not a loop.
 */
const SHORT_WATCH_MS = 1_000;

/**
 * After this long without a failure, a new failure starts the backoff afresh (client-go's reset
 * duration): a watch resumed from its resourceVersion after an outage never lists, and must not
 * leave the next outage to start at the cap. Otherwise only a successful list resets it.
 */
const BACKOFF_RESET_MS = 2 * 60_000;

/** The HTTP status of an error (or the code of a watch Status), if it has one. */
function statusOf(error: unknown): number | undefined {
  const e = error as { statusCode?: number; code?: number; status?: number } | null;
  return e?.statusCode ?? e?.code ?? e?.status;
}

/** 410: our resourceVersion expired. */
function isGone(error: unknown): boolean {
  return statusOf(error) === 410;
}

/** How long the server asked us to wait (429 Retry-After), in ms; 0 when it did not say. */
function retryAfterOf(error: unknown): number {
  const wait = (error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof wait === 'number' && wait > 0 ? wait : 0;
}

/** A request the API server refused as malformed (400, 422): not something a retry mends. */
function isRefused(error: unknown): boolean {
  const status = statusOf(error);
  return status === 400 || status === 422;
}

/** The bookmark a streaming list sends once every existing object has been sent. */
function endsInitialEvents(object: ObjectHead): boolean {
  return object.metadata.annotations?.['k8s.io/initial-events-end'] === 'true';
}

/**
 * What a metadata-only cache keeps of an object: identity, version and labels, the fields its
 * readers use (change detection, label matching). Annotations go: besides their size, kubectl's
 * last-applied-configuration annotation of a Secret holds its data.
 */
function identityOf<T extends ObjectHead>(object: T): T {
  const { name, namespace, uid, resourceVersion, labels, deletionTimestamp } = object.metadata;
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: { name, namespace, uid, resourceVersion, labels, deletionTimestamp },
  } as T;
}

/**
 * The object without `metadata.managedFields`, a tree of every field each manager owns (52 of
 * 170 MiB of live heap at 5,000 instances) that nothing reads from a cache: passes compare with
 * live reads. Copied rather than deleted: a `delete` turns V8's object into a slower, larger
 * dictionary (some 800 bytes per cached instance).
 */
function withoutManagedFields<T extends ObjectHead>(object: T): T {
  if (!('managedFields' in object.metadata)) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata as T['metadata'] & {
    managedFields?: unknown;
  };
  return { ...object, metadata };
}

/** Shared by every informer: caches repeat each other's namespaces, kinds and label values. */
const pool = new StringPool();

export function objectKey(object: ObjectHead): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name ?? ''}`;
}

/**
 * `T` is the kind the collection holds: the API server is trusted to send objects of the kind
 * the path names, so the informer is the one place that treats wire objects as `T`.
 */
export class Informer<T extends ObjectHead = KubeObject> {
  private readonly cache = new Map<string, T>();
  private readonly indexes = new Map<string, Index<T>>();
  private readonly handlers: InformerHandlers<T>[] = [];
  private readonly backoff = new Backoff(LIST_WATCH_BACKOFF);
  private readonly streak: FailureStreak;
  private resourceVersion = '';
  private watch: WatchHandle | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private synced = false;
  private readonly syncWaiters: (() => void)[] = [];
  /** Streaming lists failed once (a server without them): LIST from then on. */
  private listing = false;

  constructor(
    private readonly source: ListWatchSource,
    private readonly options: InformerOptions<T>,
  ) {
    this.streak = new FailureStreak('list/watch', options.log, {
      path: options.path,
      ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
    });
  }

  /** How metrics name it: the path, and the label selector if it has one. */
  get name(): string {
    const { path, labelSelector } = this.options;
    return labelSelector ? `${path}?labelSelector=${labelSelector}` : path;
  }

  /** What the API server is asked for: metadata only unless `received` wants whole objects. */
  private get wireMetadataOnly(): boolean {
    return !!this.options.metadataOnly && !this.options.received;
  }

  get path(): string {
    return this.options.path;
  }

  addHandlers(handlers: InformerHandlers<T>): void {
    this.handlers.push(handlers);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Starts listing and watching; resolves once the first list has filled the cache. */
  start(): Promise<void> {
    this.options.health?.started(this.name);
    void this.relist();
    return this.waitForSync();
  }

  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.watchdog);
    clearTimeout(this.retryTimer);
    this.watch?.abort();
    this.watch = undefined;
    this.options.health?.stopped(this.name);
  }

  /** When its current run of failures began (ms since the epoch); undefined while healthy. */
  failingSince(): number | undefined {
    return this.streak.since;
  }

  get(namespace: string, name: string): T | undefined {
    return this.cache.get(`${namespace}/${name}`);
  }

  list(): T[] {
    return [...this.cache.values()];
  }

  /** Adds a secondary index, filing what the cache already holds; kept current from then on. */
  addIndex(name: string, valuesOf: IndexFunction<T>): void {
    if (this.indexes.has(name)) throw new Error(`informer index "${name}" exists already`);
    const index: Index<T> = { valuesOf, buckets: new Map() };
    this.indexes.set(name, index);
    for (const [key, object] of this.cache) file(index, key, object);
  }

  /** The cached objects filed under `value` in the index `name`. */
  byIndex(name: string, value: string): T[] {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`informer index "${name}" does not exist`);
    return [...(index.buckets.get(value)?.values() ?? [])];
  }

  /** Files the object (what the cache keeps of it) and returns what was kept. */
  private store(key: string, received: T): T {
    this.options.received?.(received);
    const object = pool.strings(
      this.options.metadataOnly ? identityOf(received) : withoutManagedFields(received),
    );
    const old = this.cache.get(key);
    for (const index of this.indexes.values()) {
      if (old) unfile(index, key, old);
      file(index, key, object);
    }
    this.cache.set(key, object);
    return object;
  }

  private remove(key: string): void {
    const old = this.cache.get(key);
    if (!old) return;
    for (const index of this.indexes.values()) unfile(index, key, old);
    this.cache.delete(key);
  }

  private log(
    level: 'info' | 'warn' | 'error',
    message: string,
    fields: Record<string, unknown> = {},
  ): void {
    this.options.log?.(level, message, { path: this.options.path, ...fields });
  }

  private notify(kind: keyof InformerHandlers, origin: EventOrigin, object: T, old?: T): void {
    for (const handlers of this.handlers) {
      try {
        if (kind === 'update') handlers.update?.(object, old ?? object, origin);
        else handlers[kind]?.(object, origin);
      } catch (error) {
        this.log('error', 'informer handler threw', { error: String(error) });
      }
    }
  }

  /**
   * One failure of a list or watch: `next` runs after the backoff (or the server's Retry-After,
   * if longer). The first failure of a streak is logged; the retries are not.
   */
  private fail(error: unknown, next: 'relist' | 'watch'): void {
    if (this.stopped) return;
    if (this.streak.since === undefined && this.streak.healthyFor() >= BACKOFF_RESET_MS)
      this.backoff.forget('informer');
    const delay = Math.max(this.backoff.next('informer'), retryAfterOf(error));
    this.streak.failed(error, { status: statusOf(error), delayMs: delay });
    this.options.health?.failed(this.name, this.streak.since ?? Date.now());
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(
      () => void (next === 'relist' ? this.relist() : this.startWatch(false)),
      delay,
    );
    this.retryTimer.unref();
  }

  /**
   * The API server answered: a list that completed (which alone resets the backoff, besides
   * time), or a watch it accepted.
   */
  private answered(listed: boolean): void {
    if (listed) this.backoff.forget('informer');
    if (this.streak.succeeded()) this.options.health?.recovered(this.name);
  }

  /**
   * Fills the cache afresh: from a streaming list when the source offers one (one WATCH that
   * starts with every object, the way client-go lists since Kubernetes 1.32, sparing the API
   * server a LIST), else from a LIST followed by a watch.
   */
  private async relist(): Promise<void> {
    if (this.stopped) return;
    if (this.source.streamingLists && !this.listing) return this.startWatch(true);
    let result: ListResult;
    try {
      result = await this.source.list(
        this.options.path,
        this.options.labelSelector,
        this.wireMetadataOnly,
      );
    } catch (error) {
      this.fail(error, 'relist');
      return;
    }
    this.answered(true);
    this.replace(result);
    await this.startWatch(false, true);
  }

  /**
   * Replaces the cache with a fresh list, emitting the differences as events: everything on the
   * first list (marked `initial-list`); on a relist only what moved, by resourceVersion.
   */
  private replace(result: ListResult): void {
    const origin: EventOrigin = this.synced ? 'relist' : 'initial-list';
    const items = result.items as unknown as T[];
    const fresh = new Map(items.map((o) => [objectKey(o), o]));
    for (const [key, old] of this.cache) {
      if (!fresh.has(key)) {
        this.remove(key);
        this.notify('delete', origin, old);
      }
    }
    for (const [key, received] of fresh) {
      const old = this.cache.get(key);
      const object = this.store(key, received);
      if (!old) this.notify('add', origin, object);
      else if (old.metadata.resourceVersion !== object.metadata.resourceVersion)
        this.notify('update', origin, object, old);
    }
    this.resourceVersion = result.resourceVersion;
    if (!this.synced) {
      this.synced = true;
      this.syncWaiters.splice(0).forEach((resolve) => resolve());
    }
  }

  /** Restarts the watch (as a failure) once it has been silent past its timeout and slack. */
  private armWatchdog(onSilent: () => void): void {
    clearTimeout(this.watchdog);
    const timeout = this.options.watchTimeoutSeconds ?? 300;
    this.watchdog = setTimeout(onSilent, (timeout + 60) * 1000);
    this.watchdog.unref();
  }

  /**
   * Watches from the cached resourceVersion; `initial`: a streaming list, whose ADDED events up
   * to the bookmark marked `k8s.io/initial-events-end` replace the cache as a list would.
   * `afterList`: the version is the one a LIST just gave.
   */
  private async startWatch(initial: boolean, afterList = false): Promise<void> {
    if (this.stopped) return;
    const askedAt = Date.now();
    let needsRelist = false;
    let delivered = false;
    let silent = false;
    let over = false;
    /** An ERROR event other than 410: the server ends the watch after it. */
    let errorEvent: unknown;
    let listed: T[] | undefined = initial ? [] : undefined;
    const arm = (): void =>
      this.armWatchdog(() => {
        silent = true;
        this.watch?.abort();
      });
    const onEvent = (type: WatchEventType, raw: unknown): void => {
      arm();
      if (type === 'ERROR') {
        if (isGone(raw)) needsRelist = true;
        else errorEvent = raw;
        return;
      }
      delivered = true;
      const object = raw as T;
      if (listed) {
        if (type === 'ADDED') listed.push(object);
        else if (type === 'BOOKMARK' && endsInitialEvents(object)) {
          this.answered(true);
          this.replace({
            items: listed,
            resourceVersion: object.metadata.resourceVersion ?? '',
          });
          listed = undefined;
        }
        return;
      }
      if (object?.metadata?.resourceVersion) this.resourceVersion = object.metadata.resourceVersion;
      if (type !== 'BOOKMARK') this.apply(type, object);
    };
    const onDone = (error: unknown): void => {
      if (over) return;
      over = true;
      clearTimeout(this.watchdog);
      this.watch = undefined;
      if (this.stopped) return;
      const step = afterWatch({
        initialPending: !!listed,
        gone: needsRelist,
        error: error ?? errorEvent,
        short: !delivered && Date.now() - askedAt < SHORT_WATCH_MS,
        fromList: initial || afterList,
        silentFor: silent ? (this.options.watchTimeoutSeconds ?? 300) + 60 : undefined,
      });
      if (step.do === 'list-instead') {
        // A server without streaming lists: LIST from now on (once: `listing` stays set).
        this.listing = true;
        this.log('info', 'streaming lists not served; listing instead');
        void this.relist();
      } else if (step.do === 'relist') void this.relist();
      else if (step.do === 'rewatch') void this.startWatch(false);
      else this.fail(step.error, step.then);
    };
    try {
      arm();
      const watch = await this.source.watch(
        this.options.path,
        {
          resourceVersion: initial ? '' : this.resourceVersion,
          labelSelector: this.options.labelSelector,
          metadataOnly: this.wireMetadataOnly,
          timeoutSeconds: this.options.watchTimeoutSeconds ?? 300,
          ...(initial ? { sendInitialEvents: true } : {}),
        },
        onEvent,
        onDone,
        () => this.answered(false),
      );
      // Stopped while the watch was being asked for (the rate limit may hold it back).
      if (this.stopped) watch.abort();
      else if (!over) this.watch = watch;
    } catch (error) {
      clearTimeout(this.watchdog);
      if (initial && isRefused(error)) {
        this.listing = true;
        void this.relist();
        return;
      }
      this.fail(error, initial ? 'relist' : 'watch');
    }
  }

  private apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: T): void {
    const key = objectKey(object);
    const old = this.cache.get(key);
    if (type === 'DELETED') {
      this.remove(key);
      this.notify('delete', 'watch', object);
      return;
    }
    const stored = this.store(key, object);
    if (old) this.notify('update', 'watch', stored, old);
    else this.notify('add', 'watch', stored);
  }
}

/** How one watch ended. */
interface WatchEnd {
  /** A streaming list whose initial events had not all come. */
  initialPending: boolean;
  /** An ERROR event said 410 Gone. */
  gone: boolean;
  /** The stream's error, or an ERROR event's Status; null or undefined after a normal close. */
  error: unknown;
  /** It ended within SHORT_WATCH_MS of being asked for, having delivered nothing. */
  short: boolean;
  /**
   * It began at the resourceVersion a list had just given: a 410 then, at once, would loop
   * (list, watch, 410, list...). A 410 of a watch resumed from an older version is the normal
   * way back after an outage (a restarted API server's watch cache starts anew): relist at once.
   */
  fromList: boolean;
  /** The watchdog ended it after this many seconds of silence. */
  silentFor: number | undefined;
}

type NextStep =
  | { do: 'list-instead' }
  | { do: 'relist' }
  | { do: 'rewatch' }
  | { do: 'fail'; error: unknown; then: 'relist' | 'watch' };

/**
 * What follows the end of a watch. Everything that is not a watch running its course (a normal
 * close after a while, a 410 of a resumed watch) is a failure, which waits for the backoff.
 */
function afterWatch(end: WatchEnd): NextStep {
  const { error, short } = end;
  if (end.silentFor !== undefined)
    return {
      do: 'fail',
      error: new Error(`watch silent for over ${end.silentFor} s`),
      then: 'watch',
    };
  // Ended or refused before its initial events were complete: a server without streaming lists.
  if (end.initialPending && !end.gone && (error == null || isRefused(error)))
    return { do: 'list-instead' };
  if (end.gone || isGone(error))
    return short && end.fromList
      ? {
          do: 'fail',
          error: Object.assign(new Error('410 Gone at once'), { statusCode: 410 }),
          then: 'relist',
        }
      : { do: 'relist' };
  if (end.initialPending) return { do: 'fail', error, then: 'relist' };
  if (error != null && (error as Error).name !== 'AbortError')
    return { do: 'fail', error, then: 'watch' };
  if (short)
    return {
      do: 'fail',
      error: new Error('the watch closed at once, with no event'),
      then: 'watch',
    };
  return { do: 'rewatch' };
}

function file<T>(index: Index<T>, key: string, object: T): void {
  for (const value of new Set(index.valuesOf(object))) {
    let bucket = index.buckets.get(value);
    if (!bucket) index.buckets.set(value, (bucket = new Map<string, T>()));
    bucket.set(key, object);
  }
}

function unfile<T>(index: Index<T>, key: string, object: T): void {
  for (const value of new Set(index.valuesOf(object))) {
    const bucket = index.buckets.get(value);
    bucket?.delete(key);
    if (bucket?.size === 0) index.buckets.delete(value);
  }
}

// A controller: the kind it reconciles, the watches that route changes to it, and a work queue of
// request keys feeding one Reconciler with bounded concurrency (controller-runtime's For, Watches
// and Complete, in miniature). Watches decide which keys to enqueue; the reconciler reads current
// state for each key. Kinds are cached once and shared: a KindCache is the informers of one kind
// with its indexes, and every controller that watches the kind routes from the same informers.
import type { ObjectHead } from '../api/object-meta.ts';
import type { EventOrigin, IndexFunction, Informer } from './watches/informer.ts';
import type { EventHandler, OperatorShell, WatchTarget } from './watches/operator-shell.ts';
import { parseRequestKey, requestKey, type Reconciler, type Request } from './reconciler.ts';
import { WorkQueue, type QueueObserver } from './work-queue.ts';

/** One change an informer saw; `old` is the version it replaced (MODIFIED only). */
export interface Change<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: T;
  old: T | undefined;
  origin: EventOrigin;
}

/** The requests a change asks one controller for (none: the change does not concern it). */
export type Route<T> = (change: Change<T>) => Iterable<Request>;

export function requestOf(object: ObjectHead): Request {
  return { namespace: object.metadata.namespace ?? '', name: object.metadata.name ?? '' };
}

export interface KindOptions<T> {
  group: string;
  version: string;
  plural: string;
  /**
   * Watched by one informer per namespace the operator watches (or one across all when it
   * watches all); false: by one cluster-wide informer.
   */
  namespaced: boolean;
  /** Only the objects with these labels (a label selector). */
  labelSelector?: string;
  /** Secondary indexes by name, kept current with the cache (see Informer.addIndex). */
  indexes?: Record<string, IndexFunction<T>>;
}

/** The informers of one kind, read as one cache, and the handlers of its changes. */
export class KindCache<T extends ObjectHead> {
  private readonly informers: Informer<T>[] = [];
  private readonly handlers: ((change: Change<T>) => void)[] = [];

  constructor(private readonly options: KindOptions<T>) {}

  /** Calls `handler` with every change; handlers are added before `watch`. */
  onChange(handler: (change: Change<T>) => void): void {
    this.handlers.push(handler);
  }

  /** Starts the informers through the shell (part of cache readiness). */
  watch(shell: Pick<OperatorShell, 'watch'>, namespaces: string[] | undefined): void {
    this.start(namespaces, (target, handler) => shell.watch<T>(target, handler));
  }

  /**
   * Starts informers that are not part of cache readiness, for a kind that comes and goes (one a
   * Template publishes); returns what stops them.
   */
  watchDynamic(
    shell: Pick<OperatorShell, 'watchDynamic'>,
    namespaces: string[] | undefined,
  ): () => void {
    const started = this.start(namespaces, (target, handler) =>
      shell.watchDynamic<T>(target, handler),
    );
    return () => {
      for (const informer of started) informer.stop();
      this.informers.length = 0;
    };
  }

  private start(
    namespaces: string[] | undefined,
    open: (target: WatchTarget, handler: EventHandler<T>) => Informer<T>,
  ): Informer<T>[] {
    const { group, version, plural, namespaced, labelSelector, indexes = {} } = this.options;
    const started: Informer<T>[] = [];
    for (const namespace of namespaced ? (namespaces ?? [undefined]) : [undefined]) {
      const target = { group, version, plural, namespace, labelSelector };
      const informer = open(target, (event, old, origin) => {
        const change: Change<T> = { type: event.type, object: event.object, old, origin };
        for (const handler of this.handlers) handler(change);
      });
      for (const [name, valuesOf] of Object.entries(indexes)) informer.addIndex(name, valuesOf);
      this.informers.push(informer);
      started.push(informer);
    }
    return started;
  }

  /** The object from whichever informer (one per watched namespace) holds it. */
  get(namespace: string, name: string): T | undefined {
    for (const informer of this.informers) {
      const object = informer.get(namespace, name);
      if (object) return object;
    }
    return undefined;
  }

  list(): T[] {
    return this.informers.flatMap((i) => i.list());
  }

  /** The cached objects filed under `value` in the index `name`. */
  byIndex(name: string, value: string): T[] {
    return this.informers.flatMap((i) => i.byIndex(name, value));
  }
}

/** A kind whose changes concern a controller, with the route from its changes to requests. */
export interface Watch {
  /** Sends the requests the kind's changes ask for to `enqueue`. */
  connect(enqueue: (request: Request) => void): void;
}

/** Pairs a kind with its route (typed by the kind, so a route reads what it is routed from). */
export function watch<T extends ObjectHead>(kind: KindCache<T>, route: Route<T>): Watch {
  return {
    connect: (enqueue) =>
      kind.onChange((change) => {
        for (const request of route(change)) enqueue(request);
      }),
  };
}

export interface ControllerOptions {
  name: string;
  /** The kind it reconciles, a request per object: what a resync or a hand-off enqueues. */
  kind: Pick<KindCache<ObjectHead>, 'list'>;
  /** The request of one of its objects, when it is not its namespace and name. */
  requestOf?: (object: ObjectHead) => Request;
  /** Every change that concerns it, those of its own kind included. */
  watches: readonly Watch[];
  reconciler: Reconciler;
  concurrency: number;
  observer?: QueueObserver;
  /** Which keys this replica may process (see WorkQueueOptions.admit). */
  admit?: (key: string) => boolean;
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  private readonly kind: Pick<KindCache<ObjectHead>, 'list'>;
  private readonly requestOf: (object: ObjectHead) => Request;

  constructor(options: ControllerOptions) {
    this.name = options.name;
    this.kind = options.kind;
    this.requestOf = options.requestOf ?? requestOf;
    this.queue = new WorkQueue(
      (key, signal) => options.reconciler.reconcile(parseRequestKey(key), signal),
      { concurrency: options.concurrency, observer: options.observer, admit: options.admit },
    );
    // Changes seen before start() wait in the queue: a replica that does not reconcile yet keeps
    // its queue as warm as its caches.
    for (const watch of options.watches) this.connect(watch);
  }

  /** Routes a watch's requests here: one of the controller's own, or one added later. */
  connect(watch: Watch): void {
    watch.connect((request) => this.enqueue(request));
  }

  /** A request per object of its kind the cache holds. */
  requests(): Request[] {
    return this.kind.list().map(this.requestOf);
  }

  enqueue(request: Request): void {
    this.queue.add(requestKey(request));
  }

  enqueueAfter(request: Request, ms: number): void {
    this.queue.addAfter(requestKey(request), ms);
  }

  /**
   * Enqueues every object of its kind (the periodic resync), behind the changes: a resync finds
   * drift nothing reported, which can wait for the passes an input change asked for.
   */
  resync(): void {
    for (const request of this.requests()) this.queue.add(requestKey(request), 'resync');
  }

  start(): void {
    this.queue.start();
  }

  shutdown(graceMs: number): Promise<void> {
    return this.queue.shutdown(graceMs);
  }

  /** Forgets the matching keys and aborts those in flight; resolves once they have stopped. */
  abortWhere(matches: (key: string) => boolean): Promise<void> {
    return this.queue.abortWhere(matches);
  }

  /** Stops taking work and aborts every reconcile in flight at once. */
  abortNow(): Promise<void> {
    return this.queue.abortNow();
  }
}

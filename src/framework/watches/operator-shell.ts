// The adapter over @dot-i/k8s-operator (ADR 0005). dot-i's Operator is kept as the lifecycle
// shell (start → init) and its event model (ResourceEvent with ResourceMeta); its watch, which
// exits the process on any error and replays everything on every restart, is replaced by our
// Informer. dot-i's write helpers (blind finalizer merge patches) are never used.
import dotI, { ResourceEventType, ResourceMetaImpl, type ResourceEvent } from '@dot-i/k8s-operator';
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject, ObjectHead } from '../../api/object-meta.ts';
import {
  Informer,
  type EventOrigin,
  type InformerHealth,
  type ListWatchSource,
} from './informer.ts';

// dot-i is CommonJS with `exports.default = Operator`: Node's ESM loader hands us the exports
// object (class at `.default`); bundlers that honour `__esModule` hand us the class itself.
const Operator = dotI.default ?? (dotI as unknown as typeof dotI.default);

/** A dot-i ResourceEvent whose object has the watched kind's type. */
export type TypedResourceEvent<T> = Omit<ResourceEvent, 'object'> & { object: T };

/**
 * A dot-i ResourceEvent, plus the previous version of the object on MODIFIED (the informer has
 * it) and where the event came from (an initial list reports existing objects, not changes).
 */
export type EventHandler<T extends ObjectHead = KubeObject> = (
  event: TypedResourceEvent<T>,
  old: T | undefined,
  origin: EventOrigin,
) => void;

/** What the shell needs of its informers, whatever kind they hold. */
type RunningInformer = Pick<Informer, 'waitForSync' | 'hasSynced' | 'stop'>;

export interface WatchTarget<T extends ObjectHead = KubeObject> {
  group: string;
  version: string;
  plural: string;
  namespace?: string;
  labelSelector?: string;
  /** Cache metadata only (PartialObjectMetadata). */
  metadataOnly?: boolean;
  /** Shown each object as received, before the cache keeps its part (see InformerOptions). */
  received?: (object: T) => void;
}

export type ShellLog = (
  level: 'info' | 'warn' | 'error',
  message: string,
  fields?: Record<string, unknown>,
) => void;

function collectionPath(target: Omit<WatchTarget, 'received'>): string {
  const base = target.group ? `/apis/${target.group}/${target.version}` : `/api/${target.version}`;
  return `${base}${target.namespace ? `/namespaces/${encodeURIComponent(target.namespace)}` : ''}/${target.plural}`;
}

export class OperatorShell extends Operator {
  private readonly informers: RunningInformer[] = [];
  private readonly dynamic = new Set<RunningInformer>();

  constructor(
    kubeConfig: KubeConfig,
    private readonly source: ListWatchSource,
    private readonly onInit: (shell: OperatorShell) => Promise<void>,
    private readonly logFn: ShellLog,
    private readonly health?: InformerHealth,
  ) {
    super({
      debug: () => undefined,
      info: (m: string) => logFn('info', m),
      warn: (m: string) => logFn('warn', m),
      error: (m: string) => logFn('error', m),
    });
    this.kubeConfig = kubeConfig;
  }

  protected async init(): Promise<void> {
    await this.onInit(this);
  }

  /** dot-i's watch entry point, served by a resilient Informer. */
  protected override watchResource(
    group: string,
    version: string,
    plural: string,
    onEvent: (event: ResourceEvent) => Promise<void>,
    namespace?: string,
  ): Promise<void> {
    this.watch(
      { group, version, plural, namespace },
      (event) => void onEvent({ ...event, object: event.object as never }),
    );
    return Promise.resolve();
  }

  /**
   * Starts an informer for `target` (of objects of type `T`) and returns it; events arrive as
   * dot-i ResourceEvents. Part of cache readiness.
   */
  watch<T extends ObjectHead = KubeObject>(
    target: WatchTarget<T>,
    handler: EventHandler<T>,
  ): Informer<T> {
    const informer = this.createInformer(target, handler);
    this.informers.push(informer);
    void informer.start();
    return informer;
  }

  /**
   * Starts an informer that comes and goes with its dependents (source and drift watches): not
   * part of cache readiness; stopped by its owner, or at shutdown.
   */
  watchDynamic<T extends ObjectHead = KubeObject>(
    target: WatchTarget<T>,
    handler: EventHandler<T>,
  ): Informer<T> {
    const informer = this.createInformer(target, handler);
    this.dynamic.add(informer);
    const stop = informer.stop.bind(informer);
    informer.stop = () => {
      this.dynamic.delete(informer);
      stop();
    };
    void informer.start();
    return informer;
  }

  private createInformer<T extends ObjectHead>(
    target: WatchTarget<T>,
    handler: EventHandler<T>,
  ): Informer<T> {
    const informer = new Informer<T>(this.source, {
      path: collectionPath(target),
      labelSelector: target.labelSelector,
      metadataOnly: target.metadataOnly,
      received: target.received,
      log: this.logFn,
      health: this.health,
    });
    const emit = (type: ResourceEventType, origin: EventOrigin, object: T, old?: T): void => {
      const meta = ResourceMetaImpl.createWithPlural(target.plural, object as never);
      handler({ type, object, meta }, old, origin);
    };
    informer.addHandlers({
      add: (o, origin) => emit(ResourceEventType.Added, origin, o),
      update: (o, old, origin) => emit(ResourceEventType.Modified, origin, o, old),
      delete: (o, origin) => emit(ResourceEventType.Deleted, origin, o),
    });
    return informer;
  }

  waitForSync(): Promise<void> {
    return Promise.all(this.informers.map((i) => i.waitForSync())).then(() => undefined);
  }

  hasSynced(): boolean {
    return this.informers.every((i) => i.hasSynced());
  }

  /** Stops every informer. dot-i's own stop() is never called: it exits the process. */
  stopWatches(): void {
    for (const informer of [...this.informers, ...this.dynamic]) informer.stop();
  }
}

// The benchmark's own eyes on TemplateInstances, in one namespace or in all: a watch that keeps
// each instance's phase and tells the time at which a wanted phase first appeared (the same idea
// as configmap-watch.ts, for `status.phase`).
import { API_VERSION, TEMPLATE_INSTANCE_PLURAL } from '../src/api/well-known.ts';
import type { KubeHttp } from '../src/kube/http.ts';

interface Item {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  status?: { phase?: string };
  /** On an ERROR event the object is a Status. */
  code?: number;
}

interface Wait {
  /** `namespace/name`, or undefined for a count over many instances. */
  key?: string;
  accept: (key: string, phase: string | undefined) => boolean;
  resolve: (at: number) => void;
  reject: (error: Error) => void;
}

const keyOf = (item: Item): string | undefined =>
  item.metadata?.name ? `${item.metadata.namespace ?? ''}/${item.metadata.name}` : undefined;

/** Restarts in a row without an event in between before the watch gives up. */
const MAX_RESTARTS = 20;

export class InstanceWatch {
  private readonly phases = new Map<string, string | undefined>();
  /** Instances seen Ready at least once (a later phase does not take them out). */
  private readonly everReady = new Set<string>();
  /** When each instance was first seen Ready (performance.now()): the wave's timeline. */
  readonly firstReady = new Map<string, number>();
  /** When each event came (performance.now()): tells a silent stream from a stalled operator. */
  readonly eventTimes: number[] = [];
  private waits: Wait[] = [];
  private stream: { abort(): void } | undefined;
  private closed = false;
  private ended: Error | undefined;
  private resourceVersion = '';
  /** The server said the resourceVersion is too old (410): list again. */
  private gone = false;
  private failedInARow = 0;
  /**
   * Times the server closed the watch and it was opened again (from the last resourceVersion,
   * or with a fresh list after a 410). The API server drops a watcher that falls behind a burst.
   */
  restarts = 0;
  private readonly path: string;

  private constructor(
    private readonly http: KubeHttp,
    private readonly namespace: string | undefined,
  ) {
    const scope = namespace ? `/namespaces/${namespace}` : '';
    this.path = `/apis/${API_VERSION}${scope}/${TEMPLATE_INSTANCE_PLURAL}`;
  }

  /** Watches the instances of `namespace`, or of every namespace when it is undefined. */
  static async open(http: KubeHttp, namespace?: string): Promise<InstanceWatch> {
    const watch = new InstanceWatch(http, namespace);
    await watch.list();
    await watch.watch();
    return watch;
  }

  private async list(): Promise<void> {
    const list = await this.http.request<{ metadata: { resourceVersion: string }; items: Item[] }>({
      method: 'GET',
      path: this.path,
    });
    for (const item of list.items) this.record(item, performance.now());
    this.resourceVersion = list.metadata.resourceVersion;
    this.gone = false;
  }

  private async watch(): Promise<void> {
    this.stream = await this.http.stream(
      { path: this.path, query: { watch: '1', resourceVersion: this.resourceVersion } },
      (line) => this.onEvent(line as { type?: string; object?: Item }),
      (error) => void this.onEnd(error),
    );
  }

  private onEvent(event: { type?: string; object?: Item }): void {
    if (event.type === 'ERROR') {
      if (event.object?.code === 410) this.gone = true;
      return;
    }
    this.failedInARow = 0;
    const rv = event.object?.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    this.eventTimes.push(performance.now());
    this.record(event.object ?? {}, performance.now());
  }

  /** Opens the watch again where it stopped; gives up (failing every wait) after many tries. */
  private async onEnd(error: unknown): Promise<void> {
    if (this.closed) return;
    if (this.failedInARow++ < MAX_RESTARTS) {
      this.restarts += 1;
      try {
        if (this.gone || (error as { statusCode?: number } | null)?.statusCode === 410)
          await this.list();
        if (this.closed) return;
        await this.watch();
        return;
      } catch (retryError) {
        await new Promise((r) => setTimeout(r, 200));
        return this.onEnd(retryError);
      }
    }
    this.ended =
      error instanceof Error
        ? error
        : new Error(`the TemplateInstance watch of ${this.scope()} ended`);
    for (const w of this.waits) w.reject(this.ended);
    this.waits = [];
  }

  private scope(): string {
    return this.namespace ?? 'all namespaces';
  }

  private record(item: Item, at: number): void {
    const key = keyOf(item);
    if (!key) return;
    const phase = item.status?.phase;
    this.phases.set(key, phase);
    if (phase === 'Ready') this.everReady.add(key);
    if (phase === 'Ready' && !this.firstReady.has(key)) this.firstReady.set(key, at);
    this.waits = this.waits.filter((w) => {
      if ((w.key !== undefined && w.key !== key) || !w.accept(key, phase)) return true;
      w.resolve(at);
      return false;
    });
  }

  private wait(
    key: string | undefined,
    accept: Wait['accept'],
    what: string,
    timeoutMs: number,
  ): Promise<number> {
    if (this.ended) return Promise.reject(this.ended);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waits = this.waits.filter((w) => w !== wait);
        reject(new Error(`${what} not seen within ${timeoutMs} ms (${this.scope()})`));
      }, timeoutMs);
      const wait: Wait = {
        key,
        accept,
        resolve: (at) => {
          clearTimeout(timer);
          resolve(at);
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.waits.push(wait);
    });
  }

  /**
   * Resolves with the performance.now() of the event that showed instance `namespace/name` in
   * `phase` (now, if it already is). Register it before the write that should lead there.
   */
  until(namespace: string, name: string, phase = 'Ready', timeoutMs = 120_000): Promise<number> {
    const key = `${namespace}/${name}`;
    if (this.phases.get(key) === phase) return Promise.resolve(performance.now());
    return this.wait(key, (_, p) => p === phase, `${key} ${phase}`, timeoutMs);
  }

  /**
   * Resolves with the performance.now() of the event by which `count` instances whose namespace
   * passes `select` had each been seen Ready at least once.
   */
  allReady(
    select: (namespace: string) => boolean,
    count: number,
    timeoutMs = 1_800_000,
  ): Promise<number> {
    const inScope = (key: string): boolean => select(key.slice(0, key.indexOf('/')));
    const counted = new Set([...this.everReady].filter(inScope));
    if (counted.size >= count) return Promise.resolve(performance.now());
    return this.wait(
      undefined,
      (key, phase) => {
        if (phase === 'Ready' && inScope(key)) counted.add(key);
        return counted.size >= count;
      },
      `${count} instances Ready`,
      timeoutMs,
    );
  }

  close(): void {
    this.closed = true;
    this.stream?.abort();
  }
}

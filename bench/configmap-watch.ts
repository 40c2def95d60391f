// The benchmark's own eyes on the rendered ConfigMaps of one namespace: a watch that keeps each
// ConfigMap's data and tells the time at which a wanted value first appeared.
import type { KubeHttp } from '../src/kube/http.ts';

type Data = Record<string, string>;
interface Wait {
  name: string;
  accept: (data: Data) => boolean;
  resolve: (at: number) => void;
}

export class ConfigMapWatch {
  private readonly data = new Map<string, Data>();
  private waits: Wait[] = [];
  private stream: { abort(): void } | undefined;

  private constructor(
    private readonly http: KubeHttp,
    private readonly namespace: string,
  ) {}

  static async open(http: KubeHttp, namespace: string): Promise<ConfigMapWatch> {
    const watch = new ConfigMapWatch(http, namespace);
    await watch.start();
    return watch;
  }

  private async start(): Promise<void> {
    const path = `/api/v1/namespaces/${this.namespace}/configmaps`;
    const list = await this.http.request<{
      metadata: { resourceVersion: string };
      items: { metadata: { name: string }; data?: Data }[];
    }>({ method: 'GET', path });
    for (const item of list.items) this.data.set(item.metadata.name, item.data ?? {});
    this.stream = await this.http.stream(
      { path, query: { watch: '1', resourceVersion: list.metadata.resourceVersion } },
      (line) => this.onEvent(line as { object?: { metadata?: { name?: string }; data?: Data } }),
      () => undefined,
    );
  }

  private onEvent(event: { object?: { metadata?: { name?: string }; data?: Data } }): void {
    const name = event.object?.metadata?.name;
    if (!name) return;
    const data = event.object?.data ?? {};
    this.data.set(name, data);
    const at = performance.now();
    this.waits = this.waits.filter((w) => {
      if (w.name !== name || !w.accept(data)) return true;
      w.resolve(at);
      return false;
    });
  }

  /** Resolves with the performance.now() at which ConfigMap `name` satisfied `accept`. */
  until(name: string, accept: (data: Data) => boolean, timeoutMs = 120_000): Promise<number> {
    const current = this.data.get(name);
    if (current && accept(current)) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`ConfigMap ${this.namespace}/${name} never showed the value`)),
        timeoutMs,
      );
      this.waits.push({
        name,
        accept,
        resolve: (at) => {
          clearTimeout(timer);
          resolve(at);
        },
      });
    });
  }

  close(): void {
    this.stream?.abort();
  }
}

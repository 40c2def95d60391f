// A discovery cache: (apiVersion, kind) → resource plural and scope. A kind missing from a cached
// group version triggers a refresh (at most every few seconds), so a CRD installed later is seen.
// A read that failed (not a 404: the server did not answer) is not sent again before its backoff.
import type { KindScope } from '../engine/sources/source-port.ts';
import { RetryGate } from '../framework/retry-gate.ts';
import { isClusterError } from '../reconcile/cluster-port.ts';
import type { KubeHttp } from './http.ts';

export interface ResourceInfo {
  plural: string;
  scope: KindScope;
}

interface GroupVersionEntry {
  fetchedAt: number;
  /** undefined = the group version is not served. */
  kinds?: Map<string, ResourceInfo>;
}

interface ApiGroup {
  versions?: { version: string }[];
  preferredVersion?: { version: string };
}

interface ApiResourceList {
  resources?: { name: string; kind: string; namespaced: boolean }[];
}

export class Discovery {
  private readonly entries = new Map<string, GroupVersionEntry>();
  private readonly inflight = new Map<string, Promise<GroupVersionEntry>>();
  private readonly gate: RetryGate;

  constructor(
    private readonly http: KubeHttp,
    private readonly refreshAfterMs = 5_000,
    private readonly now: () => number = Date.now,
  ) {
    this.gate = new RetryGate(undefined, now);
  }

  /** A GET of a discovery path, held back after a failure other than 404 (see RetryGate). */
  private get<T>(path: string): Promise<T> {
    return this.gate.run(
      path,
      () => this.http.request<T>({ method: 'GET', path }),
      (error) => !isClusterError(error, 'NotFound'),
    );
  }

  /** `undefined` when the API server does not serve the kind. */
  async resourceFor(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    let entry = this.entries.get(apiVersion);
    const stale = !entry || this.now() - entry.fetchedAt > this.refreshAfterMs;
    if (!entry || (!entry.kinds?.has(kind) && stale)) entry = await this.fetch(apiVersion);
    return entry.kinds?.get(kind);
  }

  /**
   * A version the API server serves `kind` of `group` at, the group's preferred version first;
   * undefined when none does (or the group is not served).
   */
  async servedVersion(group: string, kind: string): Promise<string | undefined> {
    let versions = ['v1'];
    if (group !== '') {
      try {
        const info = await this.get<ApiGroup>(`/apis/${group}`);
        const preferred = info.preferredVersion?.version;
        const all = (info.versions ?? []).map((v) => v.version);
        versions = preferred ? [preferred, ...all.filter((v) => v !== preferred)] : all;
      } catch (error) {
        if (isClusterError(error, 'NotFound')) return undefined;
        throw error;
      }
    }
    for (const version of versions) {
      const apiVersion = group ? `${group}/${version}` : version;
      if (await this.resourceFor(apiVersion, kind)) return version;
    }
    return undefined;
  }

  /**
   * Asks the API server again, whatever the cache holds: the cache never drops a kind it once
   * saw, so a caller that got a 404 where the kind should be served (its CRD was deleted) uses
   * this to tell a missing object apart from a kind that is not served.
   */
  async resourceNow(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    return (await this.fetch(apiVersion)).kinds?.get(kind);
  }

  private fetch(apiVersion: string): Promise<GroupVersionEntry> {
    const running = this.inflight.get(apiVersion);
    if (running) return running;
    const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const promise = this.get<ApiResourceList>(path)
      .then(
        (list) => {
          const kinds = new Map<string, ResourceInfo>();
          for (const r of list.resources ?? []) {
            if (r.name.includes('/')) continue; // subresources such as deployments/status
            kinds.set(r.kind, { plural: r.name, scope: r.namespaced ? 'Namespaced' : 'Cluster' });
          }
          return { fetchedAt: this.now(), kinds };
        },
        (error: unknown) => {
          if (isClusterError(error, 'NotFound')) return { fetchedAt: this.now() };
          throw error;
        },
      )
      .then((entry: GroupVersionEntry) => {
        this.entries.set(apiVersion, entry);
        return entry;
      })
      .finally(() => this.inflight.delete(apiVersion));
    this.inflight.set(apiVersion, promise);
    return promise;
  }
}

/** REST path of a collection or object. */
export function resourcePath(
  apiVersion: string,
  plural: string,
  namespace?: string,
  name?: string,
): string {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const ns = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const item = name ? `/${encodeURIComponent(name)}` : '';
  return `${base}${ns}/${plural}${item}`;
}

// Every resource the API server serves, with the names kubectl resolves it by: what a published
// kind's names are checked against (ADR 0032). One aggregated discovery request each for /api and
// /apis (Kubernetes 1.30 and later), else the classic documents of each preferred group version.
// Kept a few seconds, so a burst of Template passes asks once; a path that failed is not asked
// again before its backoff, as with every other discovery read.
import type { ServedResource } from '../engine/typed-api/api-shadowing.ts';
import { RetryGate } from '../framework/retry-gate.ts';
import { isClusterError } from '../reconcile/cluster-port.ts';
import type { KubeHttp, RequestSpec } from './http.ts';

const AGGREGATED =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

interface DiscoveredResource {
  resource: string;
  responseKind?: { kind?: string };
  singularResource?: string;
  shortNames?: string[];
}

interface AggregatedList {
  kind?: string;
  items?: {
    metadata?: { name?: string };
    versions?: { version: string; resources?: DiscoveredResource[] }[];
  }[];
}

interface ClassicGroups {
  /** /api answers APIVersions. */
  versions?: string[];
  /** /apis answers APIGroupList. */
  groups?: { name: string; preferredVersion?: { groupVersion: string } }[];
}

interface ResourceList {
  resources?: { name: string; kind: string; singularName?: string; shortNames?: string[] }[];
}

export class ServedResources {
  private cached: { at: number; resources: Promise<readonly ServedResource[]> } | undefined;
  private readonly gate: RetryGate;

  constructor(
    private readonly http: KubeHttp,
    private readonly keepMs = 5_000,
    private readonly now: () => number = Date.now,
  ) {
    this.gate = new RetryGate(undefined, now);
  }

  /** A GET of a discovery path, held back after a failure as Discovery's are (see RetryGate). */
  private get<T>(spec: Omit<RequestSpec, 'method'>): Promise<T> {
    return this.gate.run(
      spec.path,
      () => this.http.request<T>({ method: 'GET', ...spec }),
      (error) => !isClusterError(error, 'NotFound'),
    );
  }

  /** The served resources, read again once those kept are `keepMs` old (or failed). */
  list(): Promise<readonly ServedResource[]> {
    const cached = this.cached;
    if (cached && this.now() - cached.at < this.keepMs) return cached.resources;
    const resources = this.read();
    this.cached = { at: this.now(), resources };
    resources.catch(() => {
      if (this.cached?.resources === resources) this.cached = undefined;
    });
    return resources;
  }

  private async read(): Promise<readonly ServedResource[]> {
    const [core, groups] = await Promise.all(
      ['/api', '/apis'].map((path) =>
        this.get<AggregatedList & ClassicGroups>({ path, accept: AGGREGATED }),
      ),
    );
    if (core?.kind === 'APIGroupDiscoveryList' && groups?.kind === 'APIGroupDiscoveryList')
      return [...fromAggregated(core, true), ...fromAggregated(groups, false)];
    return this.readClassic(core ?? {}, groups ?? {});
  }

  /** An API server without aggregated discovery: one request per preferred group version. */
  private async readClassic(
    core: ClassicGroups,
    groups: ClassicGroups,
  ): Promise<readonly ServedResource[]> {
    const groupVersions = [
      ...(core.versions ?? []).slice(0, 1).map((v) => ({ group: '', path: `/api/${v}` })),
      ...(groups.groups ?? []).flatMap((g) =>
        g.preferredVersion
          ? [{ group: g.name, path: `/apis/${g.preferredVersion.groupVersion}` }]
          : [],
      ),
    ];
    const lists = await Promise.all(
      groupVersions.map(async ({ group, path }) => ({
        group,
        list: await this.get<ResourceList>({ path }),
      })),
    );
    return lists.flatMap(({ group, list }) =>
      (list.resources ?? [])
        .filter((r) => !r.name.includes('/'))
        .map((r) => ({
          group,
          kind: r.kind,
          plural: r.name,
          ...(r.singularName ? { singular: r.singularName } : {}),
          shortNames: r.shortNames ?? [],
        })),
    );
  }
}

function fromAggregated(list: AggregatedList, core: boolean): ServedResource[] {
  return (list.items ?? []).flatMap((item) => {
    const group = core ? '' : (item.metadata?.name ?? '');
    return (item.versions ?? []).flatMap((version) =>
      (version.resources ?? []).map((r) => ({
        group,
        kind: r.responseKind?.kind ?? '',
        plural: r.resource,
        ...(r.singularResource ? { singular: r.singularResource } : {}),
        shortNames: r.shortNames ?? [],
      })),
    );
  });
}

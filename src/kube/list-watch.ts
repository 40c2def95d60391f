// The informer's view of the API server: paginated LISTs and watch streams over raw JSON, with
// bookmarks, a server-side timeout, and optionally metadata only (PartialObjectMetadata).
import type { KubeObject } from '../api/object-meta.ts';
import type {
  ListResult,
  ListWatchSource,
  WatchEventType,
  WatchHandle,
  WatchQuery,
} from '../framework/watches/informer.ts';
import type { KubeHttp, RequestSpec } from './http.ts';

interface ListBody {
  items?: KubeObject[];
  metadata?: { resourceVersion?: string; continue?: string };
  kind?: string;
  apiVersion?: string;
}

/** How a list is asked for, besides its path. */
export type ListOptions = Pick<RequestSpec, 'accept' | 'signal' | 'impersonate'> & {
  labelSelector?: string;
};

/** Lists every page of a collection; items get their kind and apiVersion back. */
export async function listAll(
  http: KubeHttp,
  path: string,
  options: ListOptions = {},
): Promise<{ items: KubeObject[]; resourceVersion: string }> {
  const { labelSelector, ...request } = options;
  const items: KubeObject[] = [];
  let token: string | undefined;
  let resourceVersion = '';
  do {
    const page = await http.request<ListBody>({
      method: 'GET',
      path,
      query: { limit: '500', continue: token, labelSelector },
      ...request,
    });
    const kind = page.kind?.replace(/List$/, '') ?? '';
    for (const item of page.items ?? [])
      items.push({
        ...item,
        apiVersion: item.apiVersion ?? page.apiVersion ?? '',
        kind: item.kind ?? kind,
      });
    resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    token = page.metadata?.continue || undefined;
  } while (token);
  return { items, resourceVersion };
}

/** Server-side table conversion to metadata only: no Secret data ever reaches our memory. */
const METADATA_LIST =
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const METADATA_WATCH =
  'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

export class KubeListWatch implements ListWatchSource {
  /** Served since Kubernetes 1.32 (WatchList); an older server makes the informer LIST. */
  readonly streamingLists = true;

  constructor(private readonly http: KubeHttp) {}

  list(path: string, labelSelector?: string, metadataOnly?: boolean): Promise<ListResult> {
    return listAll(this.http, path, {
      labelSelector,
      ...(metadataOnly ? { accept: METADATA_LIST } : {}),
    });
  }

  watch(
    path: string,
    query: WatchQuery,
    onEvent: (type: WatchEventType, object: unknown) => void,
    onDone: (error: unknown) => void,
    onOpen?: () => void,
  ): Promise<WatchHandle> {
    return this.http.stream(
      {
        path,
        query: {
          watch: 'true',
          resourceVersion: query.resourceVersion || undefined,
          ...(query.sendInitialEvents
            ? { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan' }
            : {}),
          labelSelector: query.labelSelector,
          timeoutSeconds: String(query.timeoutSeconds),
          allowWatchBookmarks: 'true',
        },
        accept: query.metadataOnly ? METADATA_WATCH : undefined,
      },
      (line) => {
        const event = line as { type?: string; object?: unknown };
        if (event.type) onEvent(event.type as WatchEventType, event.object);
      },
      onDone,
      onOpen,
    );
  }
}

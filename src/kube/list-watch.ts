// The informer's view of the API server: paginated LISTs over raw JSON, and watches through
// @kubernetes/client-node's Watch with bookmarks and a server-side timeout.
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../api/object-meta.ts';
import type {
  ListResult,
  ListWatchSource,
  WatchEventType,
  WatchHandle,
} from '../framework/informer.ts';
import type { KubeHttp } from './http.ts';

interface ListBody {
  items?: KubeObject[];
  metadata?: { resourceVersion?: string; continue?: string };
  kind?: string;
  apiVersion?: string;
}

/** Lists every page of a collection; items get their kind and apiVersion back. */
export async function listAll(
  http: KubeHttp,
  path: string,
  labelSelector?: string,
): Promise<{ items: KubeObject[]; resourceVersion: string }> {
  const items: KubeObject[] = [];
  let token: string | undefined;
  let resourceVersion = '';
  do {
    const page = await http.request<ListBody>({
      method: 'GET',
      path,
      query: { limit: '500', continue: token, labelSelector },
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

export class KubeListWatch implements ListWatchSource {
  private readonly watcher: Watch;

  constructor(
    private readonly http: KubeHttp,
    kubeConfig: KubeConfig,
  ) {
    this.watcher = new Watch(kubeConfig);
  }

  list(path: string, labelSelector?: string): Promise<ListResult> {
    return listAll(this.http, path, labelSelector);
  }

  async watch(
    path: string,
    query: { resourceVersion: string; labelSelector?: string; timeoutSeconds: number },
    onEvent: (type: WatchEventType, object: unknown) => void,
    onDone: (error: unknown) => void,
  ): Promise<WatchHandle> {
    const controller = await this.watcher.watch(
      path,
      {
        resourceVersion: query.resourceVersion,
        labelSelector: query.labelSelector,
        timeoutSeconds: query.timeoutSeconds,
        allowWatchBookmarks: true,
      },
      (type: string, object: unknown) => onEvent(type as WatchEventType, object),
      onDone,
    );
    return { abort: () => controller.abort() };
  }
}

// ClusterPort over the API server: discovery-backed paths, raw-JSON server-side apply (field
// manager `stencil`, force) and dry run, background deletes, status and finalizer patches with
// optimistic concurrency, and deduplicated Events.
import type { KubeObject, ObjectHead } from '../api/object-meta.ts';
import { FIELD_MANAGER } from '../api/well-known.ts';
import type { KindScope } from '../engine/source-port.ts';
import {
  ClusterError,
  isClusterError,
  type ApplyOptions,
  type ClusterPort,
  type DeleteOutcome,
  type EventRecord,
  type ObjectId,
} from '../reconcile/cluster-port.ts';
import { Discovery, resourcePath } from './discovery.ts';
import type { KubeHttp } from './http.ts';
import { listAll } from './list-watch.ts';

/** An identical Event (same object, reason and message) is not repeated within this window. */
const EVENT_DEDUP_MS = 10 * 60_000;

export class KubeCluster implements ClusterPort {
  readonly discovery: Discovery;
  private readonly recentEvents = new Map<string, number>();

  constructor(
    private readonly http: KubeHttp,
    private readonly reportingInstance = 'stencil',
    private readonly fieldManager = FIELD_MANAGER,
  ) {
    this.discovery = new Discovery(http);
  }

  async scopeOf(apiVersion: string, kind: string): Promise<KindScope | undefined> {
    return (await this.discovery.resourceFor(apiVersion, kind))?.scope;
  }

  private async path(id: {
    apiVersion: string;
    kind: string;
    namespace?: string;
    name?: string;
  }): Promise<string> {
    const info = await this.discovery.resourceFor(id.apiVersion, id.kind);
    if (!info)
      throw new ClusterError(
        'NotServed',
        `kind ${id.kind} (${id.apiVersion}) is not served by the API server`,
      );
    const namespace = info.scope === 'Namespaced' ? id.namespace : undefined;
    if (info.scope === 'Namespaced' && id.name !== undefined && !namespace) {
      throw new ClusterError(
        'Invalid',
        `${id.kind} ${id.name} is namespaced but no namespace was given`,
      );
    }
    return resourcePath(id.apiVersion, info.plural, namespace, id.name);
  }

  private objectPath(object: ObjectHead): Promise<string> {
    const { name, namespace } = object.metadata;
    return this.path({ apiVersion: object.apiVersion, kind: object.kind, namespace, name });
  }

  async get(id: ObjectId): Promise<KubeObject | undefined> {
    try {
      const object = await this.http.request<KubeObject>({
        method: 'GET',
        path: await this.path(id),
      });
      return {
        ...object,
        apiVersion: object.apiVersion ?? id.apiVersion,
        kind: object.kind ?? id.kind,
      };
    } catch (error) {
      if (isClusterError(error, 'NotFound')) return undefined;
      throw error;
    }
  }

  async list(
    apiVersion: string,
    kind: string,
    options: { namespace?: string; labelSelector?: string } = {},
  ): Promise<KubeObject[]> {
    const path = await this.path({ apiVersion, kind, namespace: options.namespace });
    return (await listAll(this.http, path, options.labelSelector)).items;
  }

  async apply(object: KubeObject, options: ApplyOptions = {}): Promise<KubeObject> {
    const path = await this.objectPath(object);
    return this.http.request<KubeObject>({
      method: 'PATCH',
      path,
      query: {
        fieldManager: this.fieldManager,
        force: 'true',
        dryRun: options.dryRun ? 'All' : undefined,
      },
      body: object,
      contentType: 'application/apply-patch+yaml',
    });
  }

  async delete(id: ObjectId): Promise<DeleteOutcome> {
    try {
      const response = await this.http.request<{
        kind?: string;
        metadata?: { deletionTimestamp?: string };
      }>({
        method: 'DELETE',
        path: await this.path(id),
        body: { propagationPolicy: 'Background' },
      });
      // The server answers with a Status once the object is gone, or with the object itself while
      // finalizers hold it.
      return response.kind !== 'Status' && response.metadata?.deletionTimestamp
        ? 'pending'
        : 'deleted';
    } catch (error) {
      if (isClusterError(error, 'NotFound')) return 'absent';
      throw error;
    }
  }

  async patchStatus(object: ObjectHead, status: Record<string, unknown>): Promise<KubeObject> {
    const path = await this.objectPath(object);
    return this.http.request<KubeObject>({
      method: 'PATCH',
      path: `${path}/status`,
      body: { status },
      contentType: 'application/merge-patch+json',
    });
  }

  async setFinalizers(object: ObjectHead, finalizers: string[]): Promise<KubeObject> {
    const path = await this.objectPath(object);
    // resourceVersion makes the merge patch conditional: a concurrent change yields 409 Conflict.
    const body = { metadata: { resourceVersion: object.metadata.resourceVersion, finalizers } };
    return this.http.request<KubeObject>({
      method: 'PATCH',
      path,
      body,
      contentType: 'application/merge-patch+json',
    });
  }

  async recordEvent(event: EventRecord): Promise<void> {
    const { regarding } = event;
    const key = `${regarding.metadata.uid ?? ''}|${event.reason}|${event.message}`;
    const now = Date.now();
    const last = this.recentEvents.get(key);
    if (last !== undefined && now - last < EVENT_DEDUP_MS) return;
    this.recentEvents.set(key, now);
    if (this.recentEvents.size > 10_000) this.recentEvents.clear();
    const namespace = regarding.metadata.namespace ?? 'default';
    const timestamp = new Date(now).toISOString();
    await this.http.request({
      method: 'POST',
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`,
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { generateName: `${regarding.metadata.name ?? 'stencil'}.`, namespace },
        involvedObject: {
          apiVersion: regarding.apiVersion,
          kind: regarding.kind,
          name: regarding.metadata.name,
          namespace,
          uid: regarding.metadata.uid,
          resourceVersion: regarding.metadata.resourceVersion,
        },
        type: event.type,
        reason: event.reason,
        message: event.message.slice(0, 1024),
        source: { component: 'stencil' },
        reportingComponent: 'stencil.dev/operator',
        reportingInstance: this.reportingInstance,
        firstTimestamp: timestamp,
        lastTimestamp: timestamp,
        count: 1,
      },
    });
  }

  async identity(): Promise<string> {
    const review = await this.http.request<{ status?: { userInfo?: { username?: string } } }>({
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    return review.status?.userInfo?.username ?? '';
  }
}

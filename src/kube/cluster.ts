// ClusterPort over the API server: discovery-backed paths, raw-JSON server-side apply (field
// manager `stencil`, force) and dry run, background deletes, status and finalizer patches with
// optimistic concurrency, deduplicated Events, and writes that a signal cancels and a fence
// (leadership) refuses.
import type { KubeObject, ObjectHead } from '../api/object-meta.ts';
import { FIELD_MANAGER } from '../api/well-known.ts';
import type { Requester } from '../engine/sources/requester.ts';
import { groupVersionOf } from '../engine/objects/resource-scope.ts';
import type { KindScope, ReadAccess } from '../engine/sources/source-port.ts';
import {
  ClusterError,
  isClusterError,
  type AccessReview,
  type ApplyOptions,
  type ClusterPort,
  type DeleteOutcome,
  type DeletePreconditions,
  type EventRecord,
  type Impersonation,
  type MetadataPatch,
  type ObjectId,
} from '../reconcile/cluster-port.ts';
import { Discovery, resourcePath } from './discovery.ts';
import type { KubeHttp, RequestSpec } from './http.ts';
import { listAll } from './list-watch.ts';

/** An identical Event (same object, reason and message) is not repeated within this window. */
const EVENT_DEDUP_MS = 10 * 60_000;

/** Says why this process may not write right now (e.g. it is no longer the leader), or nothing. */
export type WriteFence = () => string | undefined;

/** What every view of one cluster shares, whatever signal it is bound to. */
interface Shared {
  http: KubeHttp;
  discovery: Discovery;
  recentEvents: Map<string, number>;
  reportingInstance: string;
  fieldManager: string;
  fence: WriteFence | undefined;
}

/** What one view of the cluster adds to the shared part. */
interface View {
  shared: Shared;
  signal?: AbortSignal;
  fieldManager?: string;
  impersonate?: Impersonation;
}

export class KubeCluster implements ClusterPort {
  private readonly shared: Shared;
  private readonly signal: AbortSignal | undefined;
  /** The field manager of this view's applies (the shared one unless a view chose its own). */
  private readonly fieldManager: string;
  /** Who this view's requests are made as; the kubeconfig's user when undefined. */
  private readonly impersonate: Impersonation | undefined;

  constructor(
    http: KubeHttp,
    reportingInstance = 'stencil',
    fieldManager = FIELD_MANAGER,
    bound?: View,
  ) {
    this.shared = bound?.shared ?? {
      http,
      discovery: new Discovery(http),
      recentEvents: new Map(),
      reportingInstance,
      fieldManager,
      fence: undefined,
    };
    this.signal = bound?.signal;
    this.fieldManager = bound?.fieldManager ?? this.shared.fieldManager;
    this.impersonate = bound?.impersonate;
  }

  /** A view of this one with some of its parts replaced. */
  private view(change: Omit<View, 'shared'>): KubeCluster {
    const { shared, signal, fieldManager, impersonate } = this;
    return new KubeCluster(this.http, undefined, undefined, {
      shared,
      signal,
      fieldManager,
      impersonate,
      ...change,
    });
  }

  /** Sends a request of this view: bound to its signal, made as its user. */
  private send<T>(spec: RequestSpec): Promise<T> {
    return this.http.request<T>({ ...spec, signal: this.signal, impersonate: this.impersonate });
  }

  get discovery(): Discovery {
    return this.shared.discovery;
  }

  private get http(): KubeHttp {
    return this.shared.http;
  }

  bind(signal: AbortSignal): KubeCluster {
    return this.view({ signal });
  }

  actingAs(user: Impersonation): KubeCluster {
    return this.view({ impersonate: user });
  }

  /**
   * This port, applying under another field manager (e.g. the instances a TemplateInstanceSet
   * stamps); everything else, the write fence included, is shared.
   */
  withFieldManager(fieldManager: string): KubeCluster {
    return this.view({ fieldManager });
  }

  /**
   * Refuses every write (of this port and every view bound from it) while `fence` gives a
   * reason: a replica that lost its Lease must not write, whatever is still in flight.
   */
  fenceWrites(fence: WriteFence): void {
    this.shared.fence = fence;
  }

  /** Throws instead of writing when the pass was cancelled or the fence is closed. */
  private admitWrite(what: string): void {
    if (this.signal?.aborted)
      throw new ClusterError('Aborted', `${what}: the reconcile was cancelled`);
    const refusal = this.shared.fence?.();
    if (refusal) throw new ClusterError('Aborted', `${what} refused: ${refusal}`);
  }

  async scopeOf(apiVersion: string, kind: string): Promise<KindScope | undefined> {
    return (await this.discovery.resourceFor(apiVersion, kind))?.scope;
  }

  servedVersion(group: string, kind: string): Promise<string | undefined> {
    return this.discovery.servedVersion(group, kind);
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
      const object = await this.send<KubeObject>({
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
    try {
      const { labelSelector } = options;
      const { signal, impersonate } = this;
      return (await listAll(this.http, path, { labelSelector, signal, impersonate })).items;
    } catch (error) {
      throw await this.notServedOr(error, { apiVersion, kind });
    }
  }

  async apply(object: KubeObject, options: ApplyOptions = {}): Promise<KubeObject> {
    const path = await this.objectPath(object);
    this.admitWrite(options.dryRun ? 'dry run' : 'apply');
    try {
      return await this.send<KubeObject>({
        method: 'PATCH',
        path,
        query: {
          fieldManager: this.fieldManager,
          force: 'true',
          dryRun: options.dryRun ? 'All' : undefined,
          fieldValidation: options.fieldValidation,
        },
        body: object,
        contentType: 'application/apply-patch+yaml',
      });
    } catch (error) {
      throw await this.notServedOr(error, object);
    }
  }

  /**
   * An apply creates what is missing, so its 404 means a missing namespace or a kind that
   * stopped being served (its CRD was deleted after discovery cached it): ask discovery again
   * and say which, so the instance reports the missing kind instead of a bare "HTTP 404".
   */
  private async notServedOr(
    error: unknown,
    id: { apiVersion: string; kind: string },
  ): Promise<unknown> {
    if (!isClusterError(error, 'NotFound')) return error;
    const info = await this.discovery.resourceNow(id.apiVersion, id.kind).catch(() => 'unknown');
    if (info !== undefined) return error;
    return new ClusterError(
      'NotServed',
      `kind ${id.kind} (${id.apiVersion}) is not served by the API server`,
    );
  }

  async delete(id: ObjectId, conditions?: DeletePreconditions): Promise<DeleteOutcome> {
    const path = await this.path(id);
    const preconditions = {
      ...(id.uid ? { uid: id.uid } : {}),
      ...(conditions?.resourceVersion ? { resourceVersion: conditions.resourceVersion } : {}),
    };
    this.admitWrite('delete');
    try {
      const response = await this.send<{
        kind?: string;
        metadata?: { deletionTimestamp?: string };
      }>({
        method: 'DELETE',
        path,
        body: {
          propagationPolicy: 'Background',
          ...(Object.keys(preconditions).length > 0 ? { preconditions } : {}),
        },
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
    this.admitWrite('status update');
    return this.send<KubeObject>({
      method: 'PATCH',
      path: `${path}/status`,
      body: { metadata: { resourceVersion: requiredVersion(object) }, status },
      contentType: 'application/merge-patch+json',
    });
  }

  async removeAnnotation(object: ObjectHead, key: string): Promise<KubeObject> {
    return this.mergeMetadata(object, { annotations: { [key]: null } }, 'annotation update');
  }

  async setFinalizers(object: ObjectHead, finalizers: string[]): Promise<KubeObject> {
    return this.mergeMetadata(object, { finalizers }, 'finalizer update');
  }

  async patchMetadata(object: ObjectHead, patch: MetadataPatch): Promise<KubeObject> {
    return this.mergeMetadata(object, patch, 'metadata update');
  }

  async patchSpec(object: ObjectHead, spec: Record<string, unknown>): Promise<KubeObject> {
    return this.merge(object, { spec }, 'spec update');
  }

  /** One merge patch of metadata, conditional on the resourceVersion `object` was read at. */
  private async mergeMetadata(
    object: ObjectHead,
    fields: MetadataPatch,
    what: string,
  ): Promise<KubeObject> {
    return this.merge(object, { metadata: fields }, what);
  }

  /** One merge patch, conditional on the resourceVersion `object` was read at. */
  private async merge(
    object: ObjectHead,
    body: { metadata?: MetadataPatch; spec?: Record<string, unknown> },
    what: string,
  ): Promise<KubeObject> {
    const path = await this.objectPath(object);
    this.admitWrite(what);
    const metadata = { resourceVersion: requiredVersion(object), ...body.metadata };
    return this.send<KubeObject>({
      method: 'PATCH',
      path,
      query: { fieldManager: this.fieldManager },
      body: { ...body, metadata },
      contentType: 'application/merge-patch+json',
    });
  }

  async recordEvent(event: EventRecord): Promise<void> {
    const { regarding } = event;
    const key = `${regarding.metadata.uid ?? ''}|${event.reason}|${event.message}`;
    const now = Date.now();
    const last = this.shared.recentEvents.get(key);
    const { recentEvents } = this.shared;
    if (last !== undefined && now - last < EVENT_DEDUP_MS) return;
    this.admitWrite('event');
    recentEvents.set(key, now);
    if (recentEvents.size > 10_000) recentEvents.clear();
    const namespace = regarding.metadata.namespace ?? 'default';
    const timestamp = new Date(now).toISOString();
    await this.send({
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
        reportingInstance: this.shared.reportingInstance,
        firstTimestamp: timestamp,
        lastTimestamp: timestamp,
        count: 1,
      },
    });
  }

  async reviewAccess(user: Requester, access: ReadAccess): Promise<AccessReview> {
    const info = await this.discovery.resourceFor(access.apiVersion, access.kind);
    if (!info)
      throw new ClusterError(
        'NotServed',
        `kind ${access.kind} (${access.apiVersion}) is not served by the API server`,
      );
    const { group, version } = groupVersionOf(access.apiVersion);
    const review = await this.send<{
      status?: { allowed?: boolean; denied?: boolean; reason?: string };
    }>({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          uid: user.uid,
          groups: user.groups,
          extra: user.extra,
          resourceAttributes: {
            verb: access.verb,
            group,
            version,
            resource: info.plural,
            namespace: info.scope === 'Namespaced' ? access.namespace : undefined,
            name: access.name,
          },
        },
      },
    });
    const allowed = review.status?.allowed === true && review.status.denied !== true;
    return { allowed, reason: review.status?.reason || undefined };
  }

  async identity(): Promise<string> {
    const review = await this.send<{ status?: { userInfo?: { username?: string } } }>({
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    return review.status?.userInfo?.username ?? '';
  }
}

/**
 * The resourceVersion that makes a merge patch conditional (a concurrent change yields 409
 * Conflict). An object read from the API server always has one; without it the patch would
 * silently overwrite, so it is refused.
 */
function requiredVersion(object: ObjectHead): string {
  const version = object.metadata.resourceVersion;
  if (!version)
    throw new ClusterError(
      'Invalid',
      `${object.kind} ${object.metadata.name ?? ''}: a conditional write needs the resourceVersion it was read at`,
    );
  return version;
}

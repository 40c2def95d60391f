// The engine's SourcePort over the cluster: reads for valueFrom, with failures classified the
// way SPEC §6 needs them (only a Transient failure blocks pruning after a defaultValue).
import type { KubeObject } from '../../api/object-meta.ts';
import type {
  KindScope,
  ListRef,
  ObjectList,
  ObjectRef,
  ReadFailure,
  SourcePort,
  SourceRead,
} from '../../engine/sources/source-port.ts';
import { describeRef, type AccessDecision } from '../../engine/sources/source-port.ts';
import {
  ClusterError,
  isClusterError,
  type ClusterErrorKind,
  type ClusterPort,
} from '../cluster-port.ts';
import type { SourceAccess } from '../reader.ts';
import type { SourceAuthorizer } from './requester-authorization.ts';
import { keepable, type SourceValues, type WatchedSource } from './source-values.ts';

const FAILURES: Partial<Record<ClusterErrorKind, ReadFailure>> = {
  NotFound: 'NotFound',
  NotServed: 'NotServed',
  Forbidden: 'Forbidden',
  Unauthorized: 'Forbidden',
  Invalid: 'Invalid',
};

function failed<T>(error: unknown, what: string): SourceRead<T> {
  const kind = isClusterError(error) ? error.kind : 'Transient';
  const failure = FAILURES[kind] ?? 'Transient';
  const reason = isClusterError(error) ? error.message : String(error);
  return { ok: false, failure, message: `reading ${what} failed: ${reason}` };
}

/** `namespace/name` (`/name` when cluster-scoped): how watch caches key their objects. */
function versionsOf(objects: KubeObject[]): Record<string, string> {
  return Object.fromEntries(
    objects.map((o) => [
      `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`,
      o.metadata.resourceVersion ?? '',
    ]),
  );
}

/** Values kept between passes, and what the source watches know (see SourceValues). */
export interface SourceCache {
  values: SourceValues;
  watched: WatchedSource;
  /**
   * Keeps the source watch of `ref`'s kind and namespace running until released, starting it
   * when none runs; `listed` resolves true once it has listed (bringing `ref`'s object into
   * `values`), false when it will not in time. A first read waits for it instead of a GET.
   */
  hold?: (ref: ObjectRef) => { listed: Promise<boolean>; release(): void };
}

export class ClusterSource implements SourcePort {
  /** Every read this resolution performed, for the watch registry. */
  readonly reads: SourceAccess[] = [];
  /** Reads of this pass by object: two parameters naming one Secret share one read. */
  private readonly inPass = new Map<string, Promise<KubeObject | undefined>>();
  /** Watches this pass's first reads started or waited for: kept until `release`. */
  private readonly holds: { release(): void }[] = [];

  /**
   * `cluster`: the reads go out as the identity the Template acts as (ADR 0035).
   * `authorize`: under --authorize-sources=requester, the requester check of this pass (ADR 0020).
   * `cache`: values kept between passes for kinds other than Secret.
   * `cachedRead`: whether that identity may read what `cache` would serve without a request.
   */
  constructor(
    private readonly cluster: ClusterPort,
    readonly authorize?: SourceAuthorizer,
    private readonly cache?: SourceCache,
    private readonly cachedRead?: (ref: ObjectRef) => Promise<AccessDecision>,
  ) {}

  scopeOf(apiVersion: string, kind: string): Promise<KindScope | undefined> {
    return this.cluster.scopeOf(apiVersion, kind);
  }

  async get(
    ref: ObjectRef,
    shared?: (object: KubeObject) => boolean,
  ): Promise<SourceRead<KubeObject>> {
    const read: SourceAccess = {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      namespace: ref.namespace,
      name: ref.name,
    };
    if (!shared) this.reads.push(read);
    try {
      const object = await this.fetch(ref);
      read.observed = versionsOf(object ? [object] : []);
      if (shared && object && shared(object)) this.reads.push(read);
      if (object) return { ok: true, value: object };
      return { ok: false, failure: 'NotFound', message: `${describeRef(ref)} not found` };
    } catch (error) {
      return failed(error, describeRef(ref));
    }
  }

  private fetch(ref: ObjectRef): Promise<KubeObject | undefined> {
    const key = JSON.stringify([ref.apiVersion, ref.kind, ref.namespace ?? '', ref.name]);
    let pending = this.inPass.get(key);
    if (!pending) {
      pending = this.fetchOnce(ref);
      this.inPass.set(key, pending);
    }
    return pending;
  }

  private async fetchOnce(ref: ObjectRef): Promise<KubeObject | undefined> {
    const cache = this.cache && keepable(ref.apiVersion, ref.kind) ? this.cache : undefined;
    if (!cache) return this.cluster.get(ref);
    let seen = cache.watched(ref)?.metadata;
    if (!seen && cache.hold) {
      // No listed watch shows the object yet (the first read in its namespace): the watch this
      // pass would start anyway brings it with its list, so wait for that instead of a GET.
      const hold = cache.hold(ref);
      this.holds.push(hold);
      if (await hold.listed) seen = cache.watched(ref)?.metadata;
    }
    if (seen?.uid && seen.resourceVersion)
      return this.kept(ref, { uid: seen.uid, resourceVersion: seen.resourceVersion }, cache);
    const object = await this.cluster.get(ref);
    if (object) cache.values.put(object);
    return object;
  }

  /**
   * The value the caches keep of the object a watch saw, read when they lack it; first asked of
   * the authorizer as the acting identity, since a kept value reaches the API server as no one.
   */
  private async kept(
    ref: ObjectRef,
    seen: { uid: string; resourceVersion: string },
    cache: SourceCache,
  ): Promise<KubeObject | undefined> {
    const decision = await this.cachedRead?.(ref);
    if (decision && !decision.allowed) throw new ClusterError('Forbidden', decision.message, 403);
    return cache.values.load(seen.uid, seen.resourceVersion, () => this.cluster.get(ref));
  }

  /**
   * Lets go of the watches this pass's first reads held: call it once the pass depends on what
   * it read (its watches registered), so they are not stopped and started again in between.
   */
  release(): void {
    for (const hold of this.holds.splice(0)) hold.release();
  }

  async list(ref: ListRef): Promise<SourceRead<ObjectList>> {
    const read: SourceAccess = {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      namespace: ref.namespace,
    };
    this.reads.push(read);
    try {
      const items = await this.cluster.list(ref.apiVersion, ref.kind, { namespace: ref.namespace });
      read.observed = versionsOf(items);
      return { ok: true, value: { apiVersion: ref.apiVersion, kind: `${ref.kind}List`, items } };
    } catch (error) {
      return failed(error, `${ref.kind} list`);
    }
  }
}

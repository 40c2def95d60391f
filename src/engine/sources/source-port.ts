// The port through which parameter resolution reads the objects `valueFrom` names. The operator
// implements it over the API server, `stencil render` over the --objects files; the engine
// itself never performs I/O.
import type { KubeObject } from '../../api/object-meta.ts';
import type { KindScope } from '../objects/resource-scope.ts';

export type { KindScope };

/**
 * Why a read failed. Only `Transient` (timeout, connection error, 429, 5xx) blocks pruning when
 * a `defaultValue` stood in for the value (SPEC §6 step 6).
 */
export type ReadFailure = 'NotFound' | 'Forbidden' | 'NotServed' | 'Transient' | 'Invalid';

export type SourceRead<T> =
  { ok: true; value: T } | { ok: false; failure: ReadFailure; message: string };

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  /** Absent for cluster-scoped kinds. */
  namespace?: string;
}

export interface ListRef {
  apiVersion: string;
  kind: string;
  /** Absent = all namespaces (or a cluster-scoped kind). */
  namespace?: string;
}

export interface ObjectList {
  apiVersion: string;
  kind: string;
  items: KubeObject[];
}

/** A read about to be made: `get` of one object, or `list` of a kind (in one namespace or all). */
export interface ReadAccess {
  verb: 'get' | 'list';
  apiVersion: string;
  kind: string;
  namespace?: string;
  name?: string;
}

export type AccessDecision = { allowed: true } | { allowed: false; message: string };

export interface SourcePort {
  /** Whether a kind is namespaced; `undefined` when the API server does not serve it. */
  scopeOf(apiVersion: string, kind: string): Promise<KindScope | undefined>;
  /**
   * One object. With `shared`, the object may be read only if it passes (a spec.sources selector
   * over its labels): the port then depends on it, and watches it, only when it exists and does.
   */
  get(ref: ObjectRef, shared?: (object: KubeObject) => boolean): Promise<SourceRead<KubeObject>>;
  list(ref: ListRef): Promise<SourceRead<ObjectList>>;
  /**
   * Whether a read the reference policy permits may be made on behalf of whoever asked for the
   * instance (--authorize-sources=requester, ADR 0020). Absent: the operator's own rights decide.
   * A denial refuses the parameter: no request is sent and no defaultValue stands in.
   */
  authorize?(access: ReadAccess): Promise<AccessDecision>;
}

/** `Secret team-a/db` or `ClusterRole admin`, for messages. */
export function describeRef(ref: { kind: string; name?: string; namespace?: string }): string {
  const name = ref.name ?? '*';
  return `${ref.kind} ${ref.namespace ? `${ref.namespace}/${name}` : name}`;
}

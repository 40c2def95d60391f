// The port through which reconcilers read and write the cluster. src/kube implements it over
// the API server; tests can implement it in memory. Errors are ClusterErrors, classified by
// HTTP status in exactly one place (src/kube/errors.ts).
import type { KubeObject, ObjectHead } from '../api/object-meta.ts';
import type { Requester } from '../engine/sources/requester.ts';
import type { ObjectId } from '../engine/objects/inventory.ts';
import type { KindScope, ReadAccess } from '../engine/sources/source-port.ts';

export type { ObjectId };

export type ClusterErrorKind =
  | 'NotFound'
  | 'Conflict'
  | 'Invalid'
  | 'Forbidden'
  | 'Unauthorized'
  | 'Gone'
  | 'NotServed'
  | 'Transient'
  /** Cancelled by the caller, or refused because this replica may no longer write (fenced). */
  | 'Aborted'
  | 'Other';

/** An API failure with its kind and the server's own message (never the request body). */
export class ClusterError extends Error {
  override readonly name = 'ClusterError';
  constructor(
    readonly kind: ClusterErrorKind,
    message: string,
    readonly status?: number,
    /** The `reason` of each cause in the Status `details` (e.g. NamespaceTerminating). */
    readonly causes: readonly string[] = [],
  ) {
    super(message);
  }
}

export function isClusterError(error: unknown, kind?: ClusterErrorKind): error is ClusterError {
  return error instanceof ClusterError && (kind === undefined || error.kind === kind);
}

/**
 * The API server refused to create something in a namespace that is being deleted (the Status
 * cause NamespaceTerminating): not a failure of what was sent, and it will not change until the
 * namespace, and whatever in it asked for the write, is gone.
 */
export function isNamespaceTerminating(error: unknown): boolean {
  return isClusterError(error, 'Forbidden') && error.causes.includes('NamespaceTerminating');
}

/** Extra conditions of a delete: it fails with a Conflict unless the object is still this one. */
export interface DeletePreconditions {
  resourceVersion?: string;
}

export type DeleteOutcome = 'deleted' | 'pending' | 'absent';

export interface ApplyOptions {
  /** Server-side dry run (`dryRun=All`): validated and defaulted, not persisted. */
  dryRun?: boolean;
  /**
   * `fieldValidation`: `Strict` fails the request on a duplicate or unknown field. Server-side
   * apply refuses an unknown field whatever this says (with HTTP 500, ADR 0030); the server's
   * default lets a duplicate field through, the last one winning.
   */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
}

export interface EventRecord {
  /** The object the event is about (an instance or a Template). */
  regarding: ObjectHead;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** A SubjectAccessReview's answer; `reason` is the authorizer's own words, when it gave any. */
export interface AccessReview {
  allowed: boolean;
  reason?: string;
}

/** Metadata a patch sets: finalizers whole, labels and annotations by key (null removes). */
export interface MetadataPatch {
  finalizers?: string[];
  labels?: Record<string, string | null>;
  annotations?: Record<string, string | null>;
}

/** Who a request is made as when it is not the operator itself (ADR 0035). */
export interface Impersonation {
  username: string;
  /** User extras set on the request (e.g. stencil.dev/impersonated-by). */
  extra?: Record<string, string[]>;
}

export interface ClusterPort {
  /** `undefined` when the kind is not served. */
  scopeOf(apiVersion: string, kind: string): Promise<KindScope | undefined>;
  /** `undefined` when the object does not exist. */
  get(id: ObjectId): Promise<KubeObject | undefined>;
  /** Every object of a kind (all pages), optionally in one namespace and by label selector. */
  list(
    apiVersion: string,
    kind: string,
    options?: { namespace?: string; labelSelector?: string },
  ): Promise<KubeObject[]>;
  /** Server-side apply with field manager `stencil` and force; returns the resulting object. */
  apply(object: KubeObject, options?: ApplyOptions): Promise<KubeObject>;
  /**
   * Deletes with background propagation: `deleted` when it is gone, `pending` when it waits on
   * finalizers, `absent` when it did not exist. With `id.uid` (and `preconditions`) it applies
   * only to the object seen: otherwise it fails with a Conflict and deletes nothing.
   */
  delete(id: ObjectId, preconditions?: DeletePreconditions): Promise<DeleteOutcome>;
  /**
   * Merge-patches the status subresource of a Stencil resource, conditional on the
   * resourceVersion of `object`: if anyone changed it since it was read, the write fails with a
   * Conflict instead of overwriting the newer state.
   */
  patchStatus(object: ObjectHead, status: Record<string, unknown>): Promise<KubeObject>;
  /**
   * Replaces metadata.finalizers with a merge patch conditional on the resourceVersion of
   * `object`, so a finalizer another controller added meanwhile is never dropped (the patch
   * fails with a Conflict instead).
   */
  setFinalizers(object: ObjectHead, finalizers: string[]): Promise<KubeObject>;
  /** Removes one annotation, conditional on the resourceVersion of `object` like setFinalizers. */
  removeAnnotation(object: ObjectHead, key: string): Promise<KubeObject>;
  /**
   * Merges finalizers (replaced whole), labels and annotations (by key; null removes one) in one
   * patch, conditional on the resourceVersion of `object` like setFinalizers.
   */
  patchMetadata(object: ObjectHead, patch: MetadataPatch): Promise<KubeObject>;
  /** One merge patch of `spec`, conditional on the resourceVersion of `object` like setFinalizers. */
  patchSpec(object: ObjectHead, spec: Record<string, unknown>): Promise<KubeObject>;
  /**
   * A version the API server serves `kind` of `group` at (the group's preferred one first), or
   * undefined when it serves none: to list a kind recorded without its version.
   */
  servedVersion(group: string, kind: string): Promise<string | undefined>;
  recordEvent(event: EventRecord): Promise<void>;
  /** The username the API server knows us by (SelfSubjectReview). */
  identity(): Promise<string>;
  /**
   * Whether `user` may make a read (SubjectAccessReview); asks the API server's authorizer, so
   * RBAC and any webhook authorizer decide exactly as for the user's own requests.
   */
  reviewAccess(user: Requester, access: ReadAccess): Promise<AccessReview>;
  /**
   * This port with every request tied to `signal`: nothing is sent once it is aborted, and a
   * request in flight is torn down (ClusterError `Aborted`). Reconcilers bind the signal of
   * their pass, so a replica that must stop (lost leadership, shutdown) stops writing at once.
   */
  bind(signal: AbortSignal): ClusterPort;
  /**
   * This port with every request made as `user` (impersonation, ADR 0035): what a Template
   * causes is authorized as the identity it acts as, never with the operator's rights. The
   * bound signal, the write fence and the field manager stay.
   */
  actingAs(user: Impersonation): ClusterPort;
}

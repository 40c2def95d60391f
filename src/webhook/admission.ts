// The strict-mode admission decision (SPEC §7), as a pure function of the request and what is
// known about the owning instance: the operator itself (its exact username, never "any admin")
// and members of configured break-glass groups may do anything; a DELETE is allowed only while
// the owner is being deleted; an UPDATE only when it changes nothing outside the ignored set;
// anything is allowed once the owner is gone (a lost owner must not lock an object forever).
import { parseInstanceKeyName } from '../engine/shared/instance-key.ts';
import type { KubeObject } from '../api/object-meta.ts';
import {
  ANNOTATION_INSTANCE_REF,
  EXTRA_IMPERSONATED_BY,
  LABEL_INSTANCE_NAME,
  LABEL_INSTANCE_NAMESPACE,
} from '../api/well-known.ts';
import { changedManagedPath } from '../engine/sync/drift.ts';
import { describeObject } from '../engine/objects/inventory.ts';

export interface AdmissionRequest {
  uid: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo: {
    username?: string;
    uid?: string;
    groups?: string[];
    extra?: Record<string, string[]>;
  };
  object?: KubeObject | null;
  oldObject?: KubeObject | null;
  kind?: { kind?: string };
  namespace?: string;
  name?: string;
}

export interface Owner {
  namespace: string;
  name: string;
  /** `undefined` when the instance no longer exists. */
  state:
    | {
        deleting: boolean;
        ignoreFields: string[];
        /** The instance's Template, named in denials; undefined when it is missing. */
        template?: { namespace: string; name: string };
      }
    | undefined;
}

/** Who may change strict-mode resources without a decision on the change itself. */
export interface Exemptions {
  /** The operator's own username (from SelfSubjectReview); '' exempts nobody. */
  operatorUsername: string;
  /** Break-glass groups (--webhook-break-glass-groups); empty by default. */
  breakGlassGroups: readonly string[];
}

export type Exemption = { by: 'operator' } | { by: 'break-glass'; group: string };

/**
 * Why this user may bypass strict mode, if at all: the operator by its exact username, a person
 * only through a configured break-glass group. Holding cluster-admin or system:masters is not a
 * reason: strict mode exists to stop exactly those edits.
 */
export function exemptionOf(
  userInfo: AdmissionRequest['userInfo'],
  exemptions: Exemptions,
): Exemption | undefined {
  const operator = exemptions.operatorUsername;
  if (operator !== '' && userInfo.username === operator) return { by: 'operator' };
  // The operator acting as a Template's ServiceAccount (ADR 0035): only it may impersonate this
  // extra with its own name, so the ServiceAccount's own requests (a Pod's token) do not pass.
  if (operator !== '' && userInfo.extra?.[EXTRA_IMPERSONATED_BY]?.includes(operator))
    return { by: 'operator' };
  const group = userInfo.groups?.find((g) => exemptions.breakGlassGroups.includes(g));
  return group === undefined ? undefined : { by: 'break-glass', group };
}

export interface Decision {
  allowed: boolean;
  message?: string;
  /** A mutating webhook's change to the object (RFC 6902 JSON Patch). */
  patch?: JsonPatchOperation[];
}

export interface JsonPatchOperation {
  op: 'add' | 'replace' | 'remove';
  path: string;
  value?: unknown;
}

/**
 * The owning instance named by an object's annotation (or, failing that, its labels); the name
 * is that of the instance's key, which names the kind of a typed instance (ADR 0032).
 */
export function ownerOf(
  object: KubeObject | null | undefined,
): { namespace: string; name: string } | undefined {
  const ref = object?.metadata.annotations?.[ANNOTATION_INSTANCE_REF];
  if (ref?.includes('/')) {
    const [namespace, name] = ref.split('/') as [string, string];
    return { namespace, name };
  }
  const labels = object?.metadata.labels;
  const namespace = labels?.[LABEL_INSTANCE_NAMESPACE];
  const name = labels?.[LABEL_INSTANCE_NAME];
  return namespace && name ? { namespace, name } : undefined;
}

export function decide(
  request: AdmissionRequest,
  exemptions: Exemptions,
  owner: Owner | undefined,
): Decision {
  if (exemptionOf(request.userInfo, exemptions)) return { allowed: true };
  const subject = request.oldObject ?? request.object;
  if (!subject || !owner?.state) return { allowed: true };
  const { name, kind } = parseInstanceKeyName(owner.name);
  const instance = `${kind?.slice(0, kind.indexOf('.')) ?? 'TemplateInstance'} ${owner.namespace}/${name}`;
  const { template } = owner.state;
  const itsTemplate = template
    ? `its Template ${template.namespace}/${template.name}`
    : 'its Template';
  const managedBy = `${describeObject(subject)} is managed by ${instance} (sync mode strict)`;
  if (request.operation === 'DELETE') {
    if (owner.state.deleting) return { allowed: true };
    return {
      allowed: false,
      message: `${managedBy}: it may not be deleted; delete ${instance}, or edit it or ${itsTemplate} so that it no longer renders this object`,
    };
  }
  if (request.operation === 'UPDATE' && request.oldObject && request.object) {
    const changed = changedManagedPath(request.oldObject, request.object, owner.state.ignoreFields);
    if (changed === undefined) return { allowed: true };
    return {
      allowed: false,
      message: `${managedBy}: ${changed} may not be changed; edit ${instance} or ${itsTemplate} instead`,
    };
  }
  return { allowed: true };
}

// The strict-mode admission decision (SPEC §7), as a pure function of the request and what is
// known about the owning instance: the operator itself may do anything; a DELETE is allowed only
// while the owner is being deleted; an UPDATE only when it changes nothing outside the ignored
// set; anything is allowed once the owner is gone (a lost owner must not lock an object forever).
import type { KubeObject } from '../api/object-meta.ts';
import {
  ANNOTATION_INSTANCE_REF,
  LABEL_INSTANCE_NAME,
  LABEL_INSTANCE_NAMESPACE,
} from '../api/well-known.ts';
import { changedManagedPath } from '../engine/drift.ts';
import { describeObject } from '../engine/inventory.ts';

export interface AdmissionRequest {
  uid: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo: { username?: string };
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
  state: { deleting: boolean; ignoreFields: string[] } | undefined;
}

export interface Decision {
  allowed: boolean;
  message?: string;
}

/** The owning instance named by an object's annotation (or, failing that, its labels). */
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
  operatorUsername: string,
  owner: Owner | undefined,
): Decision {
  if (request.userInfo.username === operatorUsername) return { allowed: true };
  const subject = request.oldObject ?? request.object;
  if (!subject || !owner?.state) return { allowed: true };
  const managedBy = `${describeObject(subject)} is managed by TemplateInstance ${owner.namespace}/${owner.name} (sync mode strict)`;
  if (request.operation === 'DELETE') {
    if (owner.state.deleting) return { allowed: true };
    return { allowed: false, message: `${managedBy}: delete the TemplateInstance instead` };
  }
  if (request.operation === 'UPDATE' && request.oldObject && request.object) {
    const changed = changedManagedPath(request.oldObject, request.object, owner.state.ignoreFields);
    if (changed === undefined) return { allowed: true };
    return {
      allowed: false,
      message: `${managedBy}: ${changed} may not be changed; change the TemplateInstance or its Template instead`,
    };
  }
  return { allowed: true };
}

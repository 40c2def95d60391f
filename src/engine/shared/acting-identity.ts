// Who the requests a Template causes are made as (ADR 0035): the ServiceAccount it names in its
// own namespace, else the operator's default ServiceAccount name in that namespace; in
// single-team mode (--act-as=operator), the operator itself.
import { InstanceReason } from '../../api/condition.ts';
import type { Template } from '../../api/template.ts';
import type { Problem } from './problem.ts';

/** `service-account`: as the Template's ServiceAccount (the default); `operator`: as itself. */
export type ActAs = 'service-account' | 'operator';

export interface TenancyPolicy {
  actAs: ActAs;
  /** The ServiceAccount name used in a Template's namespace when the Template names none. */
  defaultServiceAccount?: string;
}

export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

export type ActingIdentity =
  { ok: true; serviceAccount?: ServiceAccountRef } | { ok: false; problem: Problem };

/** The identity `template` acts as under `policy` (no ServiceAccount: the operator's own). */
export function actingIdentity(template: Template, policy: TenancyPolicy): ActingIdentity {
  if (policy.actAs === 'operator') return { ok: true };
  const namespace = template.metadata.namespace ?? '';
  const name = template.spec.serviceAccountName ?? policy.defaultServiceAccount;
  if (name) return { ok: true, serviceAccount: { namespace, name } };
  return {
    ok: false,
    problem: {
      path: 'spec.templateRef',
      reason: InstanceReason.ServiceAccountNotSet,
      message: `Template ${namespace}/${template.metadata.name ?? ''} names no ServiceAccount to act as (spec.serviceAccountName) and the operator has no --default-service-account: nothing is read or applied for it`,
    },
  };
}

/** The username the API server gives a ServiceAccount. */
export function serviceAccountUsername(account: ServiceAccountRef): string {
  return `system:serviceaccount:${account.namespace}:${account.name}`;
}

/** `namespace/name`, as status.serviceAccount records it. */
export function formatServiceAccount(account: ServiceAccountRef): string {
  return `${account.namespace}/${account.name}`;
}

/** A recorded `namespace/name`, or undefined when it is not one. */
export function parseServiceAccount(recorded: string | undefined): ServiceAccountRef | undefined {
  const match = /^([^/]+)\/([^/]+)$/.exec(recorded ?? '');
  return match ? { namespace: match[1]!, name: match[2]! } : undefined;
}

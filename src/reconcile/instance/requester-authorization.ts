// --authorize-sources=requester (ADR 0020): every valueFrom read of a pass is first asked of the
// API server's authorizer as the user who created the instance, so the operator's own rights
// never widen what that user could read. Each distinct read is asked once per pass and again on
// the next pass: a revoked grant stops the next render.
import type { TemplateInstance } from '../../api/template-instance.ts';
import { requesterOf } from '../../engine/sources/requester.ts';
import {
  describeRef,
  type AccessDecision,
  type ReadAccess,
} from '../../engine/sources/source-port.ts';
import type { ClusterPort } from '../cluster-port.ts';

export type SourceAuthorizer = (access: ReadAccess) => Promise<AccessDecision>;

/** How sources are authorized: with the operator's rights, or the requester's (ADR 0020). */
export type AuthorizeSources = 'operator' | 'requester';

function describeAccess(access: ReadAccess): string {
  if (access.verb === 'get') return describeRef(access);
  return access.namespace
    ? `${access.kind} objects in namespace "${access.namespace}"`
    : `${access.kind} objects in all namespaces`;
}

const NO_REQUESTER =
  "the instance records no requester (annotation stencil.dev/requester, which Stencil's admission webhook writes when the instance is created); under --authorize-sources=requester sources are read only on behalf of that user, so recreate the instance";

/** The requester check for one pass over `instance`. */
export function requesterAuthorizer(
  cluster: ClusterPort,
  instance: TemplateInstance,
): SourceAuthorizer {
  const requester = requesterOf(instance);
  const asked = new Map<string, Promise<AccessDecision>>();
  return (access) => {
    if (!requester) return Promise.resolve({ allowed: false, message: NO_REQUESTER });
    const key = JSON.stringify([
      access.verb,
      access.apiVersion,
      access.kind,
      access.namespace,
      access.name,
    ]);
    let decision = asked.get(key);
    if (!decision) {
      decision = cluster.reviewAccess(requester, access).then((review): AccessDecision => {
        if (review.allowed) return { allowed: true };
        const why = review.reason ? ` (${review.reason})` : '';
        return {
          allowed: false,
          message: `user "${requester.username}", who created the instance, may not ${access.verb} ${describeAccess(access)}${why}; sources are read with the rights of the instance's requester (--authorize-sources=requester)`,
        };
      });
      asked.set(key, decision);
    }
    return decision;
  };
}

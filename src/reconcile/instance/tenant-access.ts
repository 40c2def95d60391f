// Reads a pass serves from the operator's caches (the values of ConfigMaps its source watches
// brought, ADR 0027) never reach the API server as the identity a Template acts as (ADR 0035),
// so the API server cannot refuse them. Each is first asked of its authorizer for that identity
// (a SubjectAccessReview): may it get objects of the kind in the namespace, else this one by
// name. Answers are kept a minute, so a namespace's instances ask once, not once per pass.
import type { Requester } from '../../engine/sources/requester.ts';
import {
  describeRef,
  type AccessDecision,
  type ObjectRef,
} from '../../engine/sources/source-port.ts';
import type { ClusterPort } from '../cluster-port.ts';

/** How long an answer is kept: a revoked grant stops cached reads at most this much later. */
export const ACCESS_TTL_MS = 60_000;

const MAX_ANSWERS = 10_000;

export class CachedReadAccess {
  private readonly answers = new Map<string, { allowed: Promise<boolean>; at: number }>();

  constructor(
    private readonly cluster: Pick<ClusterPort, 'reviewAccess'>,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Whether `user` may get `ref`, as the API server would answer that GET. */
  async decide(user: Requester, ref: ObjectRef): Promise<AccessDecision> {
    const base = { verb: 'get' as const, apiVersion: ref.apiVersion, kind: ref.kind };
    const namespace = ref.namespace;
    if (await this.ask(user, { ...base, namespace })) return { allowed: true };
    if (await this.ask(user, { ...base, namespace, name: ref.name })) return { allowed: true };
    return {
      allowed: false,
      message: `${user.username} may not get ${describeRef(ref)} (forbidden by the authorizer; the Template's requests are made as this identity)`,
    };
  }

  private ask(
    user: Requester,
    access: { verb: 'get'; apiVersion: string; kind: string; namespace?: string; name?: string },
  ): Promise<boolean> {
    const key = JSON.stringify([user.username, access]);
    const kept = this.answers.get(key);
    const now = this.now();
    if (kept && now - kept.at < ACCESS_TTL_MS) return kept.allowed;
    if (this.answers.size >= MAX_ANSWERS) this.answers.clear();
    const allowed = this.cluster.reviewAccess(user, access).then(
      (review) => review.allowed,
      (error: unknown) => {
        // Not known: asked again next time, and the read fails as the review did.
        this.answers.delete(key);
        throw error;
      },
    );
    this.answers.set(key, { allowed, at: now });
    return allowed;
  }
}

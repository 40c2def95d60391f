// How a pass that could not render ends (issue #23): the one classification of failures. A
// failure that only an edit of an input can fix waits, terminal, for that edit (or the resync);
// everything else is retried with backoff, because the cluster may change under it.
import { InstanceReason } from '../../api/condition.ts';
import type { Problem } from '../shared/problem.ts';

export type Disposition = 'terminal' | 'retry';

/** Reasons an input edit must fix: retrying the same inputs gives the same answer. */
const INPUT_REASONS: ReadonlySet<string> = new Set([
  InstanceReason.TemplateNotFound,
  InstanceReason.RevisionNotFound,
  // A Template that names no ServiceAccount acts for nobody until it names one (ADR 0035).
  InstanceReason.ServiceAccountNotSet,
  // An unreadable spec.ttl / expires-at, or a lifetime the Template refuses: only an edit of
  // the instance or the Template changes the answer.
  InstanceReason.InvalidTTL,
  InstanceReason.TTLNotAllowed,
  InstanceReason.NamespaceNotPermitted,
  InstanceReason.InvalidParameter,
  InstanceReason.OverrideNotAllowed,
  InstanceReason.ReferenceNotPermitted,
  // RBAC changes bring no event: a grant is seen at the resync or the instance's next edit.
  InstanceReason.SourceNotAuthorized,
  InstanceReason.TemplateExecutionFailed,
  // The same input renders as slowly next time; a resync or an edit tries again (ADR 0018).
  InstanceReason.RenderTimeout,
  // A rendered object its kind's schema refuses (a duplicate list key, a missing field): the
  // same Template, instance and sources render it the same way; the schema itself changes only
  // with a CRD or API server upgrade, which the resync covers.
  InstanceReason.InvalidResource,
]);

/**
 * Terminal for a reason only an input fixes, unless the problem says the cluster must change
 * (a rendered kind not served yet); a missing source (ParameterResolutionFailed) and anything
 * unknown are retried.
 */
export function dispositionOf(
  problem: Pick<Problem, 'reason' | 'transient' | 'settled'>,
): Disposition {
  if (problem.transient) return 'retry';
  return INPUT_REASONS.has(problem.reason) || problem.settled ? 'terminal' : 'retry';
}

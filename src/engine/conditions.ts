// Conditions as the operator writes them: drafts from the engine, merged with the previous set so
// that lastTransitionTime moves only when status does; Ready derived from the others.
import type { Condition, ConditionStatus } from '../api/condition.ts';
import {
  InstanceConditionType,
  InstanceReason,
  INSTANCE_CONDITION_ORDER,
} from '../api/condition.ts';

/** A condition without its timestamps: what the pure engine decides. */
export interface ConditionDraft {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
}

/** RFC 3339 at second precision, as Kubernetes writes condition times. */
export function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function draft(type: string, ok: boolean, reason: string, message: string): ConditionDraft {
  return { type, status: ok ? 'True' : 'False', reason, message };
}

/**
 * Ready for an instance: True/Reconciled when every other condition is True, else False with
 * the reason and message of the first failing one in evaluation order.
 */
export function readyCondition(conditions: ConditionDraft[]): ConditionDraft {
  const byType = new Map(conditions.map((c) => [c.type, c]));
  for (const type of INSTANCE_CONDITION_ORDER) {
    const c = byType.get(type);
    if (c && c.status !== 'True')
      return {
        type: InstanceConditionType.Ready,
        status: 'False',
        reason: c.reason,
        message: c.message,
      };
  }
  return {
    type: InstanceConditionType.Ready,
    status: 'True',
    reason: InstanceReason.Reconciled,
    message: 'all conditions are satisfied',
  };
}

/**
 * Merges drafts into the previous conditions: a condition whose status did not change keeps its
 * lastTransitionTime. Conditions absent from `drafts` are dropped. `now` is RFC 3339.
 */
export function mergeConditions(
  previous: Condition[] | undefined,
  drafts: ConditionDraft[],
  now: string,
  observedGeneration?: number,
): Condition[] {
  const before = new Map((previous ?? []).map((c) => [c.type, c]));
  return drafts.map((d) => {
    const old = before.get(d.type);
    const lastTransitionTime = old && old.status === d.status ? old.lastTransitionTime : now;
    return {
      ...d,
      lastTransitionTime,
      ...(observedGeneration !== undefined ? { observedGeneration } : {}),
    };
  });
}

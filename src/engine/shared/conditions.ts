// Conditions as the operator writes them: drafts from the engine, merged with the previous set so
// that lastTransitionTime moves only when status does; Ready derived from the others.
import type { Condition, ConditionStatus } from '../../api/condition.ts';
import {
  InstanceConditionType,
  InstanceReason,
  INSTANCE_CONDITION_ORDER,
} from '../../api/condition.ts';

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
 * The longest condition message written to status, in UTF-16 code units (so also in characters,
 * as the CRD's `maxLength: 32768` counts them). A quarter of what the CRD allows, so a status
 * with several failing conditions (Rendered and Ready copy one message) stays far below the
 * object size limit, and long enough for any message Stencil composes itself (ADR 0017).
 */
export const MAX_CONDITION_MESSAGE_LENGTH = 4096;

export const TRUNCATION_MARKER = '… (truncated)';

/**
 * `message` cut to {@link MAX_CONDITION_MESSAGE_LENGTH}, marker included, never splitting a
 * surrogate pair; unchanged when it fits.
 */
export function boundMessage(message: string): string {
  if (message.length <= MAX_CONDITION_MESSAGE_LENGTH) return message;
  let end = MAX_CONDITION_MESSAGE_LENGTH - TRUNCATION_MARKER.length;
  const last = message.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1; // a high surrogate whose pair would be cut
  return `${message.slice(0, end)}${TRUNCATION_MARKER}`;
}

/**
 * Merges drafts into the previous conditions: a condition whose status did not change keeps its
 * lastTransitionTime. Conditions absent from `drafts` are dropped. `now` is RFC 3339. Every
 * status write of conditions passes here, so this is where messages are bounded
 * ({@link boundMessage}).
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
      message: boundMessage(d.message),
      lastTransitionTime,
      ...(observedGeneration !== undefined ? { observedGeneration } : {}),
    };
  });
}

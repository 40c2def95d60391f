// What the health of its rendered resources means for an instance: the Progressing and Degraded
// conditions, whether Ready must wait, and the `<current>/<rendered>` count. The first object
// that is not Current is named, so a user sees what the instance waits for.
import { InstanceConditionType as T, InstanceReason as R } from '../../api/condition.ts';
import type { RenderedResourceRef } from '../../api/template-instance.ts';
import { draft, type ConditionDraft } from '../shared/conditions.ts';

export interface InstanceHealth {
  progressing: ConditionDraft;
  degraded: ConditionDraft;
  /** Ready=False because of a resource, when every other condition is True. */
  notReady?: ConditionDraft;
  /** `<current>/<rendered>`. */
  readyResources: string;
}

function describe(ref: RenderedResourceRef): string {
  const where = ref.namespace ? `${ref.namespace}/` : '';
  const why = ref.healthMessage ? `: ${ref.healthMessage}` : '';
  return `${ref.kind} ${where}${ref.name} is ${ref.health ?? 'Unknown'}${why}`;
}

function counted(others: number): string {
  return others > 0 ? ` (and ${others} more)` : '';
}

/** Sums up the health of the rendered resources (entries of pending deletes are left out). */
export function instanceHealth(resources: readonly RenderedResourceRef[]): InstanceHealth {
  const judged = resources.filter((r) => r.health !== undefined);
  const failed = judged.filter((r) => r.health === 'Failed');
  const waiting = judged.filter((r) => r.health === 'InProgress' || r.health === 'Unknown');
  const current = judged.length - failed.length - waiting.length;
  const progressing = waiting[0]
    ? draft(
        T.Progressing,
        true,
        R.ResourcesInProgress,
        describe(waiting[0]) + counted(waiting.length - 1),
      )
    : draft(T.Progressing, false, R.AllResourcesCurrent, 'no rendered resource is in progress');
  const degraded = failed[0]
    ? draft(T.Degraded, true, R.ResourceFailed, describe(failed[0]) + counted(failed.length - 1))
    : draft(T.Degraded, false, R.AllResourcesCurrent, 'no rendered resource has failed');
  const first = failed[0] ?? waiting[0];
  const notReady = first
    ? draft(
        T.Ready,
        false,
        failed[0] ? R.ResourceFailed : R.ResourcesInProgress,
        `${current}/${judged.length} rendered resources are Current; ${describe(first)}`,
      )
    : undefined;
  return { progressing, degraded, notReady, readyResources: `${current}/${judged.length}` };
}

// Change preflight (ADR 0031), the pure part: what one instance's check concluded, the report
// those conclusions make in the Template's status, and the condition that reports it. The
// operator gathers the verdicts (src/reconcile/preflight); planRollout decides what the report
// means for the rollout.
import { TemplateConditionType, TemplateReason } from '../../api/condition.ts';
import type {
  PreflightFailure,
  PreflightMode,
  PreflightStatus,
  RolloutSpec,
} from '../../api/template.ts';
import { draft, type ConditionDraft } from '../shared/conditions.ts';

/** Failing instances named in the status; the counts cover the rest. */
export const MAX_PREFLIGHT_FAILING = 10;

/** Longest reason kept per failing instance (the CRD allows 2048). */
const MAX_REASON = 1024;

export type PreflightOutcome = 'changed' | 'unchanged' | 'failed';

/** One instance checked against the new revision. */
export interface PreflightVerdict {
  /** `namespace/name`. */
  instance: string;
  outcome: PreflightOutcome;
  /** Why it would fail; already redacted by the evaluation that produced it. */
  reason?: string;
}

export function preflightMode(spec: RolloutSpec | undefined): PreflightMode {
  return spec?.preflight ?? 'Warn';
}

/**
 * The report of `revision` once `verdicts` are in, out of `total` instances to check: Running
 * until every one was checked, then Failed when any would fail, else Passed. Failing instances are
 * named in name order, so the report does not change with the order they were checked in.
 */
export function preflightReport(
  revision: number,
  total: number,
  verdicts: Iterable<PreflightVerdict>,
): PreflightStatus {
  let changed = 0;
  let unchanged = 0;
  const failures: PreflightFailure[] = [];
  for (const v of verdicts) {
    if (v.outcome === 'changed') changed++;
    else if (v.outcome === 'unchanged') unchanged++;
    else failures.push({ instance: v.instance, reason: clip(v.reason ?? 'failed') });
  }
  const failed = failures.length;
  const done = changed + unchanged + failed >= total;
  failures.sort((a, b) => (a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : 0));
  const report: PreflightStatus = {
    revision,
    phase: !done ? 'Running' : failed > 0 ? 'Failed' : 'Passed',
    total,
    changed,
    unchanged,
    failed,
  };
  if (failed > 0) report.failing = failures.slice(0, MAX_PREFLIGHT_FAILING);
  return report;
}

/** The Template's Preflight condition for a report, under the mode that decides its effect. */
export function preflightCondition(report: PreflightStatus, mode: PreflightMode): ConditionDraft {
  const { revision, total, changed, unchanged, failed } = report;
  const counts = `${changed} would change, ${unchanged} unchanged, ${failed} would fail`;
  if (report.phase === 'Running')
    return draft(
      TemplateConditionType.Preflight,
      false,
      TemplateReason.PreflightRunning,
      `checking revision ${revision} against ${total} instance(s): ${counts} so far; none moves until all are checked`,
    );
  if (report.phase === 'Passed')
    return draft(
      TemplateConditionType.Preflight,
      true,
      TemplateReason.PreflightPassed,
      `revision ${revision} checked against ${total} instance(s): ${counts}`,
    );
  const named = (report.failing ?? []).map((f) => `${f.instance}: ${f.reason}`).join('; ');
  const more = failed > (report.failing?.length ?? 0) ? ' (first ones named)' : '';
  const effect =
    mode === 'Block'
      ? 'the rollout is blocked (preflight Block)'
      : 'the rollout proceeds (preflight Warn)';
  return draft(
    TemplateConditionType.Preflight,
    false,
    TemplateReason.PreflightFailed,
    `revision ${revision} checked against ${total} instance(s): ${counts}; ${effect}. Failing${more}: ${named}`,
  );
}

function clip(reason: string): string {
  return reason.length <= MAX_REASON ? reason : `${reason.slice(0, MAX_REASON - 1)}…`;
}

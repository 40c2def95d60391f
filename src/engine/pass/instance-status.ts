// The TemplateInstance status a reconcile leaves behind (SPEC §2), computed from the previous
// status, the evaluation and the apply outcome.
import { InstanceConditionType, InstanceReason } from '../../api/condition.ts';
import type {
  RenderedResourceRef,
  TemplateInstance,
  TemplateInstanceStatus,
} from '../../api/template-instance.ts';
import type { SyncMode, Template } from '../../api/template.ts';
import {
  draft,
  mergeConditions,
  readyCondition,
  rfc3339,
  type ConditionDraft,
} from '../shared/conditions.ts';
import { expiryOf } from '../evaluation/expiry.ts';
import type { InstanceEvaluation } from '../evaluation/instance-evaluation.ts';
import { instanceHealth } from '../health/instance-health.ts';
import { templateRefOf } from '../shared/template-ref.ts';

export interface ApplyOutcome {
  ok: boolean;
  /** The Applied condition's message either way. */
  message: string;
  /** When not ok: waiting on the cluster (reason Waiting) rather than failed (ApplyFailed). */
  waiting?: boolean;
  /** What the instance now has on the cluster (max 500). */
  renderedResources: RenderedResourceRef[];
}

export interface StatusInput {
  instance: TemplateInstance;
  template: Template | undefined;
  evaluation: InstanceEvaluation;
  /** Absent when the evaluation failed before anything was applied. */
  apply?: ApplyOutcome;
  trackedGVKs: string[];
  /** RFC 3339 time of this reconcile. */
  now: string;
  /** The Template's sync mode: revert/strict add `Synced`. */
  syncMode?: SyncMode;
  /** `freeze` after an off instance's first clean apply; `unfreeze` when its mode leaves off. */
  freeze?: 'freeze' | 'unfreeze';
  /** The TemplateRevision rendered and the Template's newest one (ADR 0012). */
  revisions?: { revision?: number; latest?: number };
}

const SYNC_MESSAGES: Record<SyncMode, string> = {
  off: '',
  revert: 'sources are watched and drift on rendered resources is reverted',
  strict: 'sources are watched, drift is reverted, and the admission webhook denies edits',
};

/** The Applied condition, and Synced under revert/strict, once something was applied. */
function applyDrafts(input: StatusInput): ConditionDraft[] {
  const { apply, syncMode } = input;
  if (!apply) return [];
  const reason = apply.ok
    ? InstanceReason.Success
    : apply.waiting
      ? InstanceReason.Waiting
      : InstanceReason.ApplyFailed;
  const drafts = [draft(InstanceConditionType.Applied, apply.ok, reason, apply.message)];
  if (syncMode && syncMode !== 'off')
    drafts.push(
      draft(InstanceConditionType.Synced, true, InstanceReason.SyncActive, SYNC_MESSAGES[syncMode]),
    );
  return drafts;
}

export function nextInstanceStatus(input: StatusInput): TemplateInstanceStatus {
  const { instance, evaluation, apply } = input;
  const previous = instance.status ?? {};
  const drafts: ConditionDraft[] = [...evaluation.conditions, ...applyDrafts(input)];
  // Ready also waits for what was applied to be healthy (kstatus Current).
  const health = apply?.ok ? instanceHealth(apply.renderedResources) : undefined;
  const settled = readyCondition(drafts);
  const ready = settled.status === 'True' && health?.notReady ? health.notReady : settled;
  if (health) drafts.push(health.progressing, health.degraded);
  const generation = instance.metadata.generation;
  const status: TemplateInstanceStatus = {
    phase: phaseOf(ready),
    ...(health ? { readyResources: health.readyResources } : {}),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    conditions: mergeConditions(previous.conditions, [...drafts, ready], input.now, generation),
    trackedGVKs: input.trackedGVKs,
  };
  return { ...status, ...carriedOver(input) };
}

function phaseOf(ready: ConditionDraft): TemplateInstanceStatus['phase'] {
  if (ready.status === 'True') return 'Ready';
  const waiting: string[] = [InstanceReason.ResourcesInProgress, InstanceReason.Waiting];
  return waiting.includes(ready.reason) ? 'Progressing' : 'Failed';
}

/** When the instance expires (spec.ttl, stencil.dev/expires-at), when it does. */
function lifetimeFields(instance: TemplateInstance): TemplateInstanceStatus {
  const expiry = expiryOf(instance);
  return expiry.ok && expiry.value ? { expiresAt: rfc3339(expiry.value) } : {};
}

/** The revision this pass rendered (or failed to render): the one a rollout judges it on. */
function revisionFields(
  previous: TemplateInstanceStatus,
  template: Template | undefined,
  revisions: StatusInput['revisions'],
): TemplateInstanceStatus {
  const revision = template ? revisions?.revision : previous.revision;
  const latestRevision = template ? revisions?.latest : previous.latestRevision;
  return {
    ...(revision !== undefined ? { revision } : {}),
    ...(latestRevision !== undefined ? { latestRevision } : {}),
  };
}

/** Fields that keep their previous value unless this reconcile produced a new one. */
function carriedOver({
  instance,
  template,
  evaluation,
  apply,
  freeze,
  now,
  revisions,
  syncMode,
}: StatusInput): TemplateInstanceStatus {
  const previous = instance.status ?? {};
  const carried: TemplateInstanceStatus = {
    ...revisionFields(previous, template, revisions),
    ...lifetimeFields(instance),
  };
  Object.assign(carried, syncModeField(previous, template, syncMode));
  const resolvedTemplateRef = template
    ? { ...templateRefOf(instance), generation: template.metadata.generation ?? 0 }
    : previous.resolvedTemplateRef;
  if (resolvedTemplateRef) carried.resolvedTemplateRef = resolvedTemplateRef;
  const resolvedParameters = evaluation.ok
    ? evaluation.resolved?.status
    : previous.resolvedParameters;
  if (resolvedParameters) carried.resolvedParameters = resolvedParameters;
  const rendered = apply?.renderedResources ?? previous.renderedResources;
  if (rendered) carried.renderedResources = rendered;
  Object.assign(carried, serviceAccountField(previous, evaluation));
  if (freeze === 'freeze') return { ...carried, frozen: true, frozenAt: now };
  if (freeze !== 'unfreeze' && previous.frozen)
    return { ...carried, frozen: true, frozenAt: previous.frozenAt ?? now };
  return carried;
}

/**
 * The mode this pass ran under. Strict is what keeps the instance the platform's (the chart's
 * admission policy reads it), so it is kept while the Template is missing, never dropped.
 */
function syncModeField(
  previous: TemplateInstanceStatus,
  template: Template | undefined,
  mode: SyncMode | undefined,
): TemplateInstanceStatus {
  const syncMode = template ? (mode ?? 'off') : previous.syncMode;
  return syncMode ? { syncMode } : {};
}

/** Who the instance acts as: this evaluation's identity, else the one recorded before. */
function serviceAccountField(
  previous: TemplateInstanceStatus,
  evaluation: InstanceEvaluation,
): TemplateInstanceStatus {
  const serviceAccount = (evaluation.ok && evaluation.actingAs) || previous.serviceAccount;
  return serviceAccount ? { serviceAccount } : {};
}

/**
 * The status with only its Ready condition replaced (Ready=False, `reason`): for a pass that
 * cannot evaluate, such as the deletion of an instance whose objects cannot all be deleted.
 */
export function withReady(
  instance: TemplateInstance,
  reason: string,
  message: string,
  now: string,
): TemplateInstanceStatus {
  const previous = instance.status?.conditions ?? [];
  const ready = mergeConditions(
    previous,
    [draft(InstanceConditionType.Ready, false, reason, message)],
    now,
    instance.metadata.generation,
  );
  return {
    ...instance.status,
    conditions: [...previous.filter((c) => c.type !== InstanceConditionType.Ready), ...ready],
  };
}

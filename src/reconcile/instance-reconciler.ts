// Reconciles one TemplateInstance (SPEC §2–§7): gather (instance, Template, namespace, sources)
// → decide (the engine's evaluation) → act (persist trackedGVKs, dry-run gate, apply, prune) →
// status (written only when it changed) and Events. Off instances freeze after their first clean
// apply; revert/strict instances keep their sources and rendered kinds watched. Deletion cleans
// up by label.
import { InstanceReason } from '../api/condition.ts';
import type { KubeObject } from '../api/object-meta.ts';
import type { SyncMode, Template } from '../api/template.ts';
import type {
  RenderedResourceRef,
  TemplateInstance,
  TemplateInstanceStatus,
} from '../api/template-instance.ts';
import {
  API_VERSION,
  FINALIZER_INSTANCE,
  MAX_RESOURCES,
  TEMPLATE_INSTANCE_KIND,
  TEMPLATE_KIND,
} from '../api/well-known.ts';
import {
  evaluateInstance,
  templateRefOf,
  type InstanceEvaluation,
} from '../engine/instance-evaluation.ts';
import {
  nextInstanceStatus,
  sameStatus,
  type ApplyOutcome,
  type StatusInput,
} from '../engine/instance-status.ts';
import { rfc3339 } from '../engine/conditions.ts';
import { gvkKey, resourceKey, type Owner } from '../engine/inventory.ts';
import {
  TerminalError,
  type Reconciler,
  type Request,
  type Result,
} from '../framework/reconciler.ts';
import type { ClusterPort } from './cluster-port.ts';
import { ClusterSource } from './cluster-source.ts';
import type { CacheReader, DependencyTracker, ReconcileMetrics, Trigger } from './reader.ts';
import {
  AppliedMemo,
  applyResources,
  deleteInReverseOrder,
  findOwned,
  renderedRef,
} from './resource-sync.ts';

/** Failures that only an edit of an input can fix: no retry until something changes. */
const TERMINAL_REASONS = new Set<string>([
  InstanceReason.TemplateNotFound,
  InstanceReason.NamespaceNotPermitted,
  InstanceReason.InvalidParameter,
  InstanceReason.OverrideNotAllowed,
  InstanceReason.ReferenceNotPermitted,
  InstanceReason.TemplateExecutionFailed,
]);

export interface InstanceReconcilerDeps {
  cluster: ClusterPort;
  cache: CacheReader;
  tracker: DependencyTracker;
  metrics?: ReconcileMetrics;
  now: () => Date;
  log: (
    level: 'debug' | 'info' | 'warn' | 'error',
    message: string,
    fields: Record<string, unknown>,
  ) => void;
}

/** Retried with backoff by the work queue; its message is already in the status. */
class RetryLater extends Error {}

/** Everything one reconcile knows, passed between its steps. */
interface Pass {
  key: string;
  instance: TemplateInstance;
  template: Template | undefined;
  mode: SyncMode;
  evaluation: InstanceEvaluation;
  trigger: Trigger | undefined;
}

export class InstanceReconciler implements Reconciler {
  private readonly memo = new AppliedMemo();

  constructor(private readonly deps: InstanceReconcilerDeps) {}

  async reconcile(request: Request): Promise<Result> {
    const key = `${request.namespace}/${request.name}`;
    // Peeked, not taken: the trigger stays until a pass completes, so a retry still knows why.
    const trigger = this.deps.tracker.peekTrigger(key);
    const instance = await this.load(key, request);
    if (!instance) return {};
    if (instance.metadata.deletionTimestamp) return this.finalize(instance);
    const template = (await this.deps.cluster.get({
      apiVersion: API_VERSION,
      kind: TEMPLATE_KIND,
      ...templateRefOf(instance),
    })) as Template | undefined;
    const mode: SyncMode = template?.spec.sync?.mode ?? 'off';
    if (instance.status?.frozen && mode === 'off') {
      // Frozen after its first clean apply: nothing re-applies; its watches are gone.
      this.deps.tracker.release(key);
      return {};
    }
    const evaluation = await this.evaluate(key, instance, template, mode);
    const pass: Pass = { key, instance, template, mode, evaluation, trigger };
    if (trigger?.kind === 'source')
      await this.event(instance, 'Normal', 'SourceChanged', trigger.description);
    if (!evaluation.ok) return this.reportFailure(pass);
    try {
      const result = await this.applyAndPrune(pass);
      this.deps.tracker.clearTrigger(key, trigger);
      return result;
    } catch (error) {
      // API errors quote names and paths, which a Secret-backed value may have produced.
      throw evaluation.redactor.redactError(error);
    }
  }

  /** The instance, with our finalizer; undefined when there is nothing (more) to do now. */
  private async load(key: string, request: Request): Promise<TemplateInstance | undefined> {
    const { cluster, tracker } = this.deps;
    const instance = (await cluster.get({
      apiVersion: API_VERSION,
      kind: TEMPLATE_INSTANCE_KIND,
      ...request,
    })) as TemplateInstance | undefined;
    if (!instance || instance.metadata.deletionTimestamp) {
      tracker.release(key);
      return instance;
    }
    if (!instance.metadata.finalizers?.includes(FINALIZER_INSTANCE)) {
      // The update event of this write brings the instance back.
      await cluster.setFinalizers(instance, [
        ...(instance.metadata.finalizers ?? []),
        FINALIZER_INSTANCE,
      ]);
      return undefined;
    }
    return instance;
  }

  /** Resolves and renders, and keeps the watches on what it read (and rendered) current. */
  private async evaluate(
    key: string,
    instance: TemplateInstance,
    template: Template | undefined,
    mode: SyncMode,
  ): Promise<InstanceEvaluation> {
    const source = new ClusterSource(this.deps.cluster);
    const namespace = instance.metadata.namespace ?? '';
    const evaluation = await evaluateInstance({
      instance,
      template,
      namespaceLabels:
        this.deps.cache.namespaceLabels(namespace) ?? (await this.namespaceLabels(namespace)),
      port: source,
    });
    const drift =
      mode === 'off'
        ? undefined
        : {
            uid: instance.metadata.uid ?? '',
            gvks: [...new Set(evaluation.resources.map(gvkKey))],
          };
    await this.deps.tracker.track(key, source.reads, drift);
    return evaluation;
  }

  private async namespaceLabels(name: string): Promise<Record<string, string>> {
    const namespace = await this.deps.cluster.get({ apiVersion: 'v1', kind: 'Namespace', name });
    return namespace?.metadata.labels ?? {};
  }

  private owner(instance: TemplateInstance): Owner {
    return {
      name: instance.metadata.name ?? '',
      namespace: instance.metadata.namespace ?? '',
      uid: instance.metadata.uid ?? '',
    };
  }

  private statusOf(
    pass: Pass,
    extra: Partial<StatusInput> & { trackedGVKs: string[] },
  ): TemplateInstanceStatus {
    const { instance, template, evaluation, mode } = pass;
    return nextInstanceStatus({
      instance,
      template,
      evaluation,
      syncMode: mode,
      now: this.now(),
      ...extra,
    });
  }

  private async reportFailure(pass: Pass): Promise<Result> {
    const { instance, evaluation } = pass;
    await this.writeStatus(
      instance,
      this.statusOf(pass, { trackedGVKs: instance.status?.trackedGVKs ?? [] }),
    );
    const problem = evaluation.problem!;
    if (problem.reason === InstanceReason.ParameterResolutionFailed) {
      await this.event(instance, 'Warning', 'ParameterResolutionFailed', problem.message);
    }
    if (TERMINAL_REASONS.has(problem.reason)) throw new TerminalError(problem.message);
    throw new RetryLater(problem.message);
  }

  private async applyAndPrune(pass: Pass): Promise<Result> {
    const { evaluation, mode } = pass;
    const owner = this.owner(pass.instance);
    const desired = evaluation.resources;
    const defaults = evaluation.resolved?.defaultsUsed ?? [];
    await this.reportDefaults(pass.instance, defaults);
    const previous = pass.instance.status?.renderedResources ?? [];
    const trackedGVKs = unionGVKs(pass.instance.status?.trackedGVKs, desired);
    const instance = await this.persistTrackedGVKs(pass.instance, trackedGVKs);
    const applied = await applyResources(
      this.deps.cluster,
      owner,
      desired,
      ignoredFields(pass),
      this.memo,
    );
    const finish = (apply: ApplyOutcome, freeze?: StatusInput['freeze']): Promise<void> =>
      this.writeStatus(
        instance,
        this.statusOf({ ...pass, instance }, { apply, trackedGVKs, freeze }),
      );
    if (!applied.ok) {
      this.deps.metrics?.applies('failed', 1);
      const message = evaluation.redactor.redact(applied.message);
      await finish({ ok: false, message, renderedResources: previous });
      await this.event(instance, 'Warning', 'ApplyFailed', message);
      throw applied.retry ? new RetryLater(message) : new TerminalError(message);
    }
    await this.reportWrites(pass, applied.written);
    const cleanup = await this.cleanUp({ ...pass, instance }, owner, trackedGVKs, previous);
    const rendered = [...applied.live.map((o) => renderedRef(o)), ...cleanup.failed];
    // A kind that is not served yet may be installed later: keep retrying so the instance heals.
    const clean = !cleanup.retry && !defaults.some((d) => d.failure === 'NotServed');
    const freeze = freezeDecision(mode, clean, instance.status?.frozen === true);
    await finish(
      {
        ok: true,
        message: `${desired.length} resource(s) applied${cleanup.note}`,
        renderedResources: rendered.slice(0, MAX_RESOURCES),
      },
      freeze,
    );
    if (freeze === 'freeze') this.deps.tracker.release(pass.key);
    if (!clean) throw new RetryLater(`${desired.length} resource(s) applied${cleanup.note}`);
    return {};
  }

  private async reportDefaults(
    instance: TemplateInstance,
    defaults: { name: string; message: string }[],
  ): Promise<void> {
    for (const used of defaults) {
      await this.event(
        instance,
        'Normal',
        'DefaultValueUsed',
        `parameter "${used.name}": used its defaultValue (${used.message})`,
      );
    }
  }

  /** Prunes after a successful apply, unless a defaultValue stood in for a transient failure. */
  private async cleanUp(
    pass: Pass,
    owner: Owner,
    trackedGVKs: string[],
    previous: RenderedResourceRef[],
  ): Promise<{ failed: RenderedResourceRef[]; retry: boolean; note: string }> {
    if (pass.evaluation.resolved?.transientFallback) {
      const note =
        '; pruning skipped this time because a defaultValue stood in for a source that could not be read';
      return { failed: [], retry: true, note };
    }
    const failed = await this.prune(pass, owner, trackedGVKs, previous);
    if (failed.length === 0) return { failed, retry: false, note: '' };
    return {
      failed,
      retry: true,
      note: `; ${failed.length} orphaned resource(s) could not be deleted yet and are retried`,
    };
  }

  private async reportWrites(pass: Pass, written: KubeObject[]): Promise<void> {
    this.deps.metrics?.applies('applied', written.length);
    this.deps.metrics?.applies('unchanged', pass.evaluation.resources.length - written.length);
    if (written.length === 0) return;
    if (pass.trigger?.kind === 'drift') this.deps.metrics?.driftReverted(written.length);
    const summary = pass.evaluation.redactor.redact(summarize(written));
    if (pass.trigger?.kind === 'drift')
      await this.event(
        pass.instance,
        'Normal',
        'DriftReverted',
        `reverted ${written.length} resource(s): ${summary}`,
      );
    else
      await this.event(
        pass.instance,
        'Normal',
        'Applied',
        `applied ${written.length} resource(s): ${summary}`,
      );
    this.deps.tracker.applied(pass.key, pass.trigger, written);
  }

  /** Records every kind about to be applied before anything is applied, so nothing can leak. */
  private async persistTrackedGVKs(
    instance: TemplateInstance,
    trackedGVKs: string[],
  ): Promise<TemplateInstance> {
    const before = [...(instance.status?.trackedGVKs ?? [])].sort();
    if (trackedGVKs.join() === before.join()) return instance;
    const updated = await this.deps.cluster.patchStatus(instance, {
      trackedGVKs,
    });
    return updated as unknown as TemplateInstance;
  }

  /** Deletes what is owned but no longer rendered; returns the entries that must stay (Failed). */
  private async prune(
    pass: Pass,
    owner: Owner,
    trackedGVKs: string[],
    previous: RenderedResourceRef[],
  ): Promise<RenderedResourceRef[]> {
    const { instance, evaluation } = pass;
    const desired = evaluation.resources;
    const wanted = new Set(desired.map((o) => resourceKey(o)));
    const unchanged =
      previous.length === desired.length &&
      previous.every((r) => !r.status && wanted.has(resourceKey(r)));
    // Label discovery (one LIST per tracked kind) only when the rendered set changed or a delete
    // is pending: otherwise everything owned is exactly what was just applied.
    if (unchanged) return [];
    const owned = await findOwned(this.deps.cluster, owner.uid, trackedGVKs, previous);
    const orphans = owned.filter((id) => !wanted.has(resourceKey(id)));
    if (orphans.length === 0) return [];
    const result = await deleteInReverseOrder(this.deps.cluster, orphans);
    this.deps.metrics?.orphans('deleted', result.deleted.length);
    this.deps.metrics?.orphans(result.allAccepted ? 'pending' : 'failed', result.remaining.length);
    if (result.deleted.length > 0) {
      await this.event(
        instance,
        'Normal',
        'Pruned',
        `deleted ${result.deleted.length} orphaned resource(s): ${evaluation.redactor.redact(summarize(result.deleted))}`,
      );
    }
    return result.remaining.map(({ id }) => ({
      apiVersion: id.apiVersion,
      kind: id.kind,
      name: id.name,
      ...(id.namespace ? { namespace: id.namespace } : {}),
      status: 'Failed' as const,
    }));
  }

  private async finalize(instance: TemplateInstance): Promise<Result> {
    const finalizers = instance.metadata.finalizers ?? [];
    if (!finalizers.includes(FINALIZER_INSTANCE)) return {};
    const owner = this.owner(instance);
    const owned = await findOwned(
      this.deps.cluster,
      owner.uid,
      instance.status?.trackedGVKs ?? [],
      instance.status?.renderedResources ?? [],
    );
    const result = await deleteInReverseOrder(this.deps.cluster, owned);
    if (!result.allAccepted)
      throw new RetryLater(result.remaining.map((r) => r.message).join('; '));
    if (result.deleted.length > 0) {
      await this.event(
        instance,
        'Normal',
        'Pruned',
        `deleted ${result.deleted.length} resource(s) of the deleted instance`,
      );
    }
    await this.deps.cluster.setFinalizers(
      instance,
      finalizers.filter((f) => f !== FINALIZER_INSTANCE),
    );
    return {};
  }

  /** Writes the status when it changed; top-level fields that disappeared are removed (null). */
  private async writeStatus(
    instance: TemplateInstance,
    status: TemplateInstanceStatus,
  ): Promise<void> {
    if (sameStatus(instance.status, status)) return;
    const removed = Object.keys(instance.status ?? {}).filter((k) => !(k in status));
    const patch: Record<string, unknown> = {
      ...status,
      ...Object.fromEntries(removed.map((k) => [k, null])),
    };
    await this.deps.cluster.patchStatus(instance, patch);
  }

  private async event(
    instance: TemplateInstance,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<void> {
    try {
      await this.deps.cluster.recordEvent({
        regarding: instance,
        type,
        reason,
        message,
      });
    } catch (error) {
      this.deps.log('warn', 'could not record event', { reason, error: String(error) });
    }
  }

  private now(): string {
    return rfc3339(this.deps.now());
  }
}

/** ignoreFields apply under revert and strict; an off instance applies exactly what it renders. */
function ignoredFields(pass: Pass): string[] {
  if (pass.mode === 'off') return [];
  return pass.template?.spec.sync?.ignoreFields ?? [];
}

/** Kinds ever rendered: the previous set plus what is about to be applied. */
function unionGVKs(previous: string[] | undefined, desired: KubeObject[]): string[] {
  return [...new Set([...(previous ?? []), ...desired.map(gvkKey)])].sort();
}

/** Off instances freeze after a clean apply; leaving off unfreezes them (SPEC §7). */
function freezeDecision(mode: SyncMode, clean: boolean, frozen: boolean): StatusInput['freeze'] {
  if (mode === 'off') return clean ? 'freeze' : undefined;
  return frozen ? 'unfreeze' : undefined;
}

function summarize(
  objects: { kind: string; name?: string; metadata?: { name?: string } }[],
): string {
  const names = objects.slice(0, 10).map((o) => `${o.kind}/${o.metadata?.name ?? o.name ?? ''}`);
  return objects.length > 10
    ? `${names.join(', ')} and ${objects.length - 10} more`
    : names.join(', ');
}

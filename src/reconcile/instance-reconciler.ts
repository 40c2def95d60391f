// Reconciles one TemplateInstance (SPEC §2–§7): gather (instance, Template, namespace, sources)
// → decide (the engine's evaluation and apply plan) → act (persist trackedGVKs, run the plan,
// prune) → status (written only when it changed, conditional on the instance's resourceVersion)
// and Events. Every request of a pass is bound to the queue's signal, so a replica that must stop
// stops writing at once. Waiting on the cluster is a requeueAfter; only errors back off.
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
  LABEL_INSTANCE_UID,
  MAX_RESOURCES,
  TEMPLATE_INSTANCE_KIND,
} from '../api/well-known.ts';
import { evaluateInstance, type InstanceEvaluation } from '../engine/instance-evaluation.ts';
import type { RenderRunner } from '../engine/render-job.ts';
import {
  nextInstanceStatus,
  sameStatus,
  withReady,
  type ApplyOutcome,
  type StatusInput,
} from '../engine/instance-status.ts';
import { rfc3339 } from '../engine/conditions.ts';
import { gvkKey, resourceKey, type Owner } from '../engine/inventory.ts';
import { expiryOf } from '../engine/expiry.ts';
import { mergePatchReplacing } from '../engine/json-map.ts';
import { healthOf } from '../engine/health.ts';
import { Redactor } from '../engine/redaction.ts';
import {
  TerminalError,
  type Reconciler,
  type Request,
  type Result,
} from '../framework/reconciler.ts';
import { AppliedMemo, applyResources, type ApplyResult } from './applier.ts';
import {
  isClusterError,
  type ClusterPort,
  type EventRecord,
  type ObjectId,
} from './cluster-port.ts';
import { dispositionOf } from '../engine/pass-outcome.ts';
import { ClusterSource } from './cluster-source.ts';
import { requesterAuthorizer, type AuthorizeSources } from './requester-authorization.ts';
import { EventSender } from './event-sender.ts';
import type {
  CacheReader,
  DependencyTracker,
  ReconcileLog,
  ReconcileMetrics,
  Trigger,
} from './reader.ts';
import { deleteInReverseOrder, findOwned, renderedRef } from './resource-sync.ts';
import { templateFor, type TemplateChoice } from './template-content.ts';

/** How soon to look again while waiting on the cluster (finalizers, a CRD being served). */
export const WAIT_REQUEUE_MS = 2_000;

export interface InstanceReconcilerDeps {
  cluster: ClusterPort;
  cache: CacheReader;
  tracker: DependencyTracker;
  metrics?: ReconcileMetrics;
  /** Where Events go (sent beside the passes); one of its own when not given. */
  events?: EventSender;
  /** Where renders run (the operator's worker pool); this thread when not given. */
  renderer?: RenderRunner;
  /** Whose rights a valueFrom read needs besides the operator's (ADR 0020); default operator. */
  authorizeSources?: AuthorizeSources;
  now: () => Date;
  log: ReconcileLog;
}

/** Retried with backoff by the work queue; its message is already in the status. */
class RetryLater extends Error {}

/** Everything one reconcile knows, passed between its steps. */
interface Pass {
  key: string;
  /** The cluster, bound to this pass's signal. */
  cluster: ClusterPort;
  instance: TemplateInstance;
  template: Template | undefined;
  /** Which revision `template` is at (ADR 0012). */
  choice: TemplateChoice;
  mode: SyncMode;
  evaluation: InstanceEvaluation;
  trigger: Trigger | undefined;
}

/** How a pass that applied everything ends. */
interface Cleanup {
  failed: RenderedResourceRef[];
  /** Something failed and must be retried with backoff. */
  retry: boolean;
  /** Something is still in progress (deletes waiting on finalizers): look again soon. */
  waiting: boolean;
  note: string;
}

const NOTHING_TO_CLEAN: Cleanup = { failed: [], retry: false, waiting: false, note: '' };

export class InstanceReconciler implements Reconciler {
  private readonly memo = new AppliedMemo();
  private readonly events: EventSender;

  constructor(private readonly deps: InstanceReconcilerDeps) {
    this.events = deps.events ?? new EventSender();
  }

  /**
   * Every error leaves a pass redacted, so the queue may log it: the evaluation redacts what it
   * throws once Secret data is in hand, a pass redacts what applying throws with its redactor,
   * and what fails before or without an evaluation (reading the instance, deleting) holds no
   * Secret data.
   */
  async reconcile(request: Request, signal: AbortSignal): Promise<Result> {
    try {
      return await this.pass(request, signal);
    } catch (error) {
      throw Redactor.none.redactError(error);
    }
  }

  private async pass(request: Request, signal: AbortSignal): Promise<Result> {
    const key = `${request.namespace}/${request.name}`;
    const cluster = this.deps.cluster.bind(signal);
    // Peeked, not taken: the trigger stays until a pass completes, so a retry still knows why.
    const trigger = this.deps.tracker.peekTrigger(key);
    const instance = await this.load(cluster, key, request);
    if (!instance) return {};
    if (instance.metadata.deletionTimestamp) return this.finalize(cluster, instance);
    const expiry = expiryOf(instance);
    const expiresAt = expiry.ok ? expiry.value : undefined;
    const now = this.deps.now().getTime();
    if (expiresAt && expiresAt.getTime() <= now) return this.expire(cluster, instance, expiresAt);
    const result = await this.renderAndApply(cluster, key, instance, trigger);
    return untilExpiry(result, expiresAt, now);
  }

  /** One pass over a live instance: choose its content, evaluate, apply and prune, report. */
  private async renderAndApply(
    cluster: ClusterPort,
    key: string,
    instance: TemplateInstance,
    trigger: Trigger | undefined,
  ): Promise<Result> {
    const choice = await templateFor(cluster, instance, this.deps.cache);
    const { template } = choice;
    const mode: SyncMode = template?.spec.sync?.mode ?? 'off';
    if (instance.status?.frozen && mode === 'off') {
      // Frozen after its first clean apply: nothing re-applies; its watches are gone.
      this.deps.tracker.release(key);
      return {};
    }
    const evaluation = await this.evaluate(cluster, key, instance, choice);
    const pass: Pass = { key, cluster, instance, template, choice, mode, evaluation, trigger };
    if (trigger?.kind === 'source')
      this.event(pass, 'Normal', 'SourceChanged', trigger.description);
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

  /**
   * Its time is up (spec.ttl, stencil.dev/expires-at): deleting the instance starts the normal
   * deletion path, whose finalizer removes what it owns.
   */
  private async expire(
    cluster: ClusterPort,
    instance: TemplateInstance,
    expiresAt: Date,
  ): Promise<Result> {
    const { namespace, name = '' } = instance.metadata;
    await cluster.delete({
      apiVersion: API_VERSION,
      kind: TEMPLATE_INSTANCE_KIND,
      namespace,
      name,
    });
    this.recordEvent(cluster, Redactor.none, {
      regarding: instance,
      type: 'Normal',
      reason: 'Expired',
      message: `expired at ${rfc3339(expiresAt)}; deleting it and what it owns`,
    });
    return {};
  }

  /** The instance, with our finalizer (added now if missing); undefined when it is gone. */
  private async load(
    cluster: ClusterPort,
    key: string,
    request: Request,
  ): Promise<TemplateInstance | undefined> {
    const instance = (await cluster.get({
      apiVersion: API_VERSION,
      kind: TEMPLATE_INSTANCE_KIND,
      ...request,
    })) as TemplateInstance | undefined;
    if (!instance || instance.metadata.deletionTimestamp) {
      this.deps.tracker.release(key);
      return instance;
    }
    if (instance.metadata.finalizers?.includes(FINALIZER_INSTANCE)) return instance;
    // The pass goes on with the instance the patch returned; the update event of this write is
    // recognised as ours and brings nothing back (ownFinalizerAdded in event-routing).
    const updated = await cluster.setFinalizers(instance, [
      ...(instance.metadata.finalizers ?? []),
      FINALIZER_INSTANCE,
    ]);
    return updated as unknown as TemplateInstance;
  }

  /** Resolves and renders, and keeps the watches on what it read (and rendered) current. */
  private async evaluate(
    cluster: ClusterPort,
    key: string,
    instance: TemplateInstance,
    { template, missingRevision }: TemplateChoice,
  ): Promise<InstanceEvaluation> {
    const source = new ClusterSource(
      cluster,
      this.deps.authorizeSources === 'requester'
        ? requesterAuthorizer(cluster, instance)
        : undefined,
    );
    const namespace = instance.metadata.namespace ?? '';
    const evaluation = await evaluateInstance({
      instance,
      template,
      missingRevision,
      namespaceLabels:
        this.deps.cache.namespaceLabels(namespace) ??
        (await this.namespaceLabels(cluster, namespace)),
      port: source,
      observe: (ref) => this.observe(cluster, instance, ref),
      renderer: this.deps.renderer,
    });
    // Every instance that is not frozen watches what it rendered: revert/strict to revert drift,
    // and all of them to see the health of their objects change.
    const drift = {
      uid: instance.metadata.uid ?? '',
      gvks: [...new Set(evaluation.resources.map(gvkKey))],
    };
    await this.deps.tracker.track(key, source.reads, drift);
    return evaluation;
  }

  /**
   * A producer an `observed` call names, as this instance applied it: an object of that name
   * that this instance does not own (not applied yet, someone else's) counts as not there, so
   * nothing of a stranger's is copied into what the instance renders. Not a source watch: the
   * producer is rendered, so the drift watch on its kind already brings its changes.
   */
  private async observe(
    cluster: ClusterPort,
    instance: TemplateInstance,
    ref: ObjectId,
  ): Promise<KubeObject | undefined> {
    let live: KubeObject | undefined;
    try {
      live = await cluster.get(ref);
    } catch (error) {
      if (isClusterError(error, 'NotServed')) return undefined;
      throw error;
    }
    const uid = instance.metadata.uid;
    return uid !== undefined && live?.metadata.labels?.[LABEL_INSTANCE_UID] === uid
      ? live
      : undefined;
  }

  private async namespaceLabels(
    cluster: ClusterPort,
    name: string,
  ): Promise<Record<string, string>> {
    const namespace = await cluster.get({ apiVersion: 'v1', kind: 'Namespace', name });
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
    const { instance, template, evaluation, mode, choice } = pass;
    return nextInstanceStatus({
      instance,
      template,
      evaluation,
      syncMode: mode,
      revisions: { revision: choice.revision, latest: choice.latest },
      now: this.now(),
      ...extra,
    });
  }

  private async reportFailure(pass: Pass): Promise<Result> {
    const { instance, evaluation } = pass;
    await this.writeStatus(
      pass.cluster,
      instance,
      this.statusOf(pass, { trackedGVKs: instance.status?.trackedGVKs ?? [] }),
    );
    const problem = evaluation.problem!;
    if (problem.reason === InstanceReason.ParameterResolutionFailed) {
      this.event(pass, 'Warning', 'ParameterResolutionFailed', problem.message);
    }
    if (dispositionOf(problem) === 'terminal') throw new TerminalError(problem.message);
    throw new RetryLater(problem.message);
  }

  private async applyAndPrune(before: Pass): Promise<Result> {
    const desired = before.evaluation.resources;
    const defaults = before.evaluation.resolved?.defaultsUsed ?? [];
    this.reportDefaults(before, defaults);
    const previous = before.instance.status?.renderedResources ?? [];
    const firstApply = nothingAppliedYet(before.instance);
    const trackedGVKs = unionGVKs(before.instance.status?.trackedGVKs, desired);
    // From here on the pass holds only the instance this write returned: a later conditional
    // write through the one read before it would fail with a Conflict.
    const pass: Pass = { ...before, instance: await this.persistTrackedGVKs(before, trackedGVKs) };
    const { evaluation, mode, instance } = pass;
    const owner = this.owner(instance);
    const applied = await applyResources(pass.cluster, {
      owner,
      rendered: desired,
      ignoreFields: ignoredFields(pass),
      memo: this.memo,
      beginWrite: (object) => this.deps.tracker.beginWrite(object),
      waits: evaluation.waits,
    });
    const finish = (apply: ApplyOutcome, freeze?: StatusInput['freeze']): Promise<void> =>
      this.writeStatus(pass.cluster, instance, this.statusOf(pass, { apply, trackedGVKs, freeze }));
    if (!applied.ok) return this.applyStopped(pass, applied, (apply) => finish(apply));
    this.reportWrites(pass, applied.written, applied.unchanged);
    const cleanup = await this.cleanUp(pass, owner, trackedGVKs, previous, firstApply);
    const rendered = [
      ...applied.live.map((o, i) => renderedRef(o, '', healthOf(o, desired[i]))),
      ...cleanup.failed,
    ];
    // A kind that is not served yet may be installed later: keep retrying so the instance heals.
    const unserved = defaults.some((d) => d.failure === 'NotServed');
    // An off instance freezes once what it applied is healthy too: until then its drift watches
    // bring every status change of its objects (and the resync re-evaluates a stuck one).
    const healthy = rendered.every((r) => r.health === undefined || r.health === 'Current');
    const clean = !cleanup.retry && !cleanup.waiting && !unserved && healthy;
    const freeze = freezeDecision(mode, clean, instance.status?.frozen === true);
    const message = `${desired.length} resource(s) applied${cleanup.note}`;
    await finish(
      { ok: true, message, renderedResources: rendered.slice(0, MAX_RESOURCES) },
      freeze,
    );
    if (freeze === 'freeze') this.deps.tracker.release(pass.key);
    if (cleanup.retry || unserved) throw new RetryLater(message);
    return cleanup.waiting ? { requeueAfter: WAIT_REQUEUE_MS } : {};
  }

  /** The apply stopped: waiting on the cluster (requeue soon) or rejected (error or terminal). */
  private async applyStopped(
    pass: Pass,
    applied: Extract<ApplyResult, { ok: false }>,
    finish: (apply: ApplyOutcome) => Promise<void>,
  ): Promise<Result> {
    const message = pass.evaluation.redactor.redact(applied.message);
    const renderedResources = pass.instance.status?.renderedResources ?? [];
    if (applied.waiting) {
      this.reportWrites(pass, applied.written, applied.unchanged);
      await finish({
        ok: false,
        waiting: true,
        message,
        renderedResources: knownSoFar(pass.evaluation.resources, applied.live, renderedResources),
      });
      return { requeueAfter: WAIT_REQUEUE_MS };
    }
    this.deps.metrics?.applies('failed', 1);
    await finish({ ok: false, message, renderedResources });
    this.event(pass, 'Warning', 'ApplyFailed', message);
    throw applied.retry ? new RetryLater(message) : new TerminalError(message);
  }

  private reportDefaults(pass: Pass, defaults: { name: string; message: string }[]): void {
    for (const used of defaults) {
      this.event(
        pass,
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
    firstApply: boolean,
  ): Promise<Cleanup> {
    if (pass.evaluation.resolved?.transientFallback) {
      const note =
        '; pruning skipped this time because a defaultValue stood in for a source that could not be read';
      return { failed: [], retry: true, waiting: false, note };
    }
    if (firstApply) return NOTHING_TO_CLEAN;
    const { failed, errors } = await this.prune(pass, owner, trackedGVKs, previous);
    if (failed.length === 0) return NOTHING_TO_CLEAN;
    return {
      failed,
      retry: errors,
      waiting: !errors,
      note: `; ${failed.length} orphaned resource(s) could not be deleted yet and are retried`,
    };
  }

  /** `unchanged`: the objects the pass reached and found as rendered (never those not reached). */
  private reportWrites(pass: Pass, written: KubeObject[], unchanged: number): void {
    this.deps.metrics?.applies('applied', written.length);
    this.deps.metrics?.applies('unchanged', unchanged);
    if (written.length === 0) return;
    if (pass.trigger?.kind === 'drift') this.deps.metrics?.driftReverted(written.length);
    const summary = summarize(written);
    if (pass.trigger?.kind === 'drift')
      this.event(
        pass,
        'Normal',
        'DriftReverted',
        `reverted ${written.length} resource(s): ${summary}`,
      );
    else this.event(pass, 'Normal', 'Applied', `applied ${written.length} resource(s): ${summary}`);
    this.deps.tracker.applied(pass.key, pass.trigger);
  }

  /** Records every kind about to be applied before anything is applied, so nothing can leak. */
  private async persistTrackedGVKs(pass: Pass, trackedGVKs: string[]): Promise<TemplateInstance> {
    const { instance } = pass;
    const before = [...(instance.status?.trackedGVKs ?? [])].sort();
    if (trackedGVKs.join() === before.join()) return instance;
    const updated = await pass.cluster.patchStatus(instance, { trackedGVKs });
    return updated as unknown as TemplateInstance;
  }

  /**
   * Deletes what is owned but no longer rendered; returns the entries that must stay (Failed)
   * and whether any of them failed with an error (rather than waiting on finalizers).
   */
  private async prune(
    pass: Pass,
    owner: Owner,
    trackedGVKs: string[],
    previous: RenderedResourceRef[],
  ): Promise<{ failed: RenderedResourceRef[]; errors: boolean }> {
    const { evaluation, cluster } = pass;
    const desired = evaluation.resources;
    const wanted = new Set(desired.map((o) => resourceKey(o)));
    const unchanged =
      previous.length === desired.length &&
      previous.every((r) => !r.status && wanted.has(resourceKey(r)));
    // Label discovery (one LIST per tracked kind) only when the rendered set changed or a delete
    // is pending: otherwise everything owned is exactly what was just applied.
    if (unchanged) return { failed: [], errors: false };
    const { owned, unlisted } = await findOwned(cluster, owner.uid, trackedGVKs, previous);
    this.reportUnlisted(cluster, pass.instance, unlisted);
    const orphans = owned.filter((id) => !wanted.has(resourceKey(id)));
    if (orphans.length === 0) return { failed: [], errors: false };
    const result = await deleteInReverseOrder(cluster, orphans);
    this.deps.metrics?.orphans('deleted', result.deleted.length);
    this.deps.metrics?.orphans(result.allAccepted ? 'pending' : 'failed', result.remaining.length);
    if (result.deleted.length > 0) {
      this.event(
        pass,
        'Normal',
        'Pruned',
        `deleted ${result.deleted.length} orphaned resource(s): ${summarize(result.deleted)}`,
      );
    }
    const failed = result.remaining.map(({ id }) => ({
      apiVersion: id.apiVersion,
      kind: id.kind,
      name: id.name,
      ...(id.namespace ? { namespace: id.namespace } : {}),
      status: 'Failed' as const,
    }));
    return { failed, errors: !result.allAccepted };
  }

  private async finalize(cluster: ClusterPort, instance: TemplateInstance): Promise<Result> {
    const finalizers = instance.metadata.finalizers ?? [];
    if (!finalizers.includes(FINALIZER_INSTANCE)) return {};
    const owner = this.owner(instance);
    const { owned, unlisted } = await findOwned(
      cluster,
      owner.uid,
      instance.status?.trackedGVKs ?? [],
      instance.status?.renderedResources ?? [],
    );
    this.reportUnlisted(cluster, instance, unlisted);
    const result = await deleteInReverseOrder(cluster, owned);
    if (!result.allAccepted) {
      // Said where the instance owner looks, not only in the operator's log.
      const message = `cannot delete what the instance owns yet: ${result.remaining.map((r) => r.message).join('; ')}`;
      await this.writeStatus(
        cluster,
        instance,
        withReady(instance, InstanceReason.DeleteFailed, message, this.now()),
      );
      this.recordEvent(cluster, Redactor.none, {
        regarding: instance,
        type: 'Warning',
        reason: InstanceReason.DeleteFailed,
        message,
      });
      throw new RetryLater(message);
    }
    // Accepted but held by finalizers: waiting, not failing.
    if (result.remaining.length > 0) return { requeueAfter: WAIT_REQUEUE_MS };
    if (result.deleted.length > 0) {
      this.recordEvent(cluster, Redactor.none, {
        regarding: instance,
        type: 'Normal',
        reason: 'Pruned',
        message: `deleted ${result.deleted.length} resource(s) of the deleted instance`,
      });
    }
    await cluster.setFinalizers(
      instance,
      finalizers.filter((f) => f !== FINALIZER_INSTANCE),
    );
    return {};
  }

  /** Kinds skipped because the operator may not list them (nothing of them recorded). */
  private reportUnlisted(
    cluster: ClusterPort,
    instance: TemplateInstance,
    unlisted: string[],
  ): void {
    if (unlisted.length === 0) return;
    this.recordEvent(cluster, Redactor.none, {
      regarding: instance,
      type: 'Warning',
      reason: 'ListForbidden',
      message: `not searched for objects of this instance, as the operator may not list them and none is recorded as applied: ${unlisted.join('; ')}`,
    });
  }

  /**
   * Writes the status when it changed; fields that disappeared are removed (mergePatchReplacing).
   * Conditional on the resourceVersion the instance was read at: a newer status written by
   * anyone meanwhile makes this a Conflict (retried from a fresh read), never an overwrite.
   */
  private async writeStatus(
    cluster: ClusterPort,
    instance: TemplateInstance,
    status: TemplateInstanceStatus,
  ): Promise<void> {
    if (sameStatus(instance.status, status)) return;
    await cluster.patchStatus(instance, mergePatchReplacing(instance.status ?? {}, status));
  }

  /** An Event on the pass's instance, its message redacted like every other message of it. */
  private event(pass: Pass, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.recordEvent(pass.cluster, pass.evaluation.redactor, {
      regarding: pass.instance,
      type,
      reason,
      message,
    });
  }

  /** Queued beside the pass (see EventSender); a failure to record one is logged, not thrown. */
  private recordEvent(cluster: ClusterPort, redactor: Redactor, event: EventRecord): void {
    const redacted = { ...event, message: redactor.redact(event.message) };
    const { namespace = '', name = '' } = event.regarding.metadata;
    this.events.enqueue(`${namespace}/${name}`, async () => {
      try {
        await cluster.recordEvent(redacted);
      } catch (error) {
        this.deps.log('warn', 'could not record event', {
          reason: event.reason,
          error: redactor.redact(String(error)),
        });
      }
    });
  }

  private now(): string {
    return rfc3339(this.deps.now());
  }
}

/**
 * Longest wait for an expiry in one timer: the resync re-enqueues long before, and Node timers
 * overflow past 24.8 days.
 */
const MAX_EXPIRY_WAIT_MS = 12 * 3_600_000;

/** A pass's result, coming back by the instance's expiry at the latest. */
function untilExpiry(result: Result, expiresAt: Date | undefined, now: number): Result {
  if (!expiresAt) return result;
  const wait = Math.min(MAX_EXPIRY_WAIT_MS, Math.max(0, expiresAt.getTime() - now));
  return { ...result, requeueAfter: Math.min(result.requeueAfter ?? Infinity, wait) };
}

/**
 * While a pass waits (an earlier wave, a CRD being served): the objects that exist so far, with
 * their health, and the previous entries of those that do not exist yet.
 */
function knownSoFar(
  desired: KubeObject[],
  live: (KubeObject | undefined)[],
  previous: RenderedResourceRef[],
): RenderedResourceRef[] {
  const known = live.flatMap((o, i) => (o ? [renderedRef(o, '', healthOf(o, desired[i]))] : []));
  const keys = new Set(known.map((r) => resourceKey(r)));
  return [...known, ...previous.filter((r) => !keys.has(resourceKey(r)))].slice(0, MAX_RESOURCES);
}

/**
 * Kinds are recorded before anything is applied: an instance that recorded none has applied
 * nothing yet, so it owns nothing a label search could find (its first pass prunes nothing).
 */
function nothingAppliedYet(instance: TemplateInstance): boolean {
  const status = instance.status;
  return !status?.trackedGVKs?.length && !status?.renderedResources?.length;
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

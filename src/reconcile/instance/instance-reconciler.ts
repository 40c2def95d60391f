// Reconciles one TemplateInstance (SPEC §2–§7) as gather → decide → act: the engine's `decide`
// (src/engine/pass/decision.ts) makes every choice of the pass from what has been observed so
// far; this file only carries out the step it asks for (read, evaluate, apply, list, delete),
// adds the outcome to the observation and asks again, then acts on the conclusion: one status
// write (only when it changed), the Events, the counts, the watches, the finalizer and the
// Result. Every request of a pass is bound to the queue's signal, so a replica that must stop
// stops writing at once.
import type { KubeObject } from '../../api/object-meta.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import { FINALIZER_INSTANCE } from '../../api/well-known.ts';
import type { InstanceEvaluation } from '../../engine/evaluation/instance-evaluation.ts';
import { gvkKey, instanceOwner, resourceKey } from '../../engine/objects/inventory.ts';
import { Redactor } from '../../engine/redaction/redaction.ts';
import { decide, type Conclusion, type Step } from '../../engine/pass/decision.ts';
import type { ParentRecord } from '../../engine/objects/applyset.ts';
import type { BlockingObject, Observed } from '../../engine/pass/observation.ts';
import {
  TerminalError,
  type Reconciler,
  type Request,
  type Result,
} from '../../framework/reconciler.ts';
import { AppliedMemo } from './applied-memo.ts';
import { applyResources } from './applier.ts';
import { isNamespaceTerminating, type ClusterPort, type ObjectId } from '../cluster-port.ts';
import { actingFor, type ActingDeps } from './acting.ts';
import { templateRefOf } from '../../engine/shared/template-ref.ts';
import { evaluateOnCluster, type Acting, type EvaluationDeps } from './evaluate-on-cluster.ts';
import { EventSender } from './event-sender.ts';
import {
  getInstance,
  type CacheReader,
  type DependencyTracker,
  type ReconcileLog,
  type ReconcileMetrics,
  type Trigger,
} from '../reader.ts';
import { deleteInReverseOrder, findOwned } from './resource-sync.ts';
import { removeFinalizer, writeStatusIfChanged } from '../status-writes.ts';
import { templateFor } from '../template-content.ts';

export { WAIT_REQUEUE_MS } from '../../engine/pass/decision.ts';

export interface InstanceReconcilerDeps extends EvaluationDeps, ActingDeps {
  cluster: ClusterPort;
  cache: CacheReader;
  tracker: DependencyTracker;
  metrics?: ReconcileMetrics;
  /** Where Events go (sent beside the passes); one of its own when not given. */
  events?: EventSender;
  /** What our applies produced, shared with the drift watches; one of its own when not given. */
  applied?: AppliedMemo;
  now: () => Date;
  log: ReconcileLog;
}

/** Retried with backoff by the work queue; its message is already in the status. */
class RetryLater extends Error {}

/** One pass in progress: what it observed, and the one instance it writes through. */
interface Pass {
  key: string;
  /** The cluster, bound to this pass's signal. */
  cluster: ClusterPort;
  observed: Observed;
  /**
   * The instance as last returned by the API server: every conditional write of the pass goes
   * through it, so a write of this pass never conflicts with an earlier one of the same pass.
   */
  held: TemplateInstance | undefined;
  trigger: Trigger | undefined;
  /** Who the Template's requests are made as, once the pass has asked (see `acting`). */
  acting?: Acting;
  /** What the pass's evaluation made it depend on (its watches), once it has evaluated. */
  tracked?: Parameters<DependencyTracker['track']>;
}

export class InstanceReconciler implements Reconciler {
  private readonly memo: AppliedMemo;
  private readonly events: EventSender;
  /** By instance key: the resourceVersion our last write to the instance produced. */
  private readonly written = new Map<string, string>();

  constructor(private readonly deps: InstanceReconcilerDeps) {
    this.events = deps.events ?? new EventSender();
    this.memo = deps.applied ?? new AppliedMemo();
  }

  /**
   * Every error leaves a pass redacted, so the queue may log it: the evaluation redacts what it
   * throws once Secret data is in hand, a pass redacts what its steps throw with the
   * evaluation's redactor, and what fails before an evaluation holds no Secret data.
   */
  async reconcile(request: Request, signal: AbortSignal): Promise<Result> {
    const key = `${request.namespace}/${request.name}`;
    const cluster = this.deps.cluster.bind(signal);
    // Peeked, not taken: the trigger stays until a pass completes, so a retry still knows why.
    const trigger = this.deps.tracker.peekTrigger(key);
    let redactor = Redactor.none;
    try {
      const instance = await this.load(cluster, request, key);
      const observed: Observed = { instance, now: this.deps.now(), trigger };
      const pass: Pass = { key, cluster, observed, held: instance, trigger };
      let decision = decide(observed);
      while (decision.step !== 'conclude') {
        await this.carryOut(pass, decision);
        // The clock moves with what the pass has seen: a condition it concludes must not date
        // from before the observation it reports (a Deployment that turned Available while the
        // pass was reading it would otherwise look Ready a second before it was Available).
        observed.now = this.deps.now();
        redactor = observed.evaluation?.redactor ?? redactor;
        decision = decide(observed);
      }
      return await this.conclude(pass, decision);
    } catch (error) {
      // API errors quote names and paths, which a Secret-backed value may have produced.
      throw redactor.redactError(error);
    }
  }

  /**
   * The instance as the informer cache holds it, copied (a pass must not change what the cache
   * shares). Read from the API server instead when the cache has not seen it, or lags a write
   * of our own (it still shows an older version than the one our last write produced).
   */
  private async load(
    cluster: ClusterPort,
    request: Request,
    key: string,
  ): Promise<TemplateInstance | undefined> {
    const { cache } = this.deps;
    const cached = cache.instance(request.namespace, request.name);
    const ours = this.written.get(key);
    this.written.delete(key);
    if (cached && (ours === undefined || cached.metadata.resourceVersion === ours))
      return structuredClone(cached);
    return getInstance(cluster, cache, request.namespace, request.name);
  }

  /** An instance as the API server returned it, read as the engine reads instances. */
  private read(object: KubeObject): TemplateInstance | undefined {
    return this.deps.cache.readInstance
      ? this.deps.cache.readInstance(object)
      : (object as unknown as TemplateInstance);
  }

  /** The instance as one of our writes left it: what the pass goes on with, and load's guard. */
  private wrote(pass: Pass, result: KubeObject | undefined): void {
    if (!result) return;
    pass.held = this.read(result) ?? pass.held;
    const version = result.metadata.resourceVersion;
    if (version) this.written.set(pass.key, version);
    // Only keys written since their last pass are held; a resync of every instance loads (and
    // clears) them all, so the map stays as small as the number of recent writes.
    if (this.written.size > 100_000) this.written.clear();
  }

  /** Gathers or does what the decision asks, adding the outcome to the observation. */
  private async carryOut(pass: Pass, step: Step): Promise<void> {
    const { observed, cluster } = pass;
    const instance = pass.held!;
    switch (step.step) {
      case 'expire':
        await cluster.delete(instanceId(instance));
        observed.expired = true;
        return;
      case 'choose-content':
        observed.content = await templateFor(cluster, instance, this.deps.cache);
        return;
      case 'evaluate':
        observed.evaluation = await this.evaluate(pass, instance);
        return;
      case 'apply':
        observed.applied = await this.apply(pass, step.record, step.ignoreFields);
        return;
      case 'list-owned': {
        const acting = await this.acting(pass, instance);
        observed.owned = await findOwned(
          acting.port,
          instance.metadata.uid ?? '',
          step.gvks,
          step.known,
          // A ServiceAccount acting for a team lists where the instance wrote, not everywhere.
          acting.user ? step.namespaces : undefined,
        );
        return;
      }
      case 'delete':
        observed.deleted = await deleteInReverseOrder(
          (await this.acting(pass, instance)).port,
          step.objects,
        );
        return;
    }
  }

  /** Who the Template's requests are made as in this pass (see actingFor, ADR 0035). */
  private async acting(pass: Pass, instance: TemplateInstance): Promise<Acting> {
    if (pass.acting) return pass.acting;
    const ref = templateRefOf(instance);
    const template =
      pass.observed.content?.template ?? this.deps.cache.template(ref.namespace, ref.name);
    pass.acting = await actingFor(
      pass.cluster,
      this.deps,
      template,
      instance.status?.serviceAccount,
    );
    return pass.acting;
  }

  /** Resolves and renders, and keeps the watches on what it read (and rendered) current. */
  private async evaluate(pass: Pass, instance: TemplateInstance): Promise<InstanceEvaluation> {
    const { evaluation } = await evaluateOnCluster(
      pass.cluster,
      this.deps,
      instance,
      pass.observed.content!,
      {
        // Every instance that is not frozen watches what it rendered: revert/strict to revert
        // drift, and all of them to see the health of their objects change.
        track: ({ evaluation, reads }) => {
          pass.tracked = [
            pass.key,
            reads,
            {
              uid: instance.metadata.uid ?? '',
              gvks: [...new Set(evaluation.resources.map(gvkKey))],
            },
          ];
          return this.deps.tracker.track(...pass.tracked);
        },
        acting: await this.acting(pass, instance),
      },
    );
    return evaluation;
  }

  /**
   * Writes the instance's record (finalizer, ApplySet kinds and namespaces) before anything is
   * applied, in one patch, so nothing can be applied that deletion would not find.
   */
  private async apply(
    pass: Pass,
    record: ParentRecord | undefined,
    ignoreFields: string[],
  ): Promise<Observed['applied']> {
    const instance = pass.held!;
    if (record) this.wrote(pass, await pass.cluster.patchMetadata(instance, record));
    const evaluation = pass.observed.evaluation!;
    const applied = await applyResources((await this.acting(pass, instance)).port, {
      owner: instanceOwner(pass.held!),
      rendered: evaluation.resources,
      ignoreFields,
      memo: this.memo,
      beginWrite: (object) => this.deps.tracker.beginWrite(object),
      waits: evaluation.waits,
      known: new Set((instance.status?.renderedResources ?? []).map((r) => resourceKey(r))),
    });
    if (!applied.ok && !applied.waiting && applied.blockedBy)
      await this.waitOn(pass, applied.blockedBy);
    return applied;
  }

  /**
   * Makes the pass depend on the object that stands in its way, beside what it read: the adopt
   * annotation on it, or its deletion, brings the next pass (which waits instead of retrying).
   */
  private async waitOn(pass: Pass, object: BlockingObject): Promise<void> {
    if (!pass.tracked) return;
    const [key, reads, drift] = pass.tracked;
    const { resourceVersion, ...ref } = object;
    const seen = `${ref.namespace ?? ''}/${ref.name}`;
    const observed = resourceVersion ? { [seen]: resourceVersion } : {};
    await this.deps.tracker.track(key, [...reads, { ...ref, observed }], drift);
  }

  /** Acts on how the pass ends: status, Events, counts, watches, finalizer, Result. */
  private async conclude(pass: Pass, conclusion: Conclusion): Promise<Result> {
    const { cluster, key } = pass;
    if (pass.held && conclusion.status)
      this.wrote(pass, await writeStatusIfChanged(cluster, pass.held, conclusion.status));
    const { held } = pass;
    const redactor = pass.observed.evaluation?.redactor ?? Redactor.none;
    if (held)
      for (const event of conclusion.events) this.recordEvent(cluster, redactor, held, event);
    this.count(conclusion.counts);
    if (conclusion.wroteForTrigger) this.deps.tracker.applied(key, pass.trigger);
    if (conclusion.releaseWatches) this.deps.tracker.release(key);
    if (conclusion.removeFinalizer && held) {
      await removeFinalizer(cluster, held, FINALIZER_INSTANCE);
      this.written.delete(key);
    }
    if (conclusion.triggerHandled) this.deps.tracker.clearTrigger(key, pass.trigger);
    return resultOf(conclusion.end);
  }

  private count(counts: Conclusion['counts']): void {
    const { metrics } = this.deps;
    if (!metrics) return;
    if (counts.applied > 0) metrics.applies('applied', counts.applied);
    if (counts.unchanged > 0) metrics.applies('unchanged', counts.unchanged);
    if (counts.failed > 0) metrics.applies('failed', counts.failed);
    if (counts.driftReverted > 0) metrics.driftReverted(counts.driftReverted);
    if (counts.orphansDeleted > 0) metrics.orphans('deleted', counts.orphansDeleted);
    if (counts.orphansPending > 0) metrics.orphans('pending', counts.orphansPending);
    if (counts.orphansFailed > 0) metrics.orphans('failed', counts.orphansFailed);
  }

  /**
   * Queued beside the pass (see EventSender); a failure to record one is logged, not thrown.
   * Messages come redacted from the decision.
   */
  private recordEvent(
    cluster: ClusterPort,
    redactor: Redactor,
    regarding: TemplateInstance,
    event: Conclusion['events'][number],
  ): void {
    const { namespace = '', name = '' } = regarding.metadata;
    this.events.enqueue(`${namespace}/${name}`, async () => {
      try {
        await cluster.recordEvent({ regarding, ...event });
      } catch (error) {
        // A namespace being deleted takes no new Events; that is no news to anyone.
        if (isNamespaceTerminating(error)) return;
        this.deps.log('warn', 'could not record event', {
          reason: event.reason,
          error: redactor.redact(String(error)),
        });
      }
    });
  }
}

/** The framework's Result for how the pass ends: retries and terminal failures are thrown. */
function resultOf(end: Conclusion['end']): Result {
  switch (end.kind) {
    case 'done':
      return {};
    case 'requeue':
      return { requeueAfter: end.afterMs };
    case 'retry':
      throw new RetryLater(end.message);
    case 'terminal':
      throw new TerminalError(end.message);
  }
}

/** The instance itself, of its own kind (a TemplateInstance, or a typed instance). */
function instanceId(instance: TemplateInstance): ObjectId {
  const { namespace, name = '' } = instance.metadata;
  return { apiVersion: instance.apiVersion, kind: instance.kind, namespace, name };
}

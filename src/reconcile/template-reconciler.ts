// Reconciles one Template (SPEC §1): static validation and the dry-run render as conditions and
// phase, and the finalizer that holds deletion while TemplateInstances reference it.
import type { Condition } from '../api/condition.ts';
import { TemplateConditionType, TemplateReason } from '../api/condition.ts';
import type { PreflightStatus, Template, TemplateStatus } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import {
  ANNOTATION_ROLLOUT,
  API_VERSION,
  FINALIZER_TEMPLATE,
  TEMPLATE_KIND,
} from '../api/well-known.ts';
import {
  draft,
  mergeConditions,
  rfc3339,
  type ConditionDraft,
} from '../engine/shared/conditions.ts';
import {
  evaluateTemplateChecked,
  type TemplateEvaluation,
} from '../engine/evaluation/template-evaluation.ts';
import { summarizeProblems, type Problem } from '../engine/shared/problem.ts';
import { checkApi } from '../engine/typed-api/api-checks.ts';
import { NO_API_ALLOWANCE, type ApiAllowance } from '../engine/typed-api/api-names.ts';
import type { ServedResource } from '../engine/typed-api/api-shadowing.ts';
import {
  checkApiOnCluster,
  publishApi,
  unpublishApi,
  unpublishUnwatched,
  type ApiCheck,
  type PublishedNow,
} from './template-api.ts';
import type { Kinded, ObjectSchemas } from '../engine/object-schema/object-schema.ts';
import type { RenderRunner } from '../engine/render/render-job.ts';
import type { Reconciler, Request, Result } from '../framework/reconciler.ts';
import type { ClusterPort } from './cluster-port.ts';
import type { CacheReader } from './reader.ts';
import { ensureFinalizer, removeFinalizer, writeStatusIfChanged } from './status-writes.ts';
import { syncRevisions, type Releases } from './template-revisions.ts';
import type { PreflightRunner } from './preflight.ts';
import { preflightCondition, preflightMode } from '../engine/releases/preflight.ts';

export interface TemplateReconcilerDeps {
  cluster: ClusterPort;
  cache: CacheReader;
  /**
   * What the objects of the check render are checked against: the schemas the API server
   * publishes (ADR 0030), as `stencil validate` checks them against the offline ones.
   */
  schemas?: ObjectSchemas;
  /**
   * Runs the trial render (the operator's render pool, under its deadline: ADR 0018); on this
   * thread when absent.
   */
  renderer?: RenderRunner;
  /**
   * Of the apiVersions given, those the schemas lack because the API server has not published
   * them yet (ClusterSchemas.unpublished).
   */
  unpublished?: (apiVersions: readonly string[]) => string[];
  /** Checks every instance against a new revision before any moves to it (ADR 0031). */
  preflight: Pick<PreflightRunner, 'advance' | 'forget'>;
  /** Which namespaces may publish which API groups (ADR 0032); absent: none may. */
  apiGroups?: ApiAllowance;
  /** The kinds a Template publishes now, with how many instances each has. */
  publishedBy?: (namespace: string, name: string) => PublishedNow[];
  /**
   * Every resource the API server serves (discovery), whose names a published kind may not
   * take; absent: only Stencil's own names are refused.
   */
  servedResources?: () => Promise<readonly ServedResource[]>;
  now: () => Date;
}

/**
 * How soon a Template is checked again when a kind it renders is served but its schema not yet
 * published (a CRD just installed): the published list is read again at most this often too.
 */
export const UNPUBLISHED_RECHECK_MS = 5_000;

/** How soon a preflight looks again for a revision it was just told of but cannot read yet. */
const REVISION_WAIT_MS = 1_000;

export class TemplateReconciler implements Reconciler {
  constructor(private readonly deps: TemplateReconcilerDeps) {}

  async reconcile(request: Request, signal: AbortSignal): Promise<Result> {
    // Every request of this pass stops when the queue aborts it (lost leadership, shutdown).
    const cluster = this.deps.cluster.bind(signal);
    const template = (await cluster.get({
      apiVersion: API_VERSION,
      kind: TEMPLATE_KIND,
      ...request,
    })) as Template | undefined;
    if (!template) return {};
    const finalizers = template.metadata.finalizers ?? [];
    if (template.metadata.deletionTimestamp) return this.finalize(cluster, template, finalizers);
    if (!finalizers.includes(FINALIZER_TEMPLATE)) {
      // Its update event brings the Template back with the finalizer in place.
      await ensureFinalizer(cluster, template, FINALIZER_TEMPLATE);
      return {};
    }
    const { evaluation, api, publishedNow } = await this.evaluate(cluster, template);
    // Only valid content becomes a release: an invalid edit never reaches instances that follow
    // a progressive rollout (under strategy All they render the live Template and report it).
    const releases = await syncRevisions(
      cluster,
      this.deps.cache,
      template,
      evaluation.phase === 'Valid',
    );
    const resume = template.metadata.annotations?.[ANNOTATION_ROLLOUT] === 'resume';
    const { release, preflight, again } = await this.release(cluster, template, releases, resume);
    const conditions = [...evaluation.conditions];
    const published = await this.publish(cluster, template, evaluation, api, publishedNow);
    if (published) conditions.push(published);
    if (preflight)
      conditions.push(preflightCondition(preflight, preflightMode(template.spec.rollout)));
    const written = await writeStatusIfChanged<TemplateStatus>(cluster, template, {
      observedGeneration: template.metadata.generation,
      phase: evaluation.phase,
      conditions: mergeConditions(
        template.status?.conditions,
        conditions,
        rfc3339(this.deps.now()),
        template.metadata.generation,
      ),
      ...release,
      ...(preflight ? { preflight } : {}),
    });
    // Acted on: the next halt needs a new resume.
    if (resume) await cluster.removeAnnotation(written ?? template, ANNOTATION_ROLLOUT);
    if (again !== undefined) return { requeueAfter: again };
    return (await this.awaitsSchemas(cluster, evaluation.renderedKinds))
      ? { requeueAfter: UNPUBLISHED_RECHECK_MS }
      : {};
  }

  /** The Template's checks: its content's, then its published kind's (ADR 0032). */
  private async evaluate(
    cluster: ClusterPort,
    template: Template,
  ): Promise<{ evaluation: TemplateEvaluation; api: ApiCheck; publishedNow: PublishedNow[] }> {
    const { schemas } = this.deps;
    const checked = await evaluateTemplateChecked(template, schemas, this.deps.renderer);
    const publishedNow = this.publishedNow(template);
    const api = await this.checkApi(cluster, template, checked, publishedNow);
    const evaluation = api.problems.length > 0 ? refused(checked, api.problems) : checked;
    return { evaluation, api, publishedNow };
  }

  /** A valid Template's kind applied, or the kinds it no longer publishes removed. */
  private async publish(
    cluster: ClusterPort,
    template: Template,
    evaluation: TemplateEvaluation,
    api: ApiCheck,
    publishedNow: PublishedNow[],
  ): Promise<ConditionDraft | undefined> {
    if (evaluation.phase !== 'Valid') return stillPublished(publishedNow);
    return template.spec.api
      ? publishApi(cluster, template, api)
      : unpublishApi(cluster, publishedNow);
  }

  private publishedNow(template: Template): PublishedNow[] {
    const { namespace = '', name = '' } = template.metadata;
    return this.deps.publishedBy?.(namespace, name) ?? [];
  }

  /**
   * The checks of `spec.api` (ADR 0032): the allowance and the CRD it makes (as `stencil crd`
   * checks them), then, for a Template otherwise valid, those against the cluster's CRDs and
   * the resources it serves.
   */
  private async checkApi(
    cluster: ClusterPort,
    template: Template,
    evaluation: TemplateEvaluation,
    publishedNow: PublishedNow[],
  ): Promise<ApiCheck> {
    const { problems, crd } = checkApi(template, this.deps.apiGroups ?? NO_API_ALLOWANCE);
    if (!crd || evaluation.phase !== 'Valid') return { problems, retired: [] };
    const served = (await this.deps.servedResources?.()) ?? [];
    return checkApiOnCluster(cluster, template, crd, publishedNow, served);
  }

  /**
   * The release part of the status. While the newest revision is in preflight, the next batch of
   * its instances is checked first, and the rollout planned with what was found (ADR 0031);
   * `again` says when to check the next one.
   */
  private async release(
    cluster: ClusterPort,
    template: Template,
    releases: Releases,
    resume: boolean,
  ): Promise<{
    release: ReturnType<Releases['status']>;
    preflight?: PreflightStatus;
    again?: number;
  }> {
    let preflight = template.status?.preflight;
    let release = releases.status(resume, preflight);
    const rollout = release.rollout;
    if (rollout?.phase !== 'Preflight') {
      this.deps.preflight.forget(template);
      return { release, preflight };
    }
    const revision = releases.revision(rollout.revision);
    // Not in the cache yet (just made): its event brings the Template back.
    if (!revision) return { release, preflight, again: REVISION_WAIT_MS };
    const progress = await this.deps.preflight.advance(cluster, template, revision);
    preflight = progress.report;
    release = releases.status(resume, preflight);
    if (release.rollout?.phase !== 'Preflight') this.deps.preflight.forget(template);
    return { release, preflight, again: progress.again };
  }

  /**
   * A rendered kind the API server serves but has not published a schema for yet was skipped by
   * the check: the Template is checked again soon, not at the next resync. (A kind served without
   * a published schema at all, rare, keeps one pass every few seconds.)
   */
  private async awaitsSchemas(cluster: ClusterPort, kinds: readonly Kinded[]): Promise<boolean> {
    const unpublished = new Set(this.deps.unpublished?.(kinds.map((k) => k.apiVersion)) ?? []);
    for (const k of kinds)
      if (unpublished.has(k.apiVersion) && (await cluster.scopeOf(k.apiVersion, k.kind)))
        return true;
    return false;
  }

  private async finalize(
    cluster: ClusterPort,
    template: Template,
    finalizers: string[],
  ): Promise<Result> {
    if (!finalizers.includes(FINALIZER_TEMPLATE)) return {};
    const users = this.deps.cache.instancesOf(
      template.metadata.namespace ?? '',
      template.metadata.name ?? '',
    );
    if (users.length > 0) {
      const blocked = draft(
        TemplateConditionType.Deleting,
        false,
        TemplateReason.DeletionBlocked,
        referencedBy(users),
      );
      const others = (template.status?.conditions ?? []).filter(
        (c: Condition) => c.type !== TemplateConditionType.Deleting,
      );
      const conditions = [
        ...others,
        ...mergeConditions(
          template.status?.conditions?.filter((c) => c.type === blocked.type),
          [blocked],
          rfc3339(this.deps.now()),
          template.metadata.generation,
        ),
      ];
      await writeStatusIfChanged<TemplateStatus>(cluster, template, {
        ...template.status,
        conditions,
      });
      // Instance deletions enqueue this Template again; nothing to poll.
      return {};
    }
    // Its kind goes with it: nothing is left that it would serve.
    const publishedNow = this.publishedNow(template);
    await unpublishApi(cluster, publishedNow);
    await unpublishUnwatched(cluster, template, publishedNow);
    await removeFinalizer(cluster, template, FINALIZER_TEMPLATE);
    return {};
  }
}

/** `referenced by 2 TemplateInstance(s)`, or `... 1 TemplateInstance(s) and 2 WebApp(s)`. */
function referencedBy(users: TemplateInstance[]): string {
  const counts = new Map<string, number>();
  for (const user of users) counts.set(user.kind, (counts.get(user.kind) ?? 0) + 1);
  const parts = [...counts].sort(([a], [b]) => a.localeCompare(b));
  return `referenced by ${parts.map(([kind, n]) => `${n} ${kind}(s)`).join(' and ')}`;
}

/** What an invalid Template's kinds are: served as they were before the change. */
function stillPublished(publishedNow: PublishedNow[]): ConditionDraft | undefined {
  if (publishedNow.length === 0) return undefined;
  return draft(
    TemplateConditionType.APIPublished,
    true,
    TemplateReason.APIEstablished,
    `${publishedNow.map((p) => p.crdName).join(', ')} still served as before this change, which is not valid`,
  );
}

/** The evaluation with `problems` of spec.api: Valid=False, named by the first one's reason. */
function refused(evaluation: TemplateEvaluation, problems: Problem[]): TemplateEvaluation {
  const valid = draft(
    TemplateConditionType.Valid,
    false,
    problems[0]!.reason,
    summarizeProblems(problems),
  );
  return {
    ...evaluation,
    phase: 'Invalid',
    problems: [...evaluation.problems, ...problems],
    conditions: [valid, ...evaluation.conditions.filter((c) => c.type !== valid.type)],
  };
}

// Change preflight (ADR 0031), the I/O part: each unpinned instance of a Template is rendered
// against the new revision with its live inputs, and what it would apply is previewed (reads,
// adoption check, strict dry runs; no write). The work is done a batch per Template pass, so the
// Template's queue worker is never held long, and a batch waits while the instance queue has
// input changes waiting: a tenant's edit or a rotated Secret is not delayed by a preflight.
import type { Template, TemplateRevision, PreflightStatus } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import { instanceOwner, resourceKey } from '../engine/objects/inventory.ts';
import { instanceKey } from '../engine/shared/instance-key.ts';
import { isFrozen, ignoredFieldsUnder } from '../engine/pass/decision.ts';
import { preflightReport, type PreflightVerdict } from '../engine/releases/preflight.ts';
import { templateAtRevision } from '../engine/releases/revisions.ts';
import { Redactor } from '../engine/redaction/redaction.ts';
import { formatProblem } from '../engine/shared/problem.ts';
import { isClusterError, type ClusterPort } from './cluster-port.ts';
import type { AppliedMemo } from './instance/applied-memo.ts';
import { previewApply } from './instance/applier.ts';
import { actingFor, type ActingDeps } from './instance/acting.ts';
import { evaluateOnCluster, type EvaluationDeps } from './instance/evaluate-on-cluster.ts';
import { mapLimit } from './instance/resource-sync.ts';
import type { CacheReader } from './reader.ts';

/** Instances checked per Template pass. */
export const PREFLIGHT_BATCH = 16;
/** Checks of one batch in flight at once. */
const CHECKS_IN_FLIGHT = 4;
/**
 * Longest a batch waits for the instance queue's input changes: under constant load, a
 * preflight still moves one batch this often, so it cannot starve either.
 */
export const MAX_YIELD_MS = 2_000;
/** How soon a preflight that yielded looks again. */
export const YIELD_RETRY_MS = 200;
/** Errors of the cluster (not refusals) an instance's check may meet before it counts as failed. */
const ATTEMPTS = 3;

export interface PreflightDeps extends EvaluationDeps, ActingDeps {
  cache: Pick<CacheReader, 'instancesOf' | 'instance' | 'namespaceLabels'>;
  /** What our applies produced: a render they produced exactly is unchanged without a read. */
  applied?: AppliedMemo;
  /** Whether input changes wait in the instance queue (the preflight then yields). */
  changesWaiting?: () => boolean;
  now?: () => number;
}

/** The next step of a Template's preflight. */
export interface PreflightProgress {
  report: PreflightStatus;
  /** Still running: when to come back (ms). */
  again?: number;
}

/** One Template's preflight of one revision, in memory: a restart starts it over. */
interface Run {
  revision: number;
  hash: string;
  /** Instance keys not checked yet, in name order. */
  waiting: string[];
  verdicts: Map<string, PreflightVerdict>;
  /** Cluster errors met per instance key. */
  errors: Map<string, number>;
  /** Instances gone before their turn: no longer counted. */
  gone: number;
  total: number;
  lastBatch: number;
}

export class PreflightRunner {
  private readonly runs = new Map<string, Run>();

  constructor(private readonly deps: PreflightDeps) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /**
   * Checks the next batch of the Template's instances against `revision` (unless the instance
   * queue has changes waiting) and returns the report so far.
   */
  async advance(
    cluster: ClusterPort,
    template: Template,
    revision: TemplateRevision,
  ): Promise<PreflightProgress> {
    const run = this.runOf(template, revision);
    const yielding =
      this.deps.changesWaiting?.() === true && this.now() - run.lastBatch < MAX_YIELD_MS;
    if (run.waiting.length > 0 && !yielding) await this.batch(cluster, template, revision, run);
    const report = preflightReport(run.revision, run.total - run.gone, run.verdicts.values());
    if (run.waiting.length > 0) return { report, again: yielding ? YIELD_RETRY_MS : 0 };
    return { report };
  }

  /** Drops what is kept for a Template (its preflight ended, or it is gone). */
  forget(template: Template): void {
    this.runs.delete(templateKey(template));
  }

  private runOf(template: Template, revision: TemplateRevision): Run {
    const key = templateKey(template);
    const existing = this.runs.get(key);
    if (existing?.revision === revision.spec.revision && existing.hash === revision.spec.hash)
      return existing;
    const { namespace = '', name = '' } = template.metadata;
    const waiting = this.deps.cache
      .instancesOf(namespace, name)
      .filter((i) => i.spec.templateRef.revision === undefined && !i.metadata.deletionTimestamp)
      .map(instanceKey)
      .sort();
    const run: Run = {
      revision: revision.spec.revision,
      hash: revision.spec.hash,
      waiting,
      verdicts: new Map(),
      errors: new Map(),
      gone: 0,
      total: waiting.length,
      lastBatch: 0,
    };
    this.runs.set(key, run);
    return run;
  }

  private async batch(
    cluster: ClusterPort,
    template: Template,
    revision: TemplateRevision,
    run: Run,
  ): Promise<void> {
    run.lastBatch = this.now();
    const keys = run.waiting.splice(0, PREFLIGHT_BATCH);
    const content = templateAtRevision(template, revision);
    await mapLimit(keys, CHECKS_IN_FLIGHT, async (key) => {
      const [namespace = '', name = ''] = key.split('/');
      const instance = this.deps.cache.instance(namespace, name);
      if (!instance || instance.metadata.deletionTimestamp) {
        run.gone++;
        return;
      }
      try {
        run.verdicts.set(key, await this.check(cluster, instance, content));
      } catch (error) {
        if (isClusterError(error, 'Aborted')) throw error;
        const errors = (run.errors.get(key) ?? 0) + 1;
        run.errors.set(key, errors);
        if (errors < ATTEMPTS) run.waiting.push(key);
        else
          run.verdicts.set(key, {
            instance: key,
            outcome: 'failed',
            reason: `not checked: ${error instanceof Error ? error.message : String(error)}`,
          });
      }
    });
  }

  /**
   * One instance against the new content: its evaluation's failure, or what previewing its
   * apply finds. Every message is redacted by the evaluation's redactor (provenance, ADR 0016);
   * an error thrown past it is redacted the same way.
   */
  private async check(
    cluster: ClusterPort,
    instance: TemplateInstance,
    template: Template,
  ): Promise<PreflightVerdict> {
    const key = instanceKey(instance);
    // It renders nothing again, whatever the revision.
    if (isFrozen(instance, template)) return { instance: key, outcome: 'unchanged' };
    let redactor = Redactor.none;
    try {
      // As its pass would: as the account the Template acts as (ADR 0035).
      const acting = await actingFor(cluster, this.deps, template, instance.status?.serviceAccount);
      const { evaluation } = await evaluateOnCluster(
        cluster,
        this.deps,
        instance,
        { template },
        { acting },
      );
      redactor = evaluation.redactor;
      if (!evaluation.ok) {
        const { problem } = evaluation;
        return { instance: key, outcome: 'failed', reason: problem && formatProblem(problem) };
      }
      const preview = await previewApply(acting.port, {
        owner: instanceOwner(instance),
        rendered: evaluation.resources,
        ignoreFields: ignoredFieldsUnder(template),
        memo: this.deps.applied,
        waits: evaluation.waits,
        known: new Set((instance.status?.renderedResources ?? []).map((r) => resourceKey(r))),
      });
      if (preview.outcome === 'failed')
        return { instance: key, outcome: 'failed', reason: redactor.redact(preview.message) };
      return { instance: key, outcome: preview.outcome };
    } catch (error) {
      throw redactor.redactError(error);
    }
  }
}

function templateKey(template: Template): string {
  return `${template.metadata.namespace ?? ''}/${template.metadata.name ?? ''}`;
}

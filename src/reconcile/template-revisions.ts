// The Template reconciler's release work (docs/adr/0012): make a TemplateRevision when the
// content changed, prune beyond the history limit (never the latest, the stable one, or one an
// instance is on or pinned to), and plan the rollout of the newest revision.
import type { KubeObject } from '../api/object-meta.ts';
import type {
  PreflightStatus,
  RevisionSummary,
  Template,
  TemplateRevision,
  TemplateStatus,
} from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import {
  API_VERSION,
  LABEL_REVISION,
  LABEL_TEMPLATE,
  TEMPLATE_KIND,
  TEMPLATE_REVISION_KIND,
} from '../api/well-known.ts';
import {
  contentHash,
  DEFAULT_REVISION_HISTORY_LIMIT,
  revisionContent,
  revisionName,
  revisionsToPrune,
} from '../engine/releases/revisions.ts';
import { planRollout } from '../engine/releases/rollout.ts';
import type { ClusterPort } from './cluster-port.ts';
import type { CacheReader } from './reader.ts';
import { latestRevision } from '../engine/releases/content-choice.ts';
import { rolloutMemberOf } from './template-content.ts';

type ReleaseStatus = Pick<TemplateStatus, 'latestRevision' | 'revisions' | 'rollout'>;

export interface Releases {
  /**
   * The release part of the Template's status; `resume` lifts a halted rollout, `preflight` is
   * what the preflight of the newest revision found so far (ADR 0031).
   */
  status(resume: boolean, preflight?: PreflightStatus): ReleaseStatus;
  /** A kept revision. */
  revision(revision: number): TemplateRevision | undefined;
}

function revisionObject(template: Template, revision: number): TemplateRevision {
  const content = revisionContent(template.spec);
  const name = template.metadata.name ?? '';
  return {
    apiVersion: API_VERSION,
    kind: TEMPLATE_REVISION_KIND,
    metadata: {
      name: revisionName(name, revision),
      namespace: template.metadata.namespace,
      labels: { [LABEL_TEMPLATE]: name, [LABEL_REVISION]: String(revision) },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: TEMPLATE_KIND,
          name,
          uid: template.metadata.uid ?? '',
          controller: true,
        },
      ],
    },
    spec: { template: name, revision, hash: contentHash(content), content },
  };
}

/**
 * Makes the revision for the Template's current content when `valid` and it differs from the
 * newest, prunes the history, and returns what the status reports.
 */
export async function syncRevisions(
  cluster: ClusterPort,
  cache: CacheReader,
  template: Template,
  valid: boolean,
): Promise<Releases> {
  const namespace = template.metadata.namespace ?? '';
  const name = template.metadata.name ?? '';
  const known = new Map(cache.revisionsOf(namespace, name).map((r) => [r.spec.revision, r]));
  let latest = latestRevision(template, [...known.values()]);
  const read = async (revision: number): Promise<TemplateRevision | undefined> =>
    known.get(revision) ??
    ((await cluster.get({
      apiVersion: API_VERSION,
      kind: TEMPLATE_REVISION_KIND,
      namespace,
      name: revisionName(name, revision),
    })) as TemplateRevision | undefined);
  if (valid) {
    const hash = contentHash(revisionContent(template.spec));
    const newest = latest === undefined ? undefined : await read(latest);
    if (newest?.spec.hash !== hash) {
      // A deterministic name: a stale view that picks a number already taken gets the API
      // server's immutability rule, not a second revision with that number.
      latest = (latest ?? 0) + 1;
      const object = revisionObject(template, latest) as unknown as KubeObject;
      const created = (await cluster.apply(object)) as unknown as TemplateRevision;
      known.set(latest, created);
    }
  }
  const instances = cache.instancesOf(namespace, name);
  await prune(cluster, template, known, instances, latest);
  const members = instances.map((i) => rolloutMemberOf(i, cache));
  return {
    status(resume, preflight) {
      if (latest === undefined) return {};
      const rollout = planRollout({
        spec: template.spec.rollout,
        latest,
        previous: template.status?.rollout,
        members,
        resume,
        preflight,
      });
      return { latestRevision: latest, rollout, revisions: summaries(known, instances) };
    },
    revision: (revision) => known.get(revision),
  };
}

/** Deletes what the history limit lets go; `known` keeps what is left. */
async function prune(
  cluster: ClusterPort,
  template: Template,
  known: Map<number, TemplateRevision>,
  instances: TemplateInstance[],
  latest: number | undefined,
): Promise<void> {
  const rollout = template.status?.rollout;
  const keep = new Set<number>(
    [
      latest,
      rollout?.revision,
      rollout?.stableRevision,
      ...instances.flatMap((i) => [i.spec.templateRef.revision, i.status?.revision]),
    ].filter((r): r is number => r !== undefined),
  );
  const limit = template.spec.revisionHistoryLimit ?? DEFAULT_REVISION_HISTORY_LIMIT;
  for (const revision of revisionsToPrune([...known.keys()], limit, keep)) {
    const object = known.get(revision)!;
    await cluster.delete({
      apiVersion: API_VERSION,
      kind: TEMPLATE_REVISION_KIND,
      namespace: object.metadata.namespace,
      name: object.metadata.name ?? '',
    });
    known.delete(revision);
  }
}

/**
 * Each kept revision, newest first, with the pins that hold it. (Not the instances on each: that
 * count follows every reconcile of every instance, and would rewrite the Template's status each
 * time; `kubectl get tpli -A` shows each instance's revision.)
 */
function summaries(
  known: Map<number, TemplateRevision>,
  instances: TemplateInstance[],
): RevisionSummary[] {
  return [...known.values()]
    .sort((a, b) => b.spec.revision - a.spec.revision)
    .map((r) => {
      const pinned = instances.filter(
        (i) => i.spec.templateRef.revision === r.spec.revision,
      ).length;
      return { revision: r.spec.revision, hash: r.spec.hash, ...(pinned > 0 ? { pinned } : {}) };
    });
}

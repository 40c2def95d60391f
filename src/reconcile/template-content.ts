// Which Template content an instance is rendered from, decided in one place (docs/adr/0012):
// a pinned revision; else, under a progressive rollout, the revision the rollout gives it; else
// the live Template (strategy All renders the newest content at once, as before revisions).
// Every reader (the instance reconciler, the strict webhook's ignoreFields) follows this.
import type { Template, TemplateRevision } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import { API_VERSION, TEMPLATE_KIND, TEMPLATE_REVISION_KIND } from '../api/well-known.ts';
import { templateRefOf } from '../engine/template-ref.ts';
import {
  contentHash,
  revisionContent,
  revisionName,
  templateAtRevision,
} from '../engine/revisions.ts';
import {
  isProgressive,
  memberOf,
  stagePositions,
  targetRevision,
  type RolloutMember,
} from '../engine/rollout.ts';
import type { ClusterPort } from './cluster-port.ts';
import type { CacheReader } from './reader.ts';

export interface TemplateChoice {
  /** What to render: the live Template, or it at the chosen revision. Undefined: no Template. */
  template: Template | undefined;
  /** The revision rendered (for strategy All: the revision holding the live content, if made). */
  revision?: number;
  /** The Template's newest revision. */
  latest?: number;
  /** A pinned (or assigned) revision that does not exist. */
  missingRevision?: number;
}

type Cache = Pick<CacheReader, 'template' | 'revisionsOf' | 'instancesOf' | 'namespaceLabels'>;

/**
 * The Template this instance should be on. The operator's cache answers when it has the Template
 * (a newer version than the cache's brings its own event, which re-enqueues every instance that
 * names it); only a Template the cache has not seen is read.
 */
export async function templateFor(
  cluster: ClusterPort,
  instance: TemplateInstance,
  cache?: Cache,
): Promise<TemplateChoice> {
  const ref = templateRefOf(instance);
  const live =
    cache?.template(ref.namespace, ref.name) ??
    ((await cluster.get({ apiVersion: API_VERSION, kind: TEMPLATE_KIND, ...ref })) as
      Template | undefined);
  if (!live) return { template: undefined };
  const revisions = cache?.revisionsOf(ref.namespace, ref.name) ?? [];
  const latest = latestRevision(live, revisions);
  const target = targetFor(instance, live, latest, cache);
  if (target === undefined) {
    const hash = liveContentHash(live);
    const same = revisions.find((r) => r.spec.hash === hash && r.spec.revision === latest);
    return { template: live, latest, revision: same?.spec.revision };
  }
  const revision =
    revisions.find((r) => r.spec.revision === target) ??
    ((await cluster.get({
      apiVersion: API_VERSION,
      kind: TEMPLATE_REVISION_KIND,
      namespace: ref.namespace,
      name: revisionName(ref.name, target),
    })) as TemplateRevision | undefined);
  if (!revision) return { template: live, latest, missingRevision: target };
  return { template: templateAtRevision(live, revision), revision: target, latest };
}

/**
 * The content hash of a live Template, once per cached object: every pass of every instance of
 * a strategy-All Template asks, and hashing the whole body each time would be work on a hot path.
 */
const contentHashes = new WeakMap<Template, string>();
function liveContentHash(live: Template): string {
  let hash = contentHashes.get(live);
  if (hash === undefined) {
    hash = contentHash(revisionContent(live.spec));
    contentHashes.set(live, hash);
  }
  return hash;
}

/** The newest revision: from the cache, or the Template's status when the cache lags. */
export function latestRevision(
  template: Template,
  revisions: TemplateRevision[],
): number | undefined {
  const numbers = revisions.map((r) => r.spec.revision);
  if (template.status?.latestRevision !== undefined) numbers.push(template.status.latestRevision);
  return numbers.length > 0 ? Math.max(...numbers) : undefined;
}

/** A revision to render, or undefined for the live Template (no pin, not progressive). */
function targetFor(
  instance: TemplateInstance,
  live: Template,
  latest: number | undefined,
  cache: Cache | undefined,
): number | undefined {
  const pin = instance.spec.templateRef.revision;
  if (pin !== undefined) return pin;
  const spec = live.spec.rollout;
  if (!isProgressive(spec) || latest === undefined || !cache) return undefined;
  const member = rolloutMemberOf(instance, cache);
  const { namespace = '', name = '' } = live.metadata;
  // Positions are only needed for an instance of the stage in progress: computed lazily.
  return targetRevision(member, spec, latest, live.status?.rollout, () => {
    const members = cache.instancesOf(namespace, name).map((i) => rolloutMemberOf(i, cache));
    return stagePositions(members, spec).get(member.key) ?? -1;
  });
}

/** The rollout's view of an instance, with its namespace's labels from the cache. */
export function rolloutMemberOf(
  instance: TemplateInstance,
  cache: Pick<CacheReader, 'namespaceLabels'>,
): RolloutMember {
  return memberOf(instance, cache.namespaceLabels(instance.metadata.namespace ?? '') ?? {});
}

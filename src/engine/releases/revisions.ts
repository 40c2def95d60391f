// Template revisions (docs/adr/0012): what a revision holds, how it is named and hashed, which
// content an instance renders, and which revisions the history limit lets go. Pure.
import { createHash } from 'node:crypto';
import type { Template, TemplateRevision, TemplateSpec } from '../../api/template.ts';
import { API_VERSION, TEMPLATE_KIND } from '../../api/well-known.ts';
import { canonicalJson } from '../shared/canonical-json.ts';

export const DEFAULT_REVISION_HISTORY_LIMIT = 10;

/** The Template's spec without its release settings: what a revision records. */
export function revisionContent(spec: TemplateSpec): TemplateSpec {
  const content: TemplateSpec = { ...spec };
  delete content.rollout;
  delete content.revisionHistoryLimit;
  delete content.api;
  // Who it acts as is policy, set by whom may impersonate it, not content to roll out.
  delete content.serviceAccountName;
  return content;
}

/** First 16 hex characters of the sha256 of the content's canonical JSON. */
export function contentHash(content: TemplateSpec): string {
  return createHash('sha256').update(canonicalJson(content)).digest('hex').slice(0, 16);
}

export function revisionName(template: string, revision: number): string {
  return `${template}-r${revision}`;
}

/**
 * The Template an instance renders when it is on `revision`: the revision's content, with the
 * live Template's policy, which a pin must not keep as it was before the platform team tightened
 * it: its namespace and reference policy, its sync mode (a tenant must not pin around a later
 * strict), which parameters it locks (disableOverride), and its release settings.
 */
export function templateAtRevision(live: Template, revision: TemplateRevision): Template {
  const { content } = revision.spec;
  const locked = new Set(
    (live.spec.parameters ?? []).filter((p) => p.disableOverride).map((p) => p.name),
  );
  return {
    ...live,
    spec: {
      ...content,
      parameters: content.parameters?.map((p) =>
        locked.has(p.name) ? { ...p, disableOverride: true } : p,
      ),
      // Its ignoreFields go with the body it renders; its mode is the live one.
      sync: { ...content.sync, mode: live.spec.sync?.mode ?? 'off' },
      targetNamespaces: live.spec.targetNamespaces,
      sourceNamespaces: live.spec.sourceNamespaces,
      sources: live.spec.sources,
      allowCrossNamespaceResources: live.spec.allowCrossNamespaceResources,
      allowClusterScopedResources: live.spec.allowClusterScopedResources,
      rollout: live.spec.rollout,
      revisionHistoryLimit: live.spec.revisionHistoryLimit,
      api: live.spec.api,
      maxTTL: live.spec.maxTTL,
      requireTTL: live.spec.requireTTL,
      serviceAccountName: live.spec.serviceAccountName,
    },
  };
}

/**
 * A Template made from a revision alone, for when the live Template is not at hand (offline
 * `stencil render --revisions` without `--template`): named after `spec.template`, in the
 * revision's namespace (else `namespace`), with the policy the revision recorded, which may be
 * older than the live Template's.
 */
export function templateOfRevision(revision: TemplateRevision, namespace: string): Template {
  return {
    apiVersion: API_VERSION,
    kind: TEMPLATE_KIND,
    metadata: { name: revision.spec.template, namespace: revision.metadata.namespace ?? namespace },
    spec: revision.spec.content,
  };
}

/**
 * Revisions beyond the history limit that may go, oldest first: never the latest, the rollout's
 * stable revision, or one an instance is on or pinned to.
 */
export function revisionsToPrune(revisions: number[], limit: number, keep: Set<number>): number[] {
  const newestFirst = [...new Set(revisions)].sort((a, b) => b - a);
  return newestFirst
    .slice(Math.max(1, limit))
    .filter((r) => !keep.has(r))
    .sort((a, b) => a - b);
}

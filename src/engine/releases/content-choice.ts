// Which Template content an instance renders (docs/adr/0012), decided in this one place for the
// operator's passes, the strict webhook's ignoreFields, the event routing that finds the
// instances a rollout moved, and the offline CLI: a revision asked for explicitly; else the
// instance's pin; else the revision the rollout gives it (under strategy All, the newest one that
// passed its preflight, ADR 0031); else the live Template (no rollout recorded yet).
import type { RolloutSpec, RolloutStatus, Template, TemplateRevision } from '../../api/template.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import { contentHash, revisionContent, templateAtRevision } from './revisions.ts';
import { targetRevision, type RolloutMember } from './rollout.ts';

export interface ContentChoice {
  /** What to render: the live Template, or it at the chosen revision. Undefined: no Template. */
  template: Template | undefined;
  /** The revision rendered (for the live Template: the revision holding its content, if made). */
  revision?: number;
  /** The Template's newest revision. */
  latest?: number;
  /** A pinned (assigned or requested) revision that is not among the revisions given. */
  missingRevision?: number;
}

/** How the Template's rollout sees the instance; positions are asked only when progressive. */
export interface RolloutView {
  member: () => RolloutMember;
  /** The member's index within its stage under these stages (see stagePositions). */
  position: (spec: RolloutSpec | undefined) => number;
  /** The rollout state to judge by: the Template's own unless another is given (event routing). */
  status?: RolloutStatus;
}

export interface ContentInputs {
  instance: TemplateInstance;
  live: Template | undefined;
  /** The revisions at hand: a cache's or a file's, plus any fetched for this choice. */
  revisions: readonly TemplateRevision[];
  /** Absent: the rollout is not consulted (no view of the other instances): the live content. */
  rollout?: RolloutView;
  /** A revision asked for explicitly (the CLI's --revision): it wins over everything else. */
  requested?: number;
}

/** The content an instance renders (see the file comment). */
export function chooseContent(inputs: ContentInputs): ContentChoice {
  const { live, revisions } = inputs;
  if (!live) return { template: undefined };
  const latest = latestRevision(live, revisions);
  const target = inputs.requested ?? revisionTarget(inputs.instance, live, latest, inputs.rollout);
  if (target === undefined) {
    // The live content counts as the newest revision when that revision holds the same content.
    const hash = liveContentHash(live);
    const same = revisions.find((r) => r.spec.hash === hash && r.spec.revision === latest);
    return { template: live, latest, revision: same?.spec.revision };
  }
  const revision = revisions.find((r) => r.spec.revision === target);
  if (!revision) return { template: live, latest, missingRevision: target };
  return { template: templateAtRevision(live, revision), revision: target, latest };
}

/**
 * The revision an instance renders, or undefined for the live Template: its pin; else the
 * revision the rollout gives it (targetRevision): under a progressive rollout, by stage; under
 * strategy All, the newest revision that passed its preflight (ADR 0031). A Template whose status
 * has no rollout yet (a first pass) renders its live content.
 */
export function revisionTarget(
  instance: TemplateInstance,
  live: Template,
  latest: number | undefined,
  rollout: RolloutView | undefined,
): number | undefined {
  const pin = instance.spec.templateRef.revision;
  if (pin !== undefined) return pin;
  const status = rollout && (rollout.status ?? live.status?.rollout);
  if (latest === undefined || !status) return undefined;
  const spec = live.spec.rollout;
  return targetRevision(rollout.member(), spec, latest, status, () => rollout.position(spec));
}

/** The newest revision: of those given, or the Template's status when those lag behind. */
export function latestRevision(
  template: Template,
  revisions: readonly TemplateRevision[],
): number | undefined {
  const numbers = revisions.map((r) => r.spec.revision);
  if (template.status?.latestRevision !== undefined) numbers.push(template.status.latestRevision);
  return numbers.length > 0 ? Math.max(...numbers) : undefined;
}

/**
 * The content hash of a live Template, once per object: every pass of every instance of a
 * strategy-All Template asks, and hashing the whole body each time would be work on a hot path.
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

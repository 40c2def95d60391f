// Expiring instances (issue #14, docs/adr/0013): when an instance's time is up, from `spec.ttl`
// (counted from its creation) or the `stencil.dev/expires-at` annotation, and whether the
// Template allows it (`maxTTL`, `requireTTL`). Pure: the caller supplies the clock.
import { InstanceReason } from '../api/condition.ts';
import type { Template } from '../api/template.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import { ANNOTATION_EXPIRES_AT } from '../api/well-known.ts';
import { failure, success, type Outcome } from './problem.ts';

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** Whole numbers with a unit, one or more: `90s`, `30m`, `1h30m`, `7d`. */
const DURATION = /^(?:\d+[smhd])+$/;
const PART = /(\d+)([smhd])/g;
/** A year: beyond it a TTL is a typo, and the arithmetic stays exact. */
const MAX_DURATION_MS = 366 * UNIT_MS.d!;

/** Milliseconds of a duration like `1h30m`; undefined when it is not one (or is zero). */
export function parseDuration(text: string): number | undefined {
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(PART)) total += Number(amount) * UNIT_MS[unit!]!;
  return total > 0 && total <= MAX_DURATION_MS ? total : undefined;
}

const DURATION_HELP = 'a duration such as 90s, 30m, 1h30m or 7d (at most 366d)';

/** The instance's expiry: the earlier of creation + ttl and the annotation; none when neither. */
export function expiryOf(instance: TemplateInstance): Outcome<Date | undefined> {
  const { ttl } = instance.spec;
  const annotation = instance.metadata.annotations?.[ANNOTATION_EXPIRES_AT];
  const candidates: number[] = [];
  if (ttl !== undefined) {
    const ms = parseDuration(ttl);
    if (ms === undefined)
      return refused(
        'spec.ttl',
        InstanceReason.InvalidTTL,
        `spec.ttl "${ttl}" is not ${DURATION_HELP}`,
      );
    const created = Date.parse(instance.metadata.creationTimestamp ?? '');
    // Not created yet (offline render): counted from now by the caller's clock, so unknown here.
    if (Number.isFinite(created)) candidates.push(created + ms);
  }
  if (annotation !== undefined) {
    const at = Date.parse(annotation);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(annotation) || !Number.isFinite(at))
      return refused(
        `metadata.annotations["${ANNOTATION_EXPIRES_AT}"]`,
        InstanceReason.InvalidTTL,
        `${ANNOTATION_EXPIRES_AT} "${annotation}" is not an RFC 3339 time such as 2026-12-31T18:00:00Z`,
      );
    candidates.push(at);
  }
  return success(candidates.length > 0 ? new Date(Math.min(...candidates)) : undefined);
}

/** Why the Template refuses this instance's lifetime (`maxTTL`, `requireTTL`), or nothing. */
export function ttlRefusal(
  template: Template,
  instance: TemplateInstance,
  expiry: Date | undefined,
): Outcome<void> {
  const { maxTTL, requireTTL } = template.spec;
  if (requireTTL && expiry === undefined && instance.spec.ttl === undefined)
    return refused(
      'spec.ttl',
      InstanceReason.TTLNotAllowed,
      `the Template requires a lifetime: set spec.ttl (${DURATION_HELP}) or the ${ANNOTATION_EXPIRES_AT} annotation`,
    );
  const max = maxTTL === undefined ? undefined : parseDuration(maxTTL);
  if (max === undefined) return success(undefined);
  const created = Date.parse(instance.metadata.creationTimestamp ?? '');
  const ttl = instance.spec.ttl === undefined ? undefined : parseDuration(instance.spec.ttl);
  const lifetime =
    expiry !== undefined && Number.isFinite(created) ? expiry.getTime() - created : ttl;
  // maxTTL caps a lifetime that is asked for; requireTTL is what makes one necessary.
  if (lifetime !== undefined && lifetime > max)
    return refused(
      instance.spec.ttl !== undefined
        ? 'spec.ttl'
        : `metadata.annotations["${ANNOTATION_EXPIRES_AT}"]`,
      InstanceReason.TTLNotAllowed,
      `the lifetime asked for is longer than the Template's maxTTL ${maxTTL}`,
    );
  return success(undefined);
}

function refused<T>(path: string, reason: string, message: string): Outcome<T> {
  return failure([{ path, reason, message }]);
}

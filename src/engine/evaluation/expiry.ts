// Expiring instances (issue #14, docs/adr/0013): when an instance's time is up, from `spec.ttl`
// (counted from its creation) or the `stencil.dev/expires-at` annotation, and whether the
// Template allows it (`maxTTL`, `requireTTL`). Pure: the caller supplies the clock.
import { InstanceReason } from '../../api/condition.ts';
import type { Template } from '../../api/template.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import { ANNOTATION_EXPIRES_AT } from '../../api/well-known.ts';
import { failure, success, type Outcome } from '../shared/problem.ts';

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

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Whether the fields name a day that exists and a time of day (00:00:00–23:59:59). */
function isRealDateTime(...[year, month, day, hour, minute, second]: number[]): boolean {
  const leap = year! % 4 === 0 && (year! % 100 !== 0 || year! % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month! - 1] ?? 0;
  return day! >= 1 && day! <= days && hour! <= 23 && minute! <= 59 && second! <= 59;
}

/**
 * Milliseconds since the epoch of an RFC 3339 date-time (ADR 0017), or undefined: the offset is
 * required (`Z` or `±hh:mm`; a local time would depend on the process's time zone), the date
 * must exist (2026-02-30 is refused, not read as 2 March), hours 00–23, minutes and seconds
 * 00–59. Fractions of a second are cut to milliseconds. Independent of the time zone.
 */
export function parseRfc3339(text: string): number | undefined {
  const match = RFC3339.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (!isRealDateTime(year, month, day, hour, minute, second)) return undefined;
  let offsetMinutes = 0;
  if (match[8] === undefined) {
    const [oh, om] = [Number(match[10]), Number(match[11])];
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (match[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const ms = Number((match[7] ?? '0').padEnd(3, '0').slice(0, 3));
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day); // years 0–99 stay as given (Date.UTC maps them to 19xx)
  utc.setUTCHours(hour, minute, second, ms);
  return utc.getTime() - offsetMinutes * 60_000;
}

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
    const at = typeof annotation === 'string' ? parseRfc3339(annotation) : undefined;
    if (at === undefined)
      return refused(
        `metadata.annotations["${ANNOTATION_EXPIRES_AT}"]`,
        InstanceReason.InvalidTTL,
        typeof annotation === 'string'
          ? `${ANNOTATION_EXPIRES_AT} "${annotation}" is not an RFC 3339 time with an offset and a real calendar date, such as 2026-12-31T18:00:00Z or 2026-12-31T10:00:00-08:00`
          : `${ANNOTATION_EXPIRES_AT} must be a string; quote it`,
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

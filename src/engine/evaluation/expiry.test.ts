import { describe, expect, it } from 'vitest';
import { aTemplate, anInstance } from '../../../test/support/builders.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import { expiryOf, parseDuration, parseRfc3339, ttlRefusal } from './expiry.ts';

function instance(ttl?: string, expiresAt?: string): TemplateInstance {
  const base = anInstance();
  return {
    ...base,
    metadata: {
      ...base.metadata,
      creationTimestamp: '2026-12-03T12:00:00Z',
      ...(expiresAt ? { annotations: { 'stencil.dev/expires-at': expiresAt } } : {}),
    },
    spec: { ...base.spec, ...(ttl ? { ttl } : {}) },
  };
}

describe('durations', () => {
  it.each([
    ['90s', 90_000],
    ['30m', 1_800_000],
    ['1h30m', 5_400_000],
    ['7d', 604_800_000],
  ])('reads %s', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['', '0s', '1.5h', '10', 'h', '1w', '-1h', '400d', '1h 30m'])('refuses %j', (text) =>
    expect(parseDuration(text)).toBeUndefined(),
  );
});

describe('an instance expiry', () => {
  it('counts spec.ttl from creation, and takes the earlier of it and the annotation', () => {
    expect(expiryOf(instance('2h'))).toEqual({ ok: true, value: new Date('2026-12-03T14:00:00Z') });
    const both = expiryOf(instance('2h', '2026-12-03T13:00:00Z'));
    expect(both.ok && both.value?.toISOString()).toBe('2026-12-03T13:00:00.000Z');
    expect(expiryOf(instance())).toEqual({ ok: true, value: undefined });
  });

  it('names the field that cannot be read', () => {
    const badTtl = expiryOf(instance('2 hours'));
    expect(!badTtl.ok && badTtl.problems[0]).toMatchObject({
      path: 'spec.ttl',
      reason: 'InvalidTTL',
    });
    const badAt = expiryOf(instance(undefined, 'tomorrow'));
    expect(!badAt.ok && badAt.problems[0]).toMatchObject({
      path: 'metadata.annotations["stencil.dev/expires-at"]',
      reason: 'InvalidTTL',
    });
  });

  it("follows the Template's maxTTL and requireTTL", () => {
    const capped = aTemplate([], { maxTTL: '1h' });
    const long = instance('2h');
    const refused = ttlRefusal(
      capped,
      long,
      expiryOf(long).ok ? new Date('2026-12-03T14:00:00Z') : undefined,
    );
    expect(!refused.ok && refused.problems[0]).toMatchObject({
      path: 'spec.ttl',
      reason: 'TTLNotAllowed',
    });
    const short = instance('30m');
    expect(ttlRefusal(capped, short, new Date('2026-12-03T12:30:00Z')).ok).toBe(true);
    // maxTTL caps a lifetime asked for; requireTTL makes one necessary.
    expect(ttlRefusal(capped, instance(), undefined).ok).toBe(true);
    const required = ttlRefusal(aTemplate([], { requireTTL: true }), instance(), undefined);
    expect(!required.ok && required.problems[0]?.message).toContain('requires a lifetime');
  });
});

describe('stencil.dev/expires-at is RFC 3339 with an offset and a real date (issue #22, ADR 0017)', () => {
  it.each([
    ['2026-12-31T18:00:00Z', '2026-12-31T18:00:00.000Z'],
    ['2026-12-31t18:00:00z', '2026-12-31T18:00:00.000Z'],
    ['2026-12-31T10:00:00-08:00', '2026-12-31T18:00:00.000Z'],
    ['2027-01-01T05:30:00+05:30', '2027-01-01T00:00:00.000Z'],
    ['2026-12-31T18:00:00.123456789Z', '2026-12-31T18:00:00.123Z'],
    ['2028-02-29T00:00:00Z', '2028-02-29T00:00:00.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
  ])('reads %s as %s', (text, iso) => {
    expect(parseRfc3339(text)).toBe(Date.parse(iso));
  });

  it.each([
    ['no offset (local time would depend on TZ)', '2026-12-31T18:00:00'],
    ['30 February', '2026-02-30T00:00:00Z'],
    ['29 February of a common year', '2026-02-29T00:00:00Z'],
    ['29 February 1900', '1900-02-29T00:00:00Z'],
    ['31 April', '2026-04-31T00:00:00Z'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['day 0', '2026-01-00T00:00:00Z'],
    ['hour 24', '2026-01-01T24:00:00Z'],
    ['minute 60', '2026-01-01T00:60:00Z'],
    ['an offset of +24:00', '2026-01-01T00:00:00+24:00'],
    ['an offset without a colon', '2026-01-01T00:00:00+0100'],
    ['a date alone', '2026-12-31'],
    ['a space for T', '2026-12-31 18:00:00Z'],
    ['text Date.parse reads', 'Thu, 31 Dec 2026 18:00:00 GMT'],
  ])('refuses %s', (_what, text) => {
    expect(parseRfc3339(text)).toBeUndefined();
    const outcome = expiryOf(instance(undefined, text));
    expect(!outcome.ok && outcome.problems[0]).toEqual({
      path: 'metadata.annotations["stencil.dev/expires-at"]',
      reason: 'InvalidTTL',
      message: `stencil.dev/expires-at "${text}" is not an RFC 3339 time with an offset and a real calendar date, such as 2026-12-31T18:00:00Z or 2026-12-31T10:00:00-08:00`,
    });
  });

  it('refuses a value that is not a string, naming the annotation', () => {
    const outcome = expiryOf(instance(undefined, true as unknown as string));
    expect(!outcome.ok && outcome.problems[0]?.message).toBe(
      'stencil.dev/expires-at must be a string; quote it',
    );
  });
});

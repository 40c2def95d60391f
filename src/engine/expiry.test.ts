import { describe, expect, it } from 'vitest';
import { aTemplate, anInstance } from '../../test/support/builders.ts';
import type { TemplateInstance } from '../api/template-instance.ts';
import { expiryOf, parseDuration, ttlRefusal } from './expiry.ts';

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

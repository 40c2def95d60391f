import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { Assignment, ownerOf } from './rendezvous.ts';

const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/);
const members = fc.uniqueArray(name, { minLength: 1, maxLength: 8 });
const keys = fc.uniqueArray(name, { minLength: 1, maxLength: 40 });

describe('rendezvous hashing', () => {
  it('has no owner without members', () => {
    expect(ownerOf('team-a', [])).toBeUndefined();
  });

  test.prop([members, keys])('owns every key by exactly one member, whatever the order', (m, k) => {
    const reversed = [...m].reverse();
    for (const key of k) {
      const owner = ownerOf(key, m);
      expect(m).toContain(owner);
      expect(ownerOf(key, reversed)).toBe(owner);
    }
  });

  test.prop([members, name, keys])(
    'a member joining takes keys only for itself; nothing else moves',
    (m, joining, k) => {
      fc.pre(!m.includes(joining));
      for (const key of k) {
        const after = ownerOf(key, [...m, joining]);
        if (after !== joining) expect(after).toBe(ownerOf(key, m));
      }
    },
  );

  test.prop([members, keys])('a member leaving moves only its own keys', (m, k) => {
    fc.pre(m.length > 1);
    const [leaving, ...rest] = m;
    for (const key of k) {
      const before = ownerOf(key, m);
      if (before !== leaving) expect(ownerOf(key, rest)).toBe(before);
    }
  });

  it('spreads 3,000 namespaces over 3 members within 10% of an even share', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 3_000; i++) {
      const owner = ownerOf(`namespace-${i}`, ['a', 'b', 'c'])!;
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    }
    for (const count of counts.values()) expect(Math.abs(count - 1_000)).toBeLessThan(100);
  });

  it('remembers owners per member list', () => {
    const assignment = new Assignment(['a', 'b']);
    expect(assignment.owner('x')).toBe(ownerOf('x', ['a', 'b']));
    expect(assignment.owner('x')).toBe(assignment.owner('x'));
  });
});

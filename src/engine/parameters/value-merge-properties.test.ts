// Property-based hostile input for parameter merges (issue #14): random maps and lists whose
// keys include prototype names, merged every way. Prints the cases tried per property.
import { fc, it as prop } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import type { JsonValue } from '../../api/object-meta.ts';
import { caseCounter, expectExercised, runs } from '../../../test/support/property-runs.ts';
import { mergeParameterValue } from './value-merge.ts';

const tried = caseCounter('value-merge');

const KEYS = ['a', 'b', 'name', '__proto__', 'constructor', 'prototype', 'toString', 'polluted'];

/** JSON values as JSON.parse gives them (so `__proto__` is an own key, as in real input). */
const json = fc
  .letrec<{ value: JsonValue }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.boolean(), fc.constant(null)),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(fc.constantFrom(...KEYS), tie('value'), { maxKeys: 4 }),
    ),
  }))
  .value.map((v) => JSON.parse(JSON.stringify(v)) as JsonValue);

/** Lists of maps keyed by `name` (sometimes a prototype name, sometimes missing or repeated). */
const keyedList = fc
  .array(
    fc.record(
      { name: fc.constantFrom('x', 'y', 'z', '__proto__', 'constructor', 1), value: json },
      { requiredKeys: [] },
    ),
    { maxLength: 5 },
  )
  .map((v) => JSON.parse(JSON.stringify(v)) as JsonValue);

/**
 * Lists union-by-key accepts: every item has a scalar `name`, no two the same (`1` and `"1"`
 * are different keys, as the merge keeps them), prototype names among them. Mostly what the
 * order property below is about; a tenth of its cases are `keyedList`s, refused as they should
 * be, so the count of cases really checked means something.
 */
const mergeableList = fc
  .uniqueArray(
    fc.record({
      name: fc.constantFrom('x', 'y', 'z', '__proto__', 'constructor', 1, '1'),
      value: json,
    }),
    { selector: (item) => JSON.stringify(item.name), minLength: 1, maxLength: 5 },
  )
  .map((v) => JSON.parse(JSON.stringify(v)) as JsonValue);

const unionInput = fc.oneof(
  { weight: 9, arbitrary: mergeableList },
  { weight: 1, arbitrary: keyedList },
);

const strategy = fc.constantFrom('replace' as const, 'deep' as const, 'union-by-key' as const);

function clean(): void {
  const probe = {} as Record<string, unknown>;
  expect(probe.polluted).toBeUndefined();
  expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
  expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('name');
}

describe('property: merging hostile values', () => {
  prop.prop([strategy, fc.oneof(json, keyedList), fc.oneof(json, keyedList)], runs(1500))(
    'is deterministic, leaves the inputs alone, and pollutes no prototype',
    (mode, base, override) => {
      tried('deterministic, pure, no pollution');
      const before = JSON.stringify([base, override]);
      const input = { name: 'p', strategy: mode, mergeKey: 'name', base, override };
      const first = mergeParameterValue(input);
      const second = mergeParameterValue(input);
      expect(JSON.stringify(first)).toBe(JSON.stringify(second));
      expect(JSON.stringify([base, override])).toBe(before);
      if (!first.ok) expect(first.problems[0]!.message).toMatch(/^parameter "p": cannot merge/);
      clean();
    },
  );

  prop.prop([json, json], runs(1000))(
    'deep: every key of the instance value is in the result with the instance value, unless null',
    (base, override) => {
      tried('deep: the instance wins');
      const result = mergeParameterValue({ name: 'p', strategy: 'deep', base, override });
      expect(result.ok).toBe(true);
      if (!result.ok) return;
      const isMap = (v: JsonValue): v is Record<string, JsonValue> =>
        typeof v === 'object' && v !== null && !Array.isArray(v);
      if (!isMap(base) || !isMap(override)) {
        expect(JSON.stringify(result.value)).toBe(JSON.stringify(override));
        return;
      }
      const value = result.value as Record<string, JsonValue>;
      for (const key of Object.keys(override)) {
        const given = override[key]!;
        if (given === null) expect(Object.hasOwn(value, key)).toBe(false);
        else if (!isMap(given) || !isMap(base[key] ?? null))
          expect(JSON.stringify(value[key])).toBe(JSON.stringify(given));
      }
      clean();
    },
  );

  it('union-by-key: the default items keep their order and new items follow in instance order', () => {
    const parameters = runs(1000);
    let checked = 0;
    fc.assert(
      fc.property(unionInput, unionInput, (base, override) => {
        tried('union-by-key: order');
        const result = mergeParameterValue({
          name: 'p',
          strategy: 'union-by-key',
          mergeKey: 'name',
          base,
          override,
        });
        if (!result.ok) return; // a missing or repeated key: refused with a message (above)
        const keys = (list: JsonValue): string[] =>
          (list as Record<string, JsonValue>[]).map((item) => JSON.stringify(item.name));
        const baseKeys = keys(base);
        const newKeys = keys(override).filter((k) => !baseKeys.includes(k));
        expect(keys(result.value)).toEqual([...baseKeys, ...newKeys]);
        clean();
        checked++;
      }),
      parameters,
    );
    // Refused inputs return before any check: a generator that drifted towards them (before
    // this floor, three cases in four were refused) would leave the property all but untested.
    expectExercised('union-by-key: order', checked, parameters.numRuns);
  });
});

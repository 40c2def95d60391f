// Property-based hostile input for JSONPath (issue #11): random paths (valid kubectl-style and
// not, script and prototype payloads) over random objects. Prints the cases tried per property.
import { fc, it as prop } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { caseCounter, runs } from '../../../test/support/property-runs.ts';
import { evaluateJsonPath } from './jsonpath.ts';

const tried = caseCounter('jsonpath');

const KEYS = ['a', 'b', 'items', 'metadata', 'name', '__proto__', 'constructor', 'length', 'x y'];

/** Objects whose maps may carry prototype keys, and lists to index and filter. */
const object = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean(), fc.constant(null)),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** Payloads that would run code or reach a prototype if the evaluator evaluated anything. */
const PAYLOADS = [
  "[?(@.constructor.constructor('globalThis.__jsonpathPwned = true')())]",
  '[(globalThis.__jsonpathPwned = true)]',
  '[?(@.a == 1 && (globalThis.__jsonpathPwned = true))]',
  '.constructor.constructor',
  '.__proto__.polluted',
  "['__proto__']['polluted']",
  '[?(@.__proto__)]',
  '{.a}',
  '{range .items[*]}{.a}{end}',
  '[0,1]',
  '[::0]',
  '[?(@.a.b())]',
  '..',
  '.a..b',
];

const segment = fc.oneof(
  fc.constantFrom(...KEYS).map((k) => (/^\w+$/.test(k) ? `.${k}` : `['${k}']`)),
  fc.constantFrom('[*]', '.*', '..a', '[0]', '[-1]', '[1:]', '[:2]', '[0:3:2]', '[2147483648]'),
  fc
    .tuple(
      fc.constantFrom('a', 'name', 'b.a'),
      fc.constantFrom('==', '!=', '<', '>', '<=', '>='),
      fc.constantFrom('"x"', '1', 'true', 'null', "'y'"),
    )
    .map(([p, op, lit]) => `[?(@.${p} ${op} ${lit})]`),
  fc.constantFrom('a', 'name').map((p) => `[?(@.${p})]`),
  fc.constantFrom(...PAYLOADS),
  fc.string({ maxLength: 5 }),
);

const path = fc.oneof(
  fc.array(segment, { minLength: 1, maxLength: 6 }).map((s) => s.join('')),
  fc.string({ maxLength: 30 }),
  fc.string({ maxLength: 30 }).map((s) => `.${s}`),
  fc.integer({ min: 1000, max: 1100 }).map((n) => `.${'a'.repeat(n)}`),
);

/** Every value inside `root` (by identity or, for scalars, by value). */
function valuesIn(root: unknown, into = new Set<unknown>()): Set<unknown> {
  into.add(root);
  if (root !== null && typeof root === 'object') {
    for (const v of Object.values(root)) valuesIn(v, into);
  }
  return into;
}

describe('property: JSONPath over hostile paths and objects', () => {
  prop.prop([path, object], runs(1500))(
    'never throws, never runs code and selects only values of the object',
    (expression, root) => {
      tried('typed outcome, no code, results from the object');
      const before = Object.getOwnPropertyNames(Object.prototype).length;
      const result = evaluateJsonPath(expression, root);
      expect((globalThis as { __jsonpathPwned?: boolean }).__jsonpathPwned).toBeUndefined();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.getOwnPropertyNames(Object.prototype).length).toBe(before);
      if (!result.ok) {
        tried('typed outcome ... of which refused');
        expect(result.problems).toHaveLength(1);
        expect(result.problems[0]?.reason).toBe('ParameterResolutionFailed');
        return;
      }
      const inside = valuesIn(root);
      for (const value of result.value) expect(inside.has(value)).toBe(true);
    },
  );

  prop.prop(
    [
      fc.array(fc.oneof(fc.constantFrom('a', 'b', 'name'), fc.nat({ max: 3 })), { maxLength: 5 }),
      object,
    ],
    runs(800),
  )('agrees with plain navigation on names and indices', (steps, root) => {
    tried('agrees with plain navigation');
    const expression =
      '.' + steps.map((s) => (typeof s === 'number' ? `[${s}]` : `['${s}']`)).join('');
    let current: unknown[] = [root];
    for (const s of steps) {
      current = current.flatMap((v): unknown[] => {
        if (typeof s === 'number')
          return Array.isArray(v) && s < v.length ? [(v as unknown[])[s]] : [];
        return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, s)
          ? [(v as Record<string, unknown>)[s]]
          : [];
      });
    }
    const result = evaluateJsonPath(expression, root);
    expect(result.ok).toBe(true);
    expect(result.ok && result.value).toEqual(current);
  });
});

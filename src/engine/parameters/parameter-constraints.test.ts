import { describe, expect, it } from 'vitest';
import type { JsonValue, KubeObject } from '../../api/object-meta.ts';
import type { ParameterDeclaration } from '../../api/template.ts';
import type { ParameterValue } from '../../api/template-instance.ts';
import { aConfigMap, aSecret, aTemplate, anInstance } from '../../../test/support/builders.ts';
import { MemorySource } from '../sources/memory-source.ts';
import { checkConstraints, declarationFaults } from './parameter-constraints.ts';
import { checkInstanceStatically } from './instance-checks.ts';
import { resolveParameters } from './parameters.ts';

type Constraints = Omit<ParameterDeclaration, 'name'>;

interface Row {
  constraint: string;
  declaration: Constraints;
  /** Raw values, as text: a ConfigMap or a Secret holds nothing else. */
  good: string;
  bad: string;
  /** How the message shows the bad value once typed, and what it says of it. */
  shown: string;
  fault: string;
}

const ROWS: Row[] = [
  {
    constraint: 'a string enum',
    declaration: { type: 'string', enum: ['free', 'pro'] },
    good: 'pro',
    bad: 'gold',
    shown: '"gold"',
    fault: 'is not one of "free", "pro"',
  },
  {
    constraint: 'a number enum (entries typed too)',
    declaration: { type: 'number', enum: [1, '2'] },
    good: '2',
    bad: '3',
    shown: '3',
    fault: 'is not one of 1, 2',
  },
  {
    constraint: 'a bool enum',
    declaration: { type: 'bool', enum: [true] },
    good: 'True',
    bad: 'f',
    shown: 'false',
    fault: 'is not one of true',
  },
  {
    constraint: 'a pattern',
    declaration: { type: 'string', pattern: '^[a-z]+$' },
    good: 'abc',
    bad: 'Abc',
    shown: '"Abc"',
    fault: 'does not match the pattern ^[a-z]+$',
  },
  {
    constraint: 'minLength',
    declaration: { type: 'string', minLength: 3 },
    good: 'héé',
    bad: 'xy',
    shown: '"xy"',
    fault: 'is shorter than the minimum length 3',
  },
  {
    constraint: 'maxLength (code points, not UTF-16 units)',
    declaration: { type: 'string', maxLength: 3 },
    good: '😀😀😀',
    bad: 'wxyz',
    shown: '"wxyz"',
    fault: 'is longer than the maximum length 3',
  },
  {
    constraint: 'minimum',
    declaration: { type: 'number', minimum: 1 },
    good: '1',
    bad: '0.5',
    shown: '0.5',
    fault: 'is less than the minimum 1',
  },
  {
    constraint: 'maximum (a "5" is the number 5)',
    declaration: { type: 'number', maximum: 4 },
    good: '4',
    bad: '5',
    shown: '5',
    fault: 'is greater than the maximum 4',
  },
];

type Source = 'Template default' | 'literal' | 'defaultValue' | 'ConfigMap' | 'Secret';
const SOURCES: Source[] = ['Template default', 'literal', 'defaultValue', 'ConfigMap', 'Secret'];

/** A Template and an instance that give parameter `p` the value `raw` from `source`. */
async function resolveFrom(
  source: Source,
  declaration: Constraints,
  raw: string,
): ReturnType<typeof resolveParameters> {
  const declared: ParameterDeclaration = { name: 'p', ...declaration };
  const ref = { name: 'src', key: 'k' };
  let override: ParameterValue | undefined;
  const objects: KubeObject[] = [];
  if (source === 'Template default') declared.value = raw;
  if (source === 'literal') override = { name: 'p', value: raw };
  if (source === 'defaultValue')
    override = { name: 'p', valueFrom: { configMapKeyRef: ref }, defaultValue: raw };
  if (source === 'ConfigMap') {
    override = { name: 'p', valueFrom: { configMapKeyRef: ref } };
    objects.push(aConfigMap('src', 'team-a', { k: raw }));
  }
  if (source === 'Secret') {
    override = { name: 'p', valueFrom: { secretKeyRef: ref } };
    objects.push(aSecret('src', 'team-a', { k: raw }));
  }
  return resolveParameters(
    aTemplate([declared]),
    anInstance(override ? [override] : []),
    new MemorySource(objects),
  );
}

const CASES = ROWS.flatMap((row) => SOURCES.map((source) => ({ ...row, source })));

describe('constraints hold for every value, whatever its source (ADR 0032)', () => {
  it.each(CASES)('$constraint, from a $source: passes $good', async (c) => {
    const result = await resolveFrom(c.source, c.declaration, c.good);
    expect(result.ok).toBe(true);
  });

  it.each(CASES)('$constraint, from a $source: refuses $bad', async (c) => {
    const result = await resolveFrom(c.source, c.declaration, c.bad);
    const shown = c.source === 'Secret' ? 'a value from a Secret' : c.shown;
    expect(result).toEqual({
      ok: false,
      problems: [
        {
          path: 'parameters.p',
          reason: 'InvalidParameter',
          message: `parameter "p": ${shown} ${c.fault}`,
        },
      ],
    });
  });

  it('checks the value once typed: a number parameter reads the ConfigMap text "5" as 5', async () => {
    const result = await resolveFrom('ConfigMap', { type: 'number', maximum: 4, enum: [5] }, '5');
    expect(result.ok ? [] : result.problems.map((p) => p.message)).toEqual([
      'parameter "p": 5 is greater than the maximum 4',
    ]);
  });

  it('leaves the empty value of an unset parameter alone, as a typed API leaves an absent field', async () => {
    const unset = await resolveParameters(
      aTemplate([{ name: 'tier', type: 'string', enum: ['free'], minLength: 1 }]),
      anInstance([]),
      new MemorySource([]),
    );
    expect(unset.ok && unset.value.values).toEqual({ tier: '' });
  });
});

describe('a Secret value that fails a constraint is never quoted', () => {
  const SECRET = 'Hunter2-s3cr3t-Value';
  it.each<[string, Constraints, string]>([
    ['enum', { type: 'string', enum: ['free', 'pro'] }, SECRET],
    ['pattern', { type: 'string', pattern: '^[a-z]+$' }, SECRET],
    ['minLength', { type: 'string', minLength: 64 }, SECRET],
    ['maxLength', { type: 'string', maxLength: 4 }, SECRET],
    ['minimum', { type: 'number', minimum: 1e9 }, '123456789.25'],
    ['maximum', { type: 'number', maximum: 1 }, '123456789.25'],
    ['minimum, NaN', { type: 'number', minimum: 1 }, 'NaN'],
    ['a number enum', { type: 'number', enum: [1, 2] }, '123456789.25'],
    ['a pattern that is not RE2', { type: 'string', pattern: '(?=x)' }, SECRET],
  ])('%s', async (_name, declaration, secret) => {
    const result = await resolveFrom('Secret', declaration, secret);
    expect(result.ok).toBe(false);
    const text = JSON.stringify(result);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.slice(0, 8));
    expect(text).not.toContain('123456789');
  });
});

describe('checkConstraints', () => {
  const check = (declaration: Constraints, value: JsonValue, secret = false): string => {
    const result = checkConstraints({ declaration: { name: 'p', ...declaration }, value, secret });
    return result.ok ? 'ok' : result.problems.map((p) => p.message).join('; ');
  };

  it.each<[string, Constraints, JsonValue, string]>([
    [
      'NaN against a minimum',
      { type: 'number', minimum: 0 },
      NaN,
      'NaN is not comparable with the minimum 0',
    ],
    [
      'NaN against a maximum',
      { type: 'number', maximum: 0 },
      NaN,
      'NaN is not comparable with the maximum 0',
    ],
    ['NaN in an enum that says NaN', { type: 'number', enum: ['NaN'] }, NaN, 'ok'],
    [
      'Infinity against a maximum',
      { type: 'number', maximum: 10 },
      Infinity,
      'Infinity is greater than the maximum 10',
    ],
    ['-0 in an enum of 0', { type: 'number', enum: [0] }, -0, 'ok'],
    ['bounds inclusive', { type: 'number', minimum: 1, maximum: 1 }, 1, 'ok'],
    [
      'a number enum entry as text, for a string parameter',
      { type: 'string', enum: [3] },
      '3',
      'ok',
    ],
    [
      'a mistyped enum entry matches nothing',
      { type: 'number', enum: ['three', 3] },
      4,
      '4 is not one of 3',
    ],
    ['a length of code points', { type: 'string', minLength: 2, maxLength: 2 }, '😀é', 'ok'],
    ['the pattern unanchored', { type: 'string', pattern: '[0-9]' }, 'v1', 'ok'],
    [
      'the pattern as RE2 reads it (. takes \\r)',
      { type: 'string', pattern: '^a.b$' },
      'a\rb',
      'ok',
    ],
    [
      'length before pattern',
      { type: 'string', maxLength: 2, pattern: 'x' },
      'abc',
      '"abc" is longer than the maximum length 2',
    ],
    [
      'a pattern that is not RE2',
      { type: 'string', pattern: '(a)\\1' },
      'aa',
      'the pattern (a)\\1 is not valid RE2: invalid escape sequence: `\\1`',
    ],
    ['a number constraint ignores a string value', { minimum: 5 }, 'abc', 'ok'],
  ])('%s', (_name, declaration, value, expected) => {
    expect(check(declaration, value)).toBe(expected === 'ok' ? 'ok' : `parameter "p": ${expected}`);
  });

  it('lists ten enum entries, then says how many more', () => {
    const entries = Array.from({ length: 12 }, (_, i) => `v${i}`);
    expect(check({ type: 'string', enum: entries }, 'x')).toBe(
      'parameter "p": "x" is not one of "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9" (and 2 more)',
    );
  });

  it('refuses a value longer than 1 MiB rather than passing it unchecked', () => {
    expect(check({ type: 'string', pattern: 'a' }, 'a'.repeat(1024 * 1024 + 1))).toBe(
      'parameter "p": "' +
        'a'.repeat(100) +
        '…" is longer than 1 MiB, the most a pattern is checked against',
    );
  });

  it('says so when a value would take more than the budget to check', () => {
    expect(
      check({ type: 'string', pattern: '[a-z]{1000}$' }, `${'a'.repeat(100_000)}!`, true),
    ).toBe(
      'parameter "p": a value from a Secret takes more than 20000000 steps to check against the pattern [a-z]{1000}$',
    );
  });

  // Correctness only: vitest's timeout is the bound (JavaScript's RegExp takes minutes on it).
  it('checks a hostile pattern on a hostile value (linear time, no backtracking)', () => {
    expect(check({ type: 'string', pattern: '(a+)+$' }, `${'a'.repeat(40)}!`)).toBe(
      `parameter "p": "${'a'.repeat(40)}!" does not match the pattern (a+)+$`,
    );
  });
});

describe('declarationFaults (the Template checks its own constraints)', () => {
  it.each<[string, Constraints, { field: string; message: string }[]]>([
    ['valid constraints', { type: 'number', enum: [1, '2'], minimum: 0 }, []],
    [
      'an enum on an object parameter (CEL cannot see the entries, so this is no CRD rule)',
      { type: 'object', enum: [{ a: 1 }] },
      [{ field: 'enum', message: 'parameter "p": enum needs type string, number or bool' }],
    ],
    [
      'an enum without a type',
      { enum: ['a'] },
      [{ field: 'enum', message: 'parameter "p": enum needs type string, number or bool' }],
    ],
    [
      'an enum entry not of the type',
      { type: 'number', enum: [1, 'three'] },
      [
        {
          field: 'enum[1]',
          message: 'parameter "p": enum entry 1: expected a number, got "three"',
        },
      ],
    ],
    [
      'a pattern RE2 lacks (lookahead)',
      { type: 'string', pattern: '^(?!admin)' },
      [
        {
          field: 'pattern',
          message:
            'parameter "p": the pattern ^(?!admin) is not valid RE2: invalid or unsupported Perl syntax: `(?!`',
        },
      ],
    ],
    [
      'a pattern RE2 lacks (lookbehind)',
      { type: 'string', pattern: '(?<=a)b' },
      [
        {
          field: 'pattern',
          message:
            'parameter "p": the pattern (?<=a)b is not valid RE2: invalid named capture: `(?<=a)b`',
        },
      ],
    ],
    [
      'a pattern RE2 lacks (named backreference)',
      { type: 'string', pattern: '(?<q>a)\\k<q>' },
      [
        {
          field: 'pattern',
          message:
            'parameter "p": the pattern (?<q>a)\\k<q> is not valid RE2: invalid escape sequence: `\\k`',
        },
      ],
    ],
    [
      'a pattern that is no regular expression',
      { type: 'string', pattern: '[a-' },
      [
        {
          field: 'pattern',
          message: 'parameter "p": the pattern [a- is not valid RE2: missing closing ]: `[a-`',
        },
      ],
    ],
  ])('%s', (_name, declaration, expected) => {
    expect(declarationFaults({ name: 'p', ...declaration })).toEqual(expected);
  });
});

describe('checkInstanceStatically (stencil validate) holds literals to the constraints', () => {
  it('refuses a literal that fails a constraint, at its field', () => {
    const template = aTemplate([{ name: 'replicas', type: 'number', maximum: 10 }]);
    expect(
      checkInstanceStatically(template, anInstance([{ name: 'replicas', value: '12' }])),
    ).toEqual([
      {
        path: 'spec.parameters[0]',
        reason: 'InvalidParameter',
        message: 'parameter "replicas": 12 is greater than the maximum 10',
      },
    ]);
    expect(
      checkInstanceStatically(template, anInstance([{ name: 'replicas', value: 10 }])),
    ).toEqual([]);
  });
});

import { fc, it as prop } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { caseCounter, runs } from '../../../test/support/property-runs.ts';
import {
  compileRe2,
  MAX_MATCH_STEPS,
  MAX_PROGRAM,
  re2RegExp,
  Re2CheckTooCostly,
  type Re2Pattern,
} from './re2.ts';

const tried = caseCounter('re2');

function compiled(source: string): Re2Pattern {
  const result = compileRe2(source);
  if (!result.ok) throw new Error(result.message);
  return result.pattern;
}

/** 19 alternatives of 999 repetitions: re2js's DFA gives up on it, its NFA is 19,004 wide. */
const WIDE = `(${Array.from({ length: 19 }, (_, i) => `[a-${String.fromCharCode(98 + i)}]{999}`).join('|')})$`;

describe('what a pattern may be', () => {
  // RE2's own refusals, in the words of Go's regexp/syntax (re2js ports its parser).
  it.each([
    ['(?=a)b', 'is not valid RE2: invalid or unsupported Perl syntax: `(?=`'],
    ['a(?!b)', 'is not valid RE2: invalid or unsupported Perl syntax: `(?!`'],
    ['(?<=a)b', 'is not valid RE2: invalid named capture: `(?<=a)b`'],
    ['(?<!a)b', 'is not valid RE2: invalid named capture: `(?<!a)b`'],
    ['(a)\\1', 'is not valid RE2: invalid escape sequence: `\\1`'],
    ['(?<x>a)\\k<x>', 'is not valid RE2: invalid escape sequence: `\\k`'],
    ['\\u00e9', 'is not valid RE2: invalid escape sequence: `\\u`'],
    ['\\cJ', 'is not valid RE2: invalid escape sequence: `\\c`'],
    ['[\\b]', 'is not valid RE2: invalid escape sequence: `\\b`'],
    ['a[]', 'is not valid RE2: missing closing ]: `[]`'],
    ['[^]', 'is not valid RE2: missing closing ]: `[^]`'],
    ['\\p{Letter}', 'is not valid RE2: invalid character class range: `\\p{Letter}`'],
    ['(?z)a', 'is not valid RE2: invalid or unsupported Perl syntax: `(?z`'],
    ['a**', 'is not valid RE2: invalid nested repetition operator: `**`'],
    ['(', 'is not valid RE2: missing closing ): `(`'],
    ['a{2,1}', 'is not valid RE2: invalid repeat count: `{2,1}`'],
    // RE2's limits: a count over 1,000, nested counts multiplied over 1,000, too large a program
    ['a{1001}', 'is not valid RE2: invalid repeat count: `{1001}`'],
    ['((a{100}){100}){100}', 'is not valid RE2: invalid repeat count: `{100}`'],
    ['((((){1000}){1000}){1000}){1000}', 'is not valid RE2: expression too large'],
    // and this module's: a program RE2 takes but too large to check in bounded time
    [`${WIDE}|x{999}|y{999}`, `is too large to check: it compiles to 21004 instructions`],
  ])('refuses %s: %s', (source, message) => {
    const result = compileRe2(source);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.message).toContain(message);
  });

  it.each([
    '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
    '^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$',
    '(?<major>\\d+)\\.(?:\\d+)',
    '^\\p{Lu}\\P{Lu}*$',
    '^[\\w.-]+@[\\w-]+\\.[a-z]{2,}$',
    'a{1000}',
    '\\x41\\/\\.\\*\\0',
    '^[a-]$',
    // RE2 syntax JavaScript lacks
    '(?i)abc',
    '(?P<n>a)',
    '\\pL\\p{Greek}',
    '[[:alpha:]]',
    '\\Qa.b\\E',
    '\\Aa\\z',
    WIDE,
  ])('accepts %s', (source) => {
    expect(compileRe2(source).ok).toBe(true);
  });
});

describe('matching', () => {
  it.each([
    // unanchored, as RE2's MatchString and the API server's pattern check
    ['b', 'abc', true],
    ['^b', 'abc', false],
    ['c$', 'abc', true],
    ['^$', '', true],
    ['^$', 'a', false],
    ['a|b', 'xxb', true],
    ['^(ab)*$', 'abab', true],
    ['^(ab)*$', 'aba', false],
    ['^x{2,3}$', 'xxx', true],
    ['^x{2,3}$', 'xxxx', false],
    ['^x{2,}$', 'xxxxxxx', true],
    ['^x{2}$', 'x', false],
    ['^a??b+?c{1,}?$', 'bc', true],
    ['^()*a$', 'a', true],
    ['^(a*)*$', 'aab', false],
    ['\\bfoo\\b', 'a foo b', true],
    ['\\bfoo\\b', 'afoob', false],
    ['\\Bfoo', 'afoo', true],
    ['^[^a-c]+$', 'xyz', true],
    ['^[^a-c]+$', 'xaz', false],
    ['^[-a]$', '-', true],
    ['^\\d{1,3}(\\.\\d{1,3}){3}$', '10.0.0.1', true],
    ['^\\d{1,3}(\\.\\d{1,3}){3}$', '1000.0.0.1', false],
    // $ is the end of the text, not of a line
    ['^a$', 'a\n', false],
    // code points, not UTF-16 units
    ['^.$', '😀', true],
    ['^[😀-😂]$', '😁', true],
    ['^\\p{Lu}\\p{Ll}+$', 'Émile', true],
    ['^\\p{Lu}\\p{Ll}+$', 'émile', false],
    // RE2's meaning where JavaScript's differs: . takes \r, \s and \w are ASCII
    ['^.$', '\r', true],
    ['^.$', '\n', false],
    ['^\\s$', '\u00a0', false],
    ['^\\s$', '\f', true],
    ['^\\w$', 'é', false],
    ['^(?i)abc$', 'ABC', true],
  ])('%s on %j: %s', (source, text, expected) => {
    expect(compiled(source).matches(text)).toBe(expected);
  });

  // Correctness only: vitest's timeout is the bound (each takes seconds or forever in RegExp).
  it.each([
    ['(a+)+$', `${'a'.repeat(40)}!`],
    ['^(a+)+$', `${'a'.repeat(30)}!`],
    ['(a|aa)+$', `${'a'.repeat(41)}!`],
    ['a*a*a*a*a*b', 'a'.repeat(2000)],
    ['(\\w|\\d)+$', `${'1'.repeat(30)}!`],
  ])('stays linear where JavaScript backtracks: %s', (source, text) => {
    expect(compiled(source).matches(text)).toBe(false);
  });

  it('checks a 1 MiB value', () => {
    expect(compiled('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$').matches('a'.repeat(1 << 20))).toBe(true);
  });

  it('gives up, saying so, when a check could take more than its budget of steps', () => {
    expect(compiled('[a-z]{1000}$').matches(`${'a'.repeat(100_000)}!`)).toBeUndefined();
    // The widest program RE2 takes here: checked on a short value, refused on a long one.
    const wide = compiled(WIDE);
    expect(wide.matches(`${'a'.repeat(1000)}!`)).toBe(false);
    expect(wide.matches('a'.repeat((2 * MAX_MATCH_STEPS) / MAX_PROGRAM))).toBeUndefined();
  });
});

describe("ajv's pattern engine", () => {
  it('tests unanchored, as RE2, whatever flags ajv passes', () => {
    const regExp = re2RegExp('^a.b', 'u');
    expect(regExp.test('a\rbc')).toBe(true);
    expect(regExp.test('a\nb')).toBe(false);
  });

  it('names its pattern, which ajv keys compiled patterns by', () => {
    expect(String(re2RegExp('a', 'u'))).not.toBe(String(re2RegExp('b', 'u')));
  });

  it('throws for a pattern that is not RE2, so the schema does not compile', () => {
    expect(() => re2RegExp('(?=a)', 'u')).toThrow(
      'the pattern (?=a) is not valid RE2: invalid or unsupported Perl syntax: `(?=`',
    );
  });

  it('throws Re2CheckTooCostly for a value over the budget', () => {
    const regExp = re2RegExp('[a-z]{1000}$', 'u');
    expect(() => regExp.test('a'.repeat(100_000))).toThrow(Re2CheckTooCostly);
  });

  it("is named in ajv's standalone code by what the generated module imports", () => {
    expect(re2RegExp.code).toBe('re2RegExp');
  });
});

describe('agreement with JavaScript where both read a pattern alike', () => {
  /** Patterns over a, b and - without . or \s, the only atoms whose meanings differ. */
  const pattern = fc.letrec<{ node: string }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom('a', 'b', '-', '[ab]', '[^a]', '\\w', '\\d', '\\b', '^', '$'),
      fc.tuple(tie('node'), tie('node')).map(([x, y]) => `${x}${y}`),
      fc.tuple(tie('node'), tie('node')).map(([x, y]) => `(?:${x}|${y})`),
      fc
        .tuple(tie('node'), fc.constantFrom('*', '+', '?', '{2}', '{1,2}', '{0,}', '*?'))
        .map(([x, q]) => `(?:${x})${q}`),
    ),
  })).node;
  const text = fc.string({ unit: fc.constantFrom('a', 'b', '-', '1'), maxLength: 8 });

  prop.prop([pattern, text], runs(2000))('matches exactly when RegExp does', (source, input) => {
    tried('matches exactly when RegExp does');
    expect(compiled(source).matches(input)).toBe(new RegExp(source, 'u').test(input));
  });
});

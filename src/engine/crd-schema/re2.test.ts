import { fc, it as prop } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { caseCounter, runs } from '../../../test/support/property-runs.ts';
import { compileRe2, MAX_PROGRAM, type Re2Pattern } from './re2.ts';

const tried = caseCounter('re2');

function compiled(source: string): Re2Pattern {
  const result = compileRe2(source);
  if (!result.ok) throw new Error(result.message);
  return result.pattern;
}

describe('what a pattern may be', () => {
  it.each([
    ['(?=a)b', 'is not RE2: it uses lookahead (?=, which RE2 lacks'],
    ['a(?!b)', 'is not RE2: it uses lookahead (?!, which RE2 lacks'],
    ['(?<=a)b', 'is not RE2: it uses lookbehind (?<=, which RE2 lacks'],
    ['(?<!a)b', 'is not RE2: it uses lookbehind (?<!, which RE2 lacks'],
    ['(a)\\1', 'is not RE2: it uses a backreference \\1, which RE2 lacks'],
    ['(?<x>a)\\k<x>', 'is not RE2: it uses a named backreference \\k<...>, which RE2 lacks'],
    ['\\u00e9', 'is not RE2: it uses a \\u escape, which RE2 lacks'],
    ['\\cJ', 'is not RE2: it uses a control escape \\c'],
    ['[\\b]', 'is not RE2: it uses [\\b]'],
    ['a[]', 'is not RE2: it uses an empty class [] or [^]'],
    ['[^]', 'is not RE2: it uses an empty class [] or [^]'],
    ['[[:alpha:]', 'is not RE2: it uses a POSIX class such as [:alpha:]'],
    ['\\p{Letter}', 'is not RE2: it uses the Unicode property Letter'],
    ['\\p{Script=Greek}', 'is not RE2: it uses the Unicode property Script=Greek'],
    ['a{1001}', 'is not RE2: it uses a repetition count over 1000, which RE2 refuses'],
    ['((a{100}){100}){100}', `is too large to check: more than ${MAX_PROGRAM} states`],
    ['((((){1000}){1000}){1000}){1000}', 'is too large to check'],
    ['(', 'is not a valid regular expression: Unterminated group'],
    ['a{2,1}', 'is not a valid regular expression: numbers out of order'],
    ['\\pL', 'is not a valid regular expression'],
    ['(?P<n>a)', 'is not a valid regular expression'],
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
    // code points, not UTF-16 units
    ['^.$', '😀', true],
    ['^[😀-😂]$', '😁', true],
    ['^\\p{Lu}\\p{Ll}+$', 'Émile', true],
    ['^\\p{Lu}\\p{Ll}+$', 'émile', false],
    // RE2's meaning where JavaScript's differs: . takes \r, \s is ASCII
    ['^.$', '\r', true],
    ['^.$', '\n', false],
    ['^\\s$', '\u00a0', false],
    ['^\\s$', '\f', true],
  ])('%s on %j: %s', (source, text, expected) => {
    expect(compiled(source).matches(text)).toBe(expected);
  });

  it('stays linear where JavaScript backtracks for seconds or forever', () => {
    const hostile: [string, string][] = [
      ['(a+)+$', `${'a'.repeat(30)}!`], // about 10 s in JavaScript's RegExp
      ['^(a+)+$', `${'a'.repeat(30)}!`],
      ['(a|aa)+$', `${'a'.repeat(41)}!`], // about 30 s
      ['a*a*a*a*a*b', 'a'.repeat(2000)], // does not finish
      ['(\\w|\\d)+$', `${'1'.repeat(30)}!`],
    ];
    for (const [source, text] of hostile) {
      const started = performance.now();
      expect(compiled(source).matches(text)).toBe(false);
      expect(performance.now() - started, source).toBeLessThan(500);
    }
  });

  it('checks a 1 MiB value in linear time', () => {
    const started = performance.now();
    expect(compiled('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$').matches('a'.repeat(1 << 20))).toBe(true);
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('gives up, saying so, when a check would take more than its budget of steps', () => {
    expect(compiled('[a-z]{1000}$').matches(`${'a'.repeat(100_000)}!`)).toBeUndefined();
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

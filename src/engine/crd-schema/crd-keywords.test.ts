// The run-time half of the generated CRD validators: code-point lengths, CEL rule checks and
// list-map key checks, each as the API server words and counts them.
import { describe, expect, it } from 'vitest';
import { celRuleCheck, listMapKeysCheck, ucs2length } from './crd-keywords.ts';

describe('ucs2length counts Unicode code points, as the API server counts maxLength', () => {
  it.each([
    ['', 0],
    ['abc', 3],
    ['é', 1],
    ['😀', 1],
    ['a😀b😀', 4],
    ['\uD800', 1],
    ['\uD800x', 2],
    ['\uDC00\uD800', 2],
  ])('%j has %i', (text, length) => {
    expect(ucs2length(text)).toBe(length);
  });
});

describe('celRuleCheck', () => {
  const check = celRuleCheck([
    { rule: 'self.a > 0', message: 'a must be positive' },
    { rule: 'self.b == "x"' },
    { rule: 'self.a < 10', messageExpression: '"a is " + string(self.a)' },
  ]);

  it('passes when every rule holds', () => {
    expect(check({ a: 5, b: 'x' })).toEqual([]);
  });

  it("gives the message of each failing rule, in order: its own, else the rule's text", () => {
    expect(check({ a: -1, b: 'y' })).toEqual(['a must be positive', 'failed rule: self.b == "x"']);
  });

  it('words the message with messageExpression when it evaluates to a string', () => {
    expect(check({ a: 12, b: 'x' })).toEqual(['a is 12']);
  });

  it('fails a rule that does not evaluate to true (an error counts as false)', () => {
    expect(check({ b: 'x' })).toEqual(['a must be positive', 'failed rule: self.a < 10']);
  });
});

describe('listMapKeysCheck', () => {
  const check = listMapKeysCheck(['name']);

  it('names each item whose keys an earlier item had, by index', () => {
    expect(check([{ name: 'a' }, { name: 'b' }, { name: 'a', value: 1 }, { name: 'a' }])).toEqual([
      { index: 2, message: 'Duplicate value: {"name":"a"}' },
      { index: 3, message: 'Duplicate value: {"name":"a"}' },
    ]);
  });

  it('ignores items that are not objects, and data that is not a list', () => {
    expect(check([1, null, 'a', { name: 'a' }])).toEqual([]);
    expect(check({ name: 'a' })).toEqual([]);
  });
});

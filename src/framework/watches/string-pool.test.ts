import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StringPool } from './string-pool.ts';

describe('the string pool', () => {
  it('leaves every parsed tree equal to what it was', () => {
    const pool = new StringPool(64, 16);
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const tree = JSON.parse(JSON.stringify(value)) as unknown;
        expect(pool.strings(tree)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('keeps each short string once, no long one, and starts over when full', () => {
    const pool = new StringPool(3, 8);
    pool.strings({ a: ['True', 'True'], b: { c: 'True', d: 'Ready' } });
    expect(pool.size).toBe(2);
    expect(pool.string('longer than eight')).toBe('longer than eight');
    expect(pool.size).toBe(2);
    pool.string('one');
    pool.string('two');
    expect(pool.size).toBe(1);
  });

  it('leaves a frozen tree alone', () => {
    const frozen = Object.freeze({ a: 'x' });
    expect(new StringPool().strings(frozen)).toBe(frozen);
  });
});

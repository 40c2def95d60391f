import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitLines } from './line-splitter.ts';

/** Feeds `bytes` cut at `cuts` and returns the lines that came out. */
function linesOf(bytes: Buffer, cuts: number[]): string[] {
  const lines: string[] = [];
  const splitter = splitLines((line) => lines.push(line));
  let from = 0;
  for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
    splitter.push(bytes.subarray(from, cut));
    from = cut;
  }
  splitter.push(bytes.subarray(from));
  splitter.end();
  return lines;
}

describe('splitting a watch stream into lines', () => {
  it('gives every line whole, wherever the chunks were cut (multi-byte characters too)', () => {
    const line = fc.string({ unit: 'binary', minLength: 1 }).filter((s) => !/[\r\n]/.test(s));
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (lines, rawCuts) => {
          const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8');
          const cuts = rawCuts.map((c) => c % (bytes.length + 1));
          expect(linesOf(bytes, cuts)).toEqual(lines);
        },
      ),
    );
  });

  it('passes on a last line without its newline, and skips blank and \\r\\n-ended ones', () => {
    const bytes = Buffer.from('{"a":1}\r\n\n\r\n{"b":2}');
    expect(linesOf(bytes, [3, 9])).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('joins a line spread over many chunks once', () => {
    const big = 'x'.repeat(100_000);
    const bytes = Buffer.from(`${big}\nshort\n`);
    const cuts = Array.from({ length: 50 }, (_, k) => (k + 1) * 2_000);
    expect(linesOf(bytes, cuts)).toEqual([big, 'short']);
  });
});

// Counts the cases fast-check tried per property and prints them when the file ends, and
// reads FC_SEED so a failing run (fast-check prints its seed) can be replayed exactly.
import { afterAll } from 'vitest';

/** fast-check parameters shared by the hostile-input properties: run count and optional seed. */
export function runs(numRuns: number): { numRuns: number; seed?: number } {
  const seed = process.env.FC_SEED;
  return seed === undefined ? { numRuns } : { numRuns, seed: Number(seed) };
}

/**
 * A counter per property name, printed once after the file's tests: "cases tried" is the
 * number of times the predicate actually ran (shrinking included), not the configured runs.
 */
export function caseCounter(file: string): (property: string) => void {
  const counts = new Map<string, number>();
  afterAll(() => {
    for (const [property, count] of counts) {
      console.log(`[property] ${file} :: ${property}: ${count} cases tried`);
    }
  });
  return (property) => counts.set(property, (counts.get(property) ?? 0) + 1);
}

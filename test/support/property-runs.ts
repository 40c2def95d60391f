// Counts the cases fast-check tried per property and prints them when the file ends, checks
// that enough of them really exercised a property, and reads FC_SEED so a failing run
// (fast-check prints its seed) can be replayed exactly.
import { afterAll, expect } from 'vitest';

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

/**
 * Fails unless at least `floor` of `numRuns` cases really checked a property: a case the
 * property says nothing about (refused input, unmet precondition) passes without checking
 * anything, so a property whose generator mostly makes such cases passes all but untested.
 */
export function expectExercised(
  property: string,
  checked: number,
  numRuns: number,
  floor = 0.8,
): void {
  console.log(`[property] ${property}: ${checked} of ${numRuns} cases checked`);
  expect(
    checked,
    `${property}: ${checked} of ${numRuns} cases checked, fewer than ${floor * 100} %`,
  ).toBeGreaterThanOrEqual(Math.ceil(floor * numRuns));
}

// Reads the in-process operator's Prometheus counters (prom-client) as plain numbers.
import type { Counter } from 'prom-client';

/** The sum of a counter over its series whose labels include `labels` (all series by default). */
export async function sumOf(
  counter: Counter,
  labels: Record<string, string> = {},
): Promise<number> {
  return (await counter.get()).values
    .filter((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value))
    .reduce((total, v) => total + v.value, 0);
}

// Reads the in-process operator's Prometheus counters (prom-client) as plain numbers.
import type { Counter } from 'prom-client';

/** The sum of a counter over all its label values. */
export async function sumOf(counter: Counter): Promise<number> {
  return (await counter.get()).values.reduce((total, v) => total + v.value, 0);
}

/** The counter's value for the label values given (0 when that series does not exist yet). */
export async function valueOf(counter: Counter, labels: Record<string, string>): Promise<number> {
  const series = (await counter.get()).values.find((v) =>
    Object.entries(labels).every(([k, value]) => v.labels[k] === value),
  );
  return series?.value ?? 0;
}

// Reads an operator's Prometheus metrics as plain numbers: in-process (prom-client) or scraped.
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

/** One scrape of an operator process's `/metrics`: series (name with its labels) → value. */
export type Scrape = Map<string, number>;

export async function scrape(port: number): Promise<Scrape> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const series: Scrape = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    series.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return series;
}

/** The value of each series of `name`, by the value of its label `label`. */
export function byLabel(scraped: Scrape, name: string, label: string): Map<string, number> {
  const values = new Map<string, number>();
  const pattern = new RegExp(`${label}="((?:[^"\\\\]|\\\\.)*)"`);
  for (const [series, value] of scraped) {
    if (!series.startsWith(`${name}{`)) continue;
    const match = pattern.exec(series);
    if (match) values.set(match[1]!, (values.get(match[1]!) ?? 0) + value);
  }
  return values;
}

/** The sum of the series of `name` whose labels include every `key="value"` of `labels`. */
export function total(scraped: Scrape, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const [series, value] of scraped) {
    if (series !== name && !series.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => series.includes(`${k}="${v}"`))) sum += value;
  }
  return sum;
}

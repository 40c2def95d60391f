// Reads the Prometheus text format that both the operator's /metrics and the API server's
// /metrics serve: one sample per line, `name{label="v",...} value`.

export interface Sample {
  labels: Map<string, string>;
  value: number;
}

/** Every sample of the metric `name` (exactly that name, not its _bucket/_sum series). */
export function samples(text: string, name: string): Sample[] {
  const found: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = /\{(.*)\}/.exec(line)?.[1] ?? '';
    const labels = new Map([...labelText.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    found.push({ labels, value: Number(line.split(' ').pop()) });
  }
  return found;
}

/** The sum of `name` over the samples whose labels include every pair of `match`. */
export function total(text: string, name: string, match: Record<string, string> = {}): number {
  return samples(text, name)
    .filter((s) => Object.entries(match).every(([k, v]) => s.labels.get(k) === v))
    .reduce((sum, s) => sum + s.value, 0);
}

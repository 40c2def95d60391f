// The sharding table of issue #15 (one line per replica count) and its markers in
// docs/benchmarks.md.
import type { Markers } from './scale-report.ts';
import type { ReplicaFigures, ShardResult } from './shard-rows.ts';

export const SHARD_MARKERS: Markers = {
  start: '<!-- bench:shards:start -->',
  end: '<!-- bench:shards:end -->',
};

const MiB = 1024 * 1024;
const perReplica = (r: ShardResult, cell: (f: ReplicaFigures) => string): string =>
  r.perReplica.map(cell).join(' / ');

/** Source watches (Secret, ConfigMap) and drift watches (one per rendered kind) of a replica. */
function watches(f: ReplicaFigures): string {
  const entries = Object.entries(f.watches);
  const sum = (drift: boolean): number =>
    entries.filter(([k]) => k.endsWith('(drift)') === drift).reduce((a, [, v]) => a + v, 0);
  return `${sum(false)}+${sum(true)}`;
}

const COLUMNS: [string, (r: ShardResult) => string][] = [
  ['Replicas', (r) => String(r.replicas)],
  [
    'Converge s (creators done at)',
    (r) => `${r.convergeSeconds.toFixed(1)} (${r.createSeconds.toFixed(1)})`,
  ],
  ['Instances/s', (r) => (r.size / r.convergeSeconds).toFixed(1)],
  [
    'Keys per replica (namespaces)',
    (r) => perReplica(r, (f) => `${f.keys} (${Math.round((f.keys * r.namespaces) / r.size)})`),
  ],
  [
    'RSS per replica, MiB (idle before)',
    (r) => perReplica(r, (f) => `${(f.rss / MiB).toFixed(0)} (${(f.idleRss / MiB).toFixed(0)})`),
  ],
  ['Watches per replica: source+drift', (r) => perReplica(r, watches)],
  [
    'Requests per instance, all replicas: writes / dry runs / GET+LIST',
    (r) => {
      const q = r.convergeRequests;
      return [q.writes, q.dryRuns, q.reads].map((v) => (v / r.size).toFixed(1)).join(' / ');
    },
  ],
  ['Load average start / end', (r) => `${r.load[0].toFixed(1)} / ${r.load[1].toFixed(1)}`],
];

/** The Markdown table: one line per replica count. */
export function shardTable(results: ShardResult[]): string {
  const row = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [
    row(COLUMNS.map(([title]) => title)),
    row(COLUMNS.map(() => '---')),
    ...results.map((r) => row(COLUMNS.map(([, cell]) => cell(r)))),
  ].join('\n');
}

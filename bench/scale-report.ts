// Turns the per-size results into the table of issue #10 (goals beside the figures) and writes it
// into docs/benchmarks.md between its markers, leaving the prose around it alone.
import { readFileSync, writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';
import type { Latencies, SizeResult } from './scale-rows.ts';

export interface Markers {
  start: string;
  end: string;
}

export const SCALE_MARKERS: Markers = {
  start: '<!-- bench:scale:start -->',
  end: '<!-- bench:scale:end -->',
};

const MiB = 1024 * 1024;
const count = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 1 });
const seconds = (s: number): string => `${s.toFixed(s < 10 ? 2 : 1)} s`;
const ms = (v: number): string => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(0)} ms`);
const lat = (l: Latencies): string => `${ms(l.p50)} / ${ms(l.p99)} / ${ms(l.max)} (${l.samples})`;
const kinds = (byKind: Record<string, number>): string =>
  Object.entries(byKind)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || 'none';

interface Row {
  what: string;
  goal: string;
  cell: (r: SizeResult, previous: SizeResult | undefined) => string;
}

const ROWS: Row[] = [
  {
    what: '1. Cold converge: first creation → all Ready (the 16 parallel creators finished at)',
    goal: '',
    cell: (r) => `${seconds(r.convergeSeconds)} (${seconds(r.createSeconds)})`,
  },
  {
    what: '   operator requests per instance while converging: writes / dry runs / GET+LIST',
    goal: 'limit: 4 / 3 / 0',
    cell: (r) => {
      const q = r.convergeRequests;
      return [q.writes, q.dryRuns, q.reads].map((v) => (v / r.size).toFixed(1)).join(' / ');
    },
  },
  {
    what: '2. The limit (bench/limit.ts, same N, concurrency 8) → ratio limit / Stencil',
    goal: '≥ 0.8 at 1,000',
    cell: (r) => `${seconds(r.limitSeconds)} → ${(r.limitSeconds / r.convergeSeconds).toFixed(2)}`,
  },
  {
    what: '   the floor (bench/limit.ts, on a fresh plane): the limit plus what SPEC adds → limit / floor; floor / Stencil',
    goal: '',
    cell: (r) =>
      r.floorSeconds === undefined
        ? '—'
        : `${seconds(r.floorSeconds)} → ${(r.limitSeconds / r.floorSeconds).toFixed(2)}; ${(r.floorSeconds / r.convergeSeconds).toFixed(2)}`,
  },
  {
    what: '   CPU per instance, ms: API server + etcd / operator / benchmark (cores busy) — converge; limit; floor',
    goal: '',
    cell: (r) =>
      [r.cpu?.converge, r.cpu?.limit, r.cpu?.floor]
        .map((c) =>
          c
            ? `${c.server.toFixed(1)} / ${c.operator.toFixed(1)} / ${c.bench.toFixed(1)} (${c.cores.toFixed(2)})`
            : '—',
        )
        .join('; '),
  },
  {
    what: '3. Steady state, two resync periods: writes / dry runs',
    goal: '0 / 0',
    cell: (r) => `${r.steady.writes} / ${r.steady.dryRuns} (period ${r.resyncSeconds} s)`,
  },
  {
    what: '   GET+LIST per resync (per instance); instance reconciles in the window',
    goal: '',
    cell: (r) =>
      `${count(r.steady.reads)} (${(r.steady.reads / r.size).toFixed(1)}); ${r.steady.reconciles}`,
  },
  {
    what: '4. Restart: new process → every instance reconciled again',
    goal: '',
    cell: (r) => seconds(r.restart.seconds),
  },
  {
    what: '   writes / dry runs sent by the restarted operator',
    goal: '0 / 0',
    cell: (r) => `${r.restart.writes} / ${r.restart.dryRuns}`,
  },
  {
    what: '   Leader handover: leader stops → the standby has reconciled every instance',
    goal: '',
    cell: (r) => (r.handover ? seconds(r.handover.seconds) : '—'),
  },
  {
    what: '   writes / dry runs sent by the new leader',
    goal: '0 / 0',
    cell: (r) => (r.handover ? `${r.handover.writes} / ${r.handover.dryRuns}` : '—'),
  },
  {
    what: '5. Fan-in rotation, one ConfigMap read by N/50 instances: p50 / p99 / max (instances)',
    goal: '',
    cell: (r) => lat(r.fanIn),
  },
  {
    what: '6. Single rotation under load, one Secret: p50 / p99 / max (rotations)',
    goal: 'p99 < 1 s at 1,000',
    cell: (r) => lat(r.rotation),
  },
  {
    what: '7. Memory after convergence: RSS / V8 heap used (RSS idle before)',
    goal: '≤ 150 MiB at 1,000; ≤ 300 MiB at 5,000',
    cell: (r) =>
      `${(r.memory.rss / MiB).toFixed(0)} / ${(r.memory.heap / MiB).toFixed(0)} MiB (${(r.memory.idleRss / MiB).toFixed(0)})`,
  },
  {
    what: '   RSS / heap growth per instance since the previous size',
    goal: '',
    cell: (r, p) =>
      p
        ? `${((r.memory.rss - p.memory.rss) / (r.size - p.size) / 1024).toFixed(1)} / ${((r.memory.heap - p.memory.heap) / (r.size - p.size) / 1024).toFixed(1)} KiB`
        : '—',
  },
  {
    what: '8. Watches held by the operator, by kind (`stencil_source_watches`)',
    goal: 'per (kind, namespace), not per instance',
    cell: (r) => kinds(r.watches.operator),
  },
  {
    what: '   WATCH connections the API server holds for the operator, by resource',
    goal: '',
    cell: (r) => kinds(r.watches.apiserver),
  },
  {
    what: 'Load average (1 min) at start / end of this size (2 cores)',
    goal: '',
    cell: (r) => `${r.load[0].toFixed(1)} / ${r.load[1].toFixed(1)}`,
  },
];

const escape = (text: string): string => text.replace(/\|/g, '\\|');

/** The Markdown table: one column per size, goals beside the figures. */
export function scaleTable(results: SizeResult[]): string {
  const header = ['What', 'Goal', ...results.map((r) => `N = ${count(r.size)}`)];
  const lines = [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...ROWS.map(
      (row) =>
        `| ${[row.what.trim(), row.goal, ...results.map((r, i) => row.cell(r, results[i - 1]))].map(escape).join(' | ')} |`,
    ),
  ];
  return lines.join('\n');
}

/**
 * Replaces the table between the markers of `docsPath` (the scale table's unless told; dated,
 * with what was run), formatted as `npm run format:check` wants it.
 */
export async function writeTable(
  docsPath: string,
  table: string,
  heading: string,
  markers: Markers = SCALE_MARKERS,
): Promise<void> {
  const text = readFileSync(docsPath, 'utf8');
  const start = text.indexOf(markers.start);
  const end = text.indexOf(markers.end);
  if (start < 0 || end < start)
    throw new Error(`${docsPath} has no ${markers.start} … ${markers.end}`);
  const replaced = `${text.slice(0, start + markers.start.length)}\n\n${heading}\n\n${table}\n\n${text.slice(end)}`;
  const options = { ...(await resolveConfig(docsPath)), filepath: docsPath };
  writeFileSync(docsPath, await format(replaced, options));
}

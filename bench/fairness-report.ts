// The fairness table of issue #25 and its markers in docs/benchmarks.md: one column per kept
// result, named by its label and date (`--fairness-label before`, then `after`), so one table
// shows a change to the work queue side by side with what was there before it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FairnessResult, QuietSample } from './fairness-row.ts';
import type { Markers } from './scale-report.ts';
import { percentile } from './support.ts';

export const FAIRNESS_MARKERS: Markers = {
  start: '<!-- bench:fairness:start -->',
  end: '<!-- bench:fairness:end -->',
};

/** Where runs are kept to be merged with later ones: `bench/results/fairness-<label>.json`. */
export const RESULTS_DIR = join(import.meta.dirname, 'results');

const ms = (v: number): string => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(0)} ms`);
const sec = (v: number): string => `${v.toFixed(1)} s`;

function stats(samples: QuietSample[], full = true): string {
  if (samples.length === 0) return '— (0)';
  const values = samples.map((s) => s.ms);
  const max = Math.max(...values);
  return full
    ? `${ms(percentile(values, 50))} / ${ms(percentile(values, 99))} / ${ms(max)} (${samples.length})`
    : `${ms(percentile(values, 50))} / ${ms(max)} (${samples.length})`;
}

const during = (samples: QuietSample[]): QuietSample[] => samples.filter((s) => s.duringWave);
const after = (samples: QuietSample[]): QuietSample[] => samples.filter((s) => !s.duringWave);

interface Row {
  what: string;
  goal: string;
  cell: (r: FairnessResult) => string;
}

const ROWS: Row[] = [
  {
    what: 'Quiet creation → Ready, started during the wave: p50 / p99 / max (samples)',
    goal: 'p99 ≤ 1 s',
    cell: (r) => stats(during(r.ready)),
  },
  {
    what: 'Quiet creation → Ready, started after the wave: p50 / max (samples)',
    goal: '',
    cell: (r) => stats(after(r.ready), false),
  },
  {
    what: 'Quiet Secret rotation → rendered ConfigMap, started during the wave: p50 / p99 / max (samples)',
    goal: 'p99 ≤ 1 s',
    cell: (r) => stats(during(r.rotations)),
  },
  {
    what: 'Quiet rotation, started after the wave: p50 / max (samples)',
    goal: '',
    cell: (r) => stats(after(r.rotations), false),
  },
  {
    what: 'Quiet rotation turns skipped: every Ready quiet instance was mid-rotation',
    goal: '',
    cell: (r) => String(r.rotationTurnsSkipped),
  },
  {
    what: 'Longest event-loop delay during the wave: operator / this benchmark',
    goal: '',
    cell: (r) =>
      r.eventLoopMax
        ? `${ms(r.eventLoopMax.operator * 1000)} / ${ms(r.eventLoopMax.bench * 1000)}`
        : '—',
  },
  {
    what: 'Noisy wave: first creation → last instance Ready (the 16 parallel creators finished at)',
    goal: '',
    cell: (r) => `${sec(r.convergeSeconds)} (${sec(r.createSeconds)})`,
  },
  {
    what: 'Noisy instances (namespaces); quiet namespaces (instances Ready before the wave); operator concurrency',
    goal: '',
    cell: (r) =>
      `${r.size.toLocaleString('en-US')} (${r.namespaces}); ${r.quietNamespaces} (${r.quietResidents}); ${r.concurrency}`,
  },
  {
    what: 'Load average (1 min) at start / end (2 cores)',
    goal: '',
    cell: (r) => `${r.load[0].toFixed(1)} / ${r.load[1].toFixed(1)}`,
  },
  { what: 'Commit', goal: '', cell: (r) => `\`${r.commit}\`` },
];

const escape = (text: string): string => text.replace(/\|/g, '\\|');

/** The Markdown table: one column per result, in the order given. */
export function fairnessTable(results: FairnessResult[]): string {
  const header = [
    'What',
    'Goal',
    ...results.map((r) => `${r.label} (${r.measuredAt.slice(0, 10)})`),
  ];
  return [
    `| ${header.map(escape).join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...ROWS.map(
      (row) =>
        `| ${[row.what.trim(), row.goal, ...results.map(row.cell)].map(escape).join(' | ')} |`,
    ),
  ].join('\n');
}

/**
 * One result per label, oldest first: `later` replaces an earlier result of the same label.
 */
export function byLabel(earlier: FairnessResult[], later: FairnessResult[]): FairnessResult[] {
  const kept = new Map<string, FairnessResult>();
  for (const r of [...earlier, ...later]) kept.set(r.label, r);
  return [...kept.values()].sort((a, b) => a.measuredAt.localeCompare(b.measuredAt));
}

/** The fairness results kept in bench/results/fairness-*.json (files written by --json). */
export function keptFairness(dir = RESULTS_DIR): FairnessResult[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.startsWith('fairness-') && f.endsWith('.json'))
    .flatMap(
      (f) =>
        (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { fairness?: FairnessResult[] })
          .fairness ?? [],
    );
}

/** The line above the table: how its columns were measured and where they are kept. */
export function fairnessHeading(results: FairnessResult[]): string {
  const size = results[results.length - 1]?.size ?? 1000;
  const columns = results
    .map((r) => `${r.label} at \`${r.commit}\`, ${r.measuredAt.slice(0, 16).replace('T', ' ')} UTC`)
    .join('; ');
  return (
    `Each column is one \`npm run bench -- --sizes '' --replicas '' --fairness ${size} ` +
    `--fairness-label LABEL\`, kept in \`bench/results/fairness-LABEL.json\` (${columns}).`
  );
}

// The kro peer table of issue #25: Stencil's scale rows beside kro's for the same workload, one
// group of columns per size (Stencil, kro, Stencil / kro), and its markers in docs/benchmarks.md.
import type { Markers } from './scale-report.ts';
import type { KroResult, Measured } from './kro-peer.ts';
import type { Latencies, SizeResult } from './scale-rows.ts';

export const KRO_MARKERS: Markers = {
  start: '<!-- bench:kro:start -->',
  end: '<!-- bench:kro:end -->',
};

const MiB = 1024 * 1024;

/** One figure of a row for either operator; undefined when it was not measured. */
interface Row {
  what: string;
  stencil: (r: SizeResult) => number | undefined;
  kro: (r: KroResult) => number | undefined;
  format: (v: number) => string;
  /** False where a ratio means nothing (the load average). */
  ratio?: boolean;
}

const seconds = (s: number): string => `${s.toFixed(s < 10 ? 2 : 1)} s`;
const ms = (v: number): string => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(0)} ms`);
const perInstance = (v: number): string => v.toFixed(1);
const latency = (m: Measured, pick: (l: Latencies) => number): number | undefined =>
  'reason' in m ? undefined : pick(m);
const stencilRequests = (
  r: SizeResult,
  pick: (q: SizeResult['convergeRequests']) => number,
): number => pick(r.convergeRequests) / r.size;
const allRequests = (q: { writes: number; dryRuns: number; reads: number }): number =>
  q.writes + q.dryRuns + q.reads;

const ROWS: Row[] = [
  {
    what: 'Cold converge: first creation → all Ready',
    stencil: (r) => r.convergeSeconds,
    kro: (r) => r.convergeSeconds,
    format: seconds,
  },
  {
    what: 'Requests per instance while converging: writes',
    stencil: (r) => stencilRequests(r, (q) => q.writes),
    kro: (r) => r.requestsPerInstance.writes,
    format: perInstance,
  },
  {
    what: '… dry runs',
    stencil: (r) => stencilRequests(r, (q) => q.dryRuns),
    kro: (r) => r.requestsPerInstance.dryRuns,
    format: perInstance,
  },
  {
    what: '… GET+LIST',
    stencil: (r) => stencilRequests(r, (q) => q.reads),
    kro: (r) => r.requestsPerInstance.reads,
    format: perInstance,
  },
  {
    what: '… all three',
    stencil: (r) => stencilRequests(r, allRequests),
    kro: (r) => allRequests(r.requestsPerInstance),
    format: perInstance,
  },
  {
    what: 'RSS after converging (MiB)',
    stencil: (r) => r.memory.rss / MiB,
    kro: (r) => r.rssMiB,
    format: (v) => v.toFixed(0),
  },
  {
    what: '… RSS before the first instance (MiB)',
    stencil: (r) => r.memory.idleRss / MiB,
    kro: (r) => r.idleRssMiB,
    format: (v) => v.toFixed(0),
  },
  {
    what: 'Single rotation, one Secret: p50',
    stencil: (r) => r.rotation.p50,
    kro: (r) => latency(r.rotation, (l) => l.p50),
    format: ms,
  },
  {
    what: '… p99',
    stencil: (r) => r.rotation.p99,
    kro: (r) => latency(r.rotation, (l) => l.p99),
    format: ms,
  },
  {
    what: 'Fan-in rotation, the shared ConfigMap of N/50 instances: p50',
    stencil: (r) => r.fanIn.p50,
    kro: (r) => latency(r.fanIn, (l) => l.p50),
    format: ms,
  },
  {
    what: '… p99',
    stencil: (r) => r.fanIn.p99,
    kro: (r) => latency(r.fanIn, (l) => l.p99),
    format: ms,
  },
  {
    what: 'Load average (1 min) at the start of the size (2 cores)',
    stencil: (r) => r.load[0],
    kro: (r) => r.load[0],
    format: (v) => v.toFixed(1),
    ratio: false,
  },
];

const count = (n: number): string => n.toLocaleString('en-US');

function cells(row: Row, stencil: SizeResult | undefined, kro: KroResult | undefined): string[] {
  const s = stencil ? row.stencil(stencil) : undefined;
  const k = kro ? row.kro(kro) : undefined;
  const show = (v: number | undefined): string => (v === undefined ? '—' : row.format(v));
  const ratio =
    row.ratio === false || s === undefined || k === undefined || k === 0 ? '—' : (s / k).toFixed(2);
  return [show(s), show(k), ratio];
}

/**
 * The Markdown table: for each size kro was measured at, Stencil's figure from the same results
 * (— when that size was not run), kro's, and Stencil / kro (below 1: Stencil lower).
 */
export function kroTable(stencil: SizeResult[], kro: KroResult[]): string {
  const sizes = [...new Set(kro.map((r) => r.size))].sort((a, b) => a - b);
  const header = [
    'What',
    ...sizes.flatMap((n) => [`N = ${count(n)}: Stencil`, 'kro', 'Stencil / kro']),
  ];
  const row = (values: string[]): string => `| ${values.join(' | ')} |`;
  const unmeasured = kro
    .flatMap((r) => [
      'reason' in r.rotation ? `N = ${count(r.size)}, single rotation: ${r.rotation.reason}` : '',
      'reason' in r.fanIn ? `N = ${count(r.size)}, fan-in: ${r.fanIn.reason}` : '',
    ])
    .filter(Boolean);
  return [
    row(header),
    row(header.map(() => '---')),
    ...ROWS.map((r) =>
      row([
        r.what,
        ...sizes.flatMap((n) =>
          cells(
            r,
            stencil.find((s) => s.size === n),
            kro.find((k) => k.size === n),
          ),
        ),
      ]),
    ),
    ...(unmeasured.length > 0 ? ['', ...unmeasured.map((u) => `Not measured: ${u}.`)] : []),
  ].join('\n');
}

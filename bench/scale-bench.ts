// `npm run bench`: the scale benchmark of issue #10. For each size (--sizes 100,1000,5000) a fresh
// control plane, the built operator as its own process, every row; prints the table and rewrites
// the one in docs/benchmarks.md (unless --no-docs). --json PATH keeps the raw results;
// --report-only a.json,b.json rebuilds the table from kept results (sizes measured apart).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runSize, type SizeResult } from './scale-rows.ts';
import { scaleTable, writeScaleTable } from './scale-report.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100,1000,5000' },
    rotations: { type: 'string', default: '50' },
    /** Resync period in the steady-state row; default 1.5 × the restart time. */
    'resync-period': { type: 'string' },
    concurrency: { type: 'string' },
    json: { type: 'string' },
    'no-docs': { type: 'boolean', default: false },
    /** Takes a CPU profile and a heap snapshot of the operator into this directory. */
    profile: { type: 'string' },
    'report-only': { type: 'string' },
  },
});

interface Kept {
  minutes: number;
  results: SizeResult[];
}

const sizes = values.sizes.split(',').map((s) => Number(s.replace(/_/g, '')));
if (sizes.some((n) => !Number.isInteger(n) || n < 1)) {
  console.error(`--sizes must be positive integers, got "${values.sizes}"`);
  process.exit(2);
}
const log = (line: string): void =>
  console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);

async function measure(): Promise<Kept> {
  const logDir = mkdtempSync(join(tmpdir(), 'stencil-bench-'));
  log(`operator logs in ${logDir}`);
  // Exit through process.exit so the operator processes' exit guards run.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => process.exit(130));
  const results: SizeResult[] = [];
  const began = performance.now();
  for (const size of sizes) {
    results.push(
      await runSize(size, {
        rotations: Number(values.rotations),
        resyncSeconds: values['resync-period'] ? Number(values['resync-period']) : undefined,
        operatorConcurrency: values.concurrency ? Number(values.concurrency) : undefined,
        logDir,
        profileDir: values.profile,
        log,
      }),
    );
  }
  return { minutes: (performance.now() - began) / 60_000, results };
}

const kept: Kept = values['report-only']
  ? values['report-only'].split(',').reduce<Kept>(
      (all, file) => {
        const one = JSON.parse(readFileSync(file, 'utf8')) as Kept;
        return { minutes: all.minutes + one.minutes, results: [...all.results, ...one.results] };
      },
      { minutes: 0, results: [] },
    )
  : await measure();
kept.results.sort((a, b) => a.size - b.size);
const table = scaleTable(kept.results);
const runs = values['report-only'] ? 'separate runs, together' : 'whole run';
console.log(table);
console.log(`\n${runs}: ${kept.minutes.toFixed(1)} min`);
if (values.json) writeFileSync(values.json, JSON.stringify(kept, null, 2));
if (!values['no-docs']) {
  const date = new Date().toISOString().slice(0, 10);
  const measured = kept.results.map((r) => r.size).join(',');
  await writeScaleTable(
    join(import.meta.dirname, '..', 'docs', 'benchmarks.md'),
    table,
    `Measured ${date} by \`npm run bench -- --sizes ${measured}\` (${runs} ${kept.minutes.toFixed(1)} min).`,
  );
}

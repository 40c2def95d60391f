// `npm run bench`: the scale benchmark of issue #10. For each size (--sizes 100,1000,5000) a fresh
// control plane, the built operator as its own process, every row; then the sharding row of issue
// #15: for each replica count (--replicas 1,2,3) a fresh control plane and that many
// `--shards auto` processes converging --shard-instances (3,000); then the fairness row of issue
// #25 (--fairness 1000 noisy instances; --fairness-label names its column); last, the kro peer row
// of issue #25 (--peer kro, the default): kro at --peer-sizes (default: the --sizes up to 1,000),
// each on a fresh plane. `--sizes ''`, `--replicas ''`, `--fairness ''` or `--peer ''` leaves a
// part out. Prints the tables and rewrites the ones in docs/benchmarks.md (unless --no-docs).
// --json PATH keeps the raw results; --report-only a.json,b.json rebuilds the tables from kept
// results (parts measured apart).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  byLabel,
  FAIRNESS_MARKERS,
  fairnessHeading,
  fairnessTable,
  keptFairness,
} from './fairness-report.ts';
import { runFairness, type FairnessResult } from './fairness-row.ts';
import { runSize, type SizeResult } from './scale-rows.ts';
import { scaleTable, writeTable } from './scale-report.ts';
import { SHARD_MARKERS, shardTable } from './shard-report.ts';
import { runShards, type ShardResult } from './shard-rows.ts';
import { runKroPeer, type KroResult } from './kro-peer.ts';
import { KRO_MARKERS, kroTable } from './kro-report.ts';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100,1000,5000' },
    rotations: { type: 'string', default: '50' },
    /** Resync period in the steady-state row; default 1.5 × the restart time. */
    'resync-period': { type: 'string' },
    concurrency: { type: 'string' },
    /** Replica counts of the sharding row; '' leaves the row out. */
    replicas: { type: 'string', default: '1,2,3' },
    'shard-instances': { type: 'string', default: '3000' },
    /** The peer row: 'kro' or '' (none). */
    peer: { type: 'string', default: 'kro' },
    'peer-sizes': { type: 'string' },
    /** Noisy instances of the fairness row; '' leaves the row out. */
    fairness: { type: 'string', default: '1000' },
    /** The fairness table's column for this run (default: the commit). */
    'fairness-label': { type: 'string' },
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
  /** Absent in results kept before the sharding row existed. */
  shards?: ShardResult[];
  kro?: KroResult[];
  /** Absent in results kept before the fairness row existed. */
  fairness?: FairnessResult[];
}

/** A comma-separated list of positive integers ('' is none); exits on anything else. */
function integers(flag: string, text: string): number[] {
  const list = text === '' ? [] : text.split(',').map((s) => Number(s.replace(/_/g, '')));
  if (list.some((n) => !Number.isInteger(n) || n < 1)) {
    console.error(`--${flag} must be positive integers, got "${text}"`);
    process.exit(2);
  }
  return list;
}

const sizes = integers('sizes', values.sizes);
const replicaCounts = integers('replicas', values.replicas);
const [shardInstances] = integers('shard-instances', values['shard-instances']);
if (!['kro', ''].includes(values.peer)) {
  console.error(`--peer must be kro or '', got "${values.peer}"`);
  process.exit(2);
}
const peerSizes =
  values.peer === ''
    ? []
    : values['peer-sizes'] !== undefined
      ? integers('peer-sizes', values['peer-sizes'])
      : sizes.filter((n) => n <= 1000);
const [fairnessSize] = integers('fairness', values.fairness);
const log = (line: string): void =>
  console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);

async function measure(): Promise<Kept> {
  const logDir = mkdtempSync(join(tmpdir(), 'stencil-bench-'));
  log(`operator logs in ${logDir}`);
  // Exit through process.exit so the operator processes' exit guards run.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => process.exit(130));
  const results: SizeResult[] = [];
  const shards: ShardResult[] = [];
  const kro: KroResult[] = [];
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
  for (const replicas of replicaCounts)
    shards.push(await runShards(replicas, shardInstances ?? 3000, { logDir, log }));
  const fairness: FairnessResult[] = [];
  if (fairnessSize !== undefined)
    fairness.push(
      await runFairness(fairnessSize, {
        label: values['fairness-label'],
        operatorConcurrency: values.concurrency ? Number(values.concurrency) : undefined,
        logDir,
        log,
      }),
    );
  for (const size of peerSizes)
    kro.push(await runKroPeer(size, { rotations: Number(values.rotations), logDir, log }));
  return { minutes: (performance.now() - began) / 60_000, results, shards, kro, fairness };
}

const kept: Kept = values['report-only']
  ? values['report-only'].split(',').reduce<Kept>(
      (all, file) => {
        const one = JSON.parse(readFileSync(file, 'utf8')) as Kept;
        return {
          minutes: all.minutes + one.minutes,
          results: [...all.results, ...one.results],
          shards: [...(all.shards ?? []), ...(one.shards ?? [])],
          kro: [...(all.kro ?? []), ...(one.kro ?? [])],
          fairness: byLabel(all.fairness ?? [], one.fairness ?? []),
        };
      },
      { minutes: 0, results: [], shards: [], kro: [], fairness: [] },
    )
  : await measure();
kept.results.sort((a, b) => a.size - b.size);
const shards = (kept.shards ?? []).sort((a, b) => a.replicas - b.replicas);
const kroResults = (kept.kro ?? []).sort((a, b) => a.size - b.size);
// A run's fairness column goes beside the other labels kept in bench/results.
const fairness = values['report-only']
  ? (kept.fairness ?? [])
  : byLabel(keptFairness(), kept.fairness ?? []);
const runs = values['report-only'] ? 'separate runs, together' : 'whole run';
const tables = [
  kept.results.length > 0 ? scaleTable(kept.results) : undefined,
  shards.length > 0 ? shardTable(shards) : undefined,
  kroResults.length > 0 ? kroTable(kept.results, kroResults) : undefined,
  fairness.length > 0 ? fairnessTable(fairness) : undefined,
].filter((t) => t !== undefined);
console.log(tables.join('\n\n'));
console.log(`\n${runs}: ${kept.minutes.toFixed(1)} min`);
if (values.json) writeFileSync(values.json, JSON.stringify(kept, null, 2));
if (!values['no-docs']) {
  const docs = join(import.meta.dirname, '..', 'docs', 'benchmarks.md');
  const date = new Date().toISOString().slice(0, 10);
  const took = `(${runs} ${kept.minutes.toFixed(1)} min)`;
  if (kept.results.length > 0) {
    const measured = kept.results.map((r) => r.size).join(',');
    await writeTable(
      docs,
      scaleTable(kept.results),
      `Measured ${date} by \`npm run bench -- --sizes ${measured}\` ${took}.`,
    );
  }
  if (shards.length > 0) {
    const command = `npm run bench -- --sizes '' --replicas ${shards.map((r) => r.replicas).join(',')} --shard-instances ${shards[0]!.size}`;
    await writeTable(
      docs,
      shardTable(shards),
      `Measured ${date} by \`${command}\` ${took}.`,
      SHARD_MARKERS,
    );
  }
  if (kroResults.length > 0) {
    const peer = kroResults.map((r) => r.size).join(',');
    const stencil = kept.results.map((r) => r.size).join(',');
    const command = `npm run bench -- --sizes '${stencil}' --replicas '' --peer-sizes ${peer}`;
    const table = kroTable(kept.results, kroResults);
    await writeTable(docs, table, `Measured ${date} by \`${command}\` ${took}.`, KRO_MARKERS);
  }
  if (fairness.length > 0)
    await writeTable(docs, fairnessTable(fairness), fairnessHeading(fairness), FAIRNESS_MARKERS);
}

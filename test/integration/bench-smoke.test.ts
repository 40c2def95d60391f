// Smoke run of `npm run bench` at N = 20: the scale benchmark works end to end (its own control
// plane, the built operator as a process, every row), and so do the sharding row with two
// replicas over 20 instances and the fairness row with a wave of 20. Figures are printed, never
// asserted on time.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { SizeResult } from '../../bench/scale-rows.ts';
import type { ShardResult } from '../../bench/shard-rows.ts';
import type { FairnessResult } from '../../bench/fairness-row.ts';

const root = join(import.meta.dirname, '..', '..');

function runBench(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/scale-bench.ts', ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

it('runs every row of the scale benchmark at N = 20, the sharding row at 2 replicas, the fairness row at 20, and prints the tables', async () => {
  const json = join(mkdtempSync(join(tmpdir(), 'bench-smoke-')), 'results.json');
  const run = await runBench([
    '--sizes=20',
    '--rotations=3',
    '--resync-period=2',
    '--replicas=2',
    '--shard-instances=20',
    // The kro peer row (on by default) needs kro built from Go: a cold build takes minutes.
    '--peer=',
    '--fairness=20',
    '--fairness-label=smoke',
    '--no-docs',
    `--json=${json}`,
  ]);
  expect(run.code, run.stderr.slice(-3000)).toBe(0);
  expect(run.stdout).toContain('| What | Goal | N = 20 |');
  expect(run.stdout).toContain('2. The limit');
  expect(run.stdout).toContain('the floor (bench/limit.ts, on a fresh plane)');

  expect(run.stdout).toContain('| Replicas | Converge s');
  // The fairness table: this run's column (beside any kept in bench/results).
  expect(run.stdout).toMatch(/\| What \| Goal \|.*\| smoke \(/);

  const kept = JSON.parse(readFileSync(json, 'utf8')) as {
    results: SizeResult[];
    shards: ShardResult[];
    fairness: FairnessResult[];
  };
  const [result] = kept.results;
  expect(result).toMatchObject({ size: 20, namespaces: 20 });
  // Every instance got its three objects applied (dry run first) while converging.
  expect(result!.convergeRequests.byKey).toMatchObject({
    'APPLY configmaps dry-run': 20,
    'APPLY secrets': 20,
    'APPLY services': 20,
  });
  expect(result!.fanIn.samples).toBe(1);
  expect(result!.rotation.samples).toBe(3);
  expect(result!.steady.reconciles).toBeGreaterThanOrEqual(20);
  expect(result!.memory.rss).toBeGreaterThan(0);
  expect(result!.limitSeconds).toBeGreaterThan(0);
  expect(result!.floorSeconds).toBeGreaterThan(0);
  // One source watch per (kind, namespace) pair, one drift watch per rendered kind.
  expect(result!.watches.operator).toMatchObject({
    Secret: 20,
    ConfigMap: 20,
    'Secret (drift)': 1,
    'ConfigMap (drift)': 1,
    'Service (drift)': 1,
  });

  // Two replicas split the 20 namespaces: every instance owned by exactly one of them, each
  // watching only the sources of its own namespaces.
  const [sharded] = kept.shards;
  expect(sharded).toMatchObject({ replicas: 2, size: 20, namespaces: 20 });
  expect(sharded!.perReplica.map((f) => f.keys).reduce((a, b) => a + b, 0)).toBe(20);
  expect(sharded!.perReplica.map((f) => f.watches.Secret ?? 0)).toEqual(
    sharded!.perReplica.map((f) => f.keys),
  );
  expect(sharded!.convergeRequests.byKey).toMatchObject({ 'APPLY secrets': 20 });

  // The quiet tenant's 20 creations and 20 rotations all came through (a wave of 20 is over
  // early, so most of them count as after the wave).
  const [fair] = kept.fairness;
  expect(fair).toMatchObject({ label: 'smoke', size: 20, quietNamespaces: 5 });
  expect(fair!.ready.length).toBeGreaterThanOrEqual(20);
  expect(fair!.rotations.length).toBeGreaterThanOrEqual(20);
  expect(fair!.convergeSeconds).toBeGreaterThan(0);
}, 300_000);

// Smoke run of `npm run bench` at N = 20: the scale benchmark works end to end (its own control
// plane, the built operator as a process, every row). Figures are printed, never asserted on time.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { SizeResult } from '../../bench/scale-rows.ts';

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

it('runs every row of the scale benchmark at N = 20 and prints the table', async () => {
  const json = join(mkdtempSync(join(tmpdir(), 'bench-smoke-')), 'results.json');
  const run = await runBench([
    '--sizes=20',
    '--rotations=3',
    '--resync-period=2',
    '--no-docs',
    `--json=${json}`,
  ]);
  expect(run.code, run.stderr.slice(-3000)).toBe(0);
  expect(run.stdout).toContain('| What | Goal | N = 20 |');
  expect(run.stdout).toContain('2. The limit');

  const [result] = (JSON.parse(readFileSync(json, 'utf8')) as { results: SizeResult[] }).results;
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
  // One source watch per (kind, namespace) pair, one drift watch per rendered kind.
  expect(result!.watches.operator).toMatchObject({
    Secret: 20,
    ConfigMap: 20,
    'Secret (drift)': 1,
    'ConfigMap (drift)': 1,
    'Service (drift)': 1,
  });
}, 300_000);

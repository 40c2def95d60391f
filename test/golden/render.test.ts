// Golden renders: every sample and every case under test/fixtures/render goes through
// `stencil render --output json` (the operator's evaluation path) and must match expected.json.
// Regenerate after an intended change with UPDATE_GOLDEN=1 and review the diff.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { main } from '../../src/cli.ts';

const root = join(import.meta.dirname, '..', '..');

function cases(dir: string): { name: string; dir: string }[] {
  return readdirSync(join(root, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => ({ name: `${dir}/${e.name}`, dir: join(root, dir, e.name) }));
}

const all = [...cases('samples'), ...cases('test/fixtures/render')];

describe('golden renders', () => {
  it.each(all)('$name renders as expected.json says', async ({ dir }) => {
    // observed.yaml: what `observed` reads offline, kept apart from objects.yaml because the
    // playground and the chart test apply objects.yaml to a cluster, where the instance creates it.
    const objects = ['objects.yaml', 'observed.yaml']
      .filter((file) => existsSync(join(dir, file)))
      .flatMap((file) => ['--objects', join(dir, file)]);
    const result = await main([
      'render',
      '--template',
      join(dir, 'template.yaml'),
      '--instance',
      join(dir, 'instance.yaml'),
      ...objects,
      '--output',
      'json',
    ]);
    expect(result.stderr).toBe('');
    const expectedPath = join(dir, 'expected.json');
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(expectedPath, result.stdout);
    expect(result.stdout).toBe(readFileSync(expectedPath, 'utf8'));
    const report = JSON.parse(result.stdout) as { phase: string };
    expect(result.exitCode).toBe(report.phase === 'Ready' ? 0 : 1);
  });

  it('gives every sample instance a name of its own (the playground applies them all)', () => {
    const names = cases('samples').map(({ dir }) => {
      const text = readFileSync(join(dir, 'instance.yaml'), 'utf8');
      const metadata = (parse(text) as { metadata: { name: string; namespace: string } }).metadata;
      return `${metadata.namespace}/${metadata.name}`;
    });
    expect(new Set(names).size).toBe(names.length);
  });

  it('covers at least six samples', () => {
    expect(cases('samples').length).toBeGreaterThanOrEqual(6);
  });
});

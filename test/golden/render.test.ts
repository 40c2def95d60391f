// Golden renders: every sample and every case under test/fixtures/render goes through
// `stencil render --output json` (the operator's evaluation path) and must match expected.json.
// Regenerate after an intended change with UPDATE_GOLDEN=1 and review the diff.
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Template } from '../../src/api/template.ts';
import type { TemplateInstanceSet } from '../../src/api/template-instance-set.ts';
import { main } from '../../src/cli/commands.ts';
import { planSet } from '../../src/engine/instance-sets/instance-set.ts';
import { readManifests } from '../../tools/local/apply-manifests.ts';

const root = join(import.meta.dirname, '..', '..');

function cases(dir: string): { name: string; dir: string }[] {
  return readdirSync(join(root, dir), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => ({ name: `${dir}/${e.name}`, dir: join(root, dir, e.name) }));
}

/** A sample whose instance.yaml is a TemplateInstanceSet (rendered per stamped namespace). */
const isSetSample = (dir: string): boolean =>
  (parse(readFileSync(join(dir, 'instance.yaml'), 'utf8')) as { kind?: string }).kind ===
  'TemplateInstanceSet';

const all = [...cases('samples'), ...cases('test/fixtures/render')].filter(
  ({ dir }) => !isSetSample(dir),
);
const setSamples = cases('samples').filter(({ dir }) => isSetSample(dir));

/**
 * The render of every instance a Set sample stamps into the namespaces of its objects.yaml (as
 * the operator would, with their labels, annotations and ConfigMaps), keyed by namespace.
 */
async function setRenders(dir: string): Promise<string> {
  const set = parse(readFileSync(join(dir, 'instance.yaml'), 'utf8')) as TemplateInstanceSet;
  set.metadata.uid = 'sample-set-uid';
  const template = parse(readFileSync(join(dir, 'template.yaml'), 'utf8')) as Template;
  const objectsFile = join(dir, 'objects.yaml');
  const namespaces = readManifests([objectsFile])
    .filter((o) => o.kind === 'Namespace')
    .map((n) => ({
      name: n.metadata.name ?? '',
      labels: n.metadata.labels ?? {},
      annotations: n.metadata.annotations ?? {},
    }));
  const plan = planSet({ set, template, namespaces, stamped: [], existing: () => undefined });
  expect(plan.status.failed).toBe(0);
  const scratch = mkdtempSync(join(tmpdir(), 'stencil-golden-'));
  const reports: Record<string, unknown> = {};
  for (const instance of plan.apply) {
    const file = join(scratch, `${instance.metadata.namespace ?? ''}.json`);
    writeFileSync(file, JSON.stringify(instance));
    const result = await main([
      'render',
      ...['--template', join(dir, 'template.yaml'), '--instance', file],
      ...['--objects', objectsFile, '--output', 'json'],
    ]);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    reports[instance.metadata.namespace ?? ''] = JSON.parse(result.stdout) as unknown;
  }
  return `${JSON.stringify(reports, null, 2)}\n`;
}

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

  it.each(setSamples)(
    '$name renders, per stamped namespace, as expected.json says',
    async ({ dir }) => {
      const output = await setRenders(dir);
      const expectedPath = join(dir, 'expected.json');
      if (process.env.UPDATE_GOLDEN === '1') writeFileSync(expectedPath, output);
      expect(output).toBe(readFileSync(expectedPath, 'utf8'));
    },
  );

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

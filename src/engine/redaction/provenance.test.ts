// Issue #22's reproductions of Secret values escaping through helpers and through size: each
// evaluation is the one `stencil render` and the operator run, and nothing it shows may quote
// the Secret or what a helper made of it.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { aSecret, aTemplate, anInstance } from '../../../test/support/builders.ts';
import { shows } from '../../../test/support/secret-leak-cases.ts';
import type { ParameterValue } from '../../api/template-instance.ts';
import { readyCondition } from '../shared/conditions.ts';
import { evaluateInstance, type InstanceEvaluation } from '../evaluation/instance-evaluation.ts';
import { MemorySource } from '../sources/memory-source.ts';

const SECRET = 'SUPERSECRET-7-x';

function configMap(metadata: string, data = ''): string {
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n${metadata}\ndata:\n  k: v\n${data}`;
}

async function evaluate(
  body: string,
  stored: string,
  source: ParameterValue['valueFrom'] = { secretKeyRef: { name: 's', key: 'p' } },
): Promise<InstanceEvaluation> {
  return evaluateInstance({
    instance: anInstance([{ name: 'p', valueFrom: source }]),
    template: aTemplate([{ name: 'p', type: 'string' }], { handlebars: body }),
    namespaceLabels: {},
    port: new MemorySource([aSecret('s', 'team-a', { p: stored })]),
  });
}

function visible(evaluation: InstanceEvaluation): string {
  const conditions = [...evaluation.conditions, readyCondition(evaluation.conditions)];
  return conditions.map((c) => `${c.reason} ${c.message}`).join('\n');
}

const base64 = (text: string): string => Buffer.from(text).toString('base64');

describe('a helper applied to a Secret-backed value never shows it in a failure', () => {
  it.each([
    ['replace', 'namespace: {{replace "-" "." parameters.p}}', SECRET, 'SUPERSECRET.7.x'],
    ['lower of trim', 'namespace: {{lower (trim parameters.p)}}', ` ${SECRET} `, 'supersecret-7-x'],
    ['b64dec of a base64 value', 'namespace: {{b64dec parameters.p}}', base64(SECRET), SECRET],
    ['concat', 'namespace: {{concat "ns-" parameters.p}}', SECRET, `ns-${SECRET}`],
    ['trunc', 'namespace: {{trunc 9 parameters.p}}', SECRET, 'SUPERSECR'],
    [
      'join of split',
      'namespace: {{join "+" (split "-" parameters.p)}}',
      SECRET,
      'SUPERSECRET+7+x',
    ],
    ['quote', 'namespace: {{quote (upper parameters.p)}}', SECRET, 'SUPERSECRET-7-X'],
  ])('%s', async (_name, metadata, stored, derived) => {
    const evaluation = await evaluate(configMap(`  ${metadata}`), stored);
    expect(evaluation.problem?.reason).toBe('TemplateExecutionFailed');
    const text = visible(evaluation);
    expect(text).toContain('[redacted: parameters.p]');
    expect(shows(text, derived)).toBe(false);
    expect(shows(text, stored.trim())).toBe(false);
  });

  it('b64dec of a Secret field read by objectFieldRef (the Secret data as stored)', async () => {
    const evaluation = await evaluate(configMap('  namespace: {{b64dec parameters.p}}'), SECRET, {
      objectFieldRef: { apiVersion: 'v1', kind: 'Secret', name: 's', jsonPath: '.data.p' },
    });
    expect(evaluation.problem?.reason).toBe('TemplateExecutionFailed');
    expect(evaluation.problem?.message).toContain('namespace "[redacted: parameters.p]"');
    expect(shows(visible(evaluation), SECRET)).toBe(false);
  });

  it('a derived name quoted by a later message (the API server) is redacted by the evaluation', async () => {
    const evaluation = await evaluate(
      configMap('', '  x: {{sha256 parameters.p}}').replace(
        'name: a',
        'name: app-{{lower parameters.p}}',
      ),
      SECRET,
    );
    expect(evaluation.ok).toBe(true);
    const name = evaluation.resources[0]!.metadata.name!;
    expect(name).toBe(`app-${SECRET.toLowerCase()}`);
    const rejected = `ConfigMap "${name}" is invalid: metadata.name: Invalid value: "${name}"`;
    expect(evaluation.redactor.redact(rejected)).toBe(
      'ConfigMap "app-[redacted: parameters.p]" is invalid: metadata.name: Invalid value: "app-[redacted: parameters.p]"',
    );
  });

  it('still quotes a value a helper made from literals only', async () => {
    const evaluation = await evaluate(configMap('  namespace: {{lower "Elsewhere"}}'), SECRET);
    expect(evaluation.problem?.message).toContain('namespace "elsewhere"');
  });
});

describe('the keys of a map read from a Secret', () => {
  // Found by a hostile-tenant probe: keys were not redacted (a map of user to token).
  it.each([
    ['written out by @key', 'namespace: "{{#each parameters.p}}{{@key}}{{/each}}"'],
    ['quoted by a later message', 'namespace: elsewhere\n  labels: {{toJson parameters.p}}'],
  ])('are not shown when %s', async (_how, metadata) => {
    const evaluation = await evaluateInstance({
      instance: anInstance([{ name: 'p', valueFrom: { secretKeyRef: { name: 's', key: 'p' } } }]),
      template: aTemplate([{ name: 'p', type: 'object' }], {
        handlebars: configMap(`  ${metadata}`),
      }),
      namespaceLabels: {},
      port: new MemorySource([aSecret('s', 'team-a', { p: '{"SECRETKEYNAME":"v"}' })]),
    });
    expect(evaluation.ok).toBe(false);
    const text = visible(evaluation);
    expect(text).not.toContain('SECRETKEYNAME');
    expect(
      evaluation.redactor.redact('metadata.labels: Invalid value: "SECRETKEYNAME"'),
    ).not.toContain('SECRETKEYNAME');
  });
});

describe('a large Secret', () => {
  // A CA bundle, a PEM chain, a kubeconfig: tens of kilobytes up to a MiB.
  const pem = (size: number): string => {
    const lines = ['-----BEGIN CERTIFICATE-----'];
    let n = 0;
    while (lines.join('\n').length < size)
      lines.push(`SUPERSECRET${String(n++).padStart(53, 'x')}`);
    return `${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
  };

  const sizes: [string, string][] = [
    ['40,000 characters', 'A'.repeat(39_980) + 'SUPERSECRET-x'],
    ['a 30 KB PEM bundle', pem(30_000)],
    ['1 MiB', pem(1024 * 1024)],
  ];
  const uses: [string, string, (stored: string) => string][] = [
    ['sha256', '{{sha256 parameters.p}}', (s) => createHash('sha256').update(s).digest('hex')],
    ['b64enc', '{{b64enc parameters.p}}', (s) => Buffer.from(s).toString('base64')],
    ['inserted whole', '{{quote parameters.p}}', (s) => s],
  ];

  it.each(
    sizes.flatMap(([size, stored]) => uses.map((use) => [size, use[0], stored, use] as const)),
  )('of %s renders with %s', async (_size, _use, stored, [, expression, expected]) => {
    const evaluation = await evaluate(configMap('', `  x: ${expression}`), stored);
    expect(evaluation.problem).toBeUndefined();
    expect((evaluation.resources[0]!.data as Record<string, string>).x).toBe(expected(stored));
  });

  it.each([
    ['40,000 characters', 'A'.repeat(39_980) + 'SUPERSECRET-x'],
    ['1 MiB', pem(1024 * 1024)],
  ])('of %s that makes a render fail prints no part of it', async (_name, stored) => {
    const evaluation = await evaluate(configMap('  namespace: {{trunc 40 parameters.p}}'), stored);
    expect(evaluation.problem?.reason).toBe('TemplateExecutionFailed');
    const text = visible(evaluation);
    expect(text).toContain('[redacted: parameters.p]');
    expect(text).not.toContain('SUPERSECRET');
    expect(text).not.toContain('AAAAAAAA');
    expect(text.length).toBeLessThan(2_000);
  });
});

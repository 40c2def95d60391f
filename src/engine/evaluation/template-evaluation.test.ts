import { describe, expect, it } from 'vitest';
import type { JsonValue } from '../../api/object-meta.ts';
import type { ParameterDeclaration, TemplateSpec } from '../../api/template.ts';
import { aTemplate, CONFIG_MAP_BODY } from '../../../test/support/builders.ts';
import type { ConditionDraft } from '../shared/conditions.ts';
import { evaluateTemplate } from './template-evaluation.ts';

function evaluate(
  handlebars: string,
  parameters: ParameterDeclaration[] = [],
  spec: Partial<TemplateSpec> = {},
): ReturnType<typeof evaluateTemplate> {
  return evaluateTemplate(aTemplate(parameters, { handlebars, ...spec }));
}

describe('static validation of a Template (Valid condition)', () => {
  it('accepts a valid Template and dry-renders it with the literal defaults', () => {
    const result = evaluate(`${CONFIG_MAP_BODY}data:\n  image: {{parameters.image}}\n`, [
      { name: 'image', value: 'nginx' },
    ]);
    expect(result.phase).toBe('Valid');
    expect(result.conditions).toEqual([
      expect.objectContaining({ type: 'Valid', status: 'True', reason: 'ValidationSucceeded' }),
      expect.objectContaining({
        type: 'DryRunRendered',
        status: 'True',
        reason: 'RenderSucceeded',
      }),
    ]);
  });

  it.each([
    [
      'a Handlebars syntax error',
      'a: {{parameters.x\nb: 1',
      [{ name: 'x' }],
      /line 2, column 1: Parse error/,
    ],
    [
      'a block mismatch',
      'a: 1\n{{#if parameters.x}}\n{{/each}}',
      [{ name: 'x' }],
      /line 2, column 4: if doesn't match each/,
    ],
    [
      'an undeclared parameter',
      'a: 1\nb: {{parameters.nope}}',
      [],
      /line 2, column 6: reference to undeclared parameter "parameters.nope"/,
    ],
    [
      'an undeclared parameter in a helper argument',
      'a: {{upper parameters.nope}}',
      [],
      /line 1, column 12: reference to undeclared parameter/,
    ],
    [
      'an undeclared parameter in a block condition',
      'x\n  {{#if parameters.nope}}{{/if}}',
      [],
      /line 2, column 9: reference to undeclared/,
    ],
    [
      'an unknown helper',
      'a: {{frobnicate parameters.x}}',
      [{ name: 'x' }],
      /line 1, column 4: unknown helper "frobnicate"/,
    ],
    [
      'an unknown block helper',
      '{{#loop parameters.x}}{{/loop}}',
      [{ name: 'x' }],
      /unknown block helper "loop"/,
    ],
    ['a partial', 'a: {{> other}}', [], /partials .* are not supported/],
    ['a triple-stash', 'a: {{{parameters.x}}}', [{ name: 'x' }], /triple-stash .* is not allowed/],
    ['an unknown instance field', 'a: {{instance.nam}}', [], /unknown field "instance.nam"/],
    ['an unknown root reference', 'a: {{values.x}}', [], /unknown reference "values.x"/],
    [
      'a union-by-key default whose items lack the merge key',
      CONFIG_MAP_BODY,
      [
        {
          name: 'ports',
          type: 'array',
          merge: 'union-by-key',
          mergeKey: 'name',
          value: [{ name: 'http' }, { port: 80 }] as JsonValue,
        },
      ],
      /spec\.parameters\[0\]\.value: parameter "ports": cannot merge \(union-by-key\): the default item 1 has no scalar "name"/,
    ],
    [
      'a literal default that fails its type',
      CONFIG_MAP_BODY,
      [{ name: 'n', type: 'number', value: 'three' }],
      /expected a number, got "three"/,
    ],
  ] as const)('rejects %s with its position', (_name, body, parameters, message) => {
    const result = evaluate(body, [...parameters]);
    expect(result.phase).toBe('Invalid');
    expect(result.conditions).toEqual([
      expect.objectContaining({
        type: 'Valid',
        status: 'False',
        reason: 'ValidationFailed',
        message: expect.stringMatching(message),
      }),
    ]);
  });

  it('refuses merge on a parameter of the wrong type as the CRD rule does, naming the parameter', () => {
    const result = evaluate(CONFIG_MAP_BODY, [{ name: 'tags', type: 'array', merge: 'deep' }]);
    expect(result.phase).toBe('Invalid');
    expect(result.conditions).toEqual([
      expect.objectContaining({
        reason: 'SpecInvalid',
        message:
          'spec.parameters[0]: Invalid value: "object": parameter tags: merge deep needs type object',
      }),
    ]);
  });

  it.each([
    [
      'encoding base64 on a parameter that is not a string',
      { parameters: [{ name: 'ks', type: 'object' as const, encoding: 'base64' as const }] },
      'parameter ks: encoding base64 needs type string',
    ],
    [
      'a spec.sources entry with neither name nor selector',
      { sources: [{ kind: 'Secret' }] },
      'exactly one of name, selector must be set',
    ],
    [
      'a spec.sources entry with both name and selector',
      { sources: [{ kind: 'Secret', name: 'a', selector: { matchLabels: { a: 'b' } } }] },
      'exactly one of name, selector must be set',
    ],
  ] as [string, Partial<TemplateSpec>, string][])(
    'refuses %s as the CRD rule does',
    (_name, spec, message) => {
      const result = evaluate(CONFIG_MAP_BODY, spec.parameters ?? [], spec);
      expect(result.conditions[0]).toMatchObject({
        reason: 'SpecInvalid',
        message: expect.stringContaining(message),
      });
    },
  );

  it('refuses a spec.sources selector expression with the wrong number of values, naming it', () => {
    const result = evaluate(CONFIG_MAP_BODY, [], {
      sources: [
        { kind: 'Secret', selector: { matchExpressions: [{ key: 'shared', operator: 'In' }] } },
      ],
    });
    expect(result.phase).toBe('Invalid');
    expect(result.problems[0]).toMatchObject({
      path: 'spec.sources[0].selector.matchExpressions[0].values',
      message: 'operator In needs at least one value',
    });
  });

  it('does not check references inside an each block against the root', () => {
    const body = `${CONFIG_MAP_BODY}data:\n{{#each parameters.items}}\n  {{name}}: {{@root.parameters.items.length}} {{../parameters.prefix}}\n{{/each}}\n`;
    expect(
      evaluate(body, [
        { name: 'items', value: [] },
        { name: 'prefix', value: 'p' },
      ]).phase,
    ).toBe('Valid');
    expect(
      evaluate(body.replace('../parameters.prefix', '../parameters.missing'), [
        { name: 'items', value: [] },
        { name: 'prefix', value: 'p' },
      ]).problems[0]?.message,
    ).toContain('parameters.missing');
  });

  it('reports a schema violation as SpecInvalid', () => {
    const result = evaluateTemplate({
      apiVersion: 'stencil.dev/v1alpha1',
      kind: 'Template',
      metadata: { name: 'x' },
      spec: { handlebars: 'a', sync: { mode: 'sometimes' } },
    });
    expect(result.conditions[0]).toMatchObject({
      type: 'Valid',
      status: 'False',
      reason: 'SpecInvalid',
      message: expect.stringContaining('spec.sync.mode'),
    });
  });
});

describe('parameter constraints (ADR 0032)', () => {
  const validity = (parameters: ParameterDeclaration[]): ConditionDraft | undefined =>
    evaluate(CONFIG_MAP_BODY, parameters).conditions.find((c) => c.type === 'Valid');

  it.each<[string, ParameterDeclaration, string]>([
    [
      'a default above the maximum',
      { name: 'replicas', type: 'number', maximum: 10, value: 12 },
      'spec.parameters[0].value: parameter "replicas": 12 is greater than the maximum 10',
    ],
    [
      'a default outside the enum',
      { name: 'tier', type: 'string', enum: ['free', 'pro'], value: 'gold' },
      'spec.parameters[0].value: parameter "tier": "gold" is not one of "free", "pro"',
    ],
    [
      'a default that does not match the pattern',
      { name: 'name', type: 'string', pattern: '^[a-z]+$', value: 'Web' },
      'spec.parameters[0].value: parameter "name": "Web" does not match the pattern ^[a-z]+$',
    ],
    [
      'a default shorter than minLength',
      { name: 'name', type: 'string', minLength: 3, value: 'ab' },
      'spec.parameters[0].value: parameter "name": "ab" is shorter than the minimum length 3',
    ],
    [
      'an enum on an object parameter',
      { name: 'settings', type: 'object', enum: [{ a: 1 }] },
      'spec.parameters[0].enum: parameter "settings": enum needs type string, number or bool',
    ],
    [
      'an enum entry that is not of the type',
      { name: 'port', type: 'number', enum: [80, 'https'] },
      'spec.parameters[0].enum[1]: parameter "port": enum entry 1: expected a number, got "https"',
    ],
    [
      'a pattern with lookahead (reported once, not again at the default)',
      { name: 'user', type: 'string', pattern: '^(?!root$)', value: 'root' },
      'spec.parameters[0].pattern: parameter "user": the pattern ^(?!root$) is not valid RE2: invalid or unsupported Perl syntax: `(?!`',
    ],
    [
      'a pattern with a backreference',
      { name: 'pair', type: 'string', pattern: '^(a)\\1$' },
      'spec.parameters[0].pattern: parameter "pair": the pattern ^(a)\\1$ is not valid RE2: invalid escape sequence: `\\1`',
    ],
  ])('refuses %s, naming the parameter', (_name, declaration, message) => {
    expect(validity([declaration])).toMatchObject({
      status: 'False',
      reason: 'ValidationFailed',
      message,
    });
  });

  it('accepts a default that satisfies every constraint, and ignores a required one', () => {
    const result = evaluate(CONFIG_MAP_BODY, [
      { name: 'replicas', type: 'number', minimum: 1, maximum: 10, enum: [1, '3'], value: '3' },
      {
        name: 'name',
        type: 'string',
        pattern: '^[a-z]+$',
        minLength: 1,
        maxLength: 8,
        value: 'web',
      },
      // A required parameter's default never applies (SPEC §3 step 2).
      { name: 'tier', type: 'string', enum: ['free'], value: 'gold', required: true },
    ]);
    expect(result.conditions[0]).toMatchObject({ type: 'Valid', status: 'True' });
  });
});

describe('the dry-run render (DryRunRendered condition)', () => {
  it('is skipped when a parameter has no literal default, and the Template stays Valid', () => {
    const result = evaluate(CONFIG_MAP_BODY, [{ name: 'image', required: true }, { name: 'tag' }]);
    expect(result.phase).toBe('Valid');
    expect(result.conditions[1]).toMatchObject({
      status: 'False',
      reason: 'DryRunSkipped',
      message: 'no literal default for: image, tag',
    });
  });

  it.each([
    ['invalid manifests', 'kind: ConfigMap\nmetadata: {name: x}', /has no apiVersion/],
    [
      'a required helper failure',
      '{{required "image is required" parameters.image}}',
      /image is required/,
    ],
    [
      'a cross-namespace resource',
      `${CONFIG_MAP_BODY}  namespace: elsewhere\n`,
      /outside the instance's namespace/,
    ],
  ])('fails with RenderFailed on %s, making the Template Invalid', (_name, body, message) => {
    const result = evaluate(body, [{ name: 'image', value: '' }]);
    expect(result.phase).toBe('Invalid');
    expect(result.conditions[1]).toMatchObject({
      type: 'DryRunRendered',
      status: 'False',
      reason: 'RenderFailed',
      message: expect.stringMatching(message),
    });
  });
});

describe('stencil.dev/ready-when in the body', () => {
  const withReadyWhen = (value: string): unknown => ({
    apiVersion: 'stencil.dev/v1alpha1',
    kind: 'Template',
    metadata: { name: 'volume', namespace: 'platform' },
    spec: {
      handlebars: `apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: {{instance.name}}\n  annotations:\n    stencil.dev/ready-when: ${value}\nspec: {}\n`,
    },
  });

  it('refuses an expression that is not CEL, naming the line and the expression', () => {
    const evaluation = evaluateTemplate(withReadyWhen(`"self.status.phase =="`));
    expect(evaluation.phase).toBe('Invalid');
    expect(evaluation.problems[0]?.message).toMatch(
      /^line 6: stencil\.dev\/ready-when "self\.status\.phase ==" is not valid CEL: /,
    );
  });

  it('accepts a valid expression, and leaves one built by Handlebars to the render', () => {
    expect(evaluateTemplate(withReadyWhen(`"self.status.phase == 'Bound'"`)).phase).toBe('Valid');
    expect(evaluateTemplate(withReadyWhen(`"{{instance.name}} =="`)).phase).toBe('Valid');
  });

  it('refuses a value that is not a string', () => {
    expect(evaluateTemplate(withReadyWhen('[a, b]')).problems[0]?.message).toContain(
      'must be a CEL expression in a string',
    );
  });
});

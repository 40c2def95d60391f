import { fc, it as prop } from '@fast-check/vitest';
import { HELPER_TEXT_CASES } from '../../../test/support/hostile-values.ts';
import { describe, expect, it } from 'vitest';
import type { JsonValue } from '../../api/object-meta.ts';
import { MAX_RESOURCES } from '../../api/well-known.ts';
import {
  compileTemplate,
  renderTemplate,
  type RenderContext,
  type RenderOutcome,
} from './render.ts';

function context(parameters: Record<string, JsonValue>): RenderContext {
  return {
    parameters,
    instance: {
      name: 'shop',
      namespace: 'team-a',
      uid: 'u-1',
      labels: { 'app.kubernetes.io/name': 'shop' },
      annotations: {},
    },
    template: { name: 'web-app', namespace: 'platform', generation: 3 },
  };
}

function render(
  body: string,
  parameters: Record<string, JsonValue> = {},
): ReturnType<typeof renderTemplate> {
  const compiled = compileTemplate(body, Object.keys(parameters));
  if (!compiled.ok) throw new Error(compiled.problems.map((p) => p.message).join('; '));
  return renderTemplate(compiled.value, context(parameters));
}

function renderOne(
  body: string,
  parameters: Record<string, JsonValue> = {},
): Record<string, unknown> {
  const result = render(body, parameters);
  if (!result.ok) throw new Error(result.problems.map((p) => p.message).join('; '));
  expect(result.value).toHaveLength(1);
  return result.value[0]!.object;
}

const configMap = (data: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}\ndata:\n${data}\n`;

describe('a consumer value in a plain {{parameters.x}} position is inserted as exactly that string', () => {
  const hostile = [
    'line one\nline two',
    'key: value',
    'evil: true\nmore: keys',
    '{a: b}',
    '[x]',
    '*alias',
    '&anchor x',
    '!!binary AAAA',
    ' # comment',
    'value # comment',
    '  leading and trailing  ',
    '- item',
    '---',
    '...',
    '"quoted"',
    "'single'",
    '| block',
    '> folded',
    '%YAML 1.2',
    '@at `tick`',
    'tab\there',
    '',
    'null',
    '~',
    'true',
    '123',
    '0x1F',
    'ümlaut ✓ \u2028 sep',
    '{{parameters.other}}',
  ];

  it.each(hostile.map((v) => [JSON.stringify(v), v]))('as a whole value: %s', (_label, value) => {
    const object = renderOne(configMap('  key: {{parameters.x}}'), { x: value });
    expect(object.data).toEqual({ key: value });
  });

  it.each(hostile.map((v) => [JSON.stringify(v), v]))(
    'inside a larger plain scalar: %s',
    (_label, value) => {
      const object = renderOne(configMap('  key: prefix-{{parameters.x}}-suffix'), { x: value });
      expect(object.data).toEqual({ key: `prefix-${value}-suffix` });
    },
  );

  it.each(hostile.map((v) => [JSON.stringify(v), v]))(
    'inside a double-quoted scalar: %s',
    (_label, value) => {
      const object = renderOne(configMap('  key: "{{parameters.x}}"'), { x: value });
      expect(object.data).toEqual({ key: value });
    },
  );

  it.each(hostile.map((v) => [JSON.stringify(v), v]))(
    'inside a block scalar: %s',
    (_label, value) => {
      const object = renderOne(configMap('  key: |\n    first\n    {{parameters.x}}'), {
        x: value,
      });
      expect(object.data).toEqual({ key: `first\n${value}\n` });
    },
  );

  it.each(hostile.map((v) => [JSON.stringify(v), v]))('as a map key: %s', (_label, value) => {
    const object = renderOne(configMap('  {{parameters.x}}: fixed'), { x: value });
    expect(object.data).toEqual({ [value]: 'fixed' });
  });

  it('keeps the JSON type of a value that is the whole scalar', () => {
    const object = renderOne(
      configMap('  num: {{parameters.n}}\n  bool: {{parameters.b}}\n  str: {{parameters.s}}'),
      { n: 3, b: true, s: '3' },
    );
    expect(object.data).toEqual({ num: 3, bool: true, str: '3' });
  });

  it('refuses to insert a list or a map as text, naming where', () => {
    const result = render(configMap('  key: {{parameters.x}}'), { x: { a: 1 } });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems[0]).toMatchObject({
      reason: 'TemplateExecutionFailed',
      message: expect.stringMatching(
        /line 6, column 8: a map cannot be inserted as text; use \{\{toYaml/,
      ),
    });
  });

  it('refuses a value that forges the internal value markers', () => {
    const result = render(configMap('  a: {{parameters.x}}\n  b: {{toJson parameters.y}}'), {
      x: 'ok',
      y: '\uE0000\uE001',
    });
    expect(!result.ok && result.problems[0]?.message).toContain('reserved characters');
  });
});

describe('a helper that emits YAML, inside other text, never changes the structure (ADR 0011)', () => {
  it.each(HELPER_TEXT_CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const result = render(configMap(c.lines), { x: c.x as JsonValue });
    if (c.refused) {
      expect(result.ok).toBe(false);
      expect(!result.ok && result.problems).toEqual([
        {
          path: 'spec.handlebars',
          reason: 'TemplateExecutionFailed',
          message: expect.stringMatching(c.refused) as string,
        },
      ]);
    } else {
      const data = result.ok ? result.value[0]?.object.data : result.problems;
      expect(data).toEqual(c.data);
    }
  });

  it('says what the author can do instead, and never quotes the value', () => {
    const result = render(configMap('  k: pre-{{quote parameters.x}}-post'), { x: 'S3cret: v' });
    const message = !result.ok ? (result.problems[0]?.message ?? '') : '';
    expect(message).toMatch(/insert it as \{\{x\}\}/);
    expect(message).not.toContain('S3cret');
  });

  it('refuses a value that forges the region markers', () => {
    for (const forged of ['\uE0020\uE003', '\uE004', '\uE003']) {
      const result = render(configMap('  k: {{toJson parameters.x}}'), { x: forged });
      expect(!result.ok && result.problems[0]?.message).toMatch(
        /the output of toJson: a value contains the reserved characters/,
      );
    }
  });
});

describe('structures are laid out with toYaml and toJson', () => {
  it('places a map under a key with nindent (toYaml)', () => {
    const object = renderOne(
      configMap('  x: "1"\nspec:\n  resources: {{nindent 4 (toYaml parameters.r)}}'),
      {
        r: { limits: { cpu: '1', memory: '1Gi' }, list: ['a: b', 'c'] },
      },
    );
    expect(object.spec).toEqual({
      resources: { limits: { cpu: '1', memory: '1Gi' }, list: ['a: b', 'c'] },
    });
  });

  it('places a list inline with toJson', () => {
    const object = renderOne(configMap('  x: "1"\nspec:\n  hosts: {{toJson parameters.h}}'), {
      h: ['a.example.com', 'b: c'],
    });
    expect(object.spec).toEqual({ hosts: ['a.example.com', 'b: c'] });
  });

  it('keeps prototype-pollution keys as ordinary keys and leaves Object.prototype alone', () => {
    const polluted = JSON.parse(
      '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"bad": 1}}}',
    ) as JsonValue;
    const object = renderOne(configMap('  x: "1"\nspec: {{toJson parameters.o}}'), { o: polluted });
    expect(Object.keys(object.spec as object)).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).bad).toBeUndefined();
  });
});

describe('rendered output', () => {
  it('skips empty documents and numbers the rest', () => {
    const result = render(
      `---\n# nothing\n---\n${configMap('  a: "1"')}---\n\n---\n${configMap('  b: "2"').replace('{{instance.name}}', 'second')}`,
    );
    expect(result.ok && result.value.map((d) => [d.index, d.object.metadata.name])).toEqual([
      [0, 'shop'],
      [1, 'second'],
    ]);
  });

  it.each([
    ['a scalar document', 'just text', /document 1 .* is not a mapping/],
    ['a document without kind', 'apiVersion: v1\nmetadata: {name: x}', /document 1 .* has no kind/],
    ['a document without apiVersion', 'kind: ConfigMap\nmetadata: {name: x}', /has no apiVersion/],
    [
      'a document without metadata.name',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {}',
      /has no metadata.name/,
    ],
    ['a list document', '- a\n- b', /is not a mapping/],
    [
      'invalid YAML in the second document',
      `${configMap('  a: "1"')}---\napiVersion: v1\nkind: [unclosed`,
      /document 2 \(line \d+ of the output\)/,
    ],
    [
      'a duplicate key',
      'apiVersion: v1\napiVersion: v2\nkind: X\nmetadata: {name: x}',
      /document 1 .*[Mm]ap keys must be unique/,
    ],
  ])('fails Rendered for %s, with the document index', (_name, body, message) => {
    const result = render(body);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems[0]).toMatchObject({
      reason: 'TemplateExecutionFailed',
      message: expect.stringMatching(message),
    });
  });

  it(`accepts ${MAX_RESOURCES} resources and refuses ${MAX_RESOURCES + 1}`, () => {
    const body = (n: number): string =>
      `{{#each parameters.items}}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{{this}}\n{{/each}}`.replace(
        'parameters.items',
        `parameters.n${n}`,
      );
    const items = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
    expect(render(body(MAX_RESOURCES), { [`n${MAX_RESOURCES}`]: items(MAX_RESOURCES) }).ok).toBe(
      true,
    );
    const over = render(body(MAX_RESOURCES + 1), {
      [`n${MAX_RESOURCES + 1}`]: items(MAX_RESOURCES + 1),
    });
    expect(!over.ok && over.problems[0]?.message).toContain(`more than ${MAX_RESOURCES} resources`);
  });

  it('refuses output over 2 MiB', () => {
    const result = render(configMap('  big: {{parameters.x}}'), { x: 'x'.repeat(2 * 1024 * 1024) });
    expect(!result.ok && result.problems[0]?.message).toMatch(/the limit is 2097152 \(2 MiB\)/);
  });

  it('bounds render time with a step budget on loops', () => {
    const list = Array.from({ length: 1000 }, (_, i) => i);
    const result = render(
      `{{#each parameters.a}}{{#each @root.parameters.a}}{{/each}}{{/each}}${configMap('  a: "1"')}`,
      { a: list },
    );
    expect(!result.ok && result.problems[0]?.message).toMatch(/exceeded \d+ steps/);
  });

  it('exposes instance and template fields, typed', () => {
    const object = renderOne(
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}\n  labels: {app: {{lookup instance.labels "app.kubernetes.io/name"}} }\ndata:\n  ns: {{instance.namespace}}\n  uid: {{instance.uid}}\n  tpl: {{template.namespace}}/{{template.name}}\n  gen: {{template.generation}}`,
    );
    expect(object).toMatchObject({
      metadata: { name: 'shop', labels: { app: 'shop' } },
      data: { ns: 'team-a', uid: 'u-1', tpl: 'platform/web-app', gen: 3 },
    });
  });

  it('uses YAML 1.1 like kubectl, so 0644 is octal', () => {
    const object = renderOne(configMap('  x: "1"\nspec:\n  mode: 0644'));
    expect(object.spec).toEqual({ mode: 420 });
  });

  it('keeps dates and times as strings, as kubectl does (issue #43)', () => {
    const object = renderOne(
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n' +
        '    last-reviewed: 2026-01-15\ndata:\n  window: 12:30\n  date: 2026-01-15\n' +
        '  at: 2026-01-15T10:00:00Z\n  long: 190:20:30.15\n',
    );
    expect(object.metadata).toMatchObject({ annotations: { 'last-reviewed': '2026-01-15' } });
    expect(object.data).toEqual({
      window: '12:30',
      date: '2026-01-15',
      at: '2026-01-15T10:00:00Z',
      long: '190:20:30.15',
    });
  });

  it('reads 0o17 as octal and refuses .inf, as the API server does', () => {
    expect(renderOne(configMap('  x: "1"\nspec:\n  mode: 0o17')).spec).toEqual({ mode: 15 });
    const refused = render(configMap('  x: "1"\nspec:\n  limit: .inf'));
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.problems[0]!.message).toContain('.inf has no JSON value');
  });
});

describe('the output budget is enforced while rendering', () => {
  const nestedIndent = (inner: string): string =>
    `${configMap('  a: |')}\n{{#each parameters.l}}{{#each ../parameters.l}}${inner}\n{{/each}}{{/each}}`;
  const hostile = { l: Array.from({ length: 300 }, (_, i) => i), big: 'x'.repeat(1_500_000) };

  it('stops a nested loop that inserts a 1.5 MB value 90,000 times at the limit', () => {
    const result = render(nestedIndent('{{indent 4 @root.parameters.big}}'), hostile);
    expect(!result.ok && result.problems[0]).toMatchObject({
      reason: 'TemplateExecutionFailed',
      message: expect.stringContaining('exceeds the limit of 2097152 bytes (2 MiB)'),
    });
  });

  it('stops the same loop when the value comes out as YAML text', () => {
    const result = render(nestedIndent('{{indent 4 (toYaml @root.parameters.big)}}'), hostile);
    expect(!result.ok && result.problems[0]?.message).toContain('exceeds the limit');
  });

  it('stops helper work whose result is never written', () => {
    const result = render(nestedIndent('{{#if (indent 1 @root.parameters.big)}}{{/if}}'), hostile);
    expect(!result.ok && result.problems[0]?.message).toContain('helpers processed more than');
  });

  it('stops static text repeated by nested loops', () => {
    const line = `    ${'y'.repeat(1000)}`;
    const result = render(nestedIndent(line), { l: hostile.l });
    expect(!result.ok && result.problems[0]?.message).toContain('exceeds the limit');
  });

  it('refuses a list that nested concat would double past the list limit', () => {
    let expression = 'parameters.l';
    for (let i = 0; i < 12; i++) expression = `(concat ${expression} ${expression})`;
    const result = render(`${configMap('  a: "1"')}\n  n: {{len ${expression}}}`, hostile);
    expect(!result.ok && result.problems[0]?.message).toContain('list of more than 100000 items');
  });

  it('renders a loop whose output fits, however much of it is helper YAML', () => {
    const items = Array.from({ length: 40 }, (_, i) => ({
      name: `item-${i}`,
      v: 'z'.repeat(20_000),
    }));
    const object = renderOne(
      `${configMap('  a: "1"')}\nspec:\n  items:\n{{#each parameters.items}}    - {{toJson this}}\n{{/each}}`,
      { items },
    );
    expect((object.spec as { items: unknown[] }).items).toHaveLength(40);
  });

  prop.prop([fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1, max: 200_000 })], {
    numRuns: 40,
  })('any loop size either fits and renders, or is refused for size', (count, size) => {
    const result = render(nestedIndent('    {{@root.parameters.big}}'), {
      l: Array.from({ length: count }, (_, i) => i),
      big: 'b'.repeat(size),
    });
    if (result.ok) {
      const data = result.value[0]!.object.data as { a: string };
      expect(data.a.length).toBeLessThanOrEqual(2 * 1024 * 1024);
      expect(data.a.length).toBe(1 + count * count * (size + 1)); // the block opens with a blank line
    } else {
      expect(result.problems[0]?.message).toMatch(/limit|steps/);
    }
  });
});

const withMetadata = (metadata: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n${metadata}\n`;

describe('keys that come from values', () => {
  it.each([
    ['metadata.name', '  name: x\n  {{parameters.k}}: other-name', 'name', 'metadata'],
    [
      'a label written twice',
      '  name: x\n  labels:\n    {{parameters.k}}: a\n    {{parameters.k}}: b',
      'app',
      'metadata.labels',
    ],
  ])('may not replace %s', (_what, metadata, k, where) => {
    const result = render(withMetadata(metadata), { k });
    expect(!result.ok && result.problems[0]?.message).toMatch(
      new RegExp(
        `document 1 \\(line \\d+ of the output\\): the key "${k}" appears twice in ${where.replace('.', '\\.')}`,
      ),
    );
  });

  it('cannot become a YAML merge key', () => {
    const object = renderOne(
      withMetadata('  name: x\n  labels:\n    {{parameters.k}}: {name: z}'),
      {
        k: '<<',
      },
    );
    expect(object.metadata).toEqual({ name: 'x', labels: { '<<': { name: 'z' } } });
  });

  it('may add keys the template did not write', () => {
    const object = renderOne(withMetadata('  name: x\n  labels:\n    {{parameters.k}}: a'), {
      k: 'team',
    });
    expect(object.metadata).toEqual({ name: 'x', labels: { team: 'a' } });
  });
});

describe('static checks of what a template may read', () => {
  it.each([
    '{{@stencil.steps}}',
    '{{toJson @stencil}}',
    '{{@level}}',
    '{{#each parameters.l}}{{@partial-block}}{{/each}}',
  ])('refuses the data variable in %s with line and column', (expression) => {
    const compiled = compileTemplate(configMap(`  a: ${expression}`), ['l']);
    expect(!compiled.ok && compiled.problems[0]?.message).toMatch(
      /^line 6, column \d+: unknown data variable "@[\w.-]+"/,
    );
  });

  it.each(['@index', '@key', '@first', '@last', '@root.instance.name', '@../index'])(
    'accepts %s',
    (variable) => {
      const body = configMap(`  a: "{{#each parameters.l}}{{${variable}}}{{/each}}"`);
      expect(compileTemplate(body, ['l']).ok).toBe(true);
    },
  );

  it('refuses a required whose message is not a string literal', () => {
    const compiled = compileTemplate(configMap('  a: {{required parameters.pw parameters.x}}'), [
      'pw',
      'x',
    ]);
    expect(!compiled.ok && compiled.problems[0]?.message).toMatch(
      /^line 6, column 6: the message of required must be a string literal/,
    );
  });
});

describe('texts have no properties in a template', () => {
  it.each([
    ['a path to its length', '{{parameters.s.length}}'],
    ['a path to a character', '{{parameters.s.[0]}}'],
    ['lookup of a character', '{{lookup parameters.s 1}}'],
    ['lookup of its length', '{{lookup parameters.s "length"}}'],
    ['a path from inside with', '{{#with parameters.s}}{{this.[2]}}{{this.length}}{{/with}}'],
    ['a block parameter', '{{#each parameters.l as |t|}}{{t.[0]}}{{t.length}}{{/each}}'],
    ['@root', '{{@root.parameters.s.[0]}}'],
  ])('%s finds nothing', (_what, expression) => {
    const object = renderOne(configMap(`  a: "<${expression}>"`), { s: 'abc', l: ['xyz'] });
    expect(object.data).toEqual({ a: '<>' });
  });

  it('lists and maps keep theirs', () => {
    const object = renderOne(
      configMap(
        '  a: "{{parameters.l.length}} {{parameters.l.[1]}} {{parameters.m.k}} {{lookup parameters.m "k"}}"',
      ),
      { l: ['x', 'y'], m: { k: 'v' } },
    );
    expect(object.data).toEqual({ a: '2 y v v' });
  });
});

describe('duplicate keys, checked in one pass', () => {
  const context = (parameters: Record<string, unknown>): RenderContext => ({
    parameters: parameters as RenderContext['parameters'],
    instance: { name: 'a', namespace: 'team-a', uid: 'u', labels: {}, annotations: {} },
    template: { name: 't', namespace: 'team-a', generation: 1 },
  });
  const renderBody = (body: string, parameters: Record<string, unknown>): RenderOutcome => {
    const compiled = compileTemplate(body, Object.keys(parameters));
    if (!compiled.ok) throw new Error(compiled.problems[0]!.message);
    return renderTemplate(compiled.value, context(parameters));
  };
  const HEAD = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n';

  it('refuses a key the template wrote twice, naming it and where', () => {
    const result = renderBody(`${HEAD}  a: "1"\n  b: "2"\n  a: "3"\n`, {});
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.problems[0]!.message).toBe(
        'document 1 (line 8 of the output): Map keys must be unique: "a" appears twice in data',
      );
  });

  it('lays out 60,000 keys from a map (once quadratic: 30 s)', () => {
    const hosts = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`h${i}`, `v${i}`]));
    const result = renderBody(`${HEAD}{{#each parameters.hosts}}  {{@key}}: {{this}}\n{{/each}}`, {
      hosts,
    });
    expect(result.ok && Object.keys(result.value[0]!.object.data as object)).toHaveLength(60_000);
  });
});

describe('value origins: where each inserted scalar came from (issue #26)', () => {
  const body = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{parameters.name}}
  labels:
    app: "{{parameters.name}}-x"
    root: {{@root.parameters.name}}
data:
  port: {{quote parameters.port}}
  num: {{parameters.port}}
  ns: {{instance.namespace}}
  {{#each parameters.items}}
  item{{@index}}: {{this}}
  {{/each}}
  "a/b~c": {{parameters.name}}
`;

  it('names the field (JSON pointer), the position and the parameter; placed only for a bare whole value', () => {
    const result = render(body, { name: 'shop', port: 80, items: ['a'] });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    expect(result.value[0]!.origins).toEqual([
      { pointer: '/metadata/name', at: 'line 4, column 9', parameter: 'name', placed: true },
      {
        pointer: '/metadata/labels/app',
        at: 'line 6, column 11',
        parameter: 'name',
        placed: false,
      },
      {
        pointer: '/metadata/labels/root',
        at: 'line 7, column 11',
        parameter: 'name',
        placed: true,
      },
      // quote yields helper YAML, not a value: no origin.
      { pointer: '/data/num', at: 'line 10, column 8', parameter: 'port', placed: true },
      { pointer: '/data/ns', at: 'line 11, column 7', placed: false },
      { pointer: '/data/item0', at: 'line 13, column 19', placed: false },
      { pointer: '/data/a~1b~0c', at: 'line 15, column 12', parameter: 'name', placed: true },
    ]);
  });
});

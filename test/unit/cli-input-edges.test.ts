// `stencil render`, `validate` and `diff` given odd inputs (issue #22, ADR 0017): deep JSON,
// annotations that must be strings, files with circular aliases or binary values, dates and
// numbers that are not what they seem. Each is a clear refusal, never a crash.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/commands.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'stencil-edges-'));
});

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function templateFile(name: string, body: string, parameters: object[]): string {
  return write(
    `${name}-template.yaml`,
    stringify({
      apiVersion: 'stencil.dev/v1alpha1',
      kind: 'Template',
      metadata: { name: 't', namespace: 'team-a' },
      spec: { parameters, handlebars: body },
    }),
  );
}

function instanceFile(name: string, parameters: object[]): string {
  return write(
    `${name}-instance.yaml`,
    stringify({
      apiVersion: 'stencil.dev/v1alpha1',
      kind: 'TemplateInstance',
      metadata: { name: 'i', namespace: 'team-a' },
      spec: { templateRef: { name: 't' }, parameters },
    }),
  );
}

function secretFile(name: string, value: string): string {
  return write(
    `${name}-objects.yaml`,
    stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'team-a' },
      data: { pw: Buffer.from(value).toString('base64') },
    }),
  );
}

const CONFIG_MAP =
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: "{{len parameters.deep}}"\n';
const DEEP = `${'['.repeat(5000)}${']'.repeat(5000)}`;

describe('a parameter value nested deeper than 64 levels is refused, not a stack overflow', () => {
  it('from a Secret, for type: array', async () => {
    const result = await main([
      'render',
      '--template',
      templateFile('deep-secret', CONFIG_MAP, [{ name: 'deep', type: 'array' }]),
      '--instance',
      instanceFile('deep-secret', [
        { name: 'deep', valueFrom: { secretKeyRef: { name: 's', key: 'pw' } } },
      ]),
      '--objects',
      secretFile('deep-secret', DEEP),
    ]);
    expect(result).toMatchObject({ exitCode: 1, stdout: '' });
    expect(result.stderr).toMatch(
      /^ParametersValid=False InvalidParameter: parameters.deep: parameter "deep": nests deeper than 64 levels/,
    );
    expect(result.stderr).not.toContain('[[[');
  });

  it('as an instance literal with exposeInStatus', async () => {
    const result = await main([
      'render',
      '--template',
      templateFile('deep-literal', CONFIG_MAP, [
        { name: 'deep', type: 'array', exposeInStatus: true },
      ]),
      '--instance',
      instanceFile('deep-literal', [{ name: 'deep', value: DEEP }]),
    ]);
    expect(result).toMatchObject({ exitCode: 1, stdout: '' });
    expect(result.stderr).toContain('parameter "deep": nests deeper than 64 levels');
  });

  it('as a Template default, in validate', async () => {
    const template = templateFile('deep-default', CONFIG_MAP, [
      { name: 'deep', type: 'array', value: DEEP },
    ]);
    const result = await main(['validate', template]);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr + result.stdout).toContain(
      'parameter "deep": nests deeper than 64 levels',
    );
  });
});

const deployment = (annotations: string): string =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n${annotations}\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers: []\n`;

describe('an annotation Stencil reads that is not a string is refused, naming object and annotation', () => {
  it.each([
    [
      'restart-on-change: true unquoted',
      '    stencil.dev/restart-on-change: true',
      'stencil.dev/restart-on-change',
      'a boolean',
    ],
    [
      'restart-on-change-objects as a list',
      '    stencil.dev/restart-on-change: "x"\n    stencil.dev/restart-on-change-objects: [ConfigMap/a]',
      'stencil.dev/restart-on-change-objects',
      'a list',
    ],
    ['wave: 3 unquoted', '    stencil.dev/wave: 3', 'stencil.dev/wave', 'a number'],
    ['ready-when: null', '    stencil.dev/ready-when: null', 'stencil.dev/ready-when', 'null'],
  ])('%s', async (_what, annotations, annotation, got) => {
    const name = annotation.replace(/\W/g, '');
    const result = await main([
      'render',
      '--template',
      templateFile(`ann-${name}`, deployment(annotations), [{ name: 'x', value: 'a' }]),
      '--instance',
      instanceFile(`ann-${name}`, []),
    ]);
    expect(result).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: `Rendered=False TemplateExecutionFailed: spec.handlebars: Deployment team-a/web: annotation ${annotation} must be a string; quote it (got ${got})\n`,
    });
  });
});

describe('stencil validate runs the annotation checks render runs, with the literal defaults', () => {
  const configMap = (annotations: string): string =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  annotations:\n${annotations}\ndata:\n  a: b\n`;
  it.each([
    [
      'restart-on-change: true unquoted',
      deployment('    stencil.dev/restart-on-change: true'),
      'Deployment team-a/web: annotation stencil.dev/restart-on-change must be a string; quote it (got a boolean)',
    ],
    [
      'a wave that is not a whole number',
      deployment('    stencil.dev/wave: "soon"'),
      'Deployment team-a/web: stencil.dev/wave must be a whole number, got "soon"',
    ],
    [
      'restart-on-change naming no parameter',
      deployment('    stencil.dev/restart-on-change: "x,nosuch"'),
      'Deployment team-a/web: stencil.dev/restart-on-change names "nosuch", which is not a parameter of this Template',
    ],
    [
      'restart-on-change on a ConfigMap',
      configMap('    stencil.dev/restart-on-change: "x"'),
      'ConfigMap team-a/cfg: stencil.dev/restart-on-change applies to apps/v1 Deployments, StatefulSets and DaemonSets only',
    ],
    [
      'a missing restart-on-change-objects entry',
      deployment(
        '    stencil.dev/restart-on-change: "x"\n    stencil.dev/restart-on-change-objects: ConfigMap/gone',
      ),
      'Deployment team-a/web: stencil.dev/restart-on-change-objects names "ConfigMap/gone", which is not a ConfigMap or Secret this Template renders',
    ],
  ])('%s', async (_what, body, message) => {
    const file = templateFile(`validate-${_what.replace(/\W/g, '')}`, body, [
      { name: 'x', value: 'a' },
    ]);
    const result = await main(['validate', file]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout + result.stderr).toContain(message);
  });

  it('still calls a Template valid whose annotations every render accepts', async () => {
    const body = `${deployment('    stencil.dev/restart-on-change: "x"\n    stencil.dev/restart-on-change-objects: ConfigMap/cfg\n    stencil.dev/wave: "2"')}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: b\n`;
    const result = await main([
      'validate',
      templateFile('validate-fine', body, [{ name: 'x', value: 'a' }]),
    ]);
    expect(result.exitCode).toBe(0);
  });
});

describe('stencil diff exits 2 with one line when either side does not render', () => {
  const fine = (): string =>
    templateFile('diff-fine', deployment('    stencil.dev/restart-on-change: "x"'), [
      { name: 'x', value: 'a' },
    ]);
  const crashing = (): string =>
    templateFile('diff-crash', deployment('    stencil.dev/restart-on-change: true'), [
      { name: 'x', value: 'a' },
    ]);
  const instance = (): string => instanceFile('diff', []);

  it.each([
    ['the --to side', 'to'],
    ['the --from side', 'from'],
  ])('%s crashing on restart-on-change: true unquoted', async (_what, side) => {
    const [from, to] = side === 'to' ? [fine(), crashing()] : [crashing(), fine()];
    const result = await main(['diff', '--instance', instance(), '--from', from, '--to', to]);
    expect(result).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: `stencil: --${side} ${side === 'to' ? to : from} does not render TemplateInstance team-a/i: Rendered=False TemplateExecutionFailed: spec.handlebars: Deployment team-a/web: annotation stencil.dev/restart-on-change must be a string; quote it (got a boolean)\n`,
    });
  });
});

describe('a circular alias or a !!binary value is refused at load, exit 2 naming file and document', () => {
  const template = (): string =>
    templateFile(
      'load',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: {{quote (toJson parameters.deep)}}\n',
      [{ name: 'deep', exposeInStatus: true }],
    );
  const instanceWith = (name: string, value: string): string =>
    write(
      `${name}.yaml`,
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n---\napiVersion: stencil.dev/v1alpha1\nkind: TemplateInstance\nmetadata: {name: i, namespace: team-a}\nspec:\n  templateRef: {name: t}\n  parameters:\n    - name: deep\n      value: ${value}\n`,
    );

  it.each([
    [
      'a self-referencing alias',
      '&a {self: *a}',
      'spec.parameters[0].value.self is an alias of a value that contains it (a circular alias)',
    ],
    [
      'a !!binary value',
      '!!binary aGVsbG8=',
      'spec.parameters[0].value is a !!binary value; Kubernetes objects hold text: give base64 text instead',
    ],
  ])('%s in an instance', async (_what, value, message) => {
    const file = instanceWith(`load-${_what.replace(/\W/g, '')}`, value);
    for (const result of [
      await main(['render', '--template', template(), '--instance', file]),
      await main(['validate', file]),
    ])
      expect(result).toEqual({
        exitCode: 2,
        stdout: '',
        stderr: `stencil: ${file}: document 2: ${message}\n`,
      });
  });

  it('a circular alias in an --objects file', async () => {
    const objects = write(
      'load-objects.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: &a {self: *a}\n',
    );
    const result = await main([
      'render',
      '--template',
      template(),
      '--instance',
      instanceWith('load-ok', '"a"'),
      '--objects',
      objects,
    ]);
    expect(result).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: `stencil: ${objects}: document 1: data.self is an alias of a value that contains it (a circular alias)\n`,
    });
  });

  it('an alias used twice, without a cycle, still loads', async () => {
    const file = instanceWith('load-shared', '{a: &x [1], b: *x}');
    const result = await main(['render', '--template', template(), '--instance', file]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('a: \'{"a":[1],"b":[1]}\'');
  });
});

describe('stencil.dev/expires-at without an offset is refused whatever the time zone', () => {
  it.each(['UTC', 'America/Los_Angeles'])('under TZ=%s', async (tz) => {
    const before = process.env.TZ;
    process.env.TZ = tz;
    try {
      const instance = write(
        `expiry-${tz.replace(/\W/g, '')}.yaml`,
        'apiVersion: stencil.dev/v1alpha1\nkind: TemplateInstance\nmetadata:\n  name: i\n  namespace: team-a\n  annotations: {stencil.dev/expires-at: "2026-12-31T18:00:00"}\nspec: {templateRef: {name: t}}\n',
      );
      const result = await main([
        'render',
        '--template',
        templateFile('expiry', CONFIG_MAP.replace('{{len parameters.deep}}', 'x'), []),
        '--instance',
        instance,
      ]);
      expect(result).toMatchObject({ exitCode: 1, stdout: '' });
      expect(result.stderr).toContain(
        'InvalidTTL: metadata.annotations["stencil.dev/expires-at"]: stencil.dev/expires-at "2026-12-31T18:00:00" is not an RFC 3339 time with an offset',
      );
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });
});

describe('the parameter names __proto__, constructor and prototype are refused', () => {
  it.each(['__proto__', 'constructor', 'prototype'])(
    '%s in a Template and in an instance',
    async (name) => {
      const template = templateFile(
        `reserved-${name}`,
        CONFIG_MAP.replace('{{len parameters.deep}}', 'x'),
        [
          { name: 'ok', value: 'a' },
          { name, value: 'a' },
        ],
      );
      const refusal = 'must not be __proto__, constructor or prototype (reserved names)';
      const validated = await main(['validate', template]);
      expect(validated.exitCode).toBe(1);
      expect(validated.stdout + validated.stderr).toContain(
        `spec.parameters[1].name: Invalid value: "${name}": ${refusal}`,
      );
      const instance = instanceFile(`reserved-${name}`, [{ name, value: 'b' }]);
      const checked = await main(['validate', instance]);
      expect(checked.exitCode).toBe(1);
      expect(checked.stdout + checked.stderr).toContain(
        `spec.parameters[0].name: Invalid value: "${name}": ${refusal}`,
      );
    },
  );
});

describe('a number parameter given "NaN" or "Inf" is refused where it is applied', () => {
  const body =
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: {{parameters.count}}\n';
  it.each([
    ['NaN', 'NaN'],
    ['Inf', 'Infinity'],
    ['-Inf', '-Infinity'],
  ])('%s', async (value, shown) => {
    const template = templateFile(`nan-${value}`, body, [
      { name: 'count', type: 'number', value: '2' },
    ]);
    const result = await main([
      'render',
      '--template',
      template,
      '--instance',
      instanceFile(`nan-${value}`, [{ name: 'count', value }]),
    ]);
    expect(result).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: `Rendered=False TemplateExecutionFailed: spec.handlebars: Deployment team-a/web: spec.replicas is ${shown}, which JSON cannot hold: give a finite number\n`,
    });
  });
});

describe('an observed read over the match limit names the limit, not "matched nothing"', () => {
  it('10,001 matches', async () => {
    const body =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: src\ndata:\n  a: b\n---\n' +
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: reader\n  annotations:\n    stencil.dev/wave: "1"\n' +
      'data:\n  n: {{quote (toJson (observed "v1" "ConfigMap" "src" ".data.*"))}}\n';
    const data = Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`k${i}`, 'v']));
    const objects = write(
      'observed-many.yaml',
      stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'src', namespace: 'team-a' },
        data,
      }),
    );
    const result = await main([
      'render',
      '--template',
      templateFile('observed-many', body, []),
      '--instance',
      instanceFile('observed-many', []),
      '--objects',
      objects,
    ]);
    expect(result).toMatchObject({ exitCode: 1, stdout: '' });
    expect(result.stderr).toBe(
      'Rendered=False TemplateExecutionFailed: ConfigMap team-a/reader reads .data.* of v1 ConfigMap team-a/src with observed, but the JSONPath selects more values than an observed read may (the limits: 10000 matches, 100000 values at any step) in the v1 ConfigMap team-a/src of the --objects files\n',
    );
  });
});

// `stencil render` and `stencil validate` given hostile Templates and broken input files
// (issue #17): a Secret never reaches stdout or stderr through a failure, a runaway render stops
// at the size limit, and every bad file exits 2 naming the file and the document.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/commands.ts';
import { HELPER_TEXT_CASES } from '../support/hostile-values.ts';
import { SECRET, SECRET_LEAK_CASES, shows } from '../support/secret-leak-cases.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'stencil-hostile-'));
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

function stringValues(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value !== 'object' || value === null) return [String(value)];
  return Object.values(value).flatMap(stringValues);
}

describe('stencil render never prints a Secret through a failure', () => {
  it.each(SECRET_LEAK_CASES.map((c, i) => [c.name, c, i] as const))(
    '%s',
    async (_name, leak, i) => {
      const secret = leak.secret ?? SECRET;
      const files = [
        '--template',
        templateFile(`leak${i}`, leak.body, [
          { name: 'pw', type: 'string' },
          ...(leak.parameters ?? []),
        ]),
        '--instance',
        instanceFile(`leak${i}`, [
          { name: 'pw', valueFrom: { secretKeyRef: { name: 's', key: 'pw' } } },
        ]),
        '--objects',
        secretFile(`leak${i}`, secret),
      ];
      const yaml = await main(['render', ...files]);
      expect(yaml).toMatchObject({ exitCode: 1, stdout: '' });
      expect(yaml.stderr).toContain(leak.reason);
      expect(shows(yaml.stderr, secret)).toBe(false);
      const json = await main(['render', ...files, '--output', 'json']);
      expect(json).toMatchObject({ exitCode: 1, stderr: '' });
      // Values only: a Secret such as "name" is also a key of the report's own shape.
      for (const text of stringValues(JSON.parse(json.stdout)))
        expect(shows(text, secret)).toBe(false);
    },
  );
});

describe('stencil render refuses helper YAML that would change the structure (ADR 0011)', () => {
  const refused = HELPER_TEXT_CASES.filter((c) => c.refused);
  it.each(refused.map((c, i) => [c.name, c, i] as const))('%s', async (_name, c, i) => {
    const body = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n${c.lines}\n`;
    const result = await main([
      'render',
      '--template',
      templateFile(`helper${i}`, body, [{ name: 'x' }]),
      '--instance',
      instanceFile(`helper${i}`, [{ name: 'x', value: c.x }]),
    ]);
    expect(result).toMatchObject({ exitCode: 1, stdout: '' });
    expect(result.stderr).toMatch(/^Rendered=False TemplateExecutionFailed: spec.handlebars: /);
    expect(result.stderr).toMatch(c.refused!);
  });
});

describe('a runaway render', () => {
  it('fails fast at the output limit instead of exhausting memory', async () => {
    const body =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: |\n' +
      '{{#each parameters.l}}{{#each ../parameters.l}}{{indent 1 @root.parameters.big}}{{/each}}{{/each}}\n';
    const template = templateFile('oom', body, [
      { name: 'l', type: 'array' },
      { name: 'big', type: 'string' },
    ]);
    const instance = instanceFile('oom', [
      { name: 'l', value: Array.from({ length: 300 }, (_, i) => i) },
      { name: 'big', value: 'x'.repeat(1_500_000) },
    ]);
    const before = process.memoryUsage().rss;
    const result = await main(['render', '--template', template, '--instance', instance]);
    expect(result).toMatchObject({ exitCode: 1, stdout: '' });
    expect(result.stderr).toMatch(
      /^Rendered=False TemplateExecutionFailed: spec.handlebars: render failed: rendered output exceeds the limit of 2097152 bytes \(2 MiB\)/,
    );
    // Bounded memory: the render stopped near 4 MiB of output, not at gigabytes.
    expect(process.memoryUsage().rss - before).toBeLessThan(512 * 1024 * 1024);
  });
});

describe('broken input files exit 2 naming the file and the document', () => {
  const template = (): string =>
    templateFile('ok', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n', []);
  const instance = (): string => instanceFile('ok', []);
  const render = (objects: string): ReturnType<typeof main> =>
    main(['render', '--template', template(), '--instance', instance(), '--objects', objects]);

  it.each([
    ['without metadata', 'apiVersion: v1\nkind: Secret\n', 'document 2 has no metadata'],
    [
      'with metadata: null',
      'apiVersion: v1\nkind: Secret\nmetadata: null\n',
      'document 2 has no metadata',
    ],
    [
      'without metadata.name',
      'apiVersion: v1\nkind: Secret\nmetadata: {}\n',
      'document 2 has no metadata.name',
    ],
    ['without kind', 'apiVersion: v1\nmetadata: {name: a}\n', 'document 2 has no kind'],
    ['that is a list', '- a\n- b\n', 'document 2 is not a mapping'],
    [
      'with a numeric namespace',
      'apiVersion: v1\nkind: Secret\nmetadata: {name: a, namespace: 5}\n',
      'document 2 has a metadata.namespace that is not a string',
    ],
  ])('an --objects document %s', async (_what, document, message) => {
    const file = write(
      'objects-bad.yaml',
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n---\n${document}`,
    );
    const result = await render(file);
    expect(result).toMatchObject({ exitCode: 2, stdout: '' });
    expect(result.stderr).toBe(
      `stencil: ${file}: ${message}: each object needs apiVersion, kind and metadata.name\n`,
    );
  });

  it('a YAML alias bomb', async () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const next = String.fromCharCode(97 + i);
      levels.push(`${next}: &${next} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const file = write(
      'bomb.yaml',
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n${levels.join('\n')}\n`,
    );
    for (const result of [await render(file), await main(['validate', file])]) {
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toMatch(
        new RegExp(`^stencil: ${file.replace(/[.]/g, '\\.')}: document 2: .*alias`, 'i'),
      );
    }
  });

  it('an unreadable file', async () => {
    const missing = join(dir, 'missing.yaml');
    for (const result of [await render(missing), await main(['validate', missing])]) {
      expect(result).toMatchObject({
        exitCode: 2,
        stderr: `stencil: cannot read ${missing}: ENOENT\n`,
      });
    }
  });

  it('invalid YAML in the second document', async () => {
    const file = write(
      'invalid.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\nkind: [unclosed\n',
    );
    const result = await render(file);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(`^stencil: ${file.replace(/[.]/g, '\\.')}: document 2, line \\d+: `),
    );
  });

  it('a Template file with metadata: null', async () => {
    const file = write(
      'template-null-metadata.yaml',
      'apiVersion: stencil.dev/v1alpha1\nkind: Template\nmetadata: null\nspec: {handlebars: x}\n',
    );
    const result = await main(['render', '--template', file, '--instance', instance()]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^stencil: ${file.replace(/[.]/g, '\\.')}: `));
  });
});

describe('stencil diff never prints what a helper made of a Secret (issue #22)', () => {
  const stored = Buffer.from('SUPERSECRET-9-x').toString('base64');
  const version = (name: string, token: string): string =>
    templateFile(
      name,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  token: ${token}\n`,
      [{ name: 'pw', type: 'string' }],
    );

  it.each([
    ['b64dec of a Secret that stores base64', '{{b64dec parameters.pw}}', 'SUPERSECRET-9-x'],
    [
      'replace over the decoded value',
      '{{replace "-" "." (b64dec parameters.pw)}}',
      'SUPERSECRET.9.x',
    ],
    ['lower of trim', '{{lower (trim (b64dec parameters.pw))}}', 'supersecret-9-x'],
  ])('%s', async (name, token, derived) => {
    const files = [
      '--instance',
      instanceFile(`diff-${name}`, [
        { name: 'pw', valueFrom: { secretKeyRef: { name: 's', key: 'pw' } } },
      ]),
      '--objects',
      secretFile(`diff-${name}`, stored),
      '--from',
      version(`from-${name}`, '{{sha256 parameters.pw}}'),
      '--to',
      version(`to-${name}`, token),
    ];
    for (const output of ['text', 'json']) {
      const result = await main(['diff', ...files, '--output', output]);
      expect(result.exitCode).toBe(1);
      expect(result.stdout).toContain('[redacted: parameters.pw]');
      expect(result.stdout + result.stderr).not.toContain(derived);
    }
  });
});

// The `stencil` command as a user runs it: exit codes 0/1/2, one-line errors, JSON shape, and
// the built binary (dist/cli.js, built by `npm run build` before `npm test`).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { main } from '../../src/cli/commands.ts';
import { DIFF_COMMAND } from '../../src/cli/diff-command.ts';
import { RENDER_COMMAND } from '../../src/cli/render-command.ts';
import { VALIDATE_COMMAND } from '../../src/cli/validate-command.ts';
import { RUN_COMMAND } from '../../src/config.ts';

const root = join(import.meta.dirname, '..', '..');
const sample = (name: string, file: string): string => join(root, 'samples', name, file);
let dir: string;

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const TEMPLATE = `apiVersion: stencil.dev/v1alpha1
kind: Template
metadata: { name: app, namespace: team-a }
spec:
  parameters:
    - { name: port, type: number }
  handlebars: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: {{instance.name}}
    data:
      port: "{{parameters.port}}"
`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'stencil-cli-'));
});

describe('stencil render', () => {
  it('prints the rendered manifests with ownership metadata and exits 0', async () => {
    const result = await main([
      'render',
      '--template',
      sample('web-app', 'template.yaml'),
      '--instance',
      sample('web-app', 'instance.yaml'),
      '--objects',
      sample('web-app', 'objects.yaml'),
    ]);
    expect(result).toMatchObject({ exitCode: 0, stderr: '' });
    expect(result.stdout).toContain('kind: Deployment');
    expect(result.stdout).toContain('stencil.dev/instance-ref: team-a/shop');
  });

  it('prints the waves and marks what observed read from --objects, as valid YAML', async () => {
    const files = ['objects.yaml', 'observed.yaml'].map((f) => sample('ordered-rollout', f));
    const result = await main([
      'render',
      '--template',
      sample('ordered-rollout', 'template.yaml'),
      '--instance',
      sample('ordered-rollout', 'instance.yaml'),
      ...files.flatMap((f) => ['--objects', f]),
    ]);
    expect(result).toMatchObject({ exitCode: 0, stderr: '' });
    const documents = result.stdout.split('---\n');
    expect(documents.map((d) => d.split('\n').filter((l) => l.startsWith('# ')))).toEqual([
      ['# wave 0'],
      ['# wave 1', '# observed from --objects: .spec.clusterIP of v1 Service team-a/inventory'],
      ['# wave 2'],
    ]);
    const parsed = parseAllDocuments(result.stdout, { version: '1.1' });
    expect(Array.isArray(parsed) && parsed.map((d) => d.errors)).toEqual([[], [], []]);
    expect(Array.isArray(parsed) && parsed[1]!.toJS()).toMatchObject({
      kind: 'ConfigMap',
      data: { INVENTORY_HOST: '10.0.12.34', INVENTORY_URL: 'http://10.0.12.34:8080' },
    });
  });

  it('lists what observed read, and from where, in the JSON report', async () => {
    const files = ['objects.yaml', 'observed.yaml'].map((f) => sample('ordered-rollout', f));
    const result = await main([
      'render',
      '--template',
      sample('ordered-rollout', 'template.yaml'),
      '--instance',
      sample('ordered-rollout', 'instance.yaml'),
      ...files.flatMap((f) => ['--objects', f]),
      '-o',
      'json',
    ]);
    expect(result.exitCode).toBe(0);
    expect((JSON.parse(result.stdout) as { observed: unknown }).observed).toEqual([
      {
        resource: 'v1 ConfigMap team-a/inventory-endpoints',
        reads: 'v1 Service team-a/inventory',
        jsonPath: '.spec.clusterIP',
        from: '--objects',
      },
    ]);
  });

  it('prints no wave comments when everything is in one wave', async () => {
    const result = await main([
      'render',
      '--template',
      sample('web-app', 'template.yaml'),
      '--instance',
      sample('web-app', 'instance.yaml'),
      '--objects',
      sample('web-app', 'objects.yaml'),
    ]);
    expect(result.stdout).not.toContain('# ');
  });

  it('fails, naming the object, when the producer observed reads is not in --objects', async () => {
    const args = [
      'render',
      '--template',
      sample('ordered-rollout', 'template.yaml'),
      '--instance',
      sample('ordered-rollout', 'instance.yaml'),
      '--objects',
      sample('ordered-rollout', 'objects.yaml'),
    ];
    const message =
      'ConfigMap team-a/inventory-endpoints reads .spec.clusterIP of v1 Service team-a/inventory with observed, but v1 Service team-a/inventory is not in the --objects files; add it (kubectl get -o yaml) to render ConfigMap team-a/inventory-endpoints';
    expect(await main(args)).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: `Rendered=False TemplateExecutionFailed: ${message}\n`,
    });
    const json = await main([...args, '-o', 'json']);
    expect(json.exitCode).toBe(1);
    const report = JSON.parse(json.stdout) as {
      phase: string;
      conditions: { type: string; status: string; message: string }[];
      resources: unknown[];
    };
    expect(report.phase).toBe('Failed');
    expect(report.resources).toEqual([]);
    expect(report.conditions.slice(-2)).toEqual([
      { type: 'Rendered', status: 'False', reason: 'TemplateExecutionFailed', message },
      { type: 'Ready', status: 'False', reason: 'TemplateExecutionFailed', message },
    ]);
  });

  it('reports a failing instance as JSON with Ready copying the first failure, and exits 1', async () => {
    const instance = write(
      'locked.yaml',
      `apiVersion: stencil.dev/v1alpha1
kind: TemplateInstance
metadata: { name: shop-logs, namespace: team-a }
spec:
  templateRef: { name: log-shipper, namespace: platform }
  parameters:
    - { name: registry, value: docker.io }
`,
    );
    const result = await main([
      'render',
      '--template',
      sample('locked-platform-parameter', 'template.yaml'),
      '--instance',
      instance,
      '--objects',
      sample('locked-platform-parameter', 'objects.yaml'),
      '-o',
      'json',
    ]);
    expect(result.exitCode).toBe(1);
    const report = JSON.parse(result.stdout) as {
      phase: string;
      conditions: { type: string; status: string; reason: string }[];
      resources: unknown[];
    };
    expect(report.phase).toBe('Failed');
    expect(report.conditions.map((c) => `${c.type}=${c.status}:${c.reason}`)).toEqual([
      'TemplateResolved=True:Success',
      'TargetNamespaceAllowed=True:Success',
      'ParametersValid=False:OverrideNotAllowed',
      'Ready=False:OverrideNotAllowed',
    ]);
    expect(report.resources).toEqual([]);
  });

  it('prints one line on stderr for a failure in yaml mode, and exits 1', async () => {
    const instance = write(
      'missing.yaml',
      'apiVersion: stencil.dev/v1alpha1\nkind: TemplateInstance\nmetadata: { name: x, namespace: team-a }\nspec: { templateRef: { name: nope } }\n',
    );
    const result = await main([
      'render',
      '--template',
      write('t.yaml', TEMPLATE),
      '--instance',
      instance,
    ]);
    expect(result).toEqual({
      exitCode: 1,
      stdout: '',
      stderr:
        'TemplateResolved=False TemplateNotFound: spec.templateRef: Template team-a/nope not found\n',
    });
  });

  it('never prints a Secret value that fails its type', async () => {
    const instance = write(
      'secret-instance.yaml',
      `apiVersion: stencil.dev/v1alpha1
kind: TemplateInstance
metadata: { name: x, namespace: team-a }
spec:
  templateRef: { name: app }
  parameters:
    - name: port
      valueFrom: { secretKeyRef: { name: creds, key: port } }
`,
    );
    const objects = write(
      'secret.yaml',
      `apiVersion: v1\nkind: Secret\nmetadata: { name: creds, namespace: team-a }\ndata: { port: ${Buffer.from('hunter2-secret').toString('base64')} }\n`,
    );
    for (const output of ['json', 'yaml']) {
      const result = await main([
        'render',
        '--template',
        write('t.yaml', TEMPLATE),
        '--instance',
        instance,
        '--objects',
        objects,
        '--output',
        output,
      ]);
      expect(result.exitCode).toBe(1);
      expect(result.stdout + result.stderr).toContain('InvalidParameter');
      expect(result.stdout + result.stderr).not.toContain('hunter2');
    }
  });

  it.each([
    ['no flags', ['render']],
    ['an unknown flag', ['render', '--bogus']],
    ['an unknown output', ['render', '--template', 'a', '--instance', 'b', '--output', 'xml']],
    [
      'an unreadable file',
      ['render', '--template', '/nonexistent/t.yaml', '--instance', '/nonexistent/i.yaml'],
    ],
    ['an unknown command', ['frobnicate']],
    ['no command', []],
  ])('exits 2 with one line on stderr for %s', async (_name, argv) => {
    const result = await main(argv);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^stencil: [^\n]+\n$/);
  });

  it('exits 2 for a file that is not valid YAML or not a valid Template', async () => {
    const broken = await main([
      'render',
      '--template',
      write('broken.yaml', 'a: [unclosed'),
      '--instance',
      write('i.yaml', ''),
    ]);
    expect(broken).toMatchObject({
      exitCode: 2,
      stderr: expect.stringMatching(/^stencil: .*broken.yaml: document 1, line 1/),
    });
    const invalid = write(
      'invalid.yaml',
      'apiVersion: stencil.dev/v1alpha1\nkind: Template\nmetadata: {name: x}\nspec: {handlebars: "", sync: {mode: off}}\n',
    );
    const result = await main([
      'render',
      '--template',
      invalid,
      '--instance',
      sample('web-app', 'instance.yaml'),
    ]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(
      'spec.sync.mode: Invalid value: "boolean": must be of type string',
    );
  });
});

/** A Template `team-a/app` whose ConfigMap carries `version`, as a Template or a revision. */
function versioned(version: number): string {
  return `  parameters:
    - { name: port, type: number, value: 80 }
  handlebars: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: {{instance.name}}
    data:
      port: "{{parameters.port}}"
      version: "${version}"
`;
}

const revisionDoc = (n: number): string => `apiVersion: stencil.dev/v1alpha1
kind: TemplateRevision
metadata:
  name: app-r${n}
  namespace: team-a
  labels: { stencil.dev/template: app, stencil.dev/revision: "${n}" }
spec:
  template: app
  revision: ${n}
  hash: "000000000000000${n}"
  content:
${versioned(n).trimEnd().replace(/^/gm, '    ')}
`;

describe('stencil render --revisions', () => {
  const live = (): string =>
    write(
      'live.yaml',
      `apiVersion: stencil.dev/v1alpha1\nkind: Template\nmetadata: { name: app, namespace: team-a }\nspec:\n${versioned(3)}`,
    );
  const instance = (pin?: number): string =>
    write(
      `instance-${pin ?? 'none'}.yaml`,
      `apiVersion: stencil.dev/v1alpha1
kind: TemplateInstance
metadata: { name: shop, namespace: team-a }
spec:
  templateRef: { name: app${pin !== undefined ? `, revision: ${pin}` : ''} }
`,
    );
  // As `kubectl get templaterevisions -o yaml` prints them: one List.
  const revisions = (): string =>
    write(
      'revisions.yaml',
      `apiVersion: v1\nkind: List\nitems:\n${[1, 2].map((n) => `- ${revisionDoc(n).replace(/\n/g, '\n  ')}`).join('\n')}\n`,
    );

  function configMap(stdout: string): { data: Record<string, string> } {
    const docs = parseAllDocuments(stdout, { version: '1.1' });
    expect(Array.isArray(docs) && docs.map((d) => d.errors)).toEqual([[]]);
    return (docs as { toJS: () => unknown }[])[0]!.toJS() as { data: Record<string, string> };
  }

  it('renders the revision asked for, and says which at the top of valid YAML', async () => {
    const result = await main([
      'render',
      '--template',
      live(),
      '--instance',
      instance(),
      '--revisions',
      revisions(),
      '--revision',
      '1',
    ]);
    expect(result).toMatchObject({ exitCode: 0, stderr: '' });
    expect(result.stdout.split('\n')[0]).toBe('# revision 1 of Template team-a/app (--revision)');
    expect(configMap(result.stdout).data).toEqual({ port: '80', version: '1' });
  });

  it("honours the instance's pin, with or without the live Template", async () => {
    for (const template of [['--template', live()], []]) {
      const result = await main([
        'render',
        ...template,
        '--instance',
        instance(2),
        '--revisions',
        revisions(),
      ]);
      expect(result).toMatchObject({ exitCode: 0, stderr: '' });
      expect(result.stdout.split('\n')[0]).toBe(
        '# revision 2 of Template team-a/app (pinned by spec.templateRef.revision)',
      );
      expect(configMap(result.stdout).data.version).toBe('2');
    }
    // --revision overrides the pin; the JSON report says which revision it rendered.
    const json = await main([
      'render',
      '--instance',
      instance(2),
      '--revisions',
      revisions(),
      '--revision',
      '1',
      '-o',
      'json',
    ]);
    const report = JSON.parse(json.stdout) as { revision: number; resources: { data: unknown }[] };
    expect(report.revision).toBe(1);
    expect(report.resources[0]!.data).toEqual({ port: '80', version: '1' });
  });

  it('names the missing revision and those the file holds', async () => {
    const asked = await main([
      'render',
      '--template',
      live(),
      '--instance',
      instance(),
      '--revisions',
      revisions(),
      '--revision',
      '7',
    ]);
    expect(asked).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: `stencil: --revision 7: no such revision; ${join(dir, 'revisions.yaml')} holds revisions 1, 2 of Template team-a/app\n`,
    });
    // A pin to a revision that is not there fails the instance, as RevisionNotFound does in the cluster.
    const pinned = await main([
      'render',
      '--template',
      live(),
      '--instance',
      instance(7),
      '--revisions',
      revisions(),
    ]);
    expect(pinned).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: `TemplateResolved=False RevisionNotFound: spec.templateRef.revision: revision 7 of Template team-a/app is not in --revisions; ${join(dir, 'revisions.yaml')} holds revisions 1, 2 of Template team-a/app\n`,
    });
  });

  it.each([
    [
      '--revision without --revisions',
      ['--template', 'x', '--revision', '1'],
      '--revision needs --revisions',
    ],
    [
      'a --revision that is not a number',
      ['--template', 'x', '--revision', 'two'],
      '--revision must be a revision number',
    ],
  ])('exits 2 naming the flag for %s', async (_name, flags, why) => {
    const result = await main(['render', '--instance', 'i.yaml', ...flags]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(why);
  });

  it('says which Templates a --revisions file holds revisions of when it holds none of this one', async () => {
    const other = write('other-revisions.yaml', revisionDoc(1).replace(/team-a/g, 'team-b'));
    const result = await main(['render', '--instance', instance(), '--revisions', other]);
    expect(result).toEqual({
      exitCode: 2,
      stdout: '',
      stderr: `stencil: --revisions: ${other} holds no revision of Template team-a/app (only of team-b/app), and no --template was given to render\n`,
    });
  });

  it('refuses a --revisions file holding another kind, naming the document', async () => {
    const result = await main([
      'render',
      '--instance',
      instance(),
      '--revisions',
      write('not-revisions.yaml', `${revisionDoc(1)}---\n${TEMPLATE}`),
    ]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('document 2 is a Template, not a TemplateRevision');
  });
});

describe('stencil diff', () => {
  const SECRET = 'hunter2-secret';
  /** Template `team-a/app`; `v2` changes a field, a label, a Secret-backed value, adds and prunes. */
  function app(v2: boolean): string {
    return write(
      `app-${v2 ? 2 : 1}.yaml`,
      `apiVersion: stencil.dev/v1alpha1
kind: Template
metadata: { name: app, namespace: team-a }
spec:
  parameters:
    - { name: port, type: number, value: 80 }
    - { name: password, type: string }
  handlebars: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: {{instance.name}}
      labels: { app.kubernetes.io/version: "${v2 ? 2 : 1}" }
    data:
      port: "${v2 ? '{{parameters.port}}0' : '{{parameters.port}}'}"
      token: "${v2 ? '{{upper parameters.password}}' : '{{parameters.password}}'}"
    ---
    apiVersion: v1
    kind: Secret
    metadata:
      name: {{instance.name}}-api
    stringData:
      apiKey: literal-key-${v2 ? 2 : 1}
    ---
    apiVersion: v1
    kind: ${v2 ? 'ConfigMap' : 'Service'}
    metadata:
      name: {{instance.name}}-${v2 ? 'extra' : 'old'}
    ${v2 ? 'data: { a: b }' : 'spec: { ports: [{ port: 80 }] }'}
`,
    );
  }
  const instance = (): string =>
    write(
      'diff-instance.yaml',
      `apiVersion: stencil.dev/v1alpha1
kind: TemplateInstance
metadata: { name: shop, namespace: team-a }
spec:
  templateRef: { name: app }
  parameters:
    - name: password
      valueFrom: { secretKeyRef: { name: creds, key: password } }
`,
    );
  const objects = (): string =>
    write(
      'diff-objects.yaml',
      `apiVersion: v1\nkind: Secret\nmetadata: { name: creds, namespace: team-a }\ndata: { password: ${Buffer.from(SECRET).toString('base64')} }\n`,
    );
  const diff = (
    ...flags: string[]
  ): Promise<{ exitCode: number; stdout: string; stderr: string }> =>
    main(['diff', '--instance', instance(), '--objects', objects(), ...flags]);

  it('lists objects added, changed with field paths, and pruned; exit 1', async () => {
    const result = await diff('--from', app(false), '--to', app(true));
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(1);
    const from = join(dir, 'app-1.yaml');
    const to = join(dir, 'app-2.yaml');
    expect(result.stdout).toBe(
      [
        `TemplateInstance team-a/shop: --from ${from} → --to ${to}`,
        'added (1):',
        '  + v1 ConfigMap team-a/shop-extra',
        'changed (2):',
        '  ~ v1 Secret team-a/shop-api',
        '      stringData.apiKey: "[redacted: Secret data]" → "[redacted: Secret data]"',
        '  ~ v1 ConfigMap team-a/shop',
        '      metadata.labels["app.kubernetes.io/version"]: "1" → "2"',
        '      data.port: "80" → "800"',
        '      data.token: "[redacted: parameters.password]" → "[redacted: parameters.password]"',
        'pruned (1):',
        '  - v1 Service team-a/shop-old',
        '',
      ].join('\n'),
    );
  });

  it('never prints a Secret value, as text or JSON', async () => {
    for (const output of ['text', 'json']) {
      const result = await diff('--from', app(false), '--to', app(true), '-o', output);
      expect(result.exitCode).toBe(1);
      for (const secret of [SECRET, SECRET.toUpperCase(), 'literal-key'])
        expect(result.stdout + result.stderr).not.toContain(secret);
    }
  });

  it('reports the same as JSON', async () => {
    const result = await diff('--from', app(false), '--to', app(true), '--output', 'json');
    const report = JSON.parse(result.stdout) as {
      instance: string;
      added: string[];
      changed: { resource: string; changes: { path: string; from?: unknown; to?: unknown }[] }[];
      pruned: string[];
    };
    expect(report.instance).toBe('team-a/shop');
    expect(report.added).toEqual(['v1 ConfigMap team-a/shop-extra']);
    expect(report.pruned).toEqual(['v1 Service team-a/shop-old']);
    expect(report.changed[1]).toEqual({
      resource: 'v1 ConfigMap team-a/shop',
      changes: [
        { path: 'metadata.labels["app.kubernetes.io/version"]', from: '1', to: '2' },
        { path: 'data.port', from: '80', to: '800' },
        {
          path: 'data.token',
          from: '[redacted: parameters.password]',
          to: '[redacted: parameters.password]',
        },
      ],
    });
  });

  it('exits 0 when the change renders the same objects', async () => {
    const result = await diff('--from', app(false), '--to', app(false));
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(
      /^TemplateInstance team-a\/shop: no difference: .* render the same 3 resource\(s\)\n$/,
    );
  });

  it('compares two stored revisions', async () => {
    const revisions = write('diff-revisions.yaml', `${revisionDoc(1)}---\n${revisionDoc(2)}`);
    const plain = write(
      'plain-instance.yaml',
      'apiVersion: stencil.dev/v1alpha1\nkind: TemplateInstance\nmetadata: { name: shop, namespace: team-a }\nspec: { templateRef: { name: app } }\n',
    );
    const result = await main([
      'diff',
      '--instance',
      plain,
      '--from-revision',
      '1',
      '--to-revision',
      '2',
      '--revisions',
      revisions,
    ]);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toContain(
      '  ~ v1 ConfigMap team-a/shop\n      data.version: "1" → "2"\n',
    );
    const missing = await main([
      'diff',
      '--instance',
      plain,
      '--from-revision',
      '1',
      '--to-revision',
      '9',
      '--revisions',
      revisions,
    ]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain(
      `--to-revision 9: no such revision; ${revisions} holds revisions 1, 2`,
    );
  });

  it('exits 2 naming the side whose Template does not render', async () => {
    const broken = write(
      'broken-app.yaml',
      readFileSync(app(true), 'utf8').replace(
        'name: {{instance.name}}-extra',
        'name: {{required "extra needs a name" parameters.nope}}',
      ),
    );
    const result = await diff('--from', app(false), '--to', broken);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(
        `^stencil: --to ${broken} does not render TemplateInstance team-a/shop: [^\\n]+\\n$`,
      ),
    );
  });

  it.each([
    ['no --to', ['--from', 'a.yaml'], 'give one of --to T.yaml or --to-revision N'],
    [
      'both --from and --from-revision',
      ['--from', 'a', '--from-revision', '1', '--to', 'b'],
      'give one of --from T.yaml or --from-revision N',
    ],
    [
      '--to-revision without --revisions',
      ['--from', 'FROM', '--to-revision', '2'],
      '--to-revision needs --revisions',
    ],
    [
      'an unknown output',
      ['--output', 'yaml', '--from', 'a', '--to', 'b'],
      '--output must be text or json',
    ],
  ])('exits 2 naming the flag for %s', async (_name, flags, why) => {
    const argv = flags.map((f) => (f === 'FROM' ? app(false) : f));
    const result = await diff(...argv);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^stencil: [^\n]+\n$/);
    expect(result.stderr).toContain(why);
  });
});

describe('stencil validate', () => {
  it('reports a syntax error and an undeclared parameter with line and column, exit 1', () => {
    const syntax = write(
      'syntax.yaml',
      TEMPLATE.replace('"{{parameters.port}}"', '"{{parameters.port"'),
    );
    const undeclared = write(
      'undeclared.yaml',
      TEMPLATE.replace('{{parameters.port}}', '{{parameters.prot}}').replace(
        'name: app',
        'name: app2',
      ),
    );
    const result = validateFiles(syntax, undeclared);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(
      /syntax.yaml#1 Template team-a\/app: ValidationFailed: spec.handlebars: line 6, column \d+: Parse error/,
    );
    expect(result.stderr).toMatch(
      /undeclared.yaml#1 Template team-a\/app2: ValidationFailed: spec.handlebars: line 6, column 12: reference to undeclared parameter "parameters.prot"/,
    );
  });

  it('refuses an observed read of an object of the same wave, naming both objects, exit 1', () => {
    const sameWave = write(
      'same-wave.yaml',
      readFileSync(sample('ordered-rollout', 'template.yaml'), 'utf8').replace(
        'stencil.dev/wave: "1"',
        'stencil.dev/wave: "0"',
      ),
    );
    const result = validateFiles(sameWave);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(
      'same-wave.yaml#1 Template platform/inventory-backend: ValidationFailed: spec.handlebars: line 19, column 19: ConfigMap "inventory-endpoints" (wave 0) reads Service "inventory" (wave 0, line 1) with observed',
    );
  });

  it('accepts every sample, checking instances against their Templates, exit 0', () => {
    const files = [
      'web-app',
      'database-credentials',
      'service-discovery',
      'locked-platform-parameter',
      'network-policy-baseline',
      'tenant-bootstrap',
    ].flatMap((s) => [sample(s, 'template.yaml'), sample(s, 'instance.yaml')]);
    const result = validateFiles(...files);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(
      /TemplateInstance team-a\/shop: valid against Template platform\/web-app/,
    );
  });

  it('checks an instance against a Template in the same files', () => {
    const instance = write(
      'bad-instance.yaml',
      'apiVersion: stencil.dev/v1alpha1\nkind: TemplateInstance\nmetadata: {name: i, namespace: team-a}\nspec:\n  templateRef: {name: app}\n  parameters:\n    - {name: port, value: eighty}\n    - {name: nope, value: 1}\n',
    );
    const result = validateFiles(write('t2.yaml', TEMPLATE), instance);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(
      'InvalidParameter: spec.parameters[0]: parameter "port": expected a number, got "eighty"',
    );
    expect(result.stderr).toContain(
      'InvalidParameter: spec.parameters[1]: parameter "nope": the Template declares no such parameter',
    );
  });

  function validateFiles(...files: string[]): { exitCode: number; stdout: string; stderr: string } {
    const result = spawnSync(
      process.execPath,
      [join(root, 'dist', 'cli.js'), 'validate', ...files],
      { encoding: 'utf8' },
    );
    return { exitCode: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
  }
});

describe('the built binary', () => {
  it.each([
    'web-app',
    'database-credentials',
    'service-discovery',
    'locked-platform-parameter',
    'network-policy-baseline',
    'tenant-bootstrap',
  ])('renders the %s sample', (name) => {
    const result = spawnSync(
      process.execPath,
      [
        join(root, 'dist', 'cli.js'),
        'render',
        '--template',
        sample(name, 'template.yaml'),
        '--instance',
        sample(name, 'instance.yaml'),
        '--objects',
        sample(name, 'objects.yaml'),
      ],
      { encoding: 'utf8' },
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('stencil.dev/instance-uid');
  });
});

describe('stencil <command> --help', () => {
  const commands = [
    ['run', RUN_COMMAND],
    ['render', RENDER_COMMAND],
    ['validate', VALIDATE_COMMAND],
    ['diff', DIFF_COMMAND],
  ] as const;

  it.each(
    commands.flatMap(([name, spec]) => [
      [name, '--help', spec] as const,
      [name, '-h', spec] as const,
    ]),
  )(
    'stencil %s %s prints its usage, every flag with a description, and exits 0',
    async (name, flag, spec) => {
      const result = await main([name, flag]);
      expect(result.exitCode).toBe(0);
      expect(result.stderr).toBe('');
      const lines = result.stdout.split('\n');
      expect(lines[0]).toBe(`usage: stencil ${name} ${spec.synopsis}`);
      for (const [flagName, { description }] of Object.entries({
        ...spec.flags,
        help: { description: 'print this help and exit' },
      })) {
        const line = lines.find((l) => new RegExp(`^  (-\\w, )? *--${flagName}\\b`).test(l));
        expect(line, `--${flagName}`).toBeDefined();
        expect(line).toContain(description);
      }
    },
  );

  it('lists the flags an operator user looks for', async () => {
    const run = (await main(['run', '--help'])).stdout;
    for (const flag of ['--kubeconfig PATH', '--leader-elect', '--webhook-break-glass-groups a,b'])
      expect(run).toContain(flag);
    expect(run).toContain('STENCIL_<FLAG>');
    expect((await main(['render', '-h'])).stdout).toMatch(/-o, --output yaml\|json +\S/);
    expect((await main(['validate', '--help'])).stdout).toMatch(/FILE\.\.\. +YAML files/);
  });

  it('answers --help even after other flags, without running anything', async () => {
    // `run` would otherwise connect to a cluster; `render` would read the (missing) files.
    expect((await main(['run', '--kubeconfig', '/nonexistent', '--help'])).exitCode).toBe(0);
    expect((await main(['render', '--template', '/nonexistent', '-h'])).exitCode).toBe(0);
  });

  it('the top-level help names every command and how to get its flags', async () => {
    const result = await main(['--help']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('stencil run [flags]');
    expect(result.stdout).toContain('stencil validate [--crds CRDS.yaml]... FILE...');
    expect(result.stdout).toContain('stencil <command> --help');
  });

  it.each([
    ['run', '--frobnicate', 'usage: stencil run [flags]'],
    ['render', '--bogus=1', `usage: stencil render ${RENDER_COMMAND.synopsis}`],
    ['validate', '-x', 'usage: stencil validate [--crds CRDS.yaml]... FILE...'],
  ])(
    'stencil %s %s exits 2 with one line naming the flag and the usage line',
    async (name, flag, usage) => {
      const result = await main([name, flag, 'file.yaml']);
      expect(result).toEqual({
        exitCode: 2,
        stdout: '',
        stderr: `stencil: unknown flag ${flag.split('=')[0]}; ${usage}\n`,
      });
    },
  );

  it.each([
    [['render', '--template'], "Option '--template <value>' argument missing"],
    [['render', '--template', '--instance', 'i.yaml'], "Option '--template' argument is ambiguous"],
    [['run', '--leader-elect=yes'], "Option '--leader-elect' does not take an argument"],
    [['run', 'extra'], "Unexpected argument 'extra'"],
  ])("%j exits 2 with parseArgs' complaint and the usage line, on one line", async (argv, why) => {
    const result = await main(argv);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^stencil: [^\n]+\n$/);
    expect(result.stderr).toContain(`${why}; usage: stencil ${argv[0]} `);
  });

  it('the built binary answers stencil run --help with exit 0 and refuses an unknown flag with 2', () => {
    const run = (...args: string[]): { status: number | null; stdout: string; stderr: string } =>
      spawnSync(process.execPath, [join(root, 'dist', 'cli.js'), ...args], { encoding: 'utf8' });
    const help = run('run', '--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--webhook-break-glass-groups');
    const unknown = run('run', '--help-me');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toBe('stencil: unknown flag --help-me; usage: stencil run [flags]\n');
  });
});

// Issue #26's three cases as a Template author meets them: a string parameter in integer fields
// and an unknown field (validate and render exit 1 naming each field, the expected type, the
// parameter and the Template line:col), a bad wave annotation that validate now refuses too, and
// the CRDs that custom resources are checked against (rendered alongside, or --crds).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/commands.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'stencil-schema-checks-'));
});

function write(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === 'string' ? value : stringify(value));
  return path;
}

function templateFile(name: string, handlebars: string, parameters: object[]): string {
  return write(`${name}-template.yaml`, {
    apiVersion: 'stencil.dev/v1alpha1',
    kind: 'Template',
    metadata: { name: 'web', namespace: 'team-a' },
    spec: { parameters, handlebars, allowClusterScopedResources: true },
  });
}

function instanceFile(name: string, parameters: object[] = []): string {
  return write(`${name}-instance.yaml`, {
    apiVersion: 'stencil.dev/v1alpha1',
    kind: 'TemplateInstance',
    metadata: { name: 'shop', namespace: 'team-a' },
    spec: { templateRef: { name: 'web' }, parameters },
  });
}

/** A Deployment whose name, replicas, pod spec field and container lines the caller gives. */
function deployment(name: string, replicas: string, podField: string, container: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:${podField}
      containers:
        - name: app
          image: nginx${container}
`;
}

/** The Deployment of issue #26: appName in replicas and containerPort, an unknown field. */
const BROKEN_DEPLOYMENT = deployment(
  '{{parameters.appName}}',
  '{{parameters.appName}}',
  '\n      nonExistentField: true',
  '\n          ports:\n            - containerPort: {{parameters.appName}}',
);

const APP_NAME = [{ name: 'appName', type: 'string', value: 'shop' }];

describe('a string parameter in integer fields and an unknown field (issue #26, case 1)', () => {
  it('stencil validate exits 1 naming each field, the expected type, the parameter and line:col', async () => {
    const result = await main(['validate', templateFile('case1', BROKEN_DEPLOYMENT, APP_NAME)]);
    expect(result.exitCode).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toEqual([
      expect.stringContaining(
        'Deployment team-a/shop: spec.replicas: the string parameter appName is placed where the schema expects integer (template line 6, column 13)',
      ),
      expect.stringContaining(
        'Deployment team-a/shop: spec.template.spec.containers[0].ports[0].containerPort: the string parameter appName is placed where the schema expects integer (template line 18, column 30)',
      ),
      expect.stringContaining(
        'Deployment team-a/shop: spec.template.spec.nonExistentField: unknown field (strict field validation)',
      ),
    ]);
  });

  it('stencil render exits 1 naming the same fields, from the values it rendered', async () => {
    const template = templateFile('case1-render', BROKEN_DEPLOYMENT, APP_NAME);
    const result = await main(['render', '--template', template, '--instance', instanceFile('c1')]);
    expect(result).toEqual({
      exitCode: 1,
      stdout: '',
      stderr:
        'Rendered=False InvalidResource: Deployment team-a/shop: spec.replicas: Invalid value: "string": must be of type integer (from parameter appName at template line 6, column 13); ' +
        'Deployment team-a/shop: spec.template.spec.nonExistentField: unknown field (strict field validation); ' +
        'Deployment team-a/shop: spec.template.spec.containers[0].ports[0].containerPort: Invalid value: "string": must be of type integer (from parameter appName at template line 18, column 30)\n',
    });
  });

  it('the typed placement is checked whatever the default: a string default "3" is still refused', async () => {
    const body =
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: {{parameters.count}}\n  selector: {}\n  template: {}\n';
    const result = await main([
      'validate',
      templateFile('default-3', body, [{ name: 'count', type: 'string', value: '3' }]),
    ]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(
      'spec.replicas: the string parameter count is placed where the schema expects integer (template line 6, column 13)',
    );
  });

  it('the fixed Template is valid, and a number parameter converted with quote is accepted', async () => {
    const body = `apiVersion: v1
kind: Service
metadata:
  name: web
  labels:
    port: {{quote parameters.port}}
spec:
  ports:
    - port: {{parameters.port}}
      targetPort: {{parameters.port}}
`;
    const result = await main([
      'validate',
      templateFile('fixed', body, [{ name: 'port', type: 'number', value: 8080 }]),
    ]);
    expect(result).toMatchObject({ exitCode: 0, stderr: '' });
  });

  it('a number parameter as a label value is refused, with the helper that converts it', async () => {
    const body = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  labels:
    port: {{parameters.port}}
`;
    const result = await main([
      'validate',
      templateFile('number-label', body, [{ name: 'port', type: 'number', required: true }]),
    ]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(
      'ConfigMap team-a/web: metadata.labels.port: the number parameter port is placed where the schema expects string (template line 6, column 11); declare the parameter as a string, or quote it: {{quote parameters.port}}',
    );
  });
});

describe('validate runs the annotation checks of render (issue #26, case 2)', () => {
  const body = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{parameters.app}}
  annotations:
    stencil.dev/wave: "soon"
`;

  it('rejects the bad wave even without literal defaults (a placeholder stands in)', async () => {
    const result = await main([
      'validate',
      templateFile('wave', body, [{ name: 'app', type: 'string', required: true }]),
    ]);
    expect(result).toEqual({
      exitCode: 1,
      stdout: '',
      stderr: expect.stringContaining(
        'ValidationFailed: spec.handlebars: ConfigMap team-a/<app>: stencil.dev/wave must be a whole number, got "soon"',
      ),
    });
  });

  it('does not judge a field a placeholder produced', async () => {
    const wave = body.replace('"soon"', '{{parameters.wave}}');
    const result = await main([
      'validate',
      templateFile('wave-param', wave, [
        { name: 'app', type: 'string', required: true },
        { name: 'wave', type: 'string', required: true },
      ]),
    ]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('valid (DryRunSkipped: no literal default for: app, wave)');
  });
});

const WIDGET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { size: { type: 'integer' } } },
            },
          },
        },
      },
    ],
  },
};

const WIDGET = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
spec:
  size: {{parameters.size}}
  colour: red
`;

describe('custom resources are checked against their CRD', () => {
  it('a CRD rendered alongside', async () => {
    const body = `${stringify(WIDGET_CRD)}---\n${WIDGET}`;
    const result = await main([
      'validate',
      templateFile('crd-alongside', body, [{ name: 'size', type: 'number', value: 3 }]),
    ]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(
      'Widget team-a/w: spec.colour: unknown field (strict field validation)',
    );
  });

  it('a CRD of --crds, for validate and render; without it the kind is skipped with one note', async () => {
    const template = templateFile('crd-file', WIDGET, [
      { name: 'size', type: 'string', value: 'big' },
    ]);
    const crds = write('widget-crd.yaml', WIDGET_CRD);
    const validated = await main(['validate', '--crds', crds, template]);
    expect(validated.exitCode).toBe(1);
    expect(validated.stderr).toContain(
      'Widget team-a/w: spec.size: the string parameter size is placed where the schema expects integer (template line 6, column 9)',
    );
    const rendered = await main([
      'render',
      '--crds',
      crds,
      '--template',
      template,
      '--instance',
      instanceFile('crd'),
    ]);
    expect(rendered.exitCode).toBe(1);
    expect(rendered.stderr).toContain(
      'Widget team-a/w: spec.size: Invalid value: "string": must be of type integer (from parameter size at template line 6, column 9)',
    );
    const unchecked = await main([
      'render',
      '--template',
      template,
      '--instance',
      instanceFile('crd'),
    ]);
    expect(unchecked.exitCode).toBe(0);
    expect(unchecked.stderr).toBe('stencil: note: no schema for example.com/v1 Widget, skipped\n');
  });

  it('a --crds file without a CRD is a usage error', async () => {
    const result = await main(['validate', '--crds', instanceFile('not-a-crd'), instanceFile('x')]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('no CustomResourceDefinition in it');
  });
});

describe('stencil diff --instances DIR: the change preflight, offline', () => {
  const template = (name: string, extra: string): string =>
    templateFile(name, deployment('{{instance.name}}', '{{parameters.replicas}}', '', extra), [
      { name: 'replicas', type: 'number', value: 1 },
    ]);

  it('reports each instance as failing, changed or unchanged, failures first, with the counts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stencil-instances-'));
    const instance = (name: string, replicas?: number): void => {
      writeFileSync(
        join(dir, `${name}.yaml`),
        stringify({
          apiVersion: 'stencil.dev/v1alpha1',
          kind: 'TemplateInstance',
          metadata: { name, namespace: 'team-a' },
          spec: {
            templateRef: { name: 'web' },
            parameters:
              replicas === undefined ? [] : [{ name: 'replicas', value: String(replicas) }],
          },
        }),
      );
    };
    for (const [name, replicas] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const)
      instance(name, replicas);
    // What `kubectl get templateinstances -A -o yaml` prints: a List, read item by item.
    writeFileSync(
      join(dir, 'list.yaml'),
      stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            apiVersion: 'stencil.dev/v1alpha1',
            kind: 'TemplateInstance',
            metadata: { name: 'd', namespace: 'team-a' },
            spec: { templateRef: { name: 'web' } },
          },
        ],
      }),
    );
    writeFileSync(
      join(dir, 'other.yaml'),
      stringify({
        apiVersion: 'stencil.dev/v1alpha1',
        kind: 'TemplateInstance',
        metadata: { name: 'x', namespace: 'team-a' },
        spec: { templateRef: { name: 'another' } },
      }),
    );
    // The change adds a field for two replicas or more, and a typo for exactly three.
    const to = template(
      'instances-to',
      '\n          {{#if (gt parameters.replicas 1)}}imagePullPolicy: Always{{/if}}\n          {{#if (eq parameters.replicas 3)}}imagePulPolicy: Always{{/if}}',
    );
    const result = await main([
      'diff',
      '--instances',
      dir,
      '--from',
      template('instances-from', ''),
      '--to',
      to,
    ]);
    expect(result.exitCode).toBe(2);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      /over 4 instance\(s\) in .*: 1 change, 2 unchanged, 1 fail; 1 instance\(s\) of other Templates skipped$/,
    );
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(
        /^ {2}✗ team-a\/c: Rendered=False InvalidResource: Deployment team-a\/c: spec\.template\.spec\.containers\[0\]\.imagePulPolicy: unknown field/,
      ),
      '  ~ team-a/b: 0 added, 1 changed, 0 pruned',
      '  = team-a/a',
      '  = team-a/d',
    ]);
    const json = await main([
      'diff',
      '--instances',
      dir,
      '--from',
      template('instances-from', ''),
      '--to',
      to,
      '-o',
      'json',
    ]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      total: 4,
      failed: 1,
      changed: 1,
      unchanged: 2,
      skipped: 1,
    });
  });
});

// Issue #27 offline: `stencil crd` prints the CRD (and roles) a Template's spec.api makes, and
// refuses what the operator refuses (a name of Stencil's own API among it); `stencil render` takes a typed instance, defaulted and
// checked as the API server would at admission, and renders it as the equivalent TemplateInstance.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/commands.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'stencil-typed-api-'));
});

function write(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === 'string' ? value : stringify(value));
  return path;
}

const HANDLEBARS = `apiVersion: v1
kind: ConfigMap
metadata:
  name: "{{instance.name}}"
data:
  image: "{{parameters.image}}"
  replicas: "{{parameters.replicas}}"
  password: "{{parameters.password}}"
`;

function templateFile(name: string, api: object, parameters?: object[]): string {
  return write(`${name}.yaml`, {
    apiVersion: 'stencil.dev/v1alpha1',
    kind: 'Template',
    metadata: { name: 'web-app', namespace: 'team-a' },
    spec: {
      api,
      parameters: parameters ?? [
        { name: 'image', type: 'string', required: true, description: 'The image.' },
        { name: 'replicas', type: 'number', value: 2, maximum: 10 },
        { name: 'password', type: 'string', value: 'none' },
        { name: 'sidecar', type: 'string', value: 'v1', disableOverride: true },
      ],
      handlebars: HANDLEBARS,
    },
  });
}

const API = { group: 'apps.example.com', version: 'v1', kind: 'WebApp' };

function webApp(name: string, spec: object): string {
  return write(`${name}.yaml`, {
    apiVersion: 'apps.example.com/v1',
    kind: 'WebApp',
    metadata: { name: 'shop', namespace: 'team-a' },
    spec,
  });
}

describe('stencil crd', () => {
  it('prints the CRD of the published kind, and its roles with --rbac', async () => {
    const result = await main(['crd', '--template', templateFile('t1', API), '--rbac']);
    expect(result.exitCode).toBe(0);
    const objects = parseAllDocuments(result.stdout).map(
      (d) => d.toJS() as { kind: string; metadata: { name: string } },
    );
    expect(objects.map((o) => `${o.kind} ${o.metadata.name}`)).toEqual([
      'CustomResourceDefinition webapps.apps.example.com',
      'ClusterRole stencil:api:webapps.apps.example.com:edit',
      'ClusterRole stencil:api:webapps.apps.example.com:view',
    ]);
    expect(result.stdout).toContain('description: The image.');
    expect(result.stdout).not.toContain('sidecar');
  });

  it('checks the group against --api-groups as the operator does, naming group and namespace', async () => {
    const file = templateFile('t2', API);
    const refused = await main([
      'crd',
      '--template',
      file,
      '--api-groups',
      'platform=apps.example.com',
    ]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain(
      'APIGroupNotAllowed: spec.api.group: the group apps.example.com is not allowed for Templates in namespace team-a',
    );
    const allowed = await main([
      'crd',
      '--template',
      file,
      '--api-groups',
      'team-a=apps.example.com',
    ]);
    expect(allowed.exitCode).toBe(0);
    const reserved = await main([
      'crd',
      '--template',
      templateFile('t3', { ...API, group: 'stencil.dev' }),
    ]);
    expect(reserved.exitCode).toBe(1);
    expect(reserved.stderr).toContain("stencil.dev and its subdomains are Stencil's own");
  });

  it('refuses a parameter that takes a field of the instance, and bad usage', async () => {
    const file = templateFile('t4', API, [{ name: 'ttl', type: 'string' }]);
    const result = await main(['crd', '--template', file]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(
      'APIInvalid: spec.parameters[0].name: a parameter an instance may set cannot be named ttl',
    );
    expect((await main(['crd'])).exitCode).toBe(2);
    expect((await main(['crd', '--template', file, '--api-groups', 'nonsense'])).exitCode).toBe(2);
  });
});

describe('stencil render of a typed instance', () => {
  it('renders it with the defaults the API server would store, a source winning over its field', async () => {
    const objects = write('objects.yaml', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db', namespace: 'team-a' },
      data: { pw: Buffer.from('s3cret').toString('base64') },
    });
    const instance = webApp('w1', {
      image: 'nginx:1.27',
      password: 'literal',
      valueFrom: { password: { secretKeyRef: { name: 'db', key: 'pw' } } },
    });
    const result = await main([
      'render',
      '--template',
      templateFile('t5', API),
      '--instance',
      instance,
      '--objects',
      objects,
      '-o',
      'json',
    ]);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const report = JSON.parse(result.stdout) as { resources: { data: Record<string, string> }[] };
    expect(report.resources[0]!.data).toEqual({
      image: 'nginx:1.27',
      replicas: '2',
      password: 's3cret',
    });
  });

  it.each([
    [
      { image: 'x', replicas: 'three' },
      'spec.replicas: Invalid value: "string": must be of type number',
    ],
    [{ image: 'x', colour: 'blue' }, 'spec.colour: unknown field'],
    [{ image: 'x', replicas: 11 }, 'spec.replicas'],
    [{ replicas: 3 }, 'spec.image or spec.valueFrom.image is required'],
    [{ image: 'x', sidecar: 'v2' }, 'spec.sidecar: unknown field'],
    [{ image: 'x', valueFrom: { image: {} } }, 'spec.valueFrom.image'],
  ])('refuses %j as the API server would, exit 2', async (spec, message) => {
    const result = await main([
      'render',
      '--template',
      templateFile('t6', API),
      '--instance',
      webApp('w2', spec),
    ]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('invalid WebApp');
    expect(result.stderr).toContain(message);
  });

  it('names the kinds it takes when the file holds neither', async () => {
    const other = write('other.yaml', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x' },
    });
    const result = await main([
      'render',
      '--template',
      templateFile('t7', API),
      '--instance',
      other,
    ]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(
      'expected exactly one TemplateInstance or WebApp (apps.example.com/v1), found 0',
    );
  });
});

describe('stencil validate with typed APIs', () => {
  it("checks the Template's spec.api and the typed instances beside it", async () => {
    const t = templateFile('v1', API);
    const good = webApp('v-good', { image: 'nginx' });
    const bad = webApp('v-bad', { image: 'nginx', replicas: 'many' });
    const result = await main(['validate', t, good]);
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('WebApp team-a/shop: valid against Template team-a/web-app');
    const refused = await main(['validate', t, bad]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain('invalid WebApp: spec.replicas');
  });

  it('refuses what stencil crd refuses, the allowance with --api-groups', async () => {
    const t = templateFile('v2', API);
    const result = await main(['validate', '--api-groups', 'platform=apps.example.com', t]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('APIGroupNotAllowed: spec.api.group');
    const reserved = await main(['validate', templateFile('v3', { ...API, group: 'x.k8s.io' })]);
    expect(reserved.exitCode).toBe(1);
    expect(reserved.stderr).toContain('reserved by Kubernetes');
  });

  it("refuses a kind that would shadow Stencil's own, with no cluster: validate, crd and render", async () => {
    const instances = templateFile('v4', { ...API, kind: 'TemplateInstance' });
    const validated = await main(['validate', instances]);
    expect(validated.exitCode).toBe(1);
    expect(validated.stderr).toContain(
      'APIShadowsResource: spec.api.kind: the kind TemplateInstance is already taken by ' +
        'templateinstances.stencil.dev (TemplateInstance) as its kind and singular;',
    );
    const short = templateFile('v5', { ...API, shortNames: ['wa', 'tpl'] });
    const printed = await main(['crd', '--template', short]);
    expect(printed.exitCode).toBe(1);
    expect(printed.stderr).toContain(
      'spec.api.shortNames[1]: the short name tpl is already taken by templates.stencil.dev',
    );
    const rendered = await main([
      'render',
      '--template',
      short,
      '--instance',
      webApp('v-shadow', { image: 'nginx' }),
    ]);
    expect(rendered.exitCode).toBe(2);
    expect(rendered.stderr).toContain("the Template's spec.api makes no CRD");
    expect(rendered.stderr).toContain('spec.api.shortNames[1]');
  });
});

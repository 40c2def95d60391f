import { describe, expect, it } from 'vitest';
import type { ParameterDeclaration, Template } from '../../api/template.ts';
import { apiProblems } from './api-checks.ts';
import { apiChanges } from './api-compatibility.ts';
import {
  publishedCrd,
  requiredRule,
  type CustomResourceDefinition,
  type SchemaObject,
} from './api-crd.ts';
import { apiNames, celFieldName, groupRefusal, parseApiAllowance } from './api-names.ts';
import { withDefaults } from './api-defaults.ts';
import { publishedRoles } from './api-roles.ts';
import { instanceView } from './instance-view.ts';

function template(
  parameters: ParameterDeclaration[],
  api: Partial<Template['spec']['api']> = {},
): Template {
  return {
    apiVersion: 'stencil.dev/v1alpha1',
    kind: 'Template',
    metadata: { name: 'web-app', namespace: 'platform' },
    spec: {
      api: { group: 'apps.example.com', version: 'v1', kind: 'WebApp', ...api },
      parameters,
      handlebars: 'kind: ConfigMap',
    },
  };
}

function crdOf(t: Template): CustomResourceDefinition {
  const crd = publishedCrd(t);
  if (!crd.ok) throw new Error(JSON.stringify(crd.problems));
  return crd.value;
}

function specSchema(crd: CustomResourceDefinition): SchemaObject {
  const root = crd.spec.versions[0]!.schema.openAPIV3Schema;
  return (root.properties as SchemaObject).spec as SchemaObject;
}

function fields(crd: CustomResourceDefinition): SchemaObject {
  return specSchema(crd).properties as SchemaObject;
}

describe('the names of a published kind', () => {
  it.each([
    [{ kind: 'WebApp' }, 'webapps', 'webapp', 'webapps.apps.example.com'],
    [{ kind: 'Policy', plural: 'policies' }, 'policies', 'policy', 'policies.apps.example.com'],
    [{ kind: 'Db', singular: 'database' }, 'dbs', 'database', 'dbs.apps.example.com'],
  ])('%j → plural %s, singular %s, CRD %s', (api, plural, singular, crdName) => {
    const names = apiNames({ group: 'apps.example.com', version: 'v1', ...api });
    expect(names).toMatchObject({ plural, singular, crdName, listKind: `${api.kind}List` });
  });

  it.each([
    ['apps', 'a group needs at least one dot'],
    ['stencil.dev', "stencil.dev and its subdomains are Stencil's own"],
    ['x.stencil.dev', "stencil.dev and its subdomains are Stencil's own"],
    ['apps.k8s.io', 'k8s.io and its subdomains are reserved by Kubernetes'],
    ['metrics.kubernetes.io', 'kubernetes.io and its subdomains are reserved by Kubernetes'],
  ])('refuses the group %s whatever the allowance: %s', (group, why) => {
    const allowance = new Map([['*', new Set([group])]]);
    expect(groupRefusal(allowance, 'platform', group)).toContain(why);
  });

  it('allows exactly the groups listed for a namespace, or for every namespace with *', () => {
    const parsed = parseApiAllowance(
      ' platform=apps.example.com, data.example.com ; *=shared.example.com;',
    );
    if (!parsed.ok) throw new Error('parse failed');
    const allowance = parsed.value;
    expect(groupRefusal(allowance, 'platform', 'apps.example.com')).toBeUndefined();
    expect(groupRefusal(allowance, 'platform', 'data.example.com')).toBeUndefined();
    expect(groupRefusal(allowance, 'team-a', 'shared.example.com')).toBeUndefined();
    expect(groupRefusal(allowance, 'team-a', 'apps.example.com')).toMatch(
      /the group apps.example.com is not allowed for Templates in namespace team-a/,
    );
    expect(groupRefusal(allowance, 'platform', 'sub.apps.example.com')).toBeDefined();
    expect(groupRefusal(new Map(), 'platform', 'apps.example.com')).toBeDefined();
  });

  it.each([
    ['platform', 'is not namespace=group,group'],
    ['=apps.example.com', 'is not namespace=group,group'],
    ['platform=Apps.Example', 'is not a DNS subdomain'],
    ['platform=k8s.io', 'reserved by Kubernetes'],
  ])('refuses the flag %s', (text, message) => {
    const parsed = parseApiAllowance(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problems[0]!.message).toContain(message);
  });

  it.each([
    ['image', 'image'],
    ['in', '__in__'],
    ['namespace', '__namespace__'],
    ['a__b', 'a__underscores__b'],
  ])('names the field %s as %s in CEL', (name, cel) => {
    expect(celFieldName(name)).toBe(cel);
  });
});

describe('the generated CRD', () => {
  const parameters: ParameterDeclaration[] = [
    { name: 'image', type: 'string', required: true, description: 'The container image.' },
    { name: 'replicas', type: 'number', value: '2', minimum: 1, maximum: 10 },
    { name: 'tier', type: 'string', value: 'free', enum: ['free', 'pro'] },
    { name: 'tls', type: 'bool', value: 'true' },
    { name: 'ports', type: 'array', value: '[80]' },
    { name: 'labels', type: 'object', value: { a: 'b' } },
    { name: 'anything', value: 3 },
    { name: 'port', type: 'string', value: 8080, pattern: '^[0-9]+$', maxLength: 5 },
    { name: 'sidecar', type: 'string', value: 'v1', disableOverride: true },
  ];
  const crd = crdOf(template(parameters));

  it('is named, labelled and annotated after the Template', () => {
    expect(crd.metadata).toEqual({
      name: 'webapps.apps.example.com',
      labels: {
        'app.kubernetes.io/managed-by': 'stencil',
        'applyset.kubernetes.io/is-parent-type': 'true',
      },
      annotations: { 'stencil.dev/template': 'platform/web-app' },
    });
    expect(crd.spec.names).toMatchObject({
      kind: 'WebApp',
      plural: 'webapps',
      categories: ['stencil'],
    });
    expect(crd.spec.versions[0]).toMatchObject({
      name: 'v1',
      served: true,
      storage: true,
      subresources: { status: {} },
    });
  });

  it('has one field per parameter an instance may set, typed, bounded and defaulted like it', () => {
    expect(Object.keys(fields(crd))).toEqual([
      'image',
      'replicas',
      'tier',
      'tls',
      'ports',
      'labels',
      'anything',
      'port',
      'valueFrom',
      'templateRevision',
      'ttl',
    ]);
    expect(fields(crd)).toMatchObject({
      image: { type: 'string', description: 'The container image.' },
      replicas: { type: 'number', default: 2, minimum: 1, maximum: 10 },
      tier: { type: 'string', default: 'free', enum: ['free', 'pro'] },
      tls: { type: 'boolean', default: true },
      ports: {
        type: 'array',
        default: [80],
        items: { 'x-kubernetes-preserve-unknown-fields': true },
      },
      labels: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, default: { a: 'b' } },
      anything: { 'x-kubernetes-preserve-unknown-fields': true, default: 3 },
      port: { type: 'string', default: '8080', pattern: '^[0-9]+$', maxLength: 5 },
    });
    expect((fields(crd).image as SchemaObject).default).toBeUndefined();
    // A required parameter makes spec required: `{}` would fail its rule as a default.
    expect(specSchema(crd).default).toBeUndefined();
    expect(crd.spec.versions[0]!.schema.openAPIV3Schema.required).toEqual(['spec']);
    const optional = crdOf(template([{ name: 'replicas', type: 'number', value: 2 }]));
    expect(specSchema(optional).default).toEqual({});
    expect(optional.spec.versions[0]!.schema.openAPIV3Schema.required).toBeUndefined();
  });

  it('takes a source per parameter in spec.valueFrom, and requires a required one either way', () => {
    const sources = (fields(crd).valueFrom as SchemaObject).properties as SchemaObject;
    expect(Object.keys(sources)).toEqual([
      'image',
      'replicas',
      'tier',
      'tls',
      'ports',
      'labels',
      'anything',
      'port',
    ]);
    expect(Object.keys((sources.image as SchemaObject).properties as SchemaObject).sort()).toEqual([
      'configMapKeyRef',
      'defaultValue',
      'objectFieldRef',
      'secretKeyRef',
    ]);
    expect(specSchema(crd)['x-kubernetes-validations']).toEqual([
      { rule: requiredRule('image'), message: 'spec.image or spec.valueFrom.image is required' },
    ]);
  });

  it("has the TemplateInstance's status and columns, then the Template's, then Age", () => {
    const withColumns = crdOf(
      template(parameters, {
        printerColumns: [{ name: 'Image', type: 'string', jsonPath: '.spec.image' }],
      }),
    );
    const columns = withColumns.spec.versions[0]!.additionalPrinterColumns.map((c) => c.name);
    expect(columns).toEqual(['Phase', 'Ready', 'Revision', 'Resources', 'Image', 'Age']);
    const root = crd.spec.versions[0]!.schema.openAPIV3Schema.properties as SchemaObject;
    expect(Object.keys((root.status as SchemaObject).properties as SchemaObject)).toContain(
      'resolvedParameters',
    );
  });

  it.each([
    [{ name: 'valueFrom', type: 'string' }, 'spec.parameters[0].name', 'cannot be named valueFrom'],
    [{ name: 'ttl' }, 'spec.parameters[0].name', 'cannot be named ttl'],
    [
      { name: 'n', type: 'number', value: 'Inf' },
      'spec.parameters[0].value',
      'not NaN or Infinity',
    ],
    [
      { name: 'n', type: 'number', value: 'many' },
      'spec.parameters[0].value',
      'must be JSON of type number',
    ],
    [
      { name: 'n', type: 'number', enum: [1, 'two'] },
      'spec.parameters[0].enum',
      'does not fit type number',
    ],
  ] as [ParameterDeclaration, string, string][])('refuses %j at %s', (parameter, path, message) => {
    const crd = publishedCrd(template([parameter]));
    expect(crd.ok).toBe(false);
    if (!crd.ok)
      expect(crd.problems[0]).toMatchObject({
        path,
        reason: 'APIInvalid',
        message: expect.stringContaining(message),
      });
  });

  it('refuses a CRD the API server could not store, and takes the most a Template may declare', () => {
    const described = (n: number, description: string): ParameterDeclaration[] =>
      Array.from({ length: n }, (_, i) => ({
        name: `p${i}`,
        type: 'string',
        value: 'x',
        description,
      }));
    const huge = publishedCrd(template(described(256, 'd'.repeat(4096))));
    expect(huge.ok).toBe(false);
    if (!huge.ok)
      expect(huge.problems[0]!.message).toMatch(
        /^the generated CustomResourceDefinition would be \d+ KiB, over the 1024 KiB/,
      );
    // Counted in UTF-8 bytes: descriptions in CJK text under 1 Mi characters, but 3 bytes each.
    const wide = template(described(256, '設定値'.repeat(500)));
    expect(JSON.stringify(wide).length).toBeLessThan(1024 * 1024);
    const refused = publishedCrd(wide);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.problems[0]!.reason).toBe('APIInvalid');
    // 256 parameters (the CRD's maxItems) without long descriptions fit.
    const many = Array.from({ length: 256 }, (_, i) => ({
      name: `p${i}`,
      type: 'string' as const,
    }));
    expect(publishedCrd(template(many)).ok).toBe(true);
  });

  it('lets a disableOverride parameter take a reserved name: it is not in the API', () => {
    expect(publishedCrd(template([{ name: 'ttl', disableOverride: true, value: '1h' }])).ok).toBe(
      true,
    );
  });

  it('says why the group is not allowed, beside what keeps the CRD from being made', () => {
    const problems = apiProblems(template([{ name: 'valueFrom' }]), new Map());
    expect(problems.map((p) => p.reason)).toEqual(['APIGroupNotAllowed', 'APIInvalid']);
    expect(apiProblems(template([]), undefined)).toEqual([]);
    expect(apiProblems(template([], { group: 'apps.k8s.io' }), undefined)[0]!.reason).toBe(
      'APIGroupNotAllowed',
    );
  });
});

describe('a change of the published kind', () => {
  const base: ParameterDeclaration[] = [
    { name: 'image', type: 'string', required: true },
    { name: 'replicas', type: 'number', value: 2, minimum: 1, maximum: 10 },
    { name: 'tier', type: 'string', value: 'free', enum: ['free', 'pro'] },
    { name: 'name', type: 'string', value: 'x', pattern: '^[a-z]+$', maxLength: 20 },
  ];
  const published = crdOf(template(base));
  const change = (
    edit: (p: ParameterDeclaration[]) => ParameterDeclaration[],
    api = {},
  ): ReturnType<typeof apiChanges> =>
    apiChanges(published, crdOf(template(edit(structuredClone(base)), api)));
  const set =
    (name: string, patch: Partial<ParameterDeclaration>) =>
    (p: ParameterDeclaration[]): ParameterDeclaration[] =>
      p.map((x) => (x.name === name ? { ...x, ...patch } : x));

  it.each([
    [
      'a new optional parameter',
      (p: ParameterDeclaration[]) =>
        [...p, { name: 'debug', type: 'bool', value: false }] as ParameterDeclaration[],
    ],
    ['a widened enum', set('tier', { enum: ['free', 'pro', 'enterprise'] })],
    ['a new description and default', set('replicas', { description: 'Pods.', value: 3 })],
    ['looser bounds', set('replicas', { minimum: 0, maximum: 20 })],
    ['a pattern removed', set('name', { pattern: undefined })],
    ['a required parameter made optional', set('image', { required: false })],
  ])('is compatible: %s', (_, edit) => {
    expect(change(edit)).toEqual({ identity: [], breaking: [] });
  });

  it.each([
    [
      'a removed parameter',
      (p: ParameterDeclaration[]) => p.filter((x) => x.name !== 'tier'),
      'spec.tier removed',
    ],
    [
      'a parameter made disableOverride',
      set('tier', { disableOverride: true }),
      'spec.tier removed',
    ],
    [
      'a changed type',
      set('replicas', { type: 'string', minimum: undefined, maximum: undefined, value: '2' }),
      'spec.replicas: type number → string',
    ],
    [
      'a newly required parameter',
      set('replicas', { required: true }),
      'spec.replicas is newly required',
    ],
    ['a narrowed enum', set('tier', { enum: ['pro'] }), 'spec.tier: enum no longer allows "free"'],
    ['a new enum', set('name', { enum: ['x'] }), 'spec.name: enum added'],
    ['a changed pattern', set('name', { pattern: '^[a-z0-9]+$' }), 'spec.name: pattern changed'],
    ['a tighter maximum', set('replicas', { maximum: 5 }), 'spec.replicas: maximum 10 → 5'],
    ['a tighter minimum', set('replicas', { minimum: 2 }), 'spec.replicas: minimum 1 → 2'],
    ['a new minLength', set('name', { minLength: 2 }), 'spec.name: minLength added'],
  ])('is breaking: %s', (_, edit, what) => {
    expect(change(edit).breaking).toEqual([what]);
  });

  it('never changes group, version, kind or plural', () => {
    expect(change((p) => p, { version: 'v2', plural: 'apps' }).identity).toEqual([
      'plural webapps → apps',
      'version v1 → v2',
    ]);
  });
});

describe('a typed instance read as a TemplateInstance', () => {
  it('names the publishing Template, pins, asks for a lifetime and gives each parameter once', () => {
    const view = instanceView(
      {
        apiVersion: 'apps.example.com/v1',
        kind: 'WebApp',
        metadata: { name: 'shop', namespace: 'team-a', uid: 'u1' },
        spec: {
          replicas: 2,
          image: 'nginx',
          password: 'defaulted',
          templateRevision: 3,
          ttl: '2h',
          valueFrom: {
            password: { secretKeyRef: { name: 'db', key: 'pw' }, defaultValue: 'x' },
            token: { configMapKeyRef: { name: 'c', key: 't' } },
          },
        },
        status: { phase: 'Ready' },
      },
      { namespace: 'platform', name: 'web-app' },
    );
    expect(view).toEqual({
      apiVersion: 'apps.example.com/v1',
      kind: 'WebApp',
      metadata: { name: 'shop', namespace: 'team-a', uid: 'u1' },
      spec: {
        templateRef: { name: 'web-app', namespace: 'platform', revision: 3 },
        ttl: '2h',
        parameters: [
          { name: 'image', value: 'nginx' },
          {
            name: 'password',
            valueFrom: { secretKeyRef: { name: 'db', key: 'pw' } },
            defaultValue: 'x',
          },
          { name: 'replicas', value: 2 },
          { name: 'token', valueFrom: { configMapKeyRef: { name: 'c', key: 't' } } },
        ],
      },
      status: { phase: 'Ready' },
    });
  });

  it('reads an instance without spec as one that sets nothing', () => {
    const view = instanceView(
      {
        apiVersion: 'apps.example.com/v1',
        kind: 'WebApp',
        metadata: { name: 'a', namespace: 'b' },
      },
      { namespace: 'platform', name: 'web-app' },
    );
    expect(view.spec).toEqual({
      templateRef: { name: 'web-app', namespace: 'platform' },
      parameters: [],
    });
  });
});

describe('the roles of a published kind', () => {
  it('grants every verb (edit) or reading (view) on the kind, and its status only to read', () => {
    const [edit, view] = publishedRoles(template([]));
    expect(edit!.metadata.name).toBe('stencil:api:webapps.apps.example.com:edit');
    expect(edit!.rules).toEqual([
      {
        apiGroups: ['apps.example.com'],
        resources: ['webapps'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'],
      },
      {
        apiGroups: ['apps.example.com'],
        resources: ['webapps/status'],
        verbs: ['get', 'list', 'watch'],
      },
    ]);
    expect(view!.rules).toEqual([
      {
        apiGroups: ['apps.example.com'],
        resources: ['webapps', 'webapps/status'],
        verbs: ['get', 'list', 'watch'],
      },
    ]);
    expect(edit!.metadata.labels).toEqual({ 'app.kubernetes.io/managed-by': 'stencil' });
  });

  it('aggregates to edit, admin and view only when the Template asks', () => {
    const [edit, view] = publishedRoles(template([], { aggregateToDefaultRoles: true }));
    expect(edit!.metadata.labels).toMatchObject({
      'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
      'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
    });
    expect(view!.metadata.labels).toMatchObject({
      'rbac.authorization.k8s.io/aggregate-to-view': 'true',
    });
  });
});

describe('structural defaults, as the API server applies them', () => {
  it('fills absent fields, the spec itself first, and keeps what is set', () => {
    const t = template([
      { name: 'replicas', type: 'number', value: 2 },
      { name: 'tier', type: 'string', value: 'free' },
      { name: 'image', type: 'string', required: true },
    ]);
    const root = crdOf(t).spec.versions[0]!.schema.openAPIV3Schema;
    expect(withDefaults({ metadata: { name: 'a' }, spec: {} }, root)).toEqual({
      metadata: { name: 'a' },
      spec: { replicas: 2, tier: 'free' },
    });
    const optional = crdOf(template([{ name: 'replicas', type: 'number', value: 2 }]));
    const optionalRoot = optional.spec.versions[0]!.schema.openAPIV3Schema;
    expect(withDefaults({ metadata: { name: 'a' } }, optionalRoot)).toEqual({
      metadata: { name: 'a' },
      spec: { replicas: 2 },
    });
    expect(withDefaults({ spec: { tier: 'pro', image: 'x' } }, root)).toEqual({
      spec: { replicas: 2, tier: 'pro', image: 'x' },
    });
  });
});

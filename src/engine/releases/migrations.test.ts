import { describe, expect, it } from 'vitest';
import { aConfigMap, aSecret, aTemplate, anInstance } from '../../../test/support/builders.ts';
import type { TemplateInstance } from '../../api/template-instance.ts';
import type { KubeObject } from '../../api/object-meta.ts';
import { evaluateInstance } from '../evaluation/instance-evaluation.ts';
import { MemorySource } from '../sources/memory-source.ts';
import { migrateObjectNames, migrateParameters } from './migrations.ts';

const renamed = aTemplate([{ name: 'image' }], {
  migrations: [{ renameParameter: { from: 'img', to: 'image' } }],
  handlebars:
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}-data\ndata:\n  image: {{parameters.image}}\n',
});

describe('a renameParameter migration', () => {
  it('lets the old name supply the new parameter, with nobody editing the instance', async () => {
    const result = await evaluateInstance({
      instance: anInstance([{ name: 'img', value: 'nginx:1.27' }]),
      template: renamed,
      namespaceLabels: {},
      port: new MemorySource([]),
    });
    expect(result.ok).toBe(true);
    expect(result.resources[0]?.data).toEqual({ image: 'nginx:1.27' });
  });

  it('does nothing while the Template still declares the old name, or the instance sets the new one', () => {
    const both = aTemplate([{ name: 'img' }, { name: 'image' }], {
      migrations: renamed.spec.migrations,
    });
    const instance = anInstance([{ name: 'img', value: 'a' }]);
    expect(migrateParameters(instance, both)).toBe(instance);
    const explicit = anInstance([
      { name: 'img', value: 'a' },
      { name: 'image', value: 'b' },
    ]);
    expect(migrateParameters(explicit, renamed)).toBe(explicit);
  });
});

describe('a valueFrom migration', () => {
  const template = aTemplate([{ name: 'password' }], {
    migrations: [
      {
        valueFrom: {
          parameter: 'password',
          secretKeyRef: { name: '{{instance.name}}-db', key: 'pw' },
        },
      },
    ],
    handlebars:
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  pw: {{parameters.password}}\n',
  });
  const withConsent = (value: string | undefined): TemplateInstance => {
    const instance = anInstance([{ name: 'password', value: 'literal' }]);
    if (value === undefined) return instance;
    return {
      ...instance,
      metadata: {
        ...instance.metadata,
        annotations: { 'stencil.dev/consent-secret-migration': value },
      },
    };
  };
  const evaluate = (
    objects: KubeObject[],
    consent: string | undefined = 'password',
  ): ReturnType<typeof evaluateInstance> =>
    evaluateInstance({
      instance: withConsent(consent),
      template,
      namespaceLabels: {},
      port: new MemorySource(objects),
    });
  const secret = aSecret('shop-db', 'team-a', { pw: 'from-secret' });

  it('reads the value from the named key once it exists, the literal standing in until then', async () => {
    expect((await evaluate([]))?.resources[0]?.data).toEqual({ pw: 'literal' });
    expect((await evaluate([secret]))?.resources[0]?.data).toEqual({ pw: 'from-secret' });
  });

  it.each([
    ['no consent annotation', undefined],
    ['a consent annotation naming another parameter', 'token, replicas'],
    ['an empty consent annotation', ''],
  ])(
    'keeps the literal and says the migration waits for consent with %s, reading no Secret',
    async (_name, consent) => {
      const source = new MemorySource([secret]);
      const reads: string[] = [];
      const port = {
        scopeOf: source.scopeOf.bind(source),
        list: source.list.bind(source),
        get: (ref: Parameters<MemorySource['get']>[0]) => {
          reads.push(`${ref.kind} ${ref.name}`);
          return source.get(ref);
        },
      };
      const result = await evaluateInstance({
        instance: withConsent(consent),
        template,
        namespaceLabels: {},
        port,
      });
      expect(result.ok && result.resources[0]?.data).toEqual({ pw: 'literal' });
      expect(reads).toEqual([]);
      const parameters = result.conditions.find((c) => c.type === 'ParametersValid');
      expect(parameters).toMatchObject({ status: 'True' });
      expect(parameters?.message).toContain(
        'the Template migrates parameter "password" to a read of Secret team-a/shop-db (key "pw"), which this instance does not name: its literal value stays in use until the instance consents with the annotation stencil.dev/consent-secret-migration: "password"',
      );
      expect(JSON.stringify(result)).not.toContain('from-secret');
    },
  );

  it('says nothing waits once the owner consents', async () => {
    const result = await evaluate([secret], ' other ,password');
    expect(result.ok && result.resources[0]?.data).toEqual({ pw: 'from-secret' });
    expect(result.conditions.find((c) => c.type === 'ParametersValid')?.message).toBe(
      '1 parameter(s) resolved',
    );
  });

  it('moves a literal to a ConfigMap key without any consent', async () => {
    const toConfigMap = aTemplate([{ name: 'level' }], {
      migrations: [
        { valueFrom: { parameter: 'level', configMapKeyRef: { name: 'settings', key: 'lvl' } } },
      ],
      handlebars:
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  level: {{parameters.level}}\n',
    });
    const result = await evaluateInstance({
      instance: anInstance([{ name: 'level', value: 'info' }]),
      template: toConfigMap,
      namespaceLabels: {},
      port: new MemorySource([aConfigMap('settings', 'team-a', { lvl: 'debug' })]),
    });
    expect(result.ok && result.resources[0]?.data).toEqual({ level: 'debug' });
  });
});

describe('a renameObject migration', () => {
  const template = aTemplate([], {
    migrations: [
      {
        renameObject: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          from: '{{instance.name}}-db',
          to: '{{instance.name}}-database',
        },
      },
    ],
  });
  const rendered: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'shop-database', namespace: 'team-a' },
  };

  it('keeps the old name for an instance that owns the old object', () => {
    const instance = {
      ...anInstance(),
      status: {
        renderedResources: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'shop-db', namespace: 'team-a' },
        ],
      },
    };
    expect(migrateObjectNames([rendered], template, instance)[0]?.metadata.name).toBe('shop-db');
  });

  it('gives the new name to an instance that never had the old object', () => {
    expect(migrateObjectNames([rendered], template, anInstance())[0]?.metadata.name).toBe(
      'shop-database',
    );
    const otherKind = { ...rendered, kind: 'Secret' };
    const instance = {
      ...anInstance(),
      status: { renderedResources: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'shop-db' }] },
    };
    expect(migrateObjectNames([otherKind], template, instance)[0]?.metadata.name).toBe(
      'shop-database',
    );
  });
});

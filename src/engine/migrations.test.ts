import { describe, expect, it } from 'vitest';
import { aSecret, aTemplate, anInstance } from '../../test/support/builders.ts';
import type { KubeObject } from '../api/object-meta.ts';
import { evaluateInstance } from './instance-evaluation.ts';
import { MemorySource } from './memory-source.ts';
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
  const evaluate = (objects: KubeObject[]): ReturnType<typeof evaluateInstance> =>
    evaluateInstance({
      instance: anInstance([{ name: 'password', value: 'literal' }]),
      template,
      namespaceLabels: {},
      port: new MemorySource(objects),
    });

  it('reads the value from the named key once it exists, the literal standing in until then', async () => {
    expect((await evaluate([]))?.resources[0]?.data).toEqual({ pw: 'literal' });
    const secret = aSecret('shop-db', 'team-a', { pw: 'from-secret' });
    expect((await evaluate([secret]))?.resources[0]?.data).toEqual({ pw: 'from-secret' });
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

// Source watches and the sync modes off / revert (SPEC §3 watches, §7), as a user sees them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import type { TemplateInstanceStatus } from '../../src/api/template-instance.ts';
import { API_VERSION, LABEL_INSTANCE_UID } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { configMap, fromSecret, instance, secret, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { Fence } from './support/fence.ts';
import { eventRecorded } from './support/instances.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

let ns: string;
let user: KubeCluster;
let running: RunningOperator;

const passwordConfig = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}
data:
  password: {{parameters.password}}
`;

const configMapBody = (color: string): string => `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}
data:
  color: ${color}
`;

async function data(name: string): Promise<Record<string, string> | undefined> {
  return (
    (await user.get({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace: ns })) as
      { data?: Record<string, string> } | undefined
  )?.data;
}

async function status(name: string): Promise<TemplateInstanceStatus | undefined> {
  return (
    (await user.get({ apiVersion: API_VERSION, kind: 'TemplateInstance', name, namespace: ns })) as
      { status?: TemplateInstanceStatus } | undefined
  )?.status;
}

const ready = (name: string): Promise<TemplateInstanceStatus> =>
  eventually(async () => {
    const s = await status(name);
    return s?.phase === 'Ready' && s;
  }, `${name} Ready`);

beforeAll(async () => {
  ns = await freshNamespace(connect(), 'sync');
  user = (await userClient()).cluster;
  running = await startOperator([ns]);
});

afterAll(async () => {
  await running?.stop();
});

describe('revert', () => {
  it('carries a rotated Secret into the rendered resource with no other action', async () => {
    await user.apply(secret(ns, 'db', { password: 'first' }));
    await user.apply(
      template(ns, 'rotating', {
        sync: { mode: 'revert' },
        parameters: [{ name: 'password' }],
        handlebars: passwordConfig,
      }),
    );
    await user.apply(
      instance(ns, 'rotating', 'rotating', [
        { name: 'password', valueFrom: fromSecret('db', 'password') },
      ]),
    );
    await eventually(
      async () => (await data('rotating'))?.password === 'first',
      'the first password',
    );
    const status = await ready('rotating');
    expect(status.conditions?.find((c) => c.type === 'Synced')).toMatchObject({
      status: 'True',
      reason: 'SyncActive',
    });

    await user.apply(secret(ns, 'db', { password: 'second' }));

    await eventually(
      async () => (await data('rotating'))?.password === 'second',
      'the rotated password',
    );
    await eventRecorded(user, ns, 'SourceChanged', `Secret ${ns}/db changed`);
  });

  it('reverts a manual edit, keeps an ignoreFields edit, and recreates a deleted resource', async () => {
    const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{instance.name}}
spec:
  replicas: 2
  selector: { matchLabels: { app: {{instance.name}} } }
  template:
    metadata: { labels: { app: {{instance.name}} } }
    spec:
      containers: [{ name: app, image: nginx:1.27 }]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}-config
data:
  color: blue
`;
    await user.apply(
      template(ns, 'guarded', {
        sync: { mode: 'revert', ignoreFields: ['spec.replicas'] },
        handlebars: deployment,
      }),
    );
    await user.apply(instance(ns, 'guarded', 'guarded'));
    await ready('guarded');
    const get = async (): Promise<{
      spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
    }> =>
      (await user.get({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'guarded',
        namespace: ns,
      })) as never;

    const edited = await get();
    edited.spec.template.spec.containers[0]!.image = 'evil:latest';
    edited.spec.replicas = 5;
    await user.apply({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'guarded', namespace: ns },
      spec: {
        replicas: 5,
        template: { spec: { containers: [{ name: 'app', image: 'evil:latest' }] } },
      },
    });
    await eventually(
      async () => (await get()).spec.template.spec.containers[0]!.image === 'nginx:1.27',
      'the image to be reverted',
    );
    expect((await get()).spec.replicas).toBe(5);

    // A later apply (the ConfigMap drifts and is reverted) does not reset the ignored field.
    await user.apply(configMap(ns, 'guarded-config', { color: 'red' }));
    await eventually(
      async () => (await data('guarded-config'))?.color === 'blue',
      'the ConfigMap to be reverted',
    );
    expect((await get()).spec.replicas).toBe(5);

    await user.delete({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'guarded-config',
      namespace: ns,
    });
    await eventually(
      async () => (await data('guarded-config'))?.color === 'blue',
      'the deleted ConfigMap to be recreated',
    );
    await eventRecorded(user, ns, 'DriftReverted');
  });

  it('notices an edit that also rewrites the owner label, and says the object is no longer its own', async () => {
    await user.apply(
      template(ns, 'relabel', { sync: { mode: 'revert' }, handlebars: configMapBody('blue') }),
    );
    await user.apply(instance(ns, 'relabel', 'relabel'));
    await ready('relabel');
    // Found by a hostile-tenant probe: the drift event used to reach only the owner the object
    // names now, so the edit went unnoticed and the instance stayed Ready.
    await user.apply({
      ...configMap(ns, 'relabel', { color: 'hacked' }),
      metadata: { name: 'relabel', namespace: ns, labels: { [LABEL_INSTANCE_UID]: 'nobody' } },
    });
    const failed = await eventually(async () => {
      const s = await status('relabel');
      return s?.phase === 'Failed' && s;
    }, 'relabel to report the object it lost');
    expect(failed.conditions?.find((c) => c.type === 'Ready')?.message).toContain(
      'is not managed by this instance',
    );
  });

  it('re-renders a LIST-mode parameter when a matching object is added or removed', async () => {
    const listing = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}
data:
  backends: {{join "," parameters.backends}}
`;
    await user.apply(
      template(ns, 'discovery', {
        sync: { mode: 'revert' },
        parameters: [{ name: 'backends', type: 'array' }],
        handlebars: listing,
      }),
    );
    const service = (name: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: ns, labels: { tier: 'backend' } },
      spec: { ports: [{ port: 80 }] },
    });
    await user.apply(service('cart'));
    await user.apply(
      instance(ns, 'discovery', 'discovery', [
        {
          name: 'backends',
          valueFrom: {
            objectFieldRef: {
              apiVersion: 'v1',
              kind: 'Service',
              namespace: ns,
              jsonPath: '.items[?(@.metadata.labels.tier=="backend")].metadata.name',
            },
          },
          defaultValue: [],
        },
      ]),
    );
    await eventually(async () => (await data('discovery'))?.backends === 'cart', 'one backend');
    await user.apply(service('catalog'));
    await eventually(
      async () => (await data('discovery'))?.backends === 'cart,catalog',
      'the added backend',
    );
    await user.delete({ apiVersion: 'v1', kind: 'Service', name: 'cart', namespace: ns });
    await eventually(
      async () => (await data('discovery'))?.backends === 'catalog',
      'the removed backend',
    );
  });

  it('heals an objectFieldRef on a kind whose CRD is installed later', async () => {
    const group = `${ns}.example.com`;
    await user.apply(
      template(ns, 'widget-reader', {
        sync: { mode: 'revert' },
        parameters: [{ name: 'size' }],
        handlebars: passwordConfig.replace(
          'password: {{parameters.password}}',
          'size: {{parameters.size}}',
        ),
      }),
    );
    await user.apply(
      instance(ns, 'widget-reader', 'widget-reader', [
        {
          name: 'size',
          valueFrom: {
            objectFieldRef: {
              apiVersion: `${group}/v1`,
              kind: 'Widget',
              name: 'w',
              jsonPath: '.spec.size',
            },
          },
          defaultValue: 'unknown',
        },
      ]),
    );
    await eventually(
      async () => (await data('widget-reader'))?.size === 'unknown',
      'the defaultValue while the kind is not served',
    );
    await eventRecorded(user, ns, 'DefaultValueUsed', 'is not served');

    await user.apply({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { kind: 'Widget', plural: 'widgets' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { size: { type: 'string' } } } },
              },
            },
          },
        ],
      },
    });
    await eventually(async () => {
      await user.apply({
        apiVersion: `${group}/v1`,
        kind: 'Widget',
        metadata: { name: 'w', namespace: ns },
        spec: { size: 'large' },
      });
      return true;
    }, 'the Widget to be created');
    await eventually(
      async () => (await data('widget-reader'))?.size === 'large',
      'the value from the new kind',
      60_000,
    );
  }, 90_000);
});

describe('off', () => {
  it('freezes after the first clean apply: rotations and edits change nothing; deleting still cleans up; revert unfreezes', async () => {
    await user.apply(secret(ns, 'frozen-db', { password: 'v1' }));
    const parameters = [{ name: 'password' }];
    await user.apply(
      template(ns, 'frozen', { sync: { mode: 'off' }, parameters, handlebars: passwordConfig }),
    );
    await user.apply(
      instance(ns, 'frozen', 'frozen', [
        { name: 'password', valueFrom: fromSecret('frozen-db', 'password') },
      ]),
    );
    const frozen = await eventually(async () => {
      const s = await status('frozen');
      return s?.frozen && s;
    }, 'the instance to freeze');
    expect(frozen.frozenAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await data('frozen')).toEqual({ password: 'v1' });
    const fence = await Fence.install(user, ns);

    await user.apply(secret(ns, 'frozen-db', { password: 'v2' }));
    await user.apply(
      template(ns, 'frozen', {
        sync: { mode: 'off' },
        parameters,
        handlebars: passwordConfig.replace('password:', 'pw:'),
      }),
    );
    await user.apply(instance(ns, 'frozen', 'frozen', [{ name: 'password', value: 'literal' }]));
    // Give the operator every chance to (wrongly) act: a pass over every instance, and the
    // three changes above delivered and acted on (the fence), before checking nothing moved.
    running.operator.resyncAll();
    await fence.pass(running.operator);
    expect(await data('frozen')).toEqual({ password: 'v1' });
    expect(running.operator.dependencies.registry.dependenciesOf(`${ns}/frozen`)).toEqual([]);

    await user.apply(
      template(ns, 'frozen', { sync: { mode: 'revert' }, parameters, handlebars: passwordConfig }),
    );
    // The apply comes first and the status write after it, in the same pass: wait for both.
    await eventually(
      async () =>
        (await data('frozen'))?.password === 'literal' &&
        (await status('frozen'))?.frozen === undefined,
      'revert to unfreeze and apply the edit',
    );

    await user.delete({
      apiVersion: API_VERSION,
      kind: 'TemplateInstance',
      name: 'frozen',
      namespace: ns,
    });
    await eventually(
      async () => (await data('frozen')) === undefined,
      'the frozen instance to clean up',
    );
  });

  it('still cleans up when a frozen instance is deleted', async () => {
    await user.apply(
      template(ns, 'frozen-2', {
        sync: { mode: 'off' },
        handlebars: passwordConfig.replace('{{parameters.password}}', 'fixed'),
      }),
    );
    await user.apply(instance(ns, 'frozen-2', 'frozen-2'));
    await eventually(async () => (await status('frozen-2'))?.frozen, 'the instance to freeze');
    await user.delete({
      apiVersion: API_VERSION,
      kind: 'TemplateInstance',
      name: 'frozen-2',
      namespace: ns,
    });
    await eventually(
      async () => (await data('frozen-2')) === undefined,
      'the frozen instance to clean up',
    );
  });
});

// The TemplateInstance lifecycle against the real API server (SPEC §2–§6), as a user sees it.
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Condition } from '../../src/api/condition.ts';
import type { KubeObject } from '../../src/api/object-meta.ts';
import type { TemplateInstanceStatus } from '../../src/api/template-instance.ts';
import type { TemplateStatus } from '../../src/api/template.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { isClusterError } from '../../src/reconcile/cluster-port.ts';
import { configMap, instance, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

let tplNs: string;
let appNs: string;
let otherNs: string;
let user: KubeCluster;
let running: RunningOperator;
/**
 * What every Template of this file says besides its body: it serves appNs, in revert mode so
 * that later edits re-apply (an `off` instance freezes after its first apply).
 */
let common: Record<string, unknown>;

const configMapDoc = (name: string, data: string): string =>
  `---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n${data}\n`;

async function instanceStatus(
  name: string,
  namespace = appNs,
): Promise<TemplateInstanceStatus | undefined> {
  const object = await user.get({
    apiVersion: API_VERSION,
    kind: 'TemplateInstance',
    name,
    namespace,
  });
  return (object as { status?: TemplateInstanceStatus } | undefined)?.status;
}

function condition(
  status: { conditions?: Condition[] } | undefined,
  type: string,
): Condition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

async function untilCondition(
  name: string,
  type: string,
  reason: string,
  namespace = appNs,
): Promise<TemplateInstanceStatus> {
  return eventually(async () => {
    const status = await instanceStatus(name, namespace);
    return condition(status, type)?.reason === reason && status;
  }, `${namespace}/${name} ${type}=${reason}`);
}

const get = (
  kind: string,
  name: string,
  namespace = appNs,
  apiVersion = 'v1',
): Promise<KubeObject | undefined> => user.get({ apiVersion, kind, name, namespace });

async function configData(name: string): Promise<Record<string, string> | undefined> {
  return ((await get('ConfigMap', name)) as { data?: Record<string, string> } | undefined)?.data;
}

beforeAll(async () => {
  const { core } = connect();
  const cluster = { core, custom: undefined as never, kubeConfig: undefined as never };
  tplNs = await freshNamespace(cluster, 'platform');
  appNs = await freshNamespace(cluster, 'app');
  otherNs = await freshNamespace(cluster, 'other');
  common = {
    targetNamespaces: { explicit: { allow: { literal: [appNs] } } },
    sync: { mode: 'revert' },
  };
  user = (await userClient()).cluster;
  running = await startOperator([tplNs, appNs, otherNs], undefined, { templateAccess: 'cluster' });
});

afterAll(async () => {
  await running?.stop();
});

describe('an instance of a Template', () => {
  it('creates the resources with ownership metadata and reports Ready with the status of SPEC §2', async () => {
    await user.apply(
      template(tplNs, 'web', {
        ...common,
        handlebars: `${configMapDoc('{{instance.name}}-config', '  image: {{parameters.image}}\n  replicas: "{{parameters.replicas}}"')}---\napiVersion: v1\nkind: Service\nmetadata:\n  name: {{instance.name}}\nspec:\n  ports: [{port: 80}]\n`,
        parameters: [
          { name: 'image', exposeInStatus: true },
          { name: 'replicas', type: 'number', value: 2 },
        ],
      }),
    );
    const created = await user.apply(
      instance(appNs, 'shop', { name: 'web', namespace: tplNs }, [
        { name: 'image', value: 'nginx:1.27' },
      ]),
    );
    const status = await untilCondition('shop', 'Ready', 'Reconciled');

    const configMap = await get('ConfigMap', 'shop-config');
    expect(configMap?.metadata.labels).toMatchObject({
      'stencil.dev/instance-uid': created.metadata.uid,
      'stencil.dev/instance-name': 'shop',
      'stencil.dev/instance-namespace': appNs,
      'stencil.dev/sync-mode': 'revert',
    });
    expect(configMap?.metadata.annotations).toMatchObject({
      'stencil.dev/instance-ref': `${appNs}/shop`,
    });
    expect(configMap?.metadata.ownerReferences).toEqual([
      {
        apiVersion: API_VERSION,
        kind: 'TemplateInstance',
        name: 'shop',
        uid: created.metadata.uid,
        controller: true,
      },
    ]);
    expect(configMap).toMatchObject({ data: { image: 'nginx:1.27', replicas: '2' } });

    expect(status.phase).toBe('Ready');
    expect(status.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      'TemplateResolved=True',
      'TargetNamespaceAllowed=True',
      'ParametersValid=True',
      'Rendered=True',
      'Applied=True',
      'Synced=True',
      'Progressing=False',
      'Degraded=False',
      'Ready=True',
    ]);
    expect(status.readyResources).toBe('2/2');
    expect(
      status.conditions?.every(
        (c) => c.observedGeneration === created.metadata.generation && c.lastTransitionTime,
      ),
    ).toBe(true);
    expect(status.renderedResources).toEqual([
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'shop-config',
        namespace: appNs,
        health: 'Current',
      },
      { apiVersion: 'v1', kind: 'Service', name: 'shop', namespace: appNs, health: 'Current' },
    ]);
    expect(status.trackedGVKs).toEqual(['/v1/ConfigMap', '/v1/Service']);
    expect(status.resolvedParameters).toEqual([
      { name: 'image', value: 'nginx:1.27' },
      { name: 'replicas' },
    ]);
    expect(status.resolvedTemplateRef).toEqual({ name: 'web', namespace: tplNs, generation: 1 });
    expect(status.observedGeneration).toBe(created.metadata.generation);
  });

  it('delivers a NetworkPolicy ingress `from` and a CRD `enum`/`default` exactly as rendered', async () => {
    const group = `${tplNs}.example.com`;
    const crd = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.${group}}
spec:
  group: ${group}
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              x-kubernetes-preserve-unknown-fields: true
              properties:
                size: {type: string, enum: [small, large], default: small}
`;
    const policy = `---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: only-frontend}
spec:
  podSelector: {matchLabels: {app: db}}
  policyTypes: [Ingress]
  ingress:
    - from:
        - podSelector: {matchLabels: {app: frontend}}
`;
    await user.apply(
      template(tplNs, 'faithful', {
        ...common,
        handlebars: `${policy}${crd}`,
        allowClusterScopedResources: true,
      }),
    );
    await user.apply(instance(appNs, 'faithful', { name: 'faithful', namespace: tplNs }));
    await untilCondition('faithful', 'Ready', 'Reconciled');
    const live = (await get(
      'NetworkPolicy',
      'only-frontend',
      appNs,
      'networking.k8s.io/v1',
    )) as unknown;
    expect((live as { spec: unknown }).spec).toMatchObject({
      ingress: [{ from: [{ podSelector: { matchLabels: { app: 'frontend' } } }] }],
    });
    const liveCrd = (await user.get({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name: `gadgets.${group}`,
    })) as unknown as {
      spec: {
        versions: {
          schema: { openAPIV3Schema: { properties: { spec: Record<string, unknown> } } };
        }[];
      };
    };
    const spec = liveCrd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec;
    expect(spec).toMatchObject({
      'x-kubernetes-preserve-unknown-fields': true,
      properties: { size: { type: 'string', enum: ['small', 'large'], default: 'small' } },
    });
  });

  it('updates resources when a parameter changes, and prunes what the Template stops rendering', async () => {
    await user.apply(
      instance(appNs, 'shop', { name: 'web', namespace: tplNs }, [
        { name: 'image', value: 'nginx:1.28' },
      ]),
    );
    await eventually(
      async () => (await configData('shop-config'))?.image === 'nginx:1.28',
      'the new image',
    );
    await user.apply(
      template(tplNs, 'web', {
        ...common,
        handlebars: configMapDoc('{{instance.name}}-config', '  image: {{parameters.image}}'),
        parameters: [
          { name: 'image', exposeInStatus: true },
          { name: 'replicas', type: 'number', value: 2 },
        ],
      }),
    );
    await eventually(
      async () => (await get('Service', 'shop')) === undefined,
      'the orphaned Service to be deleted',
    );
    // Ready was already True before the change: wait for the status that reflects the prune.
    await eventually(async () => {
      const status = await instanceStatus('shop');
      return (
        condition(status, 'Ready')?.status === 'True' &&
        isDeepStrictEqual(status?.renderedResources, [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            name: 'shop-config',
            namespace: appNs,
            health: 'Current',
          },
        ])
      );
    }, 'renderedResources without the pruned Service');
  });

  it('applies nothing when the API server rejects one rendered object, and converges once fixed', async () => {
    // A port out of range: the schema (an int32) lets it through, the server's validation does not.
    const broken = `${configMapDoc('{{instance.name}}-config', '  image: broken-{{parameters.image}}')}---\napiVersion: v1\nkind: Service\nmetadata:\n  name: {{instance.name}}\nspec:\n  ports: [{port: 70000}]\n`;
    await user.apply(
      template(tplNs, 'web', {
        ...common,
        handlebars: broken,
        parameters: [{ name: 'image', exposeInStatus: true }],
      }),
    );
    const status = await untilCondition('shop', 'Applied', 'ApplyFailed');
    expect(condition(status, 'Applied')?.message).toMatch(
      /Service .*\/shop rejected by the API server \(dry run\)/,
    );
    expect(condition(status, 'Ready')).toMatchObject({ status: 'False', reason: 'ApplyFailed' });
    expect(await configData('shop-config')).toEqual({ image: 'nginx:1.28' });
    expect(await get('Service', 'shop')).toBeUndefined();

    await user.apply(
      template(tplNs, 'web', {
        ...common,
        handlebars: broken.replace('70000', '80'),
        parameters: [{ name: 'image', exposeInStatus: true }],
      }),
    );
    await untilCondition('shop', 'Ready', 'Reconciled');
    expect(await configData('shop-config')).toEqual({ image: 'broken-nginx:1.28' });
    expect(await get('Service', 'shop')).toBeDefined();
  });

  it('keeps an orphan whose delete is blocked as Failed and retries until it is gone', async () => {
    await user.apply(
      template(tplNs, 'hold', {
        ...common,
        handlebars: `${configMapDoc('keep', '  a: "1"')}${configMapDoc('held', '  b: "2"')}`,
      }),
    );
    await user.apply(instance(appNs, 'hold', { name: 'hold', namespace: tplNs }));
    await untilCondition('hold', 'Ready', 'Reconciled');
    const held = (await get('ConfigMap', 'held'))!;
    await user.setFinalizers(held, ['example.com/hold']);
    await user.apply(
      template(tplNs, 'hold', { ...common, handlebars: configMapDoc('keep', '  a: "1"') }),
    );
    const status = await eventually(async () => {
      const s = await instanceStatus('hold');
      return s?.renderedResources?.some((r) => r.name === 'held' && r.status === 'Failed') && s;
    }, 'the blocked orphan to be Failed');
    expect(condition(status, 'Applied')?.message).toContain(
      'could not be deleted yet and are retried',
    );
    const blocked = (await get('ConfigMap', 'held'))!;
    await user.setFinalizers(blocked, []);
    await eventually(async () => {
      const s = await instanceStatus('hold');
      return s?.renderedResources?.length === 1 && !(await get('ConfigMap', 'held'));
    }, 'the orphan to be cleaned up');
  });

  it('refuses a namespace the Template does not target, and converges when its labels start to match', async () => {
    await user.apply(
      template(tplNs, 'selective', {
        ...common,
        handlebars: configMapDoc('{{instance.name}}-selected', '  a: "1"'),
        targetNamespaces: { selector: { matchLabels: { tenant: 'yes' } } },
      }),
    );
    await user.apply(instance(otherNs, 'outsider', { name: 'selective', namespace: tplNs }));
    const status = await untilCondition(
      'outsider',
      'TargetNamespaceAllowed',
      'NamespaceNotPermitted',
      otherNs,
    );
    expect(condition(status, 'TargetNamespaceAllowed')?.message).toContain(
      `namespace "${otherNs}" may not instantiate Template ${tplNs}/selective`,
    );
    expect(await get('ConfigMap', 'outsider-selected', otherNs)).toBeUndefined();
    await user.apply({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: otherNs, labels: { tenant: 'yes' } },
    });
    await untilCondition('outsider', 'Ready', 'Reconciled', otherNs);
    expect(await get('ConfigMap', 'outsider-selected', otherNs)).toBeDefined();
  });

  it('does not adopt an existing object unless it carries the adopt annotation', async () => {
    await user.apply(configMap(appNs, 'taken', { owner: 'someone-else' }));
    await user.apply(
      template(tplNs, 'adopter', {
        ...common,
        handlebars: configMapDoc('taken', '  owner: stencil'),
      }),
    );
    await user.apply(instance(appNs, 'adopter', { name: 'adopter', namespace: tplNs }));
    const status = await untilCondition('adopter', 'Applied', 'ApplyFailed');
    expect(condition(status, 'Applied')?.message).toContain(
      `ConfigMap ${appNs}/taken already exists and is not managed by this instance`,
    );
    expect(await configData('taken')).toEqual({ owner: 'someone-else' });
    await user.apply(
      configMap(
        appNs,
        'taken',
        { owner: 'someone-else' },
        { annotations: { 'stencil.dev/adopt': `${appNs}/adopter` } },
      ),
    );
    await untilCondition('adopter', 'Ready', 'Reconciled');
    expect(await configData('taken')).toEqual({ owner: 'stencil' });
  });

  it('deletes every owned resource with the instance, even when status.renderedResources was wiped', async () => {
    await user.apply(
      template(tplNs, 'gone', {
        ...common,
        handlebars: `${configMapDoc('gone-a', '  a: "1"')}${configMapDoc('gone-b', '  b: "1"')}`,
      }),
    );
    await user.apply(instance(appNs, 'gone', { name: 'gone', namespace: tplNs }));
    await untilCondition('gone', 'Ready', 'Reconciled');
    // Status writes are conditional on the resourceVersion: write from a fresh read, again if
    // the operator wrote in between (a later pass may still be writing its status).
    await eventually(async () => {
      const current = await user.get({
        apiVersion: API_VERSION,
        kind: 'TemplateInstance',
        name: 'gone',
        namespace: appNs,
      });
      try {
        await user.patchStatus(current!, { renderedResources: [] });
        return true;
      } catch (error) {
        if (isClusterError(error, 'Conflict')) return false;
        throw error;
      }
    }, 'the status wiped by the test');
    await eventually(
      async () => (await instanceStatus('gone'))?.renderedResources?.length === 0,
      'the wiped status',
    );
    await user.delete({
      apiVersion: API_VERSION,
      kind: 'TemplateInstance',
      name: 'gone',
      namespace: appNs,
    });
    await eventually(
      async () => !(await get('ConfigMap', 'gone-a')) && !(await get('ConfigMap', 'gone-b')),
      'owned ConfigMaps to be deleted',
    );
    await eventually(
      async () =>
        !(await user.get({
          apiVersion: API_VERSION,
          kind: 'TemplateInstance',
          name: 'gone',
          namespace: appNs,
        })),
      'the instance to be gone',
    );
  });

  it('blocks deleting a referenced Template until its instances are gone', async () => {
    await user.apply(
      template(tplNs, 'shared', {
        ...common,
        handlebars: configMapDoc('{{instance.name}}-shared', '  a: "1"'),
      }),
    );
    await user.apply(instance(appNs, 'user-1', { name: 'shared', namespace: tplNs }));
    await user.apply(instance(appNs, 'user-2', { name: 'shared', namespace: tplNs }));
    await untilCondition('user-2', 'Ready', 'Reconciled');
    await user.delete({
      apiVersion: API_VERSION,
      kind: 'Template',
      name: 'shared',
      namespace: tplNs,
    });
    const blocked = await eventually(async () => {
      const t = (await user.get({
        apiVersion: API_VERSION,
        kind: 'Template',
        name: 'shared',
        namespace: tplNs,
      })) as { status?: TemplateStatus } | undefined;
      return condition(t?.status, 'Deleting')?.reason === 'DeletionBlocked' && t?.status;
    }, 'DeletionBlocked');
    expect(condition(blocked, 'Deleting')).toMatchObject({
      status: 'False',
      message: 'referenced by 2 TemplateInstance(s)',
    });
    await user.delete({
      apiVersion: API_VERSION,
      kind: 'TemplateInstance',
      name: 'user-1',
      namespace: appNs,
    });
    await eventually(async () => {
      const t = (await user.get({
        apiVersion: API_VERSION,
        kind: 'Template',
        name: 'shared',
        namespace: tplNs,
      })) as { status?: TemplateStatus } | undefined;
      return condition(t?.status, 'Deleting')?.message === 'referenced by 1 TemplateInstance(s)';
    }, 'the count to drop');
    await user.delete({
      apiVersion: API_VERSION,
      kind: 'TemplateInstance',
      name: 'user-2',
      namespace: appNs,
    });
    await eventually(
      async () =>
        !(await user.get({
          apiVersion: API_VERSION,
          kind: 'Template',
          name: 'shared',
          namespace: tplNs,
        })),
      'the Template to be deleted',
    );
  });
});

describe('a Template', () => {
  async function templateStatus(name: string): Promise<TemplateStatus | undefined> {
    return (
      (await user.get({ apiVersion: API_VERSION, kind: 'Template', name, namespace: tplNs })) as
        { status?: TemplateStatus } | undefined
    )?.status;
  }

  it('is Valid with a dry-run render when every parameter has a literal default, and holds its finalizer', async () => {
    await user.apply(
      template(tplNs, 'checked', {
        ...common,
        handlebars: configMapDoc('{{instance.name}}', '  a: {{parameters.a}}'),
        parameters: [{ name: 'a', value: 'x' }],
      }),
    );
    const status = await eventually(async () => {
      const s = await templateStatus('checked');
      return s?.phase === 'Valid' && s;
    }, 'a Valid Template');
    expect(status.conditions?.map((c) => `${c.type}=${c.status}:${c.reason}`)).toEqual([
      'Valid=True:ValidationSucceeded',
      'DryRunRendered=True:RenderSucceeded',
    ]);
    const live = await user.get({
      apiVersion: API_VERSION,
      kind: 'Template',
      name: 'checked',
      namespace: tplNs,
    });
    expect(live?.metadata.finalizers).toContain('stencil.dev/template');
  });

  it('is Invalid with the line and column of a reference to an undeclared parameter', async () => {
    await user.apply(
      template(tplNs, 'typo', {
        ...common,
        handlebars: configMapDoc('{{instance.name}}', '  a: {{parameters.colour}}'),
        parameters: [{ name: 'color', value: 'x' }],
      }),
    );
    const status = await eventually(async () => {
      const s = await templateStatus('typo');
      return s?.phase === 'Invalid' && s;
    }, 'an Invalid Template');
    expect(status.conditions).toEqual([
      expect.objectContaining({
        type: 'Valid',
        status: 'False',
        reason: 'ValidationFailed',
        message: expect.stringContaining(
          'line 7, column 8: reference to undeclared parameter "parameters.colour"',
        ),
      }),
    ]);
  });
});

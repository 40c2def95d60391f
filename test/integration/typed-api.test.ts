// Issue #27 on the real API server (ADR 0032): a Template with spec.api publishes its own kind.
// The CRD is generated from the parameters and Established; a WebApp is validated and defaulted
// at admission, rendered by the same engine as a TemplateInstance and reports the same status;
// a Secret rotation through spec.valueFrom re-renders it; compatible changes update the CRD and
// breaking ones are refused; deleting the Template waits for the last WebApp, then the CRD goes;
// a namespace without an allowance publishes nothing; the generated edit role is all a user
// needs to create WebApps, and it does not reach TemplateInstances; a kind may not take a name of
// Stencil's API or of anything the cluster serves; hand edits of the CRD and roles are put back.
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Condition } from '../../src/api/condition.ts';
import type { KubeObject } from '../../src/api/object-meta.ts';
import type { Template } from '../../src/api/template.ts';
import type { TemplateInstanceStatus } from '../../src/api/template-instance.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { parseApiAllowance } from '../../src/engine/typed-api/api-names.ts';
import { ensureKubectl } from '../../tools/control-plane/binaries.ts';
import { instance, secret, template } from './support/builders.ts';
import { asRejection, connect, freshNamespace, type TestCluster } from './support/cluster.ts';
import { conditionOf } from './support/instances.ts';
import {
  eventually,
  loopbackWebhook,
  rejectionOf,
  removeWebhookConfiguration,
  startOperator,
  userClient,
  type RunningOperator,
} from './support/operator.ts';

const GROUP = `apps-${Math.random().toString(16).slice(2, 8)}.example.com`;
const CRD_NAME = `webapps.${GROUP}`;
const STRICT_CONFIGURATION = `stencil-strict-typed-${process.pid}`;
const API = { group: GROUP, version: 'v1', kind: 'WebApp', shortNames: ['wa'] };

let platform: string;
let team: string;
let elsewhere: string;
let tester: KubeCluster;
let cluster: TestCluster;
let running: RunningOperator;

const HANDLEBARS = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}
data:
  image: "{{parameters.image}}"
  replicas: "{{parameters.replicas}}"
  password: "{{parameters.password}}"
`;

const PARAMETERS = [
  { name: 'image', type: 'string', required: true, description: 'The container image to run.' },
  { name: 'replicas', type: 'number', value: 2, minimum: 1, maximum: 10, description: 'Pods.' },
  { name: 'password', type: 'string', value: 'none' },
];

/** The parameters once the Template gained `debug` (its CRD change test), as they stay. */
const PARAMETERS_NOW = [...PARAMETERS, { name: 'debug', type: 'bool', value: false }];

/** What these tests read of a CRD's spec. */
interface CrdSpec {
  names: { shortNames?: string[] };
  versions: { schema: { openAPIV3Schema: Record<string, unknown> } }[];
}

function webAppTemplate(
  namespace: string,
  name: string,
  parameters: unknown[] = PARAMETERS,
  api: Record<string, unknown> = API,
): KubeObject {
  return template(namespace, name, {
    api,
    parameters,
    sync: { mode: 'revert' },
    targetNamespaces: { explicit: { allow: { literal: [team] } } },
    handlebars: HANDLEBARS,
  });
}

function webApp(name: string, spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'WebApp',
    metadata: { name, namespace: team },
    spec,
  };
}

async function getWebApp(
  name: string,
): Promise<
  (KubeObject & { spec: Record<string, unknown>; status?: TemplateInstanceStatus }) | undefined
> {
  return (await tester.get({
    apiVersion: `${GROUP}/v1`,
    kind: 'WebApp',
    namespace: team,
    name,
  })) as
    (KubeObject & { spec: Record<string, unknown>; status?: TemplateInstanceStatus }) | undefined;
}

async function crd(): Promise<KubeObject | undefined> {
  return tester.get({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    name: CRD_NAME,
  });
}

async function templateOf(namespace: string, name: string): Promise<Template | undefined> {
  return (await tester.get({ apiVersion: API_VERSION, kind: 'Template', namespace, name })) as
    Template | undefined;
}

async function configMapData(name: string): Promise<Record<string, string> | undefined> {
  const object = await tester.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: team, name });
  return (object as { data?: Record<string, string> } | undefined)?.data;
}

const specOf = (object: KubeObject | undefined): Record<string, unknown> =>
  (
    (
      object?.spec as {
        versions?: { schema?: { openAPIV3Schema?: { properties?: Record<string, unknown> } } }[];
      }
    )?.versions?.[0]?.schema?.openAPIV3Schema?.properties?.spec as {
      properties?: Record<string, unknown>;
    }
  )?.properties ?? {};

beforeAll(async () => {
  cluster = connect();
  platform = await freshNamespace(cluster, 'typed-platform');
  team = await freshNamespace(cluster, 'typed-team');
  elsewhere = await freshNamespace(cluster, 'typed-elsewhere');
  tester = (await userClient()).cluster;
  const allowance = parseApiAllowance(
    `${platform}=${GROUP},many-${GROUP},strict-${GROUP},shadow-${GROUP}`,
  );
  if (!allowance.ok) throw new Error('allowance');
  running = await startOperator([platform, team, elsewhere], inject('kubeconfig'), {
    apiGroups: allowance.value,
    webhook: loopbackWebhook(platform, STRICT_CONFIGURATION),
  });
}, 60_000);

afterAll(async () => {
  await removeWebhookConfiguration(tester, STRICT_CONFIGURATION);
  if (process.env.DEBUG_TYPED)
    console.log(
      running.logs
        .filter((l) => /template|error|warn/i.test(l))
        .slice(0, 40)
        .join(''),
    );
  await running?.stop();
});

describe('a Template that publishes a kind', () => {
  it('makes an Established CRD whose schema carries the parameters, and kubectl explain shows them', async () => {
    await tester.apply(webAppTemplate(platform, 'web-app'));
    const published = await eventually(async () => {
      const t = await templateOf(platform, 'web-app');
      return conditionOf(t?.status, 'APIPublished')?.status === 'True' && t;
    }, 'the Template publishes WebApp');
    expect(conditionOf(published.status, 'Valid')?.status).toBe('True');
    const fields = specOf(await crd());
    expect(Object.keys(fields).sort()).toEqual([
      'image',
      'password',
      'replicas',
      'templateRevision',
      'ttl',
      'valueFrom',
    ]);
    // kubectl explain reads the group version's published OpenAPI v3 document, which may lag.
    const kubectl = await ensureKubectl(() => undefined);
    const explained = await eventually(async () => {
      const { stdout } = await run(kubectl, [
        'explain',
        'webapp.spec',
        `--api-version=${GROUP}/v1`,
      ]);
      return stdout.includes('The container image to run.') && stdout;
    }, 'kubectl explain webapp.spec');
    expect(explained).toMatch(/replicas\s+<number>/);
    expect(explained).toContain('Pods.');
  });

  it('renders a WebApp as it renders a TemplateInstance, with the same status', async () => {
    await tester.apply(webApp('shop', { image: 'nginx:1.27' }));
    const ready = await eventually(async () => {
      const w = await getWebApp('shop');
      return w?.status?.phase === 'Ready' && w;
    }, 'WebApp shop Ready');
    // Defaulted at admission, as the CRD says.
    expect(ready.spec.replicas).toBe(2);
    expect(await configMapData('shop')).toEqual({
      image: 'nginx:1.27',
      replicas: '2',
      password: 'none',
    });
    // The same status as a TemplateInstance of the same Template and values.
    await tester.apply(
      instance(team, 'shop-ti', { name: 'web-app', namespace: platform }, [
        { name: 'image', value: 'nginx:1.27' },
      ]),
    );
    const ti = await eventually(async () => {
      const object = await tester.get({
        apiVersion: API_VERSION,
        kind: 'TemplateInstance',
        namespace: team,
        name: 'shop-ti',
      });
      const status = (object as { status?: TemplateInstanceStatus } | undefined)?.status;
      return status?.phase === 'Ready' && status;
    }, 'TemplateInstance shop-ti Ready');
    expect(Object.keys(ready.status!).sort()).toEqual(Object.keys(ti).sort());
    expect(ready.status!.conditions!.map((c) => `${c.type}=${c.status}`)).toEqual(
      ti.conditions!.map((c) => `${c.type}=${c.status}`),
    );
    expect(ready.status!.resolvedTemplateRef).toMatchObject({
      name: 'web-app',
      namespace: platform,
    });
    expect(ready.status!.renderedResources).toEqual([
      expect.objectContaining({ kind: 'ConfigMap', name: 'shop', namespace: team }),
    ]);
  });

  it('refuses a wrong type or an unknown field at admission', async () => {
    const wrongType = await tester
      .apply(webApp('bad', { image: 'x', replicas: 'three' }))
      .catch((e: unknown) => e);
    expect(String(wrongType)).toMatch(/spec.replicas/);
    const tooMany = await tester
      .apply(webApp('bad', { image: 'x', replicas: 11 }))
      .catch((e: unknown) => e);
    expect(String(tooMany)).toMatch(/spec.replicas/);
    const missing = await tester.apply(webApp('bad', { replicas: 3 })).catch((e: unknown) => e);
    expect(String(missing)).toMatch(/spec.image or spec.valueFrom.image is required/);
    const unknown = await cluster.custom
      .createNamespacedCustomObject({
        group: GROUP,
        version: 'v1',
        namespace: team,
        plural: 'webapps',
        body: webApp('bad', { image: 'x', colour: 'blue' }),
        fieldValidation: 'Strict',
      })
      .catch((e: unknown) => asRejection(e));
    // Strict decoding refuses it before validation: 400, naming the field.
    expect(unknown).toMatchObject({ status: 400 });
    expect(JSON.stringify(unknown)).toContain('colour');
    expect(await getWebApp('bad')).toBeUndefined();
  });

  it('re-renders a WebApp when the Secret of its spec.valueFrom rotates', async () => {
    await tester.apply(secret(team, 'db', { password: 'first' }));
    await tester.apply(
      webApp('vault', {
        image: 'nginx',
        valueFrom: { password: { secretKeyRef: { name: 'db', key: 'password' } } },
      }),
    );
    await eventually(
      async () => (await configMapData('vault'))?.password === 'first',
      'first password',
    );
    await tester.apply(secret(team, 'db', { password: 'second' }));
    await eventually(
      async () => (await configMapData('vault'))?.password === 'second',
      'rotated password',
    );
    const status = (await getWebApp('vault'))?.status;
    expect(JSON.stringify(status)).not.toContain('second');
  });

  it('updates the CRD for a new optional parameter, and refuses to remove one without the annotation', async () => {
    await tester.apply(
      webAppTemplate(platform, 'web-app', [
        ...PARAMETERS,
        { name: 'debug', type: 'bool', value: false },
      ]),
    );
    await eventually(async () => 'debug' in specOf(await crd()), 'the CRD has spec.debug');
    await eventually(
      async () => (await getWebApp('shop'))?.status?.phase === 'Ready',
      'shop still Ready',
    );
    await tester.apply(webAppTemplate(platform, 'web-app', PARAMETERS));
    const refused = await eventually(async () => {
      const t = await templateOf(platform, 'web-app');
      const valid = conditionOf(t?.status, 'Valid');
      return valid?.reason === 'APIChangeRefused' && valid;
    }, 'the removal refused');
    expect(refused.message).toContain('spec.debug removed');
    expect(refused.message).toContain('stencil.dev/allow-breaking-api-changes=true');
    const published = conditionOf((await templateOf(platform, 'web-app'))?.status, 'APIPublished');
    expect(published).toMatchObject({ status: 'True' });
    expect(published?.message).toContain('still served as before this change');
    expect('debug' in specOf(await crd())).toBe(true);
    expect((await getWebApp('shop'))?.status?.phase).toBe('Ready');
    // Back to a compatible spec for what follows.
    await tester.apply(
      webAppTemplate(platform, 'web-app', [
        ...PARAMETERS,
        { name: 'debug', type: 'bool', value: false },
      ]),
    );
    await eventually(
      async () =>
        conditionOf((await templateOf(platform, 'web-app'))?.status, 'Valid')?.status === 'True',
      'valid again',
    );
  });

  it('publishes a kind of 256 parameters, the most a Template declares', async () => {
    const group = `many-${GROUP}`;
    const many = Array.from({ length: 256 }, (_, i) => ({
      name: `p${i}`,
      type: i % 2 === 0 ? 'string' : 'number',
      value: i % 2 === 0 ? 'x' : i,
      description: `Setting ${i}.`,
    }));
    await tester.apply(
      template(platform, 'many', {
        api: { group, version: 'v1', kind: 'Many' },
        parameters: many,
        handlebars: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}\n',
      }),
    );
    const published = await eventually(async () => {
      const condition = conditionOf((await templateOf(platform, 'many'))?.status, 'APIPublished');
      return condition?.status === 'True' && condition;
    }, 'a kind of 256 fields published');
    expect(published.reason).toBe('APIEstablished');
    await tester.delete({
      apiVersion: API_VERSION,
      kind: 'Template',
      namespace: platform,
      name: 'many',
    });
    await eventually(
      async () =>
        !(await tester.get({
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          name: `manys.${group}`,
        })),
      'its CRD removed with it',
    );
  });

  it('keeps what a typed instance renders under strict mode, naming the WebApp', async () => {
    const group = `strict-${GROUP}`;
    await tester.apply(
      template(platform, 'locked', {
        api: { group, version: 'v1', kind: 'Locked' },
        sync: { mode: 'strict' },
        targetNamespaces: { explicit: { allow: { literal: [team] } } },
        handlebars:
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}-locked\ndata:\n  a: b\n',
      }),
    );
    await eventually(async () => {
      await tester.apply({
        apiVersion: `${group}/v1`,
        kind: 'Locked',
        metadata: { name: 'vault', namespace: team },
        spec: {},
      });
      return true;
    }, 'a Locked created');
    await eventually(
      async () => (await configMapData('vault-locked'))?.a === 'b',
      'the strict ConfigMap',
    );
    const message = await rejectionOf(
      tester.apply({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'vault-locked', namespace: team },
        data: { a: 'changed' },
      }),
    );
    expect(message).toContain(
      `ConfigMap ${team}/vault-locked is managed by Locked ${team}/vault (sync mode strict)`,
    );
    expect((await configMapData('vault-locked'))?.a).toBe('b');
    await tester.delete({
      apiVersion: `${group}/v1`,
      kind: 'Locked',
      namespace: team,
      name: 'vault',
    });
    await eventually(
      async () => !(await configMapData('vault-locked')),
      'cleaned up with its owner',
    );
    await tester.delete({
      apiVersion: API_VERSION,
      kind: 'Template',
      namespace: platform,
      name: 'locked',
    });
  });

  it("deletes a deleted Template's CRD even when the kind was never watched", async () => {
    // A CRD this Template applied that never became watched (not Established before a restart,
    // say): here, one without the label the operator watches by.
    const group = `ghost-${GROUP}`;
    await tester.apply({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: {
        name: `ghosts.${group}`,
        annotations: { 'stencil.dev/template': `${platform}/ghost` },
      },
      spec: {
        group,
        names: { kind: 'Ghost', plural: 'ghosts', singular: 'ghost', listKind: 'GhostList' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        ],
      },
    });
    await tester.apply(
      template(platform, 'ghost', {
        api: { group, version: 'v1', kind: 'Ghost' },
        handlebars: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}\n',
      }),
    );
    await eventually(
      async () =>
        (await templateOf(platform, 'ghost'))?.metadata.finalizers?.includes(
          'stencil.dev/template',
        ),
      'the Template held by its finalizer',
    );
    await tester.delete({
      apiVersion: API_VERSION,
      kind: 'Template',
      namespace: platform,
      name: 'ghost',
    });
    await eventually(
      async () =>
        !(await tester.get({
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          name: `ghosts.${group}`,
        })),
      'its CRD deleted with it',
    );
  });

  it('refuses a kind named TemplateInstance, or with short name po, and creates no CRD', async () => {
    const group = `shadow-${GROUP}`;
    const refusal = async (name: string, api: Record<string, unknown>): Promise<Condition> => {
      await tester.apply(
        template(platform, name, {
          api: { group, version: 'v1', ...api },
          handlebars: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}\n',
        }),
      );
      return eventually(async () => {
        const valid = conditionOf((await templateOf(platform, name))?.status, 'Valid');
        return valid?.status === 'False' && valid;
      }, `Template ${name} refused`);
    };
    const instances = await refusal('shadow-ti', { kind: 'TemplateInstance' });
    expect(instances.reason).toBe('APIShadowsResource');
    expect(instances.message).toContain(
      'spec.api.kind: the kind TemplateInstance is already taken by templateinstances.stencil.dev',
    );
    expect(instances.message).toContain('spec.api.plural: the plural templateinstances');
    const pods = await refusal('shadow-po', { kind: 'Pocket', shortNames: ['pk', 'po'] });
    expect(pods.reason).toBe('APIShadowsResource');
    expect(pods.message).toBe(
      'spec.api.shortNames[1]: the short name po is already taken by pods (Pod) as its short ' +
        'name; kubectl resolves names across groups, so "kubectl get po" could reach the new ' +
        'kind instead: choose another',
    );
    for (const plural of ['templateinstances', 'pockets'])
      expect(
        await tester.get({
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          name: `${plural}.${group}`,
        }),
      ).toBeUndefined();
    // kubectl still reaches what it reached.
    const kubectl = await ensureKubectl(() => undefined);
    const { stdout } = await run(kubectl, ['api-resources', '--api-group=stencil.dev']);
    expect(stdout).toMatch(/templateinstances\s+tpli\s+stencil.dev/);
    // A published kind that asks for a served name keeps its CRD exactly as it was.
    const before = await crd();
    await tester.apply(
      webAppTemplate(platform, 'web-app', PARAMETERS_NOW, { ...API, shortNames: ['wa', 'cm'] }),
    );
    const refused = await eventually(async () => {
      const valid = conditionOf((await templateOf(platform, 'web-app'))?.status, 'Valid');
      return valid?.reason === 'APIShadowsResource' && valid;
    }, 'the short name cm refused');
    expect(refused.message).toContain('spec.api.shortNames[1]: the short name cm');
    expect((await crd())?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
    await tester.apply(webAppTemplate(platform, 'web-app', PARAMETERS_NOW));
    await eventually(
      async () =>
        conditionOf((await templateOf(platform, 'web-app'))?.status, 'Valid')?.status === 'True',
      'valid again',
    );
    for (const name of ['shadow-ti', 'shadow-po'])
      await tester.delete({ apiVersion: API_VERSION, kind: 'Template', namespace: platform, name });
  });

  it('keeps a name its kind already serves when a resource installed later takes it too', async () => {
    const group = `tools-${GROUP}`;
    const widgets = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name: `widgets.${group}`,
    };
    await tester.apply({
      apiVersion: widgets.apiVersion,
      kind: widgets.kind,
      metadata: { name: widgets.name },
      spec: {
        group,
        names: { kind: 'Widget', plural: 'widgets', singular: 'widget', shortNames: ['wa'] },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object' } },
          },
        ],
      },
    });
    const noted = await eventually(
      async () => {
        // Nothing about another CRD brings the Template back: a change of its own does, once
        // discovery (kept a few seconds) lists the Widgets.
        await new Promise((r) => setTimeout(r, 1_000));
        const live = await templateOf(platform, 'web-app');
        await tester.patchMetadata(live!, { labels: { probe: String(Date.now()) } });
        const published = conditionOf(
          (await templateOf(platform, 'web-app'))?.status,
          'APIPublished',
        );
        return published?.message.includes(`widgets.${group}`) && published;
      },
      'the shared short name noted',
      20_000,
    );
    expect(noted.status).toBe('True');
    expect(noted.message).toContain(
      `the short name wa is also taken by widgets.${group} (Widget) as its short name`,
    );
    const valid = conditionOf((await templateOf(platform, 'web-app'))?.status, 'Valid');
    expect(valid?.status).toBe('True');
    await tester.delete(widgets);
  });

  it('puts back a hand edit of the generated CRD within seconds', async () => {
    const live = (await crd()) as KubeObject & { spec: CrdSpec };
    const versions = structuredClone(live.spec.versions);
    versions[0]!.schema.openAPIV3Schema['x-kubernetes-preserve-unknown-fields'] = true;
    const started = Date.now();
    // As `kubectl edit` would: an update, by another field manager.
    await tester.patchSpec(live, {
      versions,
      names: { shortNames: ['wa', 'webby'] },
    });
    const edited = (await crd()) as KubeObject & { spec: CrdSpec };
    expect(edited.spec.names.shortNames).toEqual(['wa', 'webby']);
    const restored = await eventually(
      async () => {
        const now = (await crd()) as (KubeObject & { spec: CrdSpec }) | undefined;
        const root = now?.spec.versions[0]?.schema.openAPIV3Schema;
        return (
          root &&
          !('x-kubernetes-preserve-unknown-fields' in root) &&
          JSON.stringify(now.spec.names.shortNames) === '["wa"]' &&
          now
        );
      },
      'the CRD as generated again',
      10_000,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(restored.spec.versions).toEqual(live.spec.versions);
    // An unknown field is pruned again, not kept.
    await tester.apply(webApp('pruned', { image: 'nginx' }));
    // (Conditional on the version read: the operator writes the WebApp's finalizer meanwhile.)
    const pruned = await eventually(
      async () => tester.patchSpec((await getWebApp('pruned'))!, { colour: 'blue' }),
      'a field the kind does not have, sent',
    );
    expect((pruned.spec as Record<string, unknown>).colour).toBeUndefined();
    await tester.delete({
      apiVersion: `${GROUP}/v1`,
      kind: 'WebApp',
      namespace: team,
      name: 'pruned',
    });
    await eventually(async () => !(await getWebApp('pruned')), 'WebApp pruned deleted');
    // Settled: the passes the edit and the repair caused write nothing more.
    const settled = (await crd())?.metadata.resourceVersion;
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await crd())?.metadata.resourceVersion).toBe(settled);
  });

  it('puts back a hand edit of the generated ClusterRoles within seconds', async () => {
    const name = (role: string): string => `stencil:api:${CRD_NAME}:${role}`;
    const role = (role: string): Promise<KubeObject | undefined> =>
      tester.get({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        name: name(role),
      });
    const generated = { edit: await role('edit'), view: await role('view') };
    const everything = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];
    const started = Date.now();
    // The view role: every right, and folded into the edit role of every namespace.
    const labelled = await tester.patchMetadata(generated.view!, {
      labels: { 'rbac.authorization.k8s.io/aggregate-to-edit': 'true' },
    });
    expect(labelled.metadata.labels?.['rbac.authorization.k8s.io/aggregate-to-edit']).toBe('true');
    const widened = await tester.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: name('view') },
      rules: everything,
    });
    expect(widened.rules).toEqual(everything);
    // The edit role: its rules handed to the aggregation controller.
    const aggregated = await tester.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: name('edit') },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'hand-made': 'true' } }] },
    });
    expect(aggregated.aggregationRule).toBeDefined();
    const restored: Record<string, KubeObject> = {};
    for (const which of ['view', 'edit'] as const) {
      restored[which] = await eventually(
        async () => {
          const now = await role(which);
          return (
            now &&
            JSON.stringify(now.rules) === JSON.stringify(generated[which]?.rules) &&
            !('aggregationRule' in now) &&
            !now.metadata.labels?.['rbac.authorization.k8s.io/aggregate-to-edit'] &&
            now
          );
        },
        `the ${which} role as generated again`,
        10_000,
      );
      expect(restored[which].metadata.labels?.['app.kubernetes.io/managed-by']).toBe('stencil');
    }
    expect(Date.now() - started).toBeLessThan(10_000);
    // Server-side apply cannot take an aggregationRule from the manager that set it: the role was
    // replaced. The view role was applied over, and patched.
    expect(restored.edit!.metadata.uid).not.toBe(generated.edit!.metadata.uid);
    expect(restored.view!.metadata.uid).toBe(generated.view!.metadata.uid);
  });

  it('publishes nothing for a namespace without an allowance for the group', async () => {
    const group = `other-${GROUP}`;
    await tester.apply(webAppTemplate(elsewhere, 'web-app', PARAMETERS, { ...API, group }));
    const valid = await eventually(async () => {
      const v = conditionOf((await templateOf(elsewhere, 'web-app'))?.status, 'Valid');
      return v?.status === 'False' && v;
    }, 'Valid=False for the group');
    expect(valid.reason).toBe('APIGroupNotAllowed');
    expect(valid.message).toContain(
      `the group ${group} is not allowed for Templates in namespace ${elsewhere}`,
    );
    expect(
      await tester.get({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name: `webapps.${group}`,
      }),
    ).toBeUndefined();
  });

  it('lets a user with only the generated edit role create WebApps, and not TemplateInstances', async () => {
    const ordinary = (await userClient(inject('ordinaryKubeconfig'))).cluster;
    await tester.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'webapp-editor', namespace: team },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: `stencil:api:${CRD_NAME}:edit`,
      },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'ordinary' }],
    });
    await eventually(
      async () =>
        await ordinary
          .apply(webApp('by-ordinary', { image: 'nginx' }))
          .then(() => true)
          .catch(() => false),
      'ordinary creates a WebApp',
    );
    const ti = await ordinary
      .apply(
        instance(team, 'by-ordinary-ti', { name: 'web-app', namespace: platform }, [
          { name: 'image', value: 'x' },
        ]),
      )
      .catch((e: unknown) => e);
    expect(String(ti)).toMatch(/forbidden/i);
    await eventually(
      async () => (await getWebApp('by-ordinary'))?.status?.phase === 'Ready',
      'its WebApp Ready',
    );
  });

  it('holds the Template while a WebApp exists, then removes the CRD with the Template', async () => {
    await tester.delete({
      apiVersion: API_VERSION,
      kind: 'TemplateInstance',
      namespace: team,
      name: 'shop-ti',
    });
    await tester.delete({
      apiVersion: API_VERSION,
      kind: 'Template',
      namespace: platform,
      name: 'web-app',
    });
    const blocked = await eventually(async () => {
      const deleting = conditionOf((await templateOf(platform, 'web-app'))?.status, 'Deleting');
      return deleting?.reason === 'DeletionBlocked' && deleting;
    }, 'deletion blocked');
    expect(blocked.message).toBe('referenced by 3 WebApp(s)');
    expect(await crd()).toBeDefined();
    for (const name of ['shop', 'vault', 'by-ordinary'])
      await tester.delete({ apiVersion: `${GROUP}/v1`, kind: 'WebApp', namespace: team, name });
    await eventually(
      async () => !(await templateOf(platform, 'web-app')),
      'the Template gone',
      60_000,
    );
    await eventually(async () => !(await crd()), 'the CRD gone', 60_000);
    // Its informers stopped with it, without a restart.
    await eventually(
      async () =>
        running.logs.some(
          (l) => l.includes('stopped watching a published kind') && l.includes(`WebApp.${GROUP}`),
        ),
      'the kind no longer watched',
    );
    // What the WebApps rendered went with them.
    expect(await configMapData('shop')).toBeUndefined();
  });
});

/** Runs a command as the tester; stdout and stderr as text, whatever the exit code. */
async function run(command: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { env: { ...process.env, KUBECONFIG: inject('userKubeconfig') } },
      (_error, stdout, stderr) => resolve({ stdout, stderr }),
    );
  });
}

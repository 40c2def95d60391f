// How things end, on a plane with real controllers (namespace controller, garbage collector,
// Deployment controller, kwok) and Stencil installed by its Helm chart: deleting a namespace that
// holds instances of every sync mode, a TemplateInstanceSet, a Template still in use; the
// operator being down while its strict webhook stays registered; and uninstalling in the order
// docs/installation.md gives. The operator runs in this process (a kwok pod runs no container),
// as the chart runs it: the release owns the webhook configuration, and the operator
// (--webhook-configurations=install) sets only its caBundle.
import { isClusterError } from '../../src/reconcile/cluster-port.ts';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Condition } from '../../src/api/condition.ts';
import type { KubeObject } from '../../src/api/object-meta.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { STRICT_WEBHOOK_NAME } from '../../src/webhook/webhook-configuration.ts';
import { ensureHelm } from '../../tools/control-plane/binaries.ts';
import { startControlPlane, type ControlPlane } from '../../tools/control-plane/control-plane.ts';
import { countWebhookRejections, type MetricsEndpoint } from './support/apiserver-requests.ts';
import { instance, instanceSet, template } from './support/builders.ts';
import { conditionOf } from './support/instances.ts';
import {
  eventually,
  grantTemplateAccess,
  loopbackWebhook,
  rejectionOf,
  startOperator,
  userClient,
  type RunningOperator,
} from './support/operator.ts';

const root = join(import.meta.dirname, '..', '..');
const RELEASE = 'stencil';
const RELEASE_NAMESPACE = 'stencil-system';
const CONFIGURATION = 'stencil-strict';

let plane: ControlPlane;
let admin: KubeCluster;
let adminHttp: KubeHttp;
/** `tester`: a user the strict webhook judges (the operator runs as admin). */
let user: KubeCluster;
let helm: string;
let running: RunningOperator | undefined;
let metrics: MetricsEndpoint;

const suffix = randomBytes(3).toString('hex');
const platform = `platform-${suffix}`;
const MODES = ['revert', 'strict', 'off'] as const;

async function helmRun(args: string[]): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(
      helm,
      [...args, '--kubeconfig', plane.kubeconfigPath],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    return stdout;
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(`helm ${args.join(' ')} failed: ${stderr || message}`);
  }
}

/** A ConfigMap and a one-replica Deployment named after the instance. */
const BODY = `apiVersion: v1
kind: ConfigMap
metadata: { name: '{{instance.name}}' }
data: { owner: '{{instance.namespace}}' }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: '{{instance.name}}' }
spec:
  replicas: 1
  selector: { matchLabels: { app: '{{instance.name}}' } }
  template:
    metadata: { labels: { app: '{{instance.name}}' } }
    spec: { containers: [{ name: app, image: registry.invalid/app:1 }] }
`;

/** The Template of each sync mode, in the platform namespace, open to every namespace. */
function modeTemplate(mode: (typeof MODES)[number]): KubeObject {
  return template(platform, `app-${mode}`, {
    sync: { mode },
    handlebars: BODY,
    targetNamespaces: { explicit: { allow: { literal: ['*'] } } },
  });
}

const ref = (mode: (typeof MODES)[number]): { name: string; namespace: string } => ({
  name: `app-${mode}`,
  namespace: platform,
});

type Id = { apiVersion: string; kind: string; name: string; namespace?: string };
const instanceId = (namespace: string, name: string): Id => ({
  apiVersion: API_VERSION,
  kind: 'TemplateInstance',
  namespace,
  name,
});
const rendered = (namespace: string, name: string): Id[] => [
  { apiVersion: 'v1', kind: 'ConfigMap', namespace, name },
  { apiVersion: 'apps/v1', kind: 'Deployment', namespace, name },
];

async function phaseOf(id: Id): Promise<string | undefined> {
  const object = (await admin.get(id)) as { status?: { phase?: string } } | undefined;
  return object?.status?.phase;
}

async function allReady(ids: Id[], what: string, timeoutMs = 90_000): Promise<void> {
  await eventually(
    async () => (await Promise.all(ids.map(phaseOf))).every((p) => p === 'Ready'),
    what,
    timeoutMs,
  );
}

async function gone(id: Id, what: string, timeoutMs = 60_000): Promise<void> {
  await eventually(async () => (await admin.get(id)) === undefined, what, timeoutMs);
}

async function namespace(prefix: string): Promise<string> {
  const name = `${prefix}-${suffix}`;
  await admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  // Its Templates act as its default ServiceAccount, which may do anything anywhere here (they
  // render Namespaces and into other namespaces), as a platform admin would grant it.
  await grantTemplateAccess([name], 'cluster', plane.kubeconfigPath);
  return name;
}

/** The operator's log lines at `level` or above since `from` (an index into its logs). */
function complaints(from: number): string[] {
  return (running?.logs.slice(from) ?? []).filter((line) => /"level":"(warn|error)"/.test(line));
}

/** An in-process operator for every namespace, with the webhook the release's configuration calls. */
async function startStencil(): Promise<RunningOperator> {
  const operator = await startOperator([], plane.kubeconfigPath, {
    namespaces: undefined,
    resyncSeconds: 3600,
    webhook: loopbackWebhook(RELEASE_NAMESPACE, CONFIGURATION, { configurations: 'install' }),
  });
  // Helm's configuration calls the webhook Service, which cannot reach a process here: point it
  // at this process's port (a field Helm set, so Helm still removes the object on uninstall).
  const port = operator.operator.webhook!.port;
  await adminHttp.request({
    method: 'PATCH',
    path: `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${CONFIGURATION}`,
    contentType: 'application/json-patch+json',
    body: [
      {
        op: 'replace',
        path: '/webhooks/0/clientConfig',
        value: { url: `https://127.0.0.1:${port}/validate-strict` },
      },
    ],
  });
  await operator.operator.webhook!.refresh();
  return operator;
}

beforeAll(async () => {
  helm = await ensureHelm(() => undefined);
  plane = await startControlPlane({ controllers: true, log: () => undefined });
  metrics = { server: plane.server, kubeconfigPath: plane.kubeconfigPath };
  const adminClient = await userClient(plane.kubeconfigPath);
  admin = adminClient.cluster;
  adminHttp = adminClient.connection.http;
  user = (await userClient(plane.userKubeconfigPath)).cluster;
  // A new cluster, installed as docs/installation.md says: the chart brings the CRDs.
  await helmRun([
    'install',
    RELEASE,
    join(root, 'charts', 'stencil'),
    '--namespace',
    RELEASE_NAMESPACE,
    '--create-namespace',
  ]);
  await eventually(
    () => admin.scopeOf(API_VERSION, 'TemplateInstance'),
    'the CRDs the chart installed to be served',
  );
  running = await startStencil();
  await admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: platform } });
  await grantTemplateAccess([platform], 'cluster', plane.kubeconfigPath);
  for (const mode of MODES) await admin.apply(modeTemplate(mode));
}, 300_000);

afterAll(async () => {
  await running?.stop();
  adminHttp?.close();
  await plane?.stop();
}, 60_000);

describe('deleting a namespace that holds instances', () => {
  it('of all three sync modes finishes within a bound, leaves no finalizer, and touches nothing outside', async () => {
    const doomed = await namespace('doomed');
    const bystander = await namespace('bystander');
    // 20 in the doomed namespace (7 revert, 7 strict, 6 off), one of each mode beside it.
    const names = Array.from({ length: 20 }, (_, i) => ({ name: `app-${i}`, mode: MODES[i % 3]! }));
    for (const { name, mode } of names) await user.apply(instance(doomed, name, ref(mode)));
    for (const mode of MODES) await user.apply(instance(bystander, `keep-${mode}`, ref(mode)));
    await allReady(
      [
        ...names.map(({ name }) => instanceId(doomed, name)),
        ...MODES.map((mode) => instanceId(bystander, `keep-${mode}`)),
      ],
      'all 23 instances Ready (their Deployments Available through the controllers)',
      120_000,
    );
    const outside = [
      ...MODES.flatMap((mode) => [
        instanceId(bystander, `keep-${mode}`),
        ...rendered(bystander, `keep-${mode}`),
      ]),
      ...MODES.map((mode) => ({
        apiVersion: API_VERSION,
        kind: 'Template',
        namespace: platform,
        name: `app-${mode}`,
      })),
    ];
    // The same object (uid), with no change of its spec (generation; a ConfigMap has none, so its
    // resourceVersion). A Deployment's status moves with its controller and is not ours to pin.
    const versionOf = async (id: Id): Promise<string | undefined> => {
      const m = (await admin.get(id))?.metadata;
      return m && `${m.uid} ${m.generation ?? m.resourceVersion}`;
    };
    const renderedOutside = outside.filter(
      (id) => id.kind !== 'Template' && id.kind !== 'TemplateInstance',
    );
    const before = await Promise.all(renderedOutside.map(versionOf));
    const rejectedBefore = await countWebhookRejections(metrics, STRICT_WEBHOOK_NAME);
    const logsFrom = running!.logs.length;

    const started = Date.now();
    await admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: doomed });
    await gone(
      { apiVersion: 'v1', kind: 'Namespace', name: doomed },
      'the namespace to be gone',
      90_000,
    );
    const seconds = (Date.now() - started) / 1000;

    const rejections =
      (await countWebhookRejections(metrics, STRICT_WEBHOOK_NAME)) - rejectedBefore;
    const warnings = complaints(logsFrom);
    console.log(
      `namespace with 20 instances (7 revert, 7 strict, 6 off) deleted in ${seconds.toFixed(1)} s; ` +
        `webhook rejections ${rejections}, operator warnings and errors ${warnings.length}`,
    );
    for (const line of warnings.slice(0, 5)) console.log(`  ${line.trim().slice(0, 400)}`);
    // The namespace controller waits 5 s before it starts; then the instances' finalizers prune.
    expect(seconds).toBeLessThan(60);
    // The namespace controller's and the garbage collector's deletes never reach the webhook,
    // and the operator's own are exempt: nothing is denied.
    expect(rejections).toBe(0);
    // At most one complaint per instance (an apply refused because the namespace terminates).
    expect(warnings.length).toBeLessThanOrEqual(20);

    // No finalizer left anywhere: no instance or Template waits on one.
    const waiting = (
      await Promise.all(
        ['TemplateInstance', 'Template'].map((kind) => admin.list(API_VERSION, kind)),
      )
    )
      .flat()
      .filter((o) => o.metadata.deletionTimestamp);
    expect(waiting.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).toEqual([]);
    // Nothing outside it was touched: the bystander's objects are unchanged, its instances
    // still Ready, the Templates still in place and not deleting.
    expect(await Promise.all(renderedOutside.map(versionOf))).toEqual(before);
    await allReady(
      MODES.map((mode) => instanceId(bystander, `keep-${mode}`)),
      'the bystanders Ready',
    );
    for (const mode of MODES) {
      const t = await admin.get({
        apiVersion: API_VERSION,
        kind: 'Template',
        namespace: platform,
        name: `app-${mode}`,
      });
      expect(t?.metadata.deletionTimestamp).toBeUndefined();
    }
  }, 300_000);
});

describe('deleting what owns instances', () => {
  it('a Template in use stays, Deleting=False DeletionBlocked, until its last instance is gone', async () => {
    const ns = await namespace('blocked');
    await user.apply(template(ns, 'in-use', { sync: { mode: 'revert' }, handlebars: BODY }));
    await user.apply(instance(ns, 'one', 'in-use'));
    await user.apply(instance(ns, 'two', 'in-use'));
    await allReady([instanceId(ns, 'one'), instanceId(ns, 'two')], 'both instances Ready');
    const templateId = { apiVersion: API_VERSION, kind: 'Template', namespace: ns, name: 'in-use' };
    await user.delete(templateId);
    const blocked = await eventually(async () => {
      const t = (await admin.get(templateId)) as { status?: { conditions?: Condition[] } };
      const deleting = conditionOf(t?.status, 'Deleting');
      return deleting?.reason === 'DeletionBlocked' ? deleting : undefined;
    }, 'the Template to report DeletionBlocked');
    expect(blocked).toMatchObject({
      status: 'False',
      message: expect.stringContaining('2 TemplateInstance'),
    });
    // Its instances keep running meanwhile (the Template's generation moved with its deletion,
    // so they look at it again: Ready once more after that pass) and keep what they rendered.
    await allReady([instanceId(ns, 'one'), instanceId(ns, 'two')], 'both instances Ready still');
    for (const name of ['one', 'two'])
      for (const id of rendered(ns, name)) expect(await admin.get(id)).toBeDefined();
    await user.delete(instanceId(ns, 'one'));
    await user.delete(instanceId(ns, 'two'));
    await gone(templateId, 'the Template to go with its last instance');
    for (const name of ['one', 'two'])
      for (const id of rendered(ns, name)) expect(await admin.get(id)).toBeUndefined();
  }, 180_000);

  it('a TemplateInstanceSet: the garbage collector deletes its instances, and their finalizers what they rendered', async () => {
    const { namespaces, set } = await stampTwoNamespaces('stamp', false);
    const [a, b] = namespaces;
    await admin.delete({
      apiVersion: API_VERSION,
      kind: 'TemplateInstanceSet',
      name: set.metadata.name!,
    });
    for (const ns of [a, b]) {
      await gone(instanceId(ns, 'stamped'), `the stamped instance in ${ns} to be collected`);
      for (const id of rendered(ns, 'stamped')) await gone(id, `${id.kind} ${ns}/stamped pruned`);
    }
  }, 180_000);

  it('preserveOnRemoval: a namespace that stops matching keeps its instance, which outlives the Set', async () => {
    const { label, namespaces, set } = await stampTwoNamespaces('preserve', true);
    const [kept, stays] = namespaces;
    // `kept` stops matching: its instance is released (no Set label, no ownerReference) and runs on.
    await admin.apply({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: kept, labels: { [label]: 'no' } },
    });
    const released = await eventually(async () => {
      const i = await admin.get(instanceId(kept, 'stamped'));
      return i &&
        !i.metadata.ownerReferences?.length &&
        !i.metadata.labels?.['stencil.dev/instance-set']
        ? i
        : undefined;
    }, 'the instance in the namespace that stopped matching to be released');
    expect(released.metadata.deletionTimestamp).toBeUndefined();
    // Deleting the Set collects the instance it still owns, never the released one.
    await admin.delete({
      apiVersion: API_VERSION,
      kind: 'TemplateInstanceSet',
      name: set.metadata.name!,
    });
    await gone(instanceId(stays, 'stamped'), 'the still-owned instance to be collected');
    expect(await phaseOf(instanceId(kept, 'stamped'))).toBe('Ready');
    for (const id of rendered(kept, 'stamped')) expect(await admin.get(id)).toBeDefined();
  }, 180_000);
});

/**
 * Two namespaces carrying a label of their own, and a TemplateInstanceSet stamping an instance
 * `stamped` of the revert Template into both; returns once both are Ready.
 */
async function stampTwoNamespaces(
  prefix: string,
  preserveOnRemoval: boolean,
): Promise<{ label: string; namespaces: [string, string]; set: KubeObject }> {
  const label = `stencil.dev/${prefix}-${suffix}`;
  const namespaces: [string, string] = [
    await namespace(`${prefix}-a`),
    await namespace(`${prefix}-b`),
  ];
  for (const ns of namespaces)
    await admin.apply({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns, labels: { [label]: 'yes' } },
    });
  const set = instanceSet(`${prefix}-${suffix}`, {
    namespaceSelector: { matchLabels: { [label]: 'yes' } },
    instanceName: 'stamped',
    template: { spec: { templateRef: ref('revert') } },
    preserveOnRemoval,
  });
  await admin.apply(set);
  await allReady(
    namespaces.map((ns) => instanceId(ns, 'stamped')),
    'both stamped instances Ready',
  );
  return { label, namespaces, set };
}

const CONFIGURATION_ID: Id = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  name: CONFIGURATION,
};

/** A tester's edit of a rendered ConfigMap's data (a managed field under strict mode). */
const editConfigMap = (namespace: string, name: string): Promise<KubeObject> =>
  user.apply({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace },
    data: { owner: 'me' },
  });

/** docs/installation.md, "When the operator is already gone": drop the finalizer, then delete. */
async function releaseAndDelete(id: Id): Promise<void> {
  // A write that was still in flight when the operator stopped may move the object on: read again.
  for (let attempt = 1; ; attempt++) {
    const object = await admin.get(id);
    if (!object) return;
    try {
      await admin.setFinalizers(object, []);
      break;
    } catch (error) {
      if (!isClusterError(error, 'Conflict') || attempt >= 5) throw error;
    }
  }
  await admin.delete(id);
}

async function stopStencil(): Promise<void> {
  await running?.stop();
  running = undefined;
}

describe('while the operator is down and its webhook stays registered', () => {
  it('edits of strict objects fail closed, yet the namespace controller and the garbage collector delete', async () => {
    const [inside, owned] = [await namespace('down-ns'), await namespace('down-gc')];
    await user.apply(instance(inside, 'app', ref('strict')));
    await user.apply(instance(owned, 'app', ref('strict')));
    await allReady(
      [instanceId(inside, 'app'), instanceId(owned, 'app')],
      'both strict instances Ready',
    );
    await stopStencil();
    expect(await admin.get(CONFIGURATION_ID)).toBeDefined();
    // As documented: with nobody to answer, an edit or a delete of a strict object fails.
    expect(await rejectionOf(editConfigMap(owned, 'app'))).toMatch(/failed calling webhook/);
    expect(await rejectionOf(user.delete(rendered(owned, 'app')[1]!))).toMatch(
      /failed calling webhook/,
    );

    // The namespace controller empties a namespace of strict objects without asking the webhook;
    // the instance waits on its finalizer, which only the operator (or the documented manual
    // step) removes, and then the namespace is gone.
    await admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: inside });
    for (const id of rendered(inside, 'app'))
      await gone(id, `${id.kind} deleted by the namespace controller`);
    expect(await admin.get(instanceId(inside, 'app'))).toBeDefined();
    await releaseAndDelete(instanceId(inside, 'app'));
    await gone(
      { apiVersion: 'v1', kind: 'Namespace', name: inside },
      'the namespace to be gone',
      60_000,
    );

    // The garbage collector collects a deleted instance's strict objects (ownerReferences).
    await releaseAndDelete(instanceId(owned, 'app'));
    for (const id of rendered(owned, 'app'))
      await gone(id, `${id.kind} collected by the garbage collector`);
    running = await startStencil();
  }, 240_000);
});

describe('uninstalling', () => {
  it('helm uninstall removes every webhook configuration, so formerly strict objects can be edited and deleted; the finalizers left are released by hand', async () => {
    const [ns, kept] = [await namespace('careless'), await namespace('kept-objects')];
    await user.apply(instance(ns, 'app', ref('strict')));
    await user.apply(instance(kept, 'app', ref('revert')));
    await allReady([instanceId(ns, 'app'), instanceId(kept, 'app')], 'both instances Ready');
    expect(await rejectionOf(editConfigMap(ns, 'app'))).toContain('sync mode strict');
    // The operator goes with the release (here: this process's operator, stopped first).
    await stopStencil();
    await helmRun(['uninstall', RELEASE, '--namespace', RELEASE_NAMESPACE]);
    const configurations = [
      ...(await admin.list('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration')),
      ...(await admin.list('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration')),
    ].map((o) => o.metadata.name);
    expect(configurations.filter((name) => name?.startsWith('stencil'))).toEqual([]);
    await editConfigMap(ns, 'app');
    expect(await user.delete(rendered(ns, 'app')[1]!)).not.toBe('pending');
    // What the operator no longer removes, by hand as docs/installation.md says: instances,
    // then Templates (their finalizers released), then the CRDs. `kept` is deleted with
    // propagation Orphan, which keeps what it rendered ("Keeping what was rendered").
    const keptObject = (await admin.get(instanceId(kept, 'app')))!;
    await admin.setFinalizers(keptObject, []);
    await adminHttp.request({
      method: 'DELETE',
      path: `/apis/${API_VERSION}/namespaces/${kept}/templateinstances/app`,
      body: { propagationPolicy: 'Orphan' },
    });
    await gone(instanceId(kept, 'app'), 'the orphaning delete to finish');
    for (const id of rendered(kept, 'app')) {
      const object = await admin.get(id);
      expect(object, `${id.kind} kept`).toBeDefined();
      expect(object!.metadata.ownerReferences ?? []).toEqual([]);
    }
    for (const i of await admin.list(API_VERSION, 'TemplateInstance'))
      await releaseAndDelete(instanceId(i.metadata.namespace!, i.metadata.name!));
    for (const t of await admin.list(API_VERSION, 'Template'))
      await releaseAndDelete({
        apiVersion: API_VERSION,
        kind: 'Template',
        namespace: t.metadata.namespace,
        name: t.metadata.name!,
      });
    await gone(rendered(ns, 'app')[0]!, 'the ConfigMap collected with its instance');
    await deleteCrds();
  }, 240_000);

  it('in the documented order (instances, Templates, the release, the CRDs) leaves nothing stuck', async () => {
    // Installed again, as a new user would.
    await helmRun([
      'install',
      RELEASE,
      join(root, 'charts', 'stencil'),
      '--namespace',
      RELEASE_NAMESPACE,
    ]);
    await eventually(() => admin.scopeOf(API_VERSION, 'TemplateInstance'), 'the CRDs served again');
    running = await startStencil();
    const ns = await namespace('orderly');
    await user.apply(template(ns, 'app', { sync: { mode: 'strict' }, handlebars: BODY }));
    for (const name of ['a', 'b', 'c']) await user.apply(instance(ns, name, 'app'));
    await allReady(
      ['a', 'b', 'c'].map((n) => instanceId(ns, n)),
      'three strict instances Ready',
    );
    // 1. The instances: their finalizers remove what they rendered.
    for (const name of ['a', 'b', 'c']) await user.delete(instanceId(ns, name));
    for (const name of ['a', 'b', 'c']) {
      await gone(instanceId(ns, name), `instance ${name} gone`);
      for (const id of rendered(ns, name)) expect(await admin.get(id)).toBeUndefined();
    }
    // 2. The Templates, no longer blocked.
    const templateId = { apiVersion: API_VERSION, kind: 'Template', namespace: ns, name: 'app' };
    await user.delete(templateId);
    await gone(templateId, 'the Template gone');
    // 3. The release (the operator with it).
    await stopStencil();
    await helmRun(['uninstall', RELEASE, '--namespace', RELEASE_NAMESPACE]);
    expect(await admin.get(CONFIGURATION_ID)).toBeUndefined();
    // 4. The CRDs.
    await deleteCrds();
  }, 240_000);
});

/** Deletes Stencil's CRDs and waits until each is gone (a stuck finalizer would keep one). */
async function deleteCrds(): Promise<void> {
  const crds = (await admin.list('apiextensions.k8s.io/v1', 'CustomResourceDefinition')).filter(
    (crd) => crd.metadata.name?.endsWith('.stencil.dev'),
  );
  expect(crds.length).toBeGreaterThanOrEqual(4);
  for (const crd of crds)
    await admin.delete({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name: crd.metadata.name!,
    });
  for (const crd of crds)
    await gone(
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name: crd.metadata.name!,
      },
      `CRD ${crd.metadata.name} gone`,
    );
}

// The operator checks rendered objects against the schemas its API server publishes (issue #26,
// ADR 0030), on the real API server: a Template and its instance that render an unknown field in a
// Deployment's pod spec fail naming it, nothing is applied and what was applied stays; a Template
// rendering a custom resource of a CRD installed in the cluster is judged by that CRD's schema,
// and valid again once the CRD declares the field (a new discovery hash).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Condition } from '../../src/api/condition.ts';
import type { KubeObject } from '../../src/api/object-meta.ts';
import { ANNOTATION_RECONCILE_AT, API_VERSION } from '../../src/api/well-known.ts';
import { evaluateTemplateChecked } from '../../src/engine/evaluation/template-evaluation.ts';
import { KubernetesSchemas } from '../../src/engine/object-schema/kubernetes-schemas.ts';
import { OfflineSchemas } from '../../src/engine/object-schema/object-schema.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { schemaFileReader } from '../../src/kubernetes-schema-files.ts';
import type { ObjectId } from '../../src/reconcile/cluster-port.ts';
import { fromSecret, instance, secret, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { conditionOf, instanceStatus } from './support/instances.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

const SECRET_NAME = 'c0ntainer-from-a-secret';
const suffix = randomBytes(3).toString('hex');
const group = `operator-schemas-${suffix}.example.com`;

let user: KubeCluster;
let ns: string;
let running: RunningOperator;

/** A Deployment and a ConfigMap; `podSpec` adds fields to the pod spec, `version` the data. */
function webBody(version: string, podSpec = ''): string {
  return `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}-config
data:
  version: ${version}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{instance.name}}
spec:
  selector:
    matchLabels: { app: web }
  template:
    metadata:
      labels: { app: web }
    spec:${podSpec}
      containers:
        - name: {{parameters.container}}
          image: nginx:1.27
`;
}

function webTemplate(body: string): KubeObject {
  return template(ns, 'web', {
    sync: { mode: 'revert' },
    parameters: [{ name: 'container', type: 'string', value: 'app' }],
    handlebars: body,
  });
}

function gadgetCrd(properties: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `gadgets.${group}` },
    spec: {
      group,
      names: { kind: 'Gadget', plural: 'gadgets', singular: 'gadget', listKind: 'GadgetList' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec: { type: 'object', properties } },
            },
          },
        },
      ],
    },
  };
}

const GADGET_BODY = `apiVersion: ${group}/v1
kind: Gadget
metadata:
  name: {{instance.name}}
spec:
  size: 3
  colour: red
`;

const bundle = new KubernetesSchemas(schemaFileReader());

/**
 * The Valid message `stencil validate` gives the Template as the API server holds it (the bundle,
 * and `--crds` for the CRD objects given).
 */
async function validateMessage(name: string, crds: KubeObject[] = []): Promise<string | undefined> {
  const object = await user.get({ apiVersion: API_VERSION, kind: 'Template', namespace: ns, name });
  const evaluation = await evaluateTemplateChecked(object, new OfflineSchemas(bundle, crds));
  return evaluation.conditions.find((c) => c.type === 'Valid')?.message;
}

async function templateValid(name: string): Promise<Condition | undefined> {
  const object = await user.get({ apiVersion: API_VERSION, kind: 'Template', namespace: ns, name });
  const status = (object as { status?: { conditions?: Condition[] } } | undefined)?.status;
  return conditionOf(status, 'Valid');
}

const id = (apiVersion: string, kind: string, name: string): ObjectId => ({
  apiVersion,
  kind,
  namespace: ns,
  name,
});

beforeAll(async () => {
  ns = await freshNamespace(connect(), 'operator-schemas');
  user = (await userClient()).cluster;
  await user.apply(secret(ns, 'names', { container: SECRET_NAME }));
  await user.apply(gadgetCrd({ size: { type: 'integer' } }));
  running = await startOperator([ns], undefined, { schemas: { refreshMs: 500 } });
}, 60_000);

afterAll(async () => {
  await running?.stop();
  await user.delete({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    name: `gadgets.${group}`,
  });
});

describe('an unknown field in a Deployment pod spec', () => {
  it('fails the Template naming the field; the instance stays on the last good revision, nothing applied, nothing shown of a Secret', async () => {
    await user.apply(webTemplate(webBody('v1')));
    await user.apply(
      instance(ns, 'shop', 'web', [
        { name: 'container', valueFrom: fromSecret('names', 'container') },
      ]),
    );
    await eventually(
      async () => conditionOf(await instanceStatus(user, ns, 'shop'))?.status === 'True',
      'shop Ready',
    );
    const config = await user.get(id('v1', 'ConfigMap', 'shop-config'));
    const deployment = await user.get(id('apps/v1', 'Deployment', 'shop'));

    // One edit changes the ConfigMap and puts a field the pod spec does not have beside it.
    await user.apply(webTemplate(webBody('v2', '\n      dnsPolicyy: ClusterFirst')));
    const valid = await eventually(async () => {
      const c = await templateValid('web');
      return c?.status === 'False' && c;
    }, 'the Template invalid');
    expect(valid.message).toContain('Deployment');
    expect(valid.message).toContain('spec.template.spec.dnsPolicyy: unknown field');
    expect(valid.message).toBe(await validateMessage('web'));
    // An invalid edit makes no revision (ADR 0031): the instance keeps rendering revision 1.
    await running.operator.idle();
    const status = await instanceStatus(user, ns, 'shop');
    expect(conditionOf(status)?.status).toBe('True');
    expect(status?.revision).toBe(1);
    await running.operator.idle();
    // Checked against what the API server publishes, not the offline bundle.
    expect(running.operator.publishedSchemas.held()).toMatchObject({ v1: 33, 'apps/v1': 10 });
    // Nothing applied: both objects as the first render left them.
    expect((await user.get(id('v1', 'ConfigMap', 'shop-config')))?.metadata.resourceVersion).toBe(
      config?.metadata.resourceVersion,
    );
    expect((await user.get(id('apps/v1', 'Deployment', 'shop')))?.metadata.resourceVersion).toBe(
      deployment?.metadata.resourceVersion,
    );
    const said = JSON.stringify([
      await instanceStatus(user, ns, 'shop'),
      await user.list('v1', 'Event', { namespace: ns }),
      running.logs,
    ]);
    expect(said).not.toContain(SECRET_NAME);
  });
});

describe('a custom resource of a CRD installed in the cluster', () => {
  it('is judged by the CRD schema the cluster publishes, and valid again once the CRD declares the field', async () => {
    await user.apply(template(ns, 'gadgets', { handlebars: GADGET_BODY }));
    await user.apply(instance(ns, 'gizmo', 'gadgets'));
    const invalid = await eventually(async () => {
      const c = await templateValid('gadgets');
      return c?.status === 'False' && c;
    }, 'the Template invalid');
    expect(invalid.message).toContain(`Gadget ${ns}/dry-run: spec.colour: unknown field`);
    const crd = gadgetCrd({ size: { type: 'integer' } });
    expect(invalid.message).toBe(await validateMessage('gadgets', [crd]));
    const failed = await eventually(async () => {
      const c = conditionOf(await instanceStatus(user, ns, 'gizmo'));
      return c?.status === 'False' && c.reason === 'InvalidResource' && c;
    }, 'gizmo refused');
    expect(failed.message).toContain(`Gadget ${ns}/gizmo: spec.colour: unknown field`);
    expect(await user.get(id(`${group}/v1`, 'Gadget', 'gizmo'))).toBeUndefined();

    // The CRD declares the field; once the cluster publishes it (a new hash), both pass.
    await user.apply(gadgetCrd({ size: { type: 'integer' }, colour: { type: 'string' } }));
    let poke = 0;
    await eventually(async () => {
      // The next reconcile of each (an edit, as a resync would) reads the new schema.
      const at = { [ANNOTATION_RECONCILE_AT]: String(++poke) };
      await user.apply(template(ns, 'gadgets', { handlebars: GADGET_BODY }, { annotations: at }));
      await user.apply(instance(ns, 'gizmo', 'gadgets', [], { annotations: at }));
      return (
        (await templateValid('gadgets'))?.status === 'True' &&
        conditionOf(await instanceStatus(user, ns, 'gizmo'))?.status === 'True'
      );
    }, 'the Template valid and gizmo Ready');
    expect(await user.get(id(`${group}/v1`, 'Gadget', 'gizmo'))).toMatchObject({
      spec: { size: 3, colour: 'red' },
    });
  });
});

// Strict mode: the admission webhook (reached by URL) denies edits and deletes of managed
// resources by anyone but the operator, allows ignored fields, lets the owner's deletion clean up,
// and never sees resources of revert Templates (objectSelector), even while it is down.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { configMap, instance, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import {
  eventually,
  loopbackWebhook,
  rejectionOf as rejection,
  removeWebhookConfiguration,
  startOperator,
  userClient,
  type RunningOperator,
} from './support/operator.ts';

let ns: string;
let user: KubeCluster;
let running: RunningOperator;
const configuration = `stencil-strict-test-${process.pid}`;

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{instance.name}}
spec:
  replicas: 1
  selector: { matchLabels: { app: {{instance.name}} } }
  template:
    metadata: { labels: { app: {{instance.name}} } }
    spec:
      containers: [{ name: app, image: nginx:1.27 }]
`;

const edit = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: ns },
  spec,
});

const getDeployment = (name: string): Promise<KubeObject | undefined> =>
  user.get({ apiVersion: 'apps/v1', kind: 'Deployment', name, namespace: ns });

beforeAll(async () => {
  ns = await freshNamespace(connect(), 'strict');
  user = (await userClient()).cluster;
  running = await startOperator([ns], undefined, { webhook: loopbackWebhook(ns, configuration) });
});

afterAll(async () => {
  await removeWebhookConfiguration(user, configuration);
  await running?.stop();
});

describe('strict mode', () => {
  it('denies a manual update of a managed field, naming the owner and the field', async () => {
    await user.apply(
      template(ns, 'locked', {
        sync: { mode: 'strict', ignoreFields: ['spec.replicas'] },
        handlebars: deployment,
      }),
    );
    await user.apply(instance(ns, 'locked', 'locked'));
    await eventually(
      async () =>
        (await getDeployment('locked'))?.metadata.labels?.['stencil.dev/sync-mode'] === 'strict',
      'the strict Deployment',
    );
    const message = await rejection(
      user.apply(
        edit('locked', {
          template: { spec: { containers: [{ name: 'app', image: 'evil:latest' }] } },
        }),
      ),
    );
    expect(message).toContain(
      `Deployment ${ns}/locked is managed by TemplateInstance ${ns}/locked (sync mode strict)`,
    );
    expect(message).toContain('spec.template.spec.containers[0].image');
  });

  it('allows an update of an ignored field', async () => {
    expect(await rejection(user.apply(edit('locked', { replicas: 3 })))).toBeUndefined();
    expect(
      ((await getDeployment('locked')) as unknown as { spec: { replicas: number } }).spec.replicas,
    ).toBe(3);
  });

  it('denies a delete', async () => {
    const message = await rejection(
      user.delete({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'locked', namespace: ns }),
    );
    expect(message).toContain('is managed by TemplateInstance');
    expect(await getDeployment('locked')).toBeDefined();
  });

  it('lets deleting the owning instance clean its resources up', async () => {
    await user.delete({
      apiVersion: API_VERSION,
      kind: 'TemplateInstance',
      name: 'locked',
      namespace: ns,
    });
    await eventually(
      async () => !(await getDeployment('locked')),
      'the Deployment to be deleted with its instance',
    );
  });

  it('allows changes once the owning instance no longer exists', async () => {
    await user.apply(
      configMap(
        ns,
        'orphan',
        { a: '1' },
        {
          labels: { 'stencil.dev/sync-mode': 'strict' },
          annotations: { 'stencil.dev/instance-ref': `${ns}/long-gone` },
        },
      ),
    );
    expect(await rejection(user.apply(configMap(ns, 'orphan', { a: '2' })))).toBeUndefined();
  });

  it('never involves the webhook for revert resources, even while it is down', async () => {
    await user.apply(
      template(ns, 'relaxed', {
        sync: { mode: 'revert', ignoreFields: ['spec.replicas'] },
        handlebars: deployment,
      }),
    );
    await user.apply(instance(ns, 'relaxed', 'relaxed'));
    await eventually(
      async () =>
        (await getDeployment('relaxed'))?.metadata.labels?.['stencil.dev/sync-mode'] === 'revert',
      'the revert Deployment',
    );
    await running.operator.webhook?.stop();
    expect(await rejection(user.apply(edit('relaxed', { replicas: 4 })))).toBeUndefined();
    // A strict object, by contrast, cannot be changed while the webhook is down (failurePolicy Fail).
    const strict = { labels: { 'stencil.dev/sync-mode': 'strict' } };
    await user.apply(configMap(ns, 'probe', { a: '1' }, strict));
    expect(await rejection(user.apply(configMap(ns, 'probe', { a: '2' }, strict)))).toMatch(
      /failed calling webhook/,
    );
  });
});

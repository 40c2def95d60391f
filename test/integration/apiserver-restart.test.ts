// The operator survives an API server restart: its watches recover (no process exit, no lost
// work) and instances created or changed around the restart converge.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { startControlPlane, type ControlPlane } from '../../tools/control-plane/control-plane.ts';
import { installProjectCrds } from '../../tools/control-plane/crds.ts';
import { instance, template } from './support/builders.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

let plane: ControlPlane;
let running: RunningOperator;
let user: KubeCluster;
const namespace = 'restart';

beforeAll(async () => {
  // Its own control plane, so restarting it does not disturb other test files.
  plane = await startControlPlane({ log: () => undefined });
  await installProjectCrds(plane);
  user = (await userClient(plane.kubeconfigPath)).cluster;
  await user.apply({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace },
  });
  running = await startOperator([namespace], plane.kubeconfigPath);
}, 120_000);

afterAll(async () => {
  await running?.stop();
  await plane?.stop();
});

const colorOf = async (name: string): Promise<unknown> =>
  (
    (await user.get({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace })) as
      { data?: Record<string, string> } | undefined
  )?.data?.color;

it('keeps running through an API server restart and converges every instance afterwards', async () => {
  await user.apply(
    template(namespace, 'app', {
      sync: { mode: 'revert' },
      parameters: [{ name: 'color' }],
      handlebars:
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}\ndata:\n  color: {{parameters.color}}\n',
    }),
  );
  await user.apply(instance(namespace, 'before', 'app', [{ name: 'color', value: 'red' }]));
  await eventually(async () => (await colorOf('before')) === 'red', 'the first instance');

  await plane.restartApiserver();

  await user.apply(instance(namespace, 'before', 'app', [{ name: 'color', value: 'green' }]));
  await user.apply(instance(namespace, 'after', 'app', [{ name: 'color', value: 'blue' }]));
  await eventually(
    async () => (await colorOf('before')) === 'green' && (await colorOf('after')) === 'blue',
    'both instances after the restart',
    60_000,
  );
  expect(running.operator.ready()).toBe(true);
  const logs = running.logs.join('');
  expect(logs).toContain('list/watch failing; retrying with backoff');
  expect(logs).toContain('list/watch recovered');
}, 120_000);

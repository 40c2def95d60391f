// The operator survives an API server restart: its watches recover (no process exit, no lost
// work) and instances created or changed around the restart converge.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { startControlPlane, type ControlPlane } from '../../tools/control-plane/control-plane.ts';
import { installCrds } from '../../tools/control-plane/crds.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

let plane: ControlPlane;
let running: RunningOperator;
let user: KubeCluster;
const namespace = 'restart';

beforeAll(async () => {
  // Its own control plane, so restarting it does not disturb other test files.
  plane = await startControlPlane({ log: () => undefined });
  const crdDir = join(import.meta.dirname, '..', '..', 'config', 'crd');
  await installCrds(
    plane,
    readdirSync(crdDir).map((f) => join(crdDir, f)),
  );
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

const instance = (name: string, color: string): KubeObject => ({
  apiVersion: API_VERSION,
  kind: 'TemplateInstance',
  metadata: { name, namespace },
  spec: { templateRef: { name: 'app' }, parameters: [{ name: 'color', value: color }] },
});

const colorOf = async (name: string): Promise<unknown> =>
  (
    (await user.get({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace })) as
      { data?: Record<string, string> } | undefined
  )?.data?.color;

it('keeps running through an API server restart and converges every instance afterwards', async () => {
  await user.apply({
    apiVersion: API_VERSION,
    kind: 'Template',
    metadata: { name: 'app', namespace },
    spec: {
      sync: { mode: 'revert' },
      parameters: [{ name: 'color' }],
      handlebars:
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}\ndata:\n  color: {{parameters.color}}\n',
    },
  });
  await user.apply(instance('before', 'red'));
  await eventually(async () => (await colorOf('before')) === 'red', 'the first instance');

  await plane.restartApiserver();

  await user.apply(instance('before', 'green'));
  await user.apply(instance('after', 'blue'));
  await eventually(
    async () => (await colorOf('before')) === 'green' && (await colorOf('after')) === 'blue',
    'both instances after the restart',
    60_000,
  );
  expect(running.operator.ready()).toBe(true);
  expect(running.logs.join('')).toContain('list/watch failed; retrying');
}, 120_000);

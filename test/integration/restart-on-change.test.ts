// Issue #14 part 1 on the real API server: a rotated Secret reaches the pods of a Deployment that
// opted in (its pod template's sources-hash changes), and an unrelated source change does not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import {
  configMap,
  fromConfigMap,
  fromSecret,
  instance,
  secret,
  template,
} from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { instanceStatus } from './support/instances.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

let ns: string;
let user: KubeCluster;
let running: RunningOperator;

const BODY = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}-env
data:
  region: {{parameters.region}}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{instance.name}}
  annotations:
    stencil.dev/restart-on-change: password
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, env: [{name: DB_SECRET, valueFrom: {secretKeyRef: {name: db, key: password}}}]}]
`;

async function podHash(): Promise<string | undefined> {
  const d = (await user.get({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    name: 'web',
    namespace: ns,
  })) as { spec?: { template?: { metadata?: { annotations?: Record<string, string> } } } };
  return d?.spec?.template?.metadata?.annotations?.['stencil.dev/sources-hash'];
}

async function region(): Promise<string | undefined> {
  const cm = (await user.get({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: 'web-env',
    namespace: ns,
  })) as { data?: Record<string, string> } | undefined;
  return cm?.data?.region;
}

beforeAll(async () => {
  ns = await freshNamespace(connect(), 'restart');
  user = (await userClient()).cluster;
  running = await startOperator([ns]);
});

afterAll(async () => {
  await running?.stop();
});

describe('restart-on-change', () => {
  it('rolls the pod template when the consumed Secret rotates, and only then', async () => {
    await user.apply(secret(ns, 'db', { password: 'first' }));
    await user.apply(configMap(ns, 'settings', { region: 'eu' }));
    await user.apply(
      template(ns, 'web', {
        sync: { mode: 'revert' },
        parameters: [{ name: 'password' }, { name: 'region' }],
        handlebars: BODY,
      }),
    );
    await user.apply(
      instance(ns, 'web', 'web', [
        { name: 'password', valueFrom: fromSecret('db', 'password') },
        { name: 'region', valueFrom: fromConfigMap('settings', 'region') },
      ]),
    );
    const first = await eventually(podHash, 'the sources-hash on the pod template');
    expect(first).toMatch(/^[0-9a-f]{32}$/);

    // An unrelated source: its ConfigMap follows, the pod template does not move.
    await user.apply(configMap(ns, 'settings', { region: 'us' }));
    await eventually(async () => (await region()) === 'us', 'the region to follow');
    await running.operator.idle();
    expect(await podHash()).toBe(first);

    // The Secret the Deployment consumes: the pods roll.
    await user.apply(secret(ns, 'db', { password: 'second' }));
    const second = await eventually(async () => {
      const hash = await podHash();
      return hash !== first && hash;
    }, 'the sources-hash to change');
    expect(second).not.toContain('second');
    const status = await instanceStatus(user, ns, 'web');
    expect(JSON.stringify(status)).not.toContain('second');
  });
});

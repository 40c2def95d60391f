// Issue #14 part 1 on the real API server: a rotated Secret reaches the pods of a Deployment that
// opted in (its pod template's sources-hash changes), and an unrelated source change does not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
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

const secret = (password: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'db', namespace: ns },
  stringData: { password },
});
const settings = (region: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', namespace: ns },
  data: { region },
});

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
    await user.apply(secret('first'));
    await user.apply(settings('eu'));
    await user.apply({
      apiVersion: API_VERSION,
      kind: 'Template',
      metadata: { name: 'web', namespace: ns },
      spec: {
        sync: { mode: 'revert' },
        parameters: [{ name: 'password' }, { name: 'region' }],
        handlebars: BODY,
      },
    });
    await user.apply({
      apiVersion: API_VERSION,
      kind: 'TemplateInstance',
      metadata: { name: 'web', namespace: ns },
      spec: {
        templateRef: { name: 'web' },
        parameters: [
          { name: 'password', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
          { name: 'region', valueFrom: { configMapKeyRef: { name: 'settings', key: 'region' } } },
        ],
      },
    });
    const first = await eventually(podHash, 'the sources-hash on the pod template');
    expect(first).toMatch(/^[0-9a-f]{32}$/);

    // An unrelated source: its ConfigMap follows, the pod template does not move.
    await user.apply(settings('us'));
    await eventually(async () => (await region()) === 'us', 'the region to follow');
    await running.operator.idle();
    expect(await podHash()).toBe(first);

    // The Secret the Deployment consumes: the pods roll.
    await user.apply(secret('second'));
    const second = await eventually(async () => {
      const hash = await podHash();
      return hash !== first && hash;
    }, 'the sources-hash to change');
    expect(second).not.toContain('second');
    const status = await instanceStatus(user, ns, 'web');
    expect(JSON.stringify(status)).not.toContain('second');
  });
});

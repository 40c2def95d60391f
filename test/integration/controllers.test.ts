// The plane with controllers (startControlPlane({ controllers: true })): the real Deployment and
// ReplicaSet controllers, kube-scheduler and kwok's fake nodes take a Deployment to Available with
// Ready pods; the garbage collector follows ownerReferences; the namespace controller empties a
// namespace until the namespace itself is gone; and the controllers end with the plane. This file
// starts a plane of its own: the shared one of global-setup runs no controllers.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { startControlPlane, type ControlPlane } from '../../tools/control-plane/control-plane.ts';
import { FAKE_NODES } from '../../tools/control-plane/controllers.ts';
import { send } from '../../tools/control-plane/http.ts';
import { eventually, userClient } from './support/operator.ts';

let plane: ControlPlane;
let admin: KubeCluster;

beforeAll(async () => {
  plane = await startControlPlane({ controllers: true, log: () => undefined });
  admin = (await userClient(plane.kubeconfigPath)).cluster;
}, 180_000);

afterAll(async () => {
  await plane?.stop();
});

const repoRoot = join(import.meta.dirname, '..', '..');

function isRunning(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    // A killed child nobody has reaped yet is a zombie: it holds no ports and does nothing.
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

const unique = (prefix: string): string => `${prefix}-${randomBytes(3).toString('hex')}`;

async function namespace(prefix: string): Promise<string> {
  const name = unique(prefix);
  await admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

function deployment(name: string, ns: string, replicas: number): KubeObject {
  const object: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        // kwok runs no container: the image is never pulled.
        spec: { containers: [{ name: 'web', image: 'registry.invalid/web:1' }] },
      },
    },
  };
  return object;
}

interface DeploymentStatus {
  status?: {
    readyReplicas?: number;
    availableReplicas?: number;
    conditions?: { type: string; status: string }[];
  };
}

interface PodList {
  items: {
    spec?: { nodeName?: string };
    status?: { phase?: string; conditions?: { type: string; status: string }[] };
  }[];
}

it('takes a Deployment to Available with 2 ready replicas on the fake nodes', async () => {
  const ns = await namespace('rollout');
  await admin.apply(deployment('web', ns, 2));

  const status = await eventually(
    async () => {
      const d = (await admin.get({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'web',
        namespace: ns,
      })) as DeploymentStatus | undefined;
      const available = d?.status?.conditions?.some(
        (c) => c.type === 'Available' && c.status === 'True',
      );
      return available && d?.status?.readyReplicas === 2 ? d.status : undefined;
    },
    'Deployment web Available with 2 ready replicas',
    60_000,
  );
  expect(status.availableReplicas).toBe(2);

  const pods = (await admin.list('v1', 'Pod', { namespace: ns })) as unknown as PodList['items'];
  expect(pods).toHaveLength(2);
  for (const pod of pods) {
    expect(FAKE_NODES).toContain(pod.spec?.nodeName);
    expect(pod.status?.phase).toBe('Running');
    expect(pod.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Ready', status: 'True' }),
    );
  }
});

it('deletes a namespace holding a Deployment until the namespace is gone', async () => {
  const ns = await namespace('doomed');
  await admin.apply(deployment('web', ns, 2));
  await eventually(
    async () => (await admin.list('v1', 'Pod', { namespace: ns })).length === 2,
    'the Deployment pods',
    60_000,
  );

  await admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns });

  await eventually(
    async () => (await admin.get({ apiVersion: 'v1', kind: 'Namespace', name: ns })) === undefined,
    `namespace ${ns} gone`,
    90_000,
  );
  // Nothing of it is left anywhere: the ReplicaSet and pods went with it.
  expect(await admin.list('apps/v1', 'ReplicaSet', { namespace: ns })).toEqual([]);
  expect(await admin.list('v1', 'Pod', { namespace: ns })).toEqual([]);
});

it("deletes a Deployment's ReplicaSet and pods through the garbage collector", async () => {
  const ns = await namespace('gc');
  await admin.apply(deployment('web', ns, 2));
  await eventually(
    async () => (await admin.list('v1', 'Pod', { namespace: ns })).length === 2,
    'the Deployment pods',
    60_000,
  );

  // Background propagation: the Deployment goes at once, its dependents by ownerReference.
  await admin.delete({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: ns });

  await eventually(
    async () =>
      (await admin.list('apps/v1', 'ReplicaSet', { namespace: ns })).length === 0 &&
      (await admin.list('v1', 'Pod', { namespace: ns })).length === 0,
    'no ReplicaSet and no pod left',
    60_000,
  );
});

it('fills a service-account token Secret with a token the API server accepts', async () => {
  const ns = await namespace('tokens');
  // The service-account controller creates `default`; the token controller signs with sa.key.
  await eventually(
    () => admin.get({ apiVersion: 'v1', kind: 'ServiceAccount', name: 'default', namespace: ns }),
    'ServiceAccount default',
  );
  await admin.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/service-account-token',
    metadata: {
      name: 'legacy',
      namespace: ns,
      annotations: { 'kubernetes.io/service-account.name': 'default' },
    },
  });
  const token = await eventually(async () => {
    const secret = (await admin.get({
      apiVersion: 'v1',
      kind: 'Secret',
      name: 'legacy',
      namespace: ns,
    })) as { data?: { token?: string } } | undefined;
    return secret?.data?.token && Buffer.from(secret.data.token, 'base64').toString();
  }, 'the token in Secret legacy');

  const review = await send(
    { server: plane.server, token, ca: plane.ca },
    'POST',
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
  );
  expect(review.status).toBe(201);
  expect(
    (JSON.parse(review.body) as { status: { userInfo: { username: string } } }).status.userInfo
      .username,
  ).toBe(`system:serviceaccount:${ns}:default`);
});

it('stops kube-controller-manager, kube-scheduler and kwok with the plane', async () => {
  const pids = plane.pids();
  const controllers = [pids.kubeControllerManager, pids.kubeScheduler, pids.kwok];
  expect(controllers.every(isRunning)).toBe(true);

  await plane.stop();

  expect(controllers.filter(isRunning)).toEqual([]);
});

it('leaves no controller behind when its owner is killed with SIGKILL', async () => {
  const owner = spawn(
    process.execPath,
    ['--import', 'tsx', 'tools/control-plane/serve.ts', '--controllers'],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const firstLine = await new Promise<string>((resolve, reject) => {
    createInterface({ input: owner.stdout }).once('line', resolve);
    owner.once('exit', (code) => reject(new Error(`serve.ts exited early (${code})`)));
  });
  const { pids } = JSON.parse(firstLine) as { pids: Record<string, number> };
  expect(Object.keys(pids).sort()).toEqual([
    'etcd',
    'kubeApiserver',
    'kubeControllerManager',
    'kubeScheduler',
    'kwok',
  ]);
  expect(Object.values(pids).every(isRunning)).toBe(true);

  owner.kill('SIGKILL');

  await eventually(
    () => Promise.resolve(Object.values(pids).every((pid) => !isRunning(pid))),
    'every process of the plane gone',
    10_000,
  );
});

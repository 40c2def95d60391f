// Issue #12 on the real API server: an instance is Ready only when what it rendered is healthy.
// There is no controller-manager here, so the test writes the status a controller would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TemplateInstanceStatus } from '../../src/api/template-instance.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { configMap, instance, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { conditionOf, instanceStatus } from './support/instances.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

let ns: string;
let user: KubeCluster;
let running: RunningOperator;

/** A Template of this file: revert, so that what it renders is kept as rendered. */
const REVERT = { sync: { mode: 'revert' } };

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{instance.name}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
`;

const claim = (annotations = ''): string => `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: {{instance.name}}
${annotations}spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`;

/** Waits until the instance's status satisfies `check`, and returns it. */
function until(
  name: string,
  check: (status: TemplateInstanceStatus) => boolean,
  what: string,
): Promise<TemplateInstanceStatus> {
  return eventually(async () => {
    const status = await instanceStatus(user, ns, name);
    return status && check(status) && status;
  }, what);
}

/** Writes the Deployment's status as its controller would (from a fresh read: conditional). */
async function setDeploymentStatus(name: string, status: object): Promise<void> {
  const id = { apiVersion: 'apps/v1', kind: 'Deployment', name, namespace: ns };
  await eventually(async () => {
    const live = await user.get(id);
    const observedGeneration = live?.metadata.generation;
    await user.patchStatus(live!, { observedGeneration, ...status });
    return true;
  }, `the status of Deployment ${name}`);
}

beforeAll(async () => {
  ns = await freshNamespace(connect(), 'health');
  user = (await userClient()).cluster;
  running = await startOperator([ns]);
});

afterAll(async () => {
  await running?.stop();
});

describe('the health of a rendered Deployment', () => {
  it('drives the instance: InProgress → Current → Failed', async () => {
    await user.apply(template(ns, 'web', { ...REVERT, handlebars: DEPLOYMENT }));
    await user.apply(instance(ns, 'web', 'web'));
    // No controller has written a status yet: Current once applied.
    await until('web', (s) => conditionOf(s)?.status === 'True', 'web Ready');

    await setDeploymentStatus('web', { replicas: 2, updatedReplicas: 1, availableReplicas: 0 });
    const progressing = await until('web', (s) => s.phase === 'Progressing', 'web Progressing');
    expect(conditionOf(progressing)).toMatchObject({
      status: 'False',
      reason: 'ResourcesInProgress',
      message: expect.stringContaining(
        `Deployment ${ns}/web is InProgress: 1 of 2 replicas updated`,
      ),
    });
    expect(conditionOf(progressing, 'Progressing')?.status).toBe('True');
    expect(progressing.readyResources).toBe('0/1');
    expect(progressing.renderedResources?.[0]).toMatchObject({
      health: 'InProgress',
      healthMessage: '1 of 2 replicas updated',
    });

    await setDeploymentStatus('web', {
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
    });
    const ready = await until('web', (s) => s.phase === 'Ready', 'web Ready again');
    expect(ready.readyResources).toBe('1/1');
    expect(conditionOf(ready, 'Progressing')?.status).toBe('False');

    await setDeploymentStatus('web', {
      conditions: [
        {
          type: 'Progressing',
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
          message: 'ReplicaSet "web-1" has timed out progressing.',
        },
      ],
    });
    const failed = await until('web', (s) => s.phase === 'Failed', 'web Failed');
    expect(conditionOf(failed)).toMatchObject({ status: 'False', reason: 'ResourceFailed' });
    expect(conditionOf(failed, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'ResourceFailed',
      message: expect.stringContaining('progress deadline exceeded'),
    });
  });
});

describe('a PersistentVolumeClaim', () => {
  it('keeps the instance Progressing while Pending', async () => {
    await user.apply(template(ns, 'volume', { ...REVERT, handlebars: claim() }));
    await user.apply(instance(ns, 'volume', 'volume'));
    const status = await until('volume', (s) => s.phase === 'Progressing', 'volume Progressing');
    expect(conditionOf(status)).toMatchObject({ status: 'False', reason: 'ResourcesInProgress' });
    expect(conditionOf(status, 'Applied')?.status).toBe('True');
  });

  it('is Ready when its stencil.dev/ready-when expression holds', async () => {
    const annotations = `  annotations:\n    stencil.dev/ready-when: "self.status.phase == 'Pending'"\n`;
    await user.apply(template(ns, 'pending-ok', { ...REVERT, handlebars: claim(annotations) }));
    await user.apply(instance(ns, 'pending-ok', 'pending-ok'));
    const status = await until('pending-ok', (s) => s.phase === 'Ready', 'pending-ok Ready');
    expect(status.renderedResources?.[0]?.health).toBe('Current');
  });
});

describe('a stencil.dev/ready-when expression that is not CEL', () => {
  it('makes the Template Invalid when it is created, naming the expression', async () => {
    const annotations = `  annotations:\n    stencil.dev/ready-when: "self.status.phase =="\n`;
    await user.apply(template(ns, 'broken', { ...REVERT, handlebars: claim(annotations) }));
    const status = await eventually(async () => {
      const object = await user.get({
        apiVersion: API_VERSION,
        kind: 'Template',
        name: 'broken',
        namespace: ns,
      });
      const s = (
        object as
          | { status?: { phase?: string; conditions?: { type: string; message: string }[] } }
          | undefined
      )?.status;
      return s?.phase === 'Invalid' && s;
    }, 'the Template to be Invalid');
    expect(status.conditions?.find((c) => c.type === 'Valid')?.message).toContain(
      'stencil.dev/ready-when "self.status.phase ==" is not valid CEL',
    );
  });
});

describe('waves', () => {
  const twoWaves = `${claim()}---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}-app
  annotations:
    stencil.dev/wave: "1"
data:
  claim: {{instance.name}}
`;

  it('applies wave 1 only once wave 0 is healthy, and deletes in reverse wave order', async () => {
    const deletes: string[] = [];
    running.connection.http.onRequest((method, path) => {
      if (method === 'DELETE' && path.includes(`/namespaces/${ns}/`)) deletes.push(path);
    });
    await user.apply(template(ns, 'ordered', { ...REVERT, handlebars: twoWaves }));
    await user.apply(instance(ns, 'ordered', 'ordered'));
    // The claim stays Pending (no provisioner here): wave 1 waits, and says for what.
    const waiting = await until(
      'ordered',
      (s) =>
        conditionOf(s, 'Applied')?.message.includes('wave 1 waits for PersistentVolumeClaim') ===
        true,
      'wave 1 to wait for the claim',
    );
    expect(conditionOf(waiting, 'Applied')).toMatchObject({ status: 'False', reason: 'Waiting' });
    expect(waiting.phase).toBe('Progressing');
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', name: 'ordered-app', namespace: ns };
    expect(await user.get(cm)).toBeUndefined();

    // The claim binds, as its controller would report: wave 1 follows.
    const id = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: 'ordered', namespace: ns };
    await eventually(async () => {
      await user.patchStatus((await user.get(id))!, { phase: 'Bound' });
      return true;
    }, 'the claim to be Bound');
    const ready = await until('ordered', (s) => s.phase === 'Ready', 'ordered Ready');
    expect(ready.readyResources).toBe('2/2');
    expect(await user.get(cm)).toBeDefined();

    await user.delete({
      apiVersion: API_VERSION,
      kind: 'TemplateInstance',
      name: 'ordered',
      namespace: ns,
    });
    await eventually(
      async () =>
        (await user.get(id)) === undefined ||
        (await user.get(id))?.metadata.deletionTimestamp !== undefined,
      'the claim to be deleted',
    );
    const order = deletes.filter(
      (p) => p.endsWith('/configmaps/ordered-app') || p.endsWith('/persistentvolumeclaims/ordered'),
    );
    expect(order).toEqual([
      `/api/v1/namespaces/${ns}/configmaps/ordered-app`,
      `/api/v1/namespaces/${ns}/persistentvolumeclaims/ordered`,
    ]);
  });
});

describe('observed', () => {
  const producerAndReader = `apiVersion: v1
kind: Service
metadata:
  name: observed-db
  annotations:
    # Held back until the test says so: wave 1 must not be applied before.
    stencil.dev/ready-when: "self.metadata.annotations['release'] == 'go'"
spec:
  ports: [{port: 5432}]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}-endpoint
  annotations:
    stencil.dev/wave: "1"
data:
  host: {{observed "v1" "Service" "observed-db" ".spec.clusterIP"}}
  url: {{concat "postgres://" (observed "v1" "Service" "observed-db" ".spec.clusterIP") ":5432"}}
`;

  it('applies the reading wave only once its producer is healthy, with the value it read', async () => {
    await user.apply(template(ns, 'reads', { ...REVERT, handlebars: producerAndReader }));
    await user.apply(instance(ns, 'reads', 'reads'));
    const service = { apiVersion: 'v1', kind: 'Service', name: 'observed-db', namespace: ns };
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', name: 'reads-endpoint', namespace: ns };
    const waiting = await until(
      'reads',
      (s) =>
        conditionOf(s, 'Applied')?.message.includes(
          `wave 1 waits for Service ${ns}/observed-db (InProgress`,
        ) === true,
      'wave 1 to wait for the Service',
    );
    expect(conditionOf(waiting, 'Applied')).toMatchObject({ status: 'False', reason: 'Waiting' });
    expect(waiting.phase).toBe('Progressing');
    expect((await user.get(service))?.spec).toHaveProperty('clusterIP');
    expect(await user.get(cm)).toBeUndefined();

    // The test, not the operator, owns this annotation: revert mode leaves it alone.
    await user.apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: service.name, namespace: ns, annotations: { release: 'go' } },
    });
    await until('reads', (s) => s.phase === 'Ready', 'reads Ready');
    const ip = ((await user.get(service)) as unknown as { spec: { clusterIP: string } }).spec
      .clusterIP;
    expect(ip).toMatch(/^10\.0\./);
    expect((await user.get(cm))?.data).toEqual({ host: ip, url: `postgres://${ip}:5432` });
  });

  it('makes a Template that reads an object of the same wave Invalid, naming both', async () => {
    await user.apply(
      template(ns, 'same-wave', {
        ...REVERT,
        handlebars: producerAndReader.replace('stencil.dev/wave: "1"', 'stencil.dev/wave: "0"'),
      }),
    );
    const status = await eventually(async () => {
      const object = await user.get({
        apiVersion: API_VERSION,
        kind: 'Template',
        name: 'same-wave',
        namespace: ns,
      });
      const s = (
        object as { status?: { phase?: string; conditions?: { type: string; message: string }[] } }
      )?.status;
      return s?.phase === 'Invalid' && s;
    }, 'the Template to be Invalid');
    expect(status.conditions?.find((c) => c.type === 'Valid')?.message).toContain(
      'ConfigMap "{{instance.name}}-endpoint" (wave 0) reads Service "observed-db" (wave 0, line 1) with observed',
    );
  });

  it('waits, naming the object and the path, while the JSONPath matches nothing', async () => {
    const body = `apiVersion: v1
kind: ConfigMap
metadata:
  name: observed-source
data:
  now: "1"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: observed-copy
  annotations:
    stencil.dev/wave: "1"
data:
  later: {{observed "v1" "ConfigMap" "observed-source" ".data.later"}}
`;
    await user.apply(template(ns, 'copies', { ...REVERT, handlebars: body }));
    await user.apply(instance(ns, 'copies', 'copies'));
    // The first pass may still wait for wave 0's health (just applied); the next one names the path.
    const waiting = await until(
      'copies',
      (s) =>
        conditionOf(s, 'Applied')?.reason === 'Waiting' &&
        Boolean(conditionOf(s, 'Applied')?.message.includes('matched nothing')),
      'the copy to wait for .data.later',
    );
    expect(conditionOf(waiting, 'Applied')?.message).toBe(
      `wave 1: ConfigMap ${ns}/observed-copy waits for ConfigMap ${ns}/observed-source: observed .data.later matched nothing in it`,
    );
    const copy = { apiVersion: 'v1', kind: 'ConfigMap', name: 'observed-copy', namespace: ns };
    expect(await user.get(copy)).toBeUndefined();

    // Another writer fills the field: the drift watch on ConfigMaps brings the change.
    const source = { apiVersion: 'v1', kind: 'ConfigMap', name: 'observed-source', namespace: ns };
    await user.apply(configMap(ns, source.name, { later: 'here' }));
    await until('copies', (s) => s.phase === 'Ready', 'copies Ready');
    expect((await user.get(copy))?.data).toEqual({ later: 'here' });
  });
});

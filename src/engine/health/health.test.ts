import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/object-meta.ts';
import { healthOf, healthOfWritten, NOT_REPORTED_YET, type HealthStatus } from './health.ts';

function obj(
  apiVersion: string,
  kind: string,
  rest: {
    spec?: object;
    status?: object;
    generation?: number;
    annotations?: Record<string, string>;
  } = {},
): KubeObject {
  return {
    apiVersion,
    kind,
    metadata: {
      name: 'x',
      namespace: 'team',
      ...(rest.generation !== undefined ? { generation: rest.generation } : {}),
      ...(rest.annotations ? { annotations: rest.annotations } : {}),
    },
    ...(rest.spec ? { spec: rest.spec } : {}),
    ...(rest.status ? { status: rest.status } : {}),
  };
}

const deployment = (status: object, replicas = 2): KubeObject =>
  obj('apps/v1', 'Deployment', { spec: { replicas }, status, generation: 3 });

describe('healthOf, built-in rules', () => {
  it.each<[string, KubeObject, HealthStatus, RegExp?]>([
    ['a ConfigMap (no status)', obj('v1', 'ConfigMap'), 'Current'],
    ['a Deployment no controller has touched (empty status)', deployment({}), 'Current'],
    [
      'a Deployment whose controller has not seen the new generation',
      deployment({ observedGeneration: 2, updatedReplicas: 2, availableReplicas: 2, replicas: 2 }),
      'InProgress',
      /observed generation 2 of 3/,
    ],
    [
      'a Deployment rolling out',
      deployment({ observedGeneration: 3, updatedReplicas: 1, availableReplicas: 1, replicas: 2 }),
      'InProgress',
      /1 of 2 replicas updated/,
    ],
    [
      'a Deployment waiting for availability',
      deployment({ observedGeneration: 3, updatedReplicas: 2, availableReplicas: 1, replicas: 2 }),
      'InProgress',
      /1 of 2 replicas available/,
    ],
    [
      'an available Deployment',
      deployment({ observedGeneration: 3, updatedReplicas: 2, availableReplicas: 2, replicas: 2 }),
      'Current',
    ],
    [
      'a Deployment past its progress deadline',
      deployment({
        observedGeneration: 3,
        conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }],
      }),
      'Failed',
    ],
    [
      'a StatefulSet mid-update',
      obj('apps/v1', 'StatefulSet', {
        spec: { replicas: 1 },
        status: { readyReplicas: 1, updateRevision: 'b', currentRevision: 'a' },
      }),
      'InProgress',
    ],
    [
      'a DaemonSet on every node',
      obj('apps/v1', 'DaemonSet', {
        status: { desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3 },
      }),
      'Current',
    ],
    ['a Job just created', obj('batch/v1', 'Job', { status: {} }), 'InProgress'],
    [
      'a complete Job',
      obj('batch/v1', 'Job', { status: { conditions: [{ type: 'Complete', status: 'True' }] } }),
      'Current',
    ],
    [
      'a failed Job',
      obj('batch/v1', 'Job', {
        status: {
          conditions: [{ type: 'Failed', status: 'True', message: 'BackoffLimitExceeded' }],
        },
      }),
      'Failed',
      /BackoffLimitExceeded/,
    ],
    ['a CronJob', obj('batch/v1', 'CronJob', { status: {} }), 'Current'],
    ['a pending Pod', obj('v1', 'Pod', { status: { phase: 'Pending' } }), 'InProgress'],
    [
      'a running, ready Pod',
      obj('v1', 'Pod', {
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      }),
      'Current',
    ],
    ['a failed Pod', obj('v1', 'Pod', { status: { phase: 'Failed' } }), 'Failed'],
    [
      'a Pending claim',
      obj('v1', 'PersistentVolumeClaim', { status: { phase: 'Pending' } }),
      'InProgress',
    ],
    [
      'a Bound claim',
      obj('v1', 'PersistentVolumeClaim', { status: { phase: 'Bound' } }),
      'Current',
    ],
    [
      'a LoadBalancer Service without an address',
      obj('v1', 'Service', { spec: { type: 'LoadBalancer' }, status: { loadBalancer: {} } }),
      'InProgress',
    ],
    [
      'a LoadBalancer Service with an address',
      obj('v1', 'Service', {
        spec: { type: 'LoadBalancer' },
        status: { loadBalancer: { ingress: [{ ip: '10.0.0.1' }] } },
      }),
      'Current',
    ],
    [
      'a ClusterIP Service',
      obj('v1', 'Service', { spec: { type: 'ClusterIP' }, status: { loadBalancer: {} } }),
      'Current',
    ],
    [
      'an established CRD',
      obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', {
        status: { conditions: [{ type: 'Established', status: 'True' }] },
      }),
      'Current',
    ],
    [
      'a CRD not yet established',
      obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', { status: {} }),
      'InProgress',
    ],
    [
      'a terminating Namespace',
      obj('v1', 'Namespace', { status: { phase: 'Terminating' } }),
      'InProgress',
    ],
  ])('%s is %s', (_what, object, status, message) => {
    const health = healthOf(object);
    expect(health.status).toBe(status);
    if (message) expect(health.message).toMatch(message);
    if (status === 'Current') expect(health.message).toBe('');
  });
});

describe('healthOf, the generic rule for other kinds', () => {
  const custom = (status: object, generation = 1): KubeObject =>
    obj('example.com/v1', 'Widget', { status, generation });

  it.each<[string, KubeObject, HealthStatus]>([
    ['no conditions', custom({ phase: 'whatever' }), 'Current'],
    ['Ready True', custom({ conditions: [{ type: 'Ready', status: 'True' }] }), 'Current'],
    ['Ready False', custom({ conditions: [{ type: 'Ready', status: 'False' }] }), 'InProgress'],
    [
      'Available False',
      custom({ conditions: [{ type: 'Available', status: 'False' }] }),
      'InProgress',
    ],
    [
      'Reconciling True',
      custom({ conditions: [{ type: 'Reconciling', status: 'True' }] }),
      'InProgress',
    ],
    ['Degraded True', custom({ conditions: [{ type: 'Degraded', status: 'True' }] }), 'Failed'],
    ['Stalled True', custom({ conditions: [{ type: 'Stalled', status: 'True' }] }), 'Failed'],
    ['a stale observedGeneration', custom({ observedGeneration: 1 }, 2), 'InProgress'],
  ])('%s', (_what, object, status) => {
    expect(healthOf(object).status).toBe(status);
  });
});

describe('healthOf, stencil.dev/ready-when', () => {
  const claim = (phase: string): KubeObject =>
    obj('v1', 'PersistentVolumeClaim', { status: { phase } });
  const rendered = (expression: string): KubeObject =>
    obj('v1', 'PersistentVolumeClaim', { annotations: { 'stencil.dev/ready-when': expression } });

  it('decides instead of the built-in rule, over the live object', () => {
    expect(healthOf(claim('Pending'), rendered("self.status.phase == 'Pending'")).status).toBe(
      'Current',
    );
    expect(healthOf(claim('Bound'), rendered("self.status.phase == 'Pending'"))).toEqual({
      status: 'InProgress',
      message: "waiting for self.status.phase == 'Pending'",
    });
  });

  it('waits while the fields it reads are missing', () => {
    expect(healthOf(obj('v1', 'ConfigMap'), rendered('self.status.ready')).status).toBe(
      'InProgress',
    );
  });

  it('is Unknown when not valid CEL or not a boolean', () => {
    expect(healthOf(claim('Bound'), rendered('self.((')).status).toBe('Unknown');
    expect(healthOf(claim('Bound'), rendered('self.status.phase')).status).toBe('Unknown');
  });
});

describe("healthOfWritten, the answer of the pass's own write", () => {
  const readyWhen = { 'stencil.dev/ready-when': 'true' };
  it.each<[string, KubeObject, HealthStatus, string]>([
    ['a Deployment just created (empty status)', deployment({}), 'InProgress', NOT_REPORTED_YET],
    [
      'a StatefulSet just created (no status at all)',
      obj('apps/v1', 'StatefulSet', { spec: { replicas: 1 }, generation: 1 }),
      'InProgress',
      NOT_REPORTED_YET,
    ],
    [
      'a Deployment its controller already reported on',
      deployment({ observedGeneration: 3, updatedReplicas: 2, availableReplicas: 2, replicas: 2 }),
      'Current',
      '',
    ],
    [
      'a Deployment rolling out keeps the built-in message',
      deployment({ observedGeneration: 3, updatedReplicas: 1, availableReplicas: 1, replicas: 2 }),
      'InProgress',
      '1 of 2 replicas updated',
    ],
    ['a ConfigMap (no controller reports on it)', obj('v1', 'ConfigMap'), 'Current', ''],
    [
      'a Deployment with ready-when (the expression decides)',
      obj('apps/v1', 'Deployment', { spec: { replicas: 1 }, annotations: readyWhen }),
      'Current',
      '',
    ],
  ])('%s is %s', (_what, object, status, message) => {
    const health = healthOfWritten(object);
    expect(health.status).toBe(status);
    expect(health.message).toContain(message);
    if (message === '') expect(health.message).toBe('');
  });

  it('judges only the write: a later read of the same empty status is Current (no controller)', () => {
    expect(healthOf(deployment({})).status).toBe('Current');
  });
});

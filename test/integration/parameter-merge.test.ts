// Parameter merges on the real API server (issue #14 part 4): what the instance's value merged
// with the Template default is what lands in the rendered object and in status, including a
// `null` that removes a default key (the API server keeps nulls inside a free-form value) and a
// value read from a ConfigMap as JSON.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { configMap, fromConfigMap, instance, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { conditionOf, instanceStatus } from './support/instances.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

let running: RunningOperator;
let user: KubeCluster;
let namespace: string;

beforeAll(async () => {
  namespace = await freshNamespace(connect(), 'merge');
  user = (await userClient()).cluster;
  running = await startOperator([namespace]);
});

afterAll(async () => {
  await running?.stop();
});

it('applies the merged value and reports it in status', async () => {
  await user.apply(
    configMap(namespace, 'ports', {
      json: '[{"name":"http","targetPort":8081},{"name":"grpc","port":9000}]',
    }),
  );
  await user.apply(
    template(namespace, 'merging', {
      parameters: [
        {
          name: 'settings',
          type: 'object',
          merge: 'deep',
          exposeInStatus: true,
          value: { log: { level: 'info', format: 'json' }, features: ['audit'], gone: 'x' },
        },
        {
          name: 'ports',
          type: 'array',
          merge: 'union-by-key',
          mergeKey: 'name',
          exposeInStatus: true,
          value: [
            { name: 'http', port: 80, targetPort: 8080 },
            { name: 'metrics', port: 9090 },
          ],
        },
      ],
      handlebars:
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}\ndata:\n  settings: {{quote (toJson parameters.settings)}}\n  ports: {{quote (toJson parameters.ports)}}\n',
    }),
  );
  await user.apply(
    instance(namespace, 'merged', 'merging', [
      { name: 'settings', value: { log: { level: 'debug' }, features: ['ledger'], gone: null } },
      { name: 'ports', valueFrom: fromConfigMap('ports', 'json') },
    ]),
  );
  const settings = { log: { level: 'debug', format: 'json' }, features: ['ledger'] };
  const ports = [
    { name: 'http', port: 80, targetPort: 8081 },
    { name: 'metrics', port: 9090 },
    { name: 'grpc', port: 9000 },
  ];
  const rendered = await eventually(
    () => user.get({ apiVersion: 'v1', kind: 'ConfigMap', name: 'merged', namespace }),
    'the rendered ConfigMap',
  );
  // The API server keeps maps with their keys sorted, so compare values, not text.
  const data = (rendered as { data?: Record<string, string> }).data ?? {};
  expect(JSON.parse(data.settings ?? '')).toEqual(settings);
  expect(data.ports).toBe(JSON.stringify(ports)); // list order is the merge's own
  const status = await eventually(async () => {
    const s = await instanceStatus(user, namespace, 'merged');
    return conditionOf(s)?.status === 'True' && s;
  }, 'a Ready instance');
  expect(status.resolvedParameters).toEqual([
    { name: 'settings', value: settings },
    {
      name: 'ports',
      value: ports,
      valueFrom: { configMapKeyRef: { name: 'ports', key: 'json' } },
    },
  ]);
});

it('fails ParametersValid naming the parameter when an item lacks the merge key', async () => {
  await user.apply(
    instance(namespace, 'keyless', 'merging', [{ name: 'ports', value: [{ port: 1 }] }]),
  );
  const condition = await eventually(async () => {
    const c = conditionOf(await instanceStatus(user, namespace, 'keyless'), 'ParametersValid');
    return c?.status === 'False' && c;
  }, 'ParametersValid=False');
  expect(condition).toMatchObject({
    reason: 'InvalidParameter',
    message: expect.stringContaining(
      'parameter "ports": cannot merge (union-by-key): the value item 0',
    ),
  });
  expect(
    await user.get({ apiVersion: 'v1', kind: 'ConfigMap', name: 'keyless', namespace }),
  ).toBeUndefined();
});

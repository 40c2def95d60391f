// Fault 8 (issue #11): the Secret every instance reads is deleted while 100 instances are
// converged, and an instance changes meanwhile. Each instance reports the missing source, keeps
// what was applied (nothing pruned on a failed resolution), and converges when the Secret returns.
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import type { KubeCluster } from '../../../src/kube/cluster.ts';
import { StencilMetrics } from '../../../src/metrics.ts';
import { connect, freshNamespace } from '../support/cluster.ts';
import { conditionOf } from '../support/instances.ts';
import {
  eventually,
  startOperator,
  userClient,
  type RunningOperator,
} from '../support/operator.ts';
import { countDeletes, type MetricsEndpoint } from './support/apiserver-requests.ts';
import { dataOf, Fleet, printFigures, TOKEN_SECRET, expectNothingLost } from './support/fleet.ts';
import { sumOf } from './support/operator-metrics.ts';

const COUNT = 100;
let running: RunningOperator;
let user: KubeCluster;
let fleet: Fleet;
const metrics = new StencilMetrics();
const endpoint = (): MetricsEndpoint => ({
  server: inject('kubeServer'),
  kubeconfigPath: inject('kubeconfig'),
});

beforeAll(async () => {
  const namespace = await freshNamespace(connect(), 'fault-source');
  user = (await userClient()).cluster;
  running = await startOperator([namespace], undefined, { metrics, concurrency: 8 });
  fleet = new Fleet(user, namespace, { count: COUNT, mode: 'revert' });
});

afterAll(async () => {
  await running?.stop();
});

it('keeps what was applied while the source Secret is gone, and converges when it returns', async () => {
  await fleet.start('initial-Secret-value-7f3a');
  await running.operator.idle();
  const deletesBefore = await countDeletes(endpoint(), ['configmaps']);
  const retriesBefore = await sumOf(metrics.queueRetries);

  await fleet.deleteSecret();
  const changed = fleet.names().slice(0, 10);
  await fleet.setColor(changed, 'green'); // a change made during the fault
  await eventually(
    async () =>
      (await fleet.instances()).every((i) => {
        const ready = conditionOf(i.status);
        return (
          ready?.reason === 'ParameterResolutionFailed' &&
          ready.message.includes(TOKEN_SECRET) &&
          i.status?.observedGeneration === i.metadata.generation
        );
      }),
    'every instance to report the missing Secret',
    90_000,
  );
  // Nothing was pruned or rewritten: every ConfigMap is still there, as last applied.
  const during = await fleet.configMaps();
  expect(during.size).toBe(COUNT);
  expect([...during.values()].filter((m) => dataOf(m)?.color !== 'blue')).toEqual([]);

  const healed = Date.now();
  await fleet.applySecret('rotated-Secret-value-91c2');
  await fleet.awaitConverged('every instance after the Secret returned');
  const convergeMs = Date.now() - healed;

  const deletes = (await countDeletes(endpoint(), ['configmaps'])) - deletesBefore;
  const lostUpdates = [...(await fleet.configMaps()).entries()].filter(
    ([name, m]) => changed.includes(name) && dataOf(m)?.color !== 'green',
  ).length;
  const leaks = await fleet.leaks(running.logs, ['initial-Secret-value-7f3a', fleet.secretValue]);
  printFigures('8 source Secret deleted and restored', {
    instances: COUNT,
    convergeAfterHealMs: convergeMs,
    retries: (await sumOf(metrics.queueRetries)) - retriesBefore,
    deletes,
    lostUpdates,
    leakedValues: leaks.length,
  });
  expectNothingLost({ deletes, lostUpdates, leaks });
}, 300_000);

// Fault 1 (issue #11): kube-apiserver SIGKILLed in the middle of a wave of applies (a Template
// change re-rendering 100 instances) and restarted, with owner changes made right after it comes
// back, while the operator's watches are still recovering. Its own control plane, so the kill
// does not disturb other test files.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KubeCluster } from '../../../src/kube/cluster.ts';
import { StencilMetrics } from '../../../src/metrics.ts';
import type { ControlPlane } from '../../../tools/control-plane/control-plane.ts';
import { eventually, startOperator, type RunningOperator } from '../support/operator.ts';
import { ownControlPlane, type OwnPlane } from './support/own-plane.ts';
import { countDeletes, type MetricsEndpoint } from './support/apiserver-requests.ts';
import { dataOf, Fleet, printFigures, expectNothingLost } from './support/fleet.ts';
import { sumOf } from './support/operator-metrics.ts';

const COUNT = 100;
const namespace = 'fault-apiserver';
let plane: ControlPlane;
let running: RunningOperator;
let user: KubeCluster;
let fleet: Fleet;
const metrics = new StencilMetrics();
let own: OwnPlane;
const endpoint = (): MetricsEndpoint => own.endpoint();

beforeAll(async () => {
  own = await ownControlPlane(namespace);
  ({ plane, user } = own);
  running = await startOperator([namespace], plane.kubeconfigPath, { metrics, concurrency: 8 });
  fleet = new Fleet(user, namespace, { count: COUNT, mode: 'revert' });
}, 180_000);

afterAll(async () => {
  await running?.stop();
  await plane?.stop();
});

it('converges every instance after the API server is killed mid-apply', async () => {
  await fleet.start('apiserver-fault-Secret-5e2c');
  await running.operator.idle();
  const deletesBefore = await countDeletes(endpoint(), ['configmaps']);
  const retriesBefore = await sumOf(metrics.queueRetries);

  // A new Template revision re-applies all 100 ConfigMaps; kill the server once some are done.
  fleet.revision = 2;
  await fleet.applyTemplate();
  const applied = await eventually(async () => {
    const done = [...(await fleet.configMaps()).values()].filter(
      (m) => dataOf(m)?.revision === '2',
    ).length;
    return done > 0 && done;
  }, 'the wave to start');
  const deletesBeforeKill = (await countDeletes(endpoint(), ['configmaps'])) - deletesBefore;
  await plane.restartApiserver('SIGKILL');
  const healed = Date.now();
  const changed = fleet.names().slice(-10);
  await fleet.setColor(changed, 'green'); // owner changes while the operator is recovering
  await fleet.awaitConverged('every instance after the API server came back', 150_000);
  const convergeMs = Date.now() - healed;

  // The restarted server counts from zero.
  const deletes = deletesBeforeKill + (await countDeletes(endpoint(), ['configmaps']));
  const maps = await fleet.configMaps();
  const lostUpdates = changed.filter((n) => dataOf(maps.get(n))?.color !== 'green').length;
  const leaks = await fleet.leaks(running.logs);
  printFigures('1 API server SIGKILLed mid-apply', {
    instances: COUNT,
    appliedBeforeKill: applied,
    convergeAfterRestartMs: convergeMs,
    retries: (await sumOf(metrics.queueRetries)) - retriesBefore,
    deletes,
    lostUpdates,
    leakedValues: leaks.length,
  });
  expect(applied).toBeLessThan(COUNT); // the kill did land mid-wave
  expect(maps.size).toBe(COUNT);
  expectNothingLost({ deletes, lostUpdates, leaks });
  expect(running.operator.ready()).toBe(true);
}, 400_000);

// Fault 5 (issue #11): throttling. kube-apiserver runs with a tiny max-in-flight (API Priority
// and Fairness off), so Stencil's requests get 429 Too Many Requests with Retry-After while 100
// instances converge and 10 change. No reconcile is lost, the client waits as told and retries,
// and the number of 429s and retries is printed. Its own control plane (the flags are global).
// With --long (support/soak.ts): 500 instances through three waves of changes.
import { expect, it } from 'vitest';
import { countDeletes, countRequests } from '../support/apiserver-requests.ts';
import { fleetScenario } from './support/fleet-scenario.ts';
import { dataOf, printFigures, expectNothingLost } from './support/fleet.ts';
import { sumOf } from './support/operator-metrics.ts';
import { cycleColor, SOAK } from './support/soak.ts';

const COUNT = SOAK.instances;
const namespace = 'fault-throttled';
const scenario = fleetScenario(namespace, {
  apiserverArgs: [
    '--enable-priority-and-fairness=false',
    '--max-requests-inflight=2',
    '--max-mutating-requests-inflight=1',
  ],
  // system:masters is exempt from max-in-flight: the operator runs as an ordinary user bound to
  // cluster-admin, as it would in a cluster (the fleet's user stays exempt).
  prepare: ({ admin }) =>
    admin
      .apply({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'fault-throttled-operator' },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: 'cluster-admin',
        },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'ordinary' }],
      })
      .then(() => undefined),
  operatorKubeconfig: (plane) => plane.ordinaryKubeconfigPath,
});

it(
  'converges every instance while the API server answers 429, losing no reconcile',
  async () => {
    const { running, fleet, metrics, endpoint } = scenario;
    const throttledBefore = await countRequests(endpoint(), { codes: ['429'] });
    const convergeMs = await fleet.start('throttled-Secret-value-c4e8', SOAK.timeout(240_000));
    // One wave of changes by default; --long keeps the fleet throttled through three.
    for (let cycle = 1; cycle <= SOAK.cycles; cycle++) {
      const changed = fleet.names().slice((cycle - 1) * 10, cycle * 10);
      const color = cycleColor(cycle);
      await fleet.setColor(changed, color);
      fleet.revision = cycle + 1;
      await fleet.applyTemplate(); // and a wave of applies for every instance, still throttled
      const waveMs = await fleet.awaitConverged(
        'every instance after the changes',
        SOAK.timeout(240_000),
      );

      const throttled = (await countRequests(endpoint(), { codes: ['429'] })) - throttledBefore;
      const deletes = await countDeletes(endpoint(), ['configmaps']);
      const maps = await fleet.configMaps();
      const lostUpdates = changed.filter((n) => dataOf(maps.get(n))?.color !== color).length;
      const leaks = await fleet.leaks(running.logs);
      printFigures('5 throttled (max-requests-inflight 2, mutating 1, APF off)', {
        instances: COUNT,
        ...(SOAK.long ? { cycle } : {}),
        convergeMs,
        secondWaveMs: waveMs,
        responses429: throttled,
        queueRetries: await sumOf(metrics.queueRetries),
        deletes,
        lostUpdates,
        leakedValues: leaks.length,
      });
      expect(throttled).toBeGreaterThan(0); // the fault did happen
      expectNothingLost({ deletes, lostUpdates, leaks });
    }
  },
  SOAK.timeout(600_000),
);

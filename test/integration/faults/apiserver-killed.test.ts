// Fault 1 (issue #11): kube-apiserver SIGKILLed in the middle of a wave of applies (a Template
// change re-rendering 100 instances) and restarted, with owner changes made right after it comes
// back, while the operator's watches are still recovering. Its own control plane, so the kill
// does not disturb other test files. With --long (support/soak.ts): 500 instances, three
// cycles, the API server down 20 s each time.
import { expect, it } from 'vitest';
import { eventually } from '../support/operator.ts';
import { countDeletes } from '../support/apiserver-requests.ts';
import { fleetScenario } from './support/fleet-scenario.ts';
import { dataOf, printFigures, expectNothingLost } from './support/fleet.ts';
import { sumOf } from './support/operator-metrics.ts';
import { changedIn, cycleColor, SOAK } from './support/soak.ts';

const COUNT = SOAK.instances;
const namespace = 'fault-apiserver';
const scenario = fleetScenario(namespace);

it(
  'converges every instance after the API server is killed mid-apply',
  async () => {
    const { plane, running, fleet, metrics, endpoint } = scenario;
    await fleet.start('apiserver-fault-Secret-5e2c', SOAK.timeout(120_000));
    await running.operator.idle();

    // One cycle by default; --long repeats it, each with a new Template revision, new owner
    // changes, and the API server down for a while.
    for (let cycle = 1; cycle <= SOAK.cycles; cycle++) {
      const deletesBefore = await countDeletes(endpoint(), ['configmaps']);
      const retriesBefore = await sumOf(metrics.queueRetries);

      // A new Template revision re-applies every ConfigMap; kill the server once some are done.
      fleet.revision = cycle + 1;
      await fleet.applyTemplate();
      const applied = await eventually(async () => {
        const done = [...(await fleet.configMaps()).values()].filter(
          (m) => dataOf(m)?.revision === String(fleet.revision),
        ).length;
        return done > 0 && done;
      }, 'the wave to start');
      const deletesBeforeKill = (await countDeletes(endpoint(), ['configmaps'])) - deletesBefore;
      await plane.restartApiserver('SIGKILL', SOAK.holdMs);
      const healed = Date.now();
      const changed = changedIn(fleet.names(), cycle);
      const color = cycleColor(cycle);
      await fleet.setColor(changed, color); // owner changes while the operator is recovering
      await fleet.awaitConverged(
        'every instance after the API server came back',
        SOAK.timeout(150_000),
      );
      const convergeMs = Date.now() - healed;

      // The restarted server counts from zero.
      const deletes = deletesBeforeKill + (await countDeletes(endpoint(), ['configmaps']));
      const maps = await fleet.configMaps();
      const lostUpdates = changed.filter((n) => dataOf(maps.get(n))?.color !== color).length;
      const leaks = await fleet.leaks(running.logs);
      printFigures('1 API server SIGKILLed mid-apply', {
        instances: COUNT,
        ...(SOAK.long ? { cycle, downMs: SOAK.holdMs } : {}),
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
    }
  },
  SOAK.timeout(400_000),
);

// Fault 2 (issue #11): etcd SIGKILLed (the API server answers 5xx while it is down) and
// restarted, then compacted to its current revision, with owner changes made as soon as writes
// succeed again; then the API server restarts, so the operator's watches come back with an
// expired resourceVersion, get 410 and relist: the watches that ended and the LISTs of Templates and
// Namespaces (only the operator reads those here) are counted on the API server. Its own plane. With --long
// (support/soak.ts): 500 instances, three cycles, etcd down 20 s each time.
import { expect, it } from 'vitest';
import { eventually } from '../support/operator.ts';
import { countDeletes, countRequests } from '../support/apiserver-requests.ts';
import { fleetScenario } from './support/fleet-scenario.ts';
import { dataOf, printFigures, expectNothingLost } from './support/fleet.ts';
import { sumOf } from './support/operator-metrics.ts';
import { cycleColor, SOAK } from './support/soak.ts';

const COUNT = SOAK.instances;
const namespace = 'fault-etcd';
const scenario = fleetScenario(namespace);
// Informers list by streaming (a WATCH with initial events): a watch refused as expired ends, and
// is counted, before the stream that relists opens; a server without streaming lists gets LISTs.
const lists = (): Promise<number> =>
  countRequests(scenario.endpoint(), {
    verbs: ['LIST', 'WATCH'],
    resources: ['templates', 'namespaces'],
  });

it(
  'converges every instance after etcd is killed, restarted and compacted',
  async () => {
    const { plane, running, fleet, metrics, endpoint } = scenario;
    await fleet.start('etcd-fault-Secret-6d0f', SOAK.timeout(120_000));
    await running.operator.idle();

    // One cycle by default; --long repeats it, with etcd down for a while each time.
    for (let cycle = 1; cycle <= SOAK.cycles; cycle++) {
      const deletesBefore = await countDeletes(endpoint(), ['configmaps']);
      const retriesBefore = await sumOf(metrics.queueRetries);

      await plane.restartEtcd(SOAK.holdMs);
      const healed = Date.now();
      const changed = fleet.names().slice((cycle - 1) * 10, cycle * 10);
      const color = cycleColor(cycle);
      await eventually(
        async () => {
          await fleet.setColor(changed, color); // retried until the API server can write again
          return true;
        },
        'a write to succeed after etcd restarted',
        60_000,
      );
      fleet.revision = cycle + 1;
      await fleet.applyTemplate();
      const revision = await plane.compactEtcd();
      // A restarted API server's watch cache starts at the compacted revision: the operator's
      // watches come back with older resourceVersions, which are gone (410), and must relist.
      const deletesBeforeRestart = (await countDeletes(endpoint(), ['configmaps'])) - deletesBefore;
      await plane.restartApiserver();
      await fleet.awaitConverged('every instance after etcd came back', SOAK.timeout(150_000));
      const convergeMs = Date.now() - healed;

      // The restarted API server counts from zero.
      const deletes = deletesBeforeRestart + (await countDeletes(endpoint(), ['configmaps']));
      const maps = await fleet.configMaps();
      const lostUpdates = changed.filter((n) => dataOf(maps.get(n))?.color !== color).length;
      const leaks = await fleet.leaks(running.logs);
      printFigures('2 etcd SIGKILLed, restarted and compacted', {
        instances: COUNT,
        ...(SOAK.long ? { cycle, etcdDownMs: SOAK.holdMs } : {}),
        compactedAtRevision: revision,
        convergeAfterRestartMs: convergeMs,
        operatorListsOfTemplatesAndNamespaces: await lists(),
        retries: (await sumOf(metrics.queueRetries)) - retriesBefore,
        deletes,
        lostUpdates,
        leakedValues: leaks.length,
      });
      expect(await lists()).toBeGreaterThan(0); // the informers did relist
      expectNothingLost({ deletes, lostUpdates, leaks });
      expect(running.operator.ready()).toBe(true);
    }
  },
  SOAK.timeout(400_000),
);

// Fault 8 (issue #11): the Secret every instance reads is deleted while 100 instances are
// converged, and an instance changes meanwhile. Each instance reports the missing source, keeps
// what was applied (nothing pruned on a failed resolution), and converges when the Secret returns.
// With --long (support/soak.ts): 500 instances, three cycles, the Secret gone 20 s each time.
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
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
import { countDeletes, sharedEndpoint } from '../support/apiserver-requests.ts';
import { dataOf, Fleet, printFigures, TOKEN_SECRET, expectNothingLost } from './support/fleet.ts';
import { sumOf } from './support/operator-metrics.ts';
import { SOAK } from './support/soak.ts';

const COUNT = SOAK.instances;
let running: RunningOperator;
let user: KubeCluster;
let fleet: Fleet;
const metrics = new StencilMetrics();
const endpoint = sharedEndpoint;

beforeAll(async () => {
  const namespace = await freshNamespace(connect(), 'fault-source');
  user = (await userClient()).cluster;
  running = await startOperator([namespace], undefined, { metrics, concurrency: 8 });
  fleet = new Fleet(user, namespace, { count: COUNT, mode: 'revert' });
});

afterAll(async () => {
  await running?.stop();
});

it(
  'keeps what was applied while the source Secret is gone, and converges when it returns',
  async () => {
    const values = ['initial-Secret-value-7f3a'];
    await fleet.start(values[0]!, SOAK.timeout(120_000));
    await running.operator.idle();

    // One cycle by default; the soak run (--long) repeats the fault, each time with new changes
    // during it and a new Secret value when it returns, and holds the fault for a while.
    for (let cycle = 1; cycle <= SOAK.cycles; cycle++) {
      const deletesBefore = await countDeletes(endpoint(), ['configmaps']);
      const retriesBefore = await sumOf(metrics.queueRetries);
      const applied = new Map(fleet.expected);
      const color = cycle === 1 ? 'green' : `green-${cycle}`;

      await fleet.deleteSecret();
      const changed = fleet.names().slice((cycle - 1) * 10, cycle * 10);
      await fleet.setColor(changed, color); // a change made during the fault
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
        SOAK.timeout(90_000),
      );
      if (SOAK.holdMs > 0) await delay(SOAK.holdMs);
      // Nothing was pruned or rewritten: every ConfigMap is still there, as last applied.
      const during = await fleet.configMaps();
      expect(during.size).toBe(COUNT);
      expect(
        [...during.entries()].filter(([name, m]) => dataOf(m)?.color !== applied.get(name)),
      ).toEqual([]);

      const healed = Date.now();
      values.push(`rotated-Secret-value-91c2-${cycle}`);
      await fleet.applySecret(values.at(-1)!);
      await fleet.awaitConverged('every instance after the Secret returned', SOAK.timeout(90_000));
      const convergeMs = Date.now() - healed;

      const deletes = (await countDeletes(endpoint(), ['configmaps'])) - deletesBefore;
      const lostUpdates = [...(await fleet.configMaps()).entries()].filter(
        ([name, m]) => changed.includes(name) && dataOf(m)?.color !== color,
      ).length;
      const leaks = await fleet.leaks(running.logs, values);
      printFigures('8 source Secret deleted and restored', {
        instances: COUNT,
        ...(SOAK.long ? { cycle, heldMs: SOAK.holdMs } : {}),
        convergeAfterHealMs: convergeMs,
        retries: (await sumOf(metrics.queueRetries)) - retriesBefore,
        deletes,
        lostUpdates,
        leakedValues: leaks.length,
      });
      expectNothingLost({ deletes, lostUpdates, leaks });
    }
  },
  SOAK.timeout(300_000),
);

// Fault 6 (issue #11): webhook outage. The operator (and so the strict-mode webhook) is stopped
// while strict resources exist: edits of strict resources by others are refused (failurePolicy
// Fail), resources of revert Templates are not affected at all, and the restarted operator heals
// everything that changed meanwhile. With --long (support/soak.ts): 500 instances, three
// outages of at least 20 s.
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KubeCluster } from '../../../src/kube/cluster.ts';
import { configMap, instance, template } from '../support/builders.ts';
import { connect, freshNamespace } from '../support/cluster.ts';
import {
  eventually,
  loopbackWebhook,
  rejectionOf,
  removeWebhookConfiguration,
  startOperator,
  userClient,
  type RunningOperator,
} from '../support/operator.ts';
import { countDeletes, sharedEndpoint } from '../support/apiserver-requests.ts';
import { dataOf, Fleet, printFigures } from './support/fleet.ts';
import { changedIn, cycleColor, SOAK } from './support/soak.ts';

const COUNT = SOAK.instances;
const TIMEOUT = SOAK.timeout(300_000);
const STRICT = 10;
const configuration = `stencil-faults-outage-${process.pid}`;
let running: RunningOperator | undefined;
let user: KubeCluster;
let fleet: Fleet;
let namespace: string;
const endpoint = sharedEndpoint;

const start = (): Promise<RunningOperator> =>
  startOperator([namespace], undefined, {
    concurrency: 8,
    webhook: loopbackWebhook(namespace, configuration),
  });

const strictName = (i: number): string => `locked-${i}`;

beforeAll(async () => {
  namespace = await freshNamespace(connect(), 'fault-outage');
  user = (await userClient()).cluster;
  running = await start();
  fleet = new Fleet(user, namespace, { count: COUNT, mode: 'revert' });
});

afterAll(async () => {
  await removeWebhookConfiguration(user, configuration);
  await running?.stop();
});

it(
  'refuses strict edits while the webhook is down, leaves the rest alone, and heals after',
  async () => {
    await fleet.start('outage-Secret-value-2a6b', SOAK.timeout(120_000));
    await user.apply(
      template(namespace, 'locked', {
        sync: { mode: 'strict' },
        handlebars:
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}\ndata:\n  color: blue\n',
      }),
    );
    for (let i = 0; i < STRICT; i++) await user.apply(instance(namespace, strictName(i), 'locked'));
    const logs: string[] = [];

    // One outage by default; --long repeats it, the operator down at least 20 s each time.
    for (let cycle = 1; cycle <= SOAK.cycles; cycle++) {
      const strictBefore = await eventually(async () => {
        const maps = await Promise.all(
          Array.from({ length: STRICT }, (_, i) =>
            user.get({ apiVersion: 'v1', kind: 'ConfigMap', name: strictName(i), namespace }),
          ),
        );
        return maps.every(Boolean) && maps.map((m) => m?.metadata.resourceVersion);
      }, 'the strict ConfigMaps');
      await running!.operator.idle();
      const deletesBefore = await countDeletes(endpoint(), ['configmaps']);

      logs.push(...running!.logs);
      await running!.stop();
      running = undefined;
      const stopped = Date.now();
      // Strict: refused while nobody can answer for it.
      const refusals = [];
      for (let i = 0; i < STRICT; i++)
        refusals.push(
          await rejectionOf(user.apply(configMap(namespace, strictName(i), { color: 'red' }))),
        );
      // Revert: not affected at all — an edit and a delete go through.
      const edited = fleet.names().slice((cycle - 1) * 10, cycle * 10);
      for (const name of edited) await user.apply(configMap(namespace, name, { color: 'red' }));
      const removed = fleet.names()[50 + cycle - 1]!;
      await user.delete({ apiVersion: 'v1', kind: 'ConfigMap', name: removed, namespace });
      const changed = changedIn(fleet.names(), cycle);
      const color = cycleColor(cycle);
      await fleet.setColor(changed, color);
      const remaining = SOAK.holdMs - (Date.now() - stopped);
      if (remaining > 0) await delay(remaining);

      const restarted = Date.now();
      running = await start();
      await fleet.awaitConverged(
        'every instance after the operator restarted',
        SOAK.timeout(90_000),
      );
      const convergeMs = Date.now() - restarted;

      const strictAfter = await Promise.all(
        Array.from({ length: STRICT }, (_, i) =>
          user.get({ apiVersion: 'v1', kind: 'ConfigMap', name: strictName(i), namespace }),
        ),
      );
      const deletes = (await countDeletes(endpoint(), ['configmaps'])) - deletesBefore;
      const maps = await fleet.configMaps();
      const lostUpdates = changed.filter((n) => dataOf(maps.get(n))?.color !== color).length;
      const leaks = await fleet.leaks([...logs, ...running.logs]);
      printFigures('6 webhook outage (operator stopped)', {
        instances: COUNT,
        ...(SOAK.long ? { cycle, operatorDownAtLeastMs: SOAK.holdMs } : {}),
        strictEditsRefused: refusals.filter(Boolean).length,
        revertEditsAccepted: edited.length + 1,
        convergeAfterRestartMs: convergeMs,
        deletes,
        lostUpdates,
        leakedValues: leaks.length,
      });
      expect(refusals.every((r) => r !== undefined)).toBe(true);
      expect(strictAfter.map((m) => m?.metadata.resourceVersion)).toEqual(strictBefore);
      expect(deletes).toBe(1); // the test's own delete; none by the operator
      expect(maps.get(removed)).toBeDefined();
      expect(lostUpdates).toBe(0);
      expect(leaks).toEqual([]);
    }
  },
  TIMEOUT,
);

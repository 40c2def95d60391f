// Fault 4 (issue #11): a 409 storm. A second field manager fights Stencil over the fields it
// renders, in a loop: server-side applies without force (each a 409 Conflict) and with force
// (each taking the field, which Stencil must revert), plus edits of a strict resource (each
// denied by the webhook). Stencil's value wins, each foreign write costs at most a bounded number
// of reconciles (no hot loop; the rate is printed), the strict resource never changes, and a
// change made during the storm is applied. With --long (support/soak.ts): 500 instances, 100 of
// them fought over for 30 rounds.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KubeConnection } from '../../../src/kube/connection.ts';
import type { KubeCluster } from '../../../src/kube/cluster.ts';
import { StencilMetrics } from '../../../src/metrics.ts';
import { isClusterError } from '../../../src/reconcile/cluster-port.ts';
import { configMap, instance, template } from '../support/builders.ts';
import { connect, freshNamespace } from '../support/cluster.ts';
import {
  eventually,
  loopbackWebhook,
  removeWebhookConfiguration,
  startOperator,
  userClient,
  type RunningOperator,
} from '../support/operator.ts';
import { countDeletes, sharedEndpoint } from '../support/apiserver-requests.ts';
import { dataOf, Fleet, printFigures, expectNothingLost } from './support/fleet.ts';
import { sumOf } from './support/operator-metrics.ts';
import { SOAK } from './support/soak.ts';

const COUNT = SOAK.instances;
const TIMEOUT = SOAK.timeout(300_000);
// Instances whose ConfigMap the second manager fights over: 20 of 100 (100 of 500 with --long).
const FOUGHT = COUNT / 5;
const ROUNDS = 10 * SOAK.cycles; // even: half without force, half with

const configuration = `stencil-faults-storm-${process.pid}`;
let running: RunningOperator;
let user: KubeCluster;
let userConnection: KubeConnection;
let fleet: Fleet;
let namespace: string;
const metrics = new StencilMetrics();
const endpoint = sharedEndpoint;

/** A server-side apply by the field manager `fighter`; 'conflict' when the server says 409. */
async function fight(name: string, force: boolean): Promise<'written' | 'conflict' | 'denied'> {
  try {
    await userConnection.http.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${namespace}/configmaps/${name}`,
      query: { fieldManager: 'fighter', force: String(force) },
      body: configMap(namespace, name, { color: 'red' }),
      contentType: 'application/apply-patch+yaml',
    });
    return 'written';
  } catch (error) {
    if (isClusterError(error, 'Conflict')) return 'conflict';
    if (isClusterError(error)) return 'denied';
    throw error;
  }
}

beforeAll(async () => {
  namespace = await freshNamespace(connect(), 'fault-storm');
  ({ cluster: user, connection: userConnection } = await userClient());
  running = await startOperator([namespace], undefined, {
    metrics,
    concurrency: 8,
    webhook: loopbackWebhook(namespace, configuration),
  });
  fleet = new Fleet(user, namespace, { count: COUNT, mode: 'revert' });
});

afterAll(async () => {
  await removeWebhookConfiguration(user, configuration);
  await running?.stop();
  userConnection?.http.close();
});

it(
  'wins a field-manager fight without a hot loop and keeps a strict resource unchanged',
  async () => {
    await fleet.start('storm-Secret-value-0b7d', SOAK.timeout(120_000));
    await user.apply(
      template(namespace, 'locked', {
        sync: { mode: 'strict' },
        handlebars:
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: locked\ndata:\n  color: blue\n',
      }),
    );
    await user.apply(instance(namespace, 'locked', 'locked'));
    const locked = await eventually(
      () => user.get({ apiVersion: 'v1', kind: 'ConfigMap', name: 'locked', namespace }),
      'the strict ConfigMap',
    );
    await running.operator.idle();
    const deletesBefore = await countDeletes(endpoint(), ['configmaps']);
    const reconcilesBefore = await sumOf(metrics.reconcileTotal, {
      controller: 'templateinstance',
    });
    const revertsBefore = await sumOf(metrics.driftReverts);

    const fought = fleet.names().slice(0, FOUGHT);
    const changed = fought.slice(10); // fought over AND changed by their owner during the storm
    const outcomes = { written: 0, conflict: 0, denied: 0 };
    const started = Date.now();
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of fought) outcomes[await fight(name, round % 2 === 1)]++;
      const strict = await fight('locked', true);
      expect(strict).toBe('denied');
      if (round === ROUNDS / 2) await fleet.setColor(changed, 'green');
    }
    const stormMs = Date.now() - started;

    await fleet.awaitConverged('every instance after the storm', SOAK.timeout(90_000));
    await running.operator.idle();
    const reconciles =
      (await sumOf(metrics.reconcileTotal, { controller: 'templateinstance' })) - reconcilesBefore;
    const reverts = (await sumOf(metrics.driftReverts)) - revertsBefore;
    const after = await user.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'locked',
      namespace,
    });
    const deletes = (await countDeletes(endpoint(), ['configmaps'])) - deletesBefore;
    const maps = await fleet.configMaps();
    const lostUpdates = changed.filter((n) => dataOf(maps.get(n))?.color !== 'green').length;
    const leaks = await fleet.leaks(running.logs);
    printFigures('4 conflict storm by a second field manager', {
      instances: COUNT,
      foreignForcedWrites: outcomes.written,
      conflicts409: outcomes.conflict,
      strictDenials: ROUNDS,
      reverts,
      reconciles,
      reconcilesPerForeignWrite: (reconciles / Math.max(1, outcomes.written)).toFixed(2),
      requeueRatePerSecond: ((reconciles / stormMs) * 1000).toFixed(1),
      deletes,
      lostUpdates,
      leakedValues: leaks.length,
    });
    expect(outcomes.conflict).toBe((FOUGHT * ROUNDS) / 2);
    expect(outcomes.written).toBe((FOUGHT * ROUNDS) / 2);
    // No amplification: a foreign write costs at most a couple of reconciles (its watch event and
    // the echo of the revert), plus one per owner change; a hot loop would be unbounded.
    // An owner's change that lands in a pass a drift event started is counted as a revert too.
    expect(reverts).toBeLessThanOrEqual(outcomes.written + changed.length);
    expect(reconciles).toBeLessThanOrEqual(3 * outcomes.written + 2 * changed.length);
    expect(after?.metadata.resourceVersion).toBe(locked.metadata.resourceVersion);
    expect(dataOf(after)).toEqual({ color: 'blue' });
    expectNothingLost({ deletes, lostUpdates, leaks });
  },
  TIMEOUT,
);

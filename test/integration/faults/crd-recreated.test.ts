// Fault 7 (issue #11): partial discovery. A CRD whose kind every instance renders is deleted
// (the API server removes its objects) and re-created, with a change made meanwhile. Each
// instance says which kind is missing, keeps its other resources (no delete, no rewrite), and
// converges, the change included, once the kind is served again.
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import type { KubeObject } from '../../../src/api/object-meta.ts';
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
import { dataOf, Fleet, printFigures, expectNothingLost } from './support/fleet.ts';
import { sumOf } from './support/operator-metrics.ts';
import { cycleColor, SOAK } from './support/soak.ts';

const COUNT = SOAK.instances;
const GROUP = 'faults.stencil.dev';
let running: RunningOperator;
let admin: KubeCluster;
let fleet: Fleet;
let namespace: string;
const metrics = new StencilMetrics();
const endpoint = sharedEndpoint;

const WIDGET_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        },
      },
    ],
  },
};

const WIDGET = `apiVersion: ${GROUP}/v1
kind: Widget
metadata:
  name: {{instance.name}}
spec:
  color: {{parameters.color}}
`;

async function widgetColors(): Promise<Map<string, unknown>> {
  const list = await admin.list(`${GROUP}/v1`, 'Widget', { namespace });
  return new Map(
    list.map((w) => [w.metadata.name ?? '', (w as { spec?: { color?: unknown } }).spec?.color]),
  );
}

async function widgetsServed(): Promise<boolean> {
  return await admin.list(`${GROUP}/v1`, 'Widget', { namespace }).then(
    () => true,
    () => false,
  );
}

beforeAll(async () => {
  namespace = await freshNamespace(connect(), 'fault-crd');
  admin = (await userClient(inject('kubeconfig'))).cluster;
  await admin.apply(WIDGET_CRD);
  await eventually(widgetsServed, 'the Widget kind to be served');
  running = await startOperator([namespace], undefined, { metrics, concurrency: 8 });
  fleet = new Fleet((await userClient()).cluster, namespace, {
    count: COUNT,
    mode: 'revert',
    extraDocuments: WIDGET,
  });
});

afterAll(async () => {
  await running?.stop();
  await admin?.delete({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    name: `widgets.${GROUP}`,
  });
});

it(
  'reports the missing kind, keeps the rest applied, and heals when the CRD returns',
  async () => {
    await fleet.start('crd-fault-Secret-4d1e', SOAK.timeout(120_000));
    expect((await widgetColors()).size).toBe(COUNT);
    await running.operator.idle();

    // One cycle by default; --long repeats it, with the CRD gone for a while each time.
    for (let cycle = 1; cycle <= SOAK.cycles; cycle++) {
      const deletesBefore = await countDeletes(endpoint(), ['configmaps']);
      const retriesBefore = await sumOf(metrics.queueRetries);
      const applied = new Map(fleet.expected);

      await admin.delete({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name: `widgets.${GROUP}`,
      });
      await eventually(async () => !(await widgetsServed()), 'the Widget kind to be gone', 60_000);
      const changed = fleet.names().slice((cycle - 1) * 10, cycle * 10);
      const color = cycleColor(cycle);
      await fleet.setColor(changed, color); // a change made during the fault
      await eventually(
        async () =>
          (await fleet.instances()).every((i) => {
            const ready = conditionOf(i.status);
            return (
              ready?.status === 'False' &&
              /kind Widget \(faults\.stencil\.dev\/v1\).* not serve/.test(ready.message) &&
              i.status?.observedGeneration === i.metadata.generation
            );
          }),
        'every instance to report the missing Widget kind',
        SOAK.timeout(90_000),
      );
      if (SOAK.holdMs > 0) await delay(SOAK.holdMs);
      const reported = conditionOf((await fleet.instances())[0]?.status);
      console.log(`[fault] 7 reported as: ${reported?.reason}: ${reported?.message}`);
      const during = await fleet.configMaps();
      expect(during.size).toBe(COUNT);
      expect(
        [...during.entries()].filter(([name, m]) => dataOf(m)?.color !== applied.get(name)),
      ).toEqual([]);

      const healed = Date.now();
      await admin.apply(WIDGET_CRD);
      await eventually(widgetsServed, 'the Widget kind to be served again');
      await fleet.awaitConverged('every instance after the CRD returned', SOAK.timeout(150_000));
      const colors = await eventually(
        async () => {
          const now = await widgetColors();
          return now.size === COUNT && now;
        },
        'every Widget re-created',
        SOAK.timeout(30_000),
      );
      const convergeMs = Date.now() - healed;

      const deletes = (await countDeletes(endpoint(), ['configmaps'])) - deletesBefore;
      const lostUpdates = changed.filter(
        (name) => colors.get(name) !== color || dataOf(during.get(name)) === undefined,
      ).length;
      const leaks = await fleet.leaks(running.logs);
      printFigures('7 CRD deleted and re-created', {
        instances: COUNT,
        ...(SOAK.long ? { cycle, crdGoneAtLeastMs: SOAK.holdMs } : {}),
        convergeAfterHealMs: convergeMs,
        retries: (await sumOf(metrics.queueRetries)) - retriesBefore,
        deletes,
        lostUpdates,
        leakedValues: leaks.length,
      });
      expectNothingLost({ deletes, lostUpdates, leaks });
    }
  },
  SOAK.timeout(400_000),
);

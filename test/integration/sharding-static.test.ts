// Static sharding (`--shard-index i --shard-count n`, issue #15): two operators split the
// namespaces by rendezvous hashing with no Lease at all; every instance converges, reconciled by
// the one operator whose shard its namespace hashes to.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ownerOf } from '../../src/framework/coordination/rendezvous.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { CONFIG_MAP_BODY, instance, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { conditionOf, instanceStatus } from './support/instances.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

let user: KubeCluster;
let templateNamespace: string;
const namespaces: string[] = [];
const operators: RunningOperator[] = [];

beforeAll(async () => {
  const cluster = connect();
  user = (await userClient()).cluster;
  templateNamespace = await freshNamespace(cluster, 'static-shard-templates');
  for (let i = 0; i < 6; i++) namespaces.push(await freshNamespace(cluster, `static-shard-${i}`));
  for (const index of [0, 1])
    operators.push(
      await startOperator([templateNamespace, ...namespaces], undefined, {
        sharding: { mode: 'static', index, count: 2 },
      }),
    );
});

afterAll(async () => {
  await Promise.all(operators.map((o) => o.stop()));
});

it('splits the namespaces between two fixed shards, each instance reconciled by its shard only', async () => {
  await user.apply(
    template(templateNamespace, 'static', {
      targetNamespaces: { explicit: { allow: { literal: ['*'] } } },
      handlebars: CONFIG_MAP_BODY,
    }),
  );
  for (const ns of namespaces)
    await user.apply(instance(ns, 'one', { name: 'static', namespace: templateNamespace }));
  for (const ns of namespaces)
    await eventually(
      async () => conditionOf(await instanceStatus(user, ns, 'one'))?.status === 'True',
      `the instance in ${ns} to be Ready`,
    );
  for (const ns of namespaces) {
    const shard = Number(ownerOf(ns, ['0', '1']));
    const reconciledBy = operators.map((o) =>
      o.logs.some((l) => l.includes('"msg":"reconciled"') && l.includes(`"namespace":"${ns}"`)),
    );
    expect(reconciledBy).toEqual([shard === 0, shard === 1]);
  }
  // The Template is reconciled by the shard its own namespace hashes to, and only by it.
  const templateShard = Number(ownerOf(templateNamespace, ['0', '1']));
  const templateReconciledBy = operators.map((o) =>
    o.logs.some(
      (l) =>
        l.includes('"controller":"template"') && l.includes(`"namespace":"${templateNamespace}"`),
    ),
  );
  expect(templateReconciledBy).toEqual([templateShard === 0, templateShard === 1]);
});

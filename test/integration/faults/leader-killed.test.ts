// Fault 3 (issue #11): two `stencil run --leader-elect` processes; the leader is SIGKILLed in the
// middle of a wave that re-applies and prunes for 100 instances. The standby takes the Lease and
// finishes the wave: each orphan deleted exactly once (no double prune), nothing that should
// exist deleted, and owner changes made while no replica led are applied. With --long
// (support/soak.ts): 500 instances, three kills, a new standby started after each.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KubeCluster } from '../../../src/kube/cluster.ts';
import { freePort } from '../../../tools/control-plane/control-plane.ts';
import { connect, freshNamespace } from '../support/cluster.ts';
import { eventually, userClient } from '../support/operator.ts';
import { spawnStencilRun, type StencilProcess } from '../support/stencil-process.ts';
import { countRequests, sharedEndpoint } from '../support/apiserver-requests.ts';
import { dataOf, Fleet, printFigures } from './support/fleet.ts';
import { changedIn, cycleColor, SOAK } from './support/soak.ts';
import { grantTemplateAccount } from '../../../tools/local/operator-identity.ts';

const COUNT = SOAK.instances;
/** A second ConfigMap per instance: dropping it from the Template makes every instance prune. */
const EXTRA =
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}-extra\ndata:\n  a: "1"\n';
let namespace: string;
let operatorNamespace: string;
let user: KubeCluster;
let fleet: Fleet;
const endpoint = sharedEndpoint;

interface Replica extends StencilProcess {
  metricsPort: number;
}
const replicas: Replica[] = [];

async function startReplica(): Promise<Replica> {
  const metricsPort = await freePort();
  const replica: Replica = Object.assign(
    spawnStencilRun([
      '--leader-elect',
      `--namespaces=${namespace}`,
      `--operator-namespace=${operatorNamespace}`,
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      `--health-probe-bind-address=127.0.0.1:${await freePort()}`,
      '--webhook-port=0',
      '--concurrency=2', // a wave long enough to be interrupted
    ]),
    { metricsPort },
  );
  replicas.push(replica);
  return replica;
}

const alive = (r: Replica): boolean => r.child.exitCode === null && r.child.signalCode === null;

async function leader(): Promise<Replica | undefined> {
  for (const r of replicas.filter(alive)) {
    const body = await fetch(`http://127.0.0.1:${r.metricsPort}/metrics`)
      .then((res) => res.text())
      .catch(() => '');
    if (/^stencil_leader 1$/m.test(body)) return r;
  }
  return undefined;
}

/** Successful and failed DELETEs of ConfigMaps the API server has served. */
async function deletes(): Promise<{ done: number; absent: number }> {
  const filter = { verbs: ['DELETE'], resources: ['configmaps'] };
  return {
    done: await countRequests(endpoint(), { ...filter, codes: ['200', '202'] }),
    absent: await countRequests(endpoint(), { ...filter, codes: ['404'] }),
  };
}

beforeAll(async () => {
  const cluster = connect();
  namespace = await freshNamespace(cluster, 'fault-leader');
  operatorNamespace = await freshNamespace(cluster, 'fault-leader-system');
  user = (await userClient()).cluster;
  await grantTemplateAccount(user, namespace);
  fleet = new Fleet(user, namespace, {
    count: COUNT,
    mode: 'revert',
    extraDocuments: EXTRA,
  });
  await startReplica();
  await startReplica();
}, 60_000);

afterAll(() => {
  for (const r of replicas) if (alive(r)) r.child.kill('SIGKILL');
});

it(
  'lets the standby finish a wave the killed leader began, pruning each orphan once',
  async () => {
    await eventually(leader, 'a leader', 45_000);
    await fleet.start('leader-fault-Secret-a93f', SOAK.timeout(180_000));

    // One kill by default; --long repeats it, starting a new standby after each kill. Odd cycles
    // drop the extra ConfigMap (every instance prunes one object), even cycles bring it back.
    for (let cycle = 1; cycle <= SOAK.cycles; cycle++) {
      const first = await eventually(leader, 'a leader', 60_000);
      const before = await deletes();
      const prunes = cycle % 2 === 1;
      fleet.options.extraDocuments = prunes ? undefined : EXTRA;
      fleet.revision = cycle + 1;
      await fleet.applyTemplate();
      const progress = await eventually(async () => {
        const done = [...(await fleet.configMaps()).values()].filter(
          (m) => dataOf(m)?.revision === String(fleet.revision),
        ).length;
        return done > 0 && done;
      }, 'the wave to start');
      first.child.kill('SIGKILL');
      const killed = Date.now();
      const changed = changedIn(fleet.names(), cycle);
      const color = cycleColor(cycle);
      await fleet.setColor(changed, color); // while no replica leads
      const next = await eventually(leader, 'the standby to take over', 60_000);
      const takeoverMs = Date.now() - killed;
      await fleet.awaitConverged('every instance after the takeover', SOAK.timeout(180_000));
      const extras = await eventually(
        async () => {
          const left = [...(await fleet.configMaps()).keys()].filter((n) => n.endsWith('-extra'));
          return left.length === (prunes ? 0 : COUNT) && left;
        },
        prunes ? 'every extra ConfigMap pruned' : 'every extra ConfigMap back',
        SOAK.timeout(30_000),
      );
      const convergeMs = Date.now() - killed;

      const after = await deletes();
      const maps = await fleet.configMaps();
      const lostUpdates = changed.filter((n) => dataOf(maps.get(n))?.color !== color).length;
      const leaks = await fleet.leaks(replicas.map((r) => r.output));
      printFigures('3 leader SIGKILLed mid-wave', {
        instances: COUNT,
        ...(SOAK.long ? { cycle, wave: prunes ? 'prune' : 'create' } : {}),
        appliedBeforeKill: progress,
        takeoverMs,
        convergeAfterKillMs: convergeMs,
        deletes: after.done - before.done,
        deletesOfAlreadyGone: after.absent - before.absent,
        lostUpdates,
        leakedValues: leaks.length,
      });
      expect(next).not.toBe(first);
      expect(progress).toBeLessThan(COUNT); // the kill did land mid-wave
      expect(extras).toHaveLength(prunes ? 0 : COUNT);
      expect(maps.size).toBe(prunes ? COUNT : 2 * COUNT);
      // Each orphan once, nothing else.
      expect(after.done - before.done).toBe(prunes ? COUNT : 0);
      expect(lostUpdates).toBe(0);
      expect(leaks).toEqual([]);
      if (cycle < SOAK.cycles) await startReplica(); // a standby for the next kill
    }
  },
  SOAK.timeout(400_000),
);

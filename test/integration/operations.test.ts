// `stencil run` in production shape (SPEC §9): two replicas with --leader-elect (only the leader
// reconciles; a standby takes over when it dies), probes, Prometheus metrics, and a SIGTERM that
// exits 0 with the Lease released.
import { freePort } from '../../tools/control-plane/control-plane.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { instance, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { eventually, userClient } from './support/operator.ts';
import { spawnStencilRun, type StencilProcess } from './support/stencil-process.ts';
import { grantTemplateAccount } from '../../tools/local/operator-identity.ts';

let ns: string;
let operatorNs: string;
let user: KubeCluster;

interface Replica extends StencilProcess {
  metricsPort: number;
  probePort: number;
}
const replicas: Replica[] = [];

async function startReplica(): Promise<Replica> {
  const [metricsPort, probePort] = [await freePort(), await freePort()];
  const replica: Replica = Object.assign(
    spawnStencilRun([
      '--leader-elect',
      `--namespaces=${ns}`,
      `--operator-namespace=${operatorNs}`,
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      `--health-probe-bind-address=127.0.0.1:${probePort}`,
      '--webhook-port=0',
    ]),
    { metricsPort, probePort },
  );
  replicas.push(replica);
  return replica;
}

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

function metric(body: string, name: string, labels = ''): number {
  const line = body
    .split('\n')
    .find(
      (l) =>
        l.startsWith(`${name}${labels ? `{${labels}}` : ''} `) ||
        (labels === '' && l.startsWith(`${name} `)),
    );
  return line ? Number(line.split(' ').pop()) : NaN;
}

const leaderOf = async (): Promise<Replica | undefined> => {
  for (const r of replicas.filter(
    (x) => x.child.exitCode === null && x.child.signalCode === null,
  )) {
    const { body } = await get(r.metricsPort, '/metrics').catch(() => ({ body: '' }));
    if (metric(body, 'stencil_leader') === 1) return r;
  }
  return undefined;
};

const color = async (name: string): Promise<string | undefined> =>
  (
    (await user.get({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace: ns })) as
      { data?: { color?: string } } | undefined
  )?.data?.color;

beforeAll(async () => {
  const cluster = connect();
  ns = await freshNamespace(cluster, 'ops');
  operatorNs = await freshNamespace(cluster, 'stencil-system');
  user = (await userClient()).cluster;
  await grantTemplateAccount(user, ns);
  await user.apply(
    template(ns, 'app', {
      sync: { mode: 'revert' },
      parameters: [{ name: 'color' }],
      handlebars:
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}\ndata:\n  color: {{parameters.color}}\n',
    }),
  );
  for (const replica of [await startReplica(), await startReplica()]) {
    await eventually(
      async () => (await get(replica.probePort, '/readyz')).status === 200,
      'a replica to be ready',
      30_000,
    );
  }
}, 60_000);

afterAll(() => {
  for (const r of replicas) if (r.child.exitCode === null) r.child.kill('SIGKILL');
});

describe('two replicas with --leader-elect', () => {
  it('elect exactly one leader, and only the leader reconciles', async () => {
    const leader = await eventually(leaderOf, 'a leader', 30_000);
    await user.apply(instance(ns, 'one', 'app', [{ name: 'color', value: 'red' }]));
    await eventually(async () => (await color('one')) === 'red', 'the instance to be applied');
    const follower = replicas.find((r) => r !== leader)!;
    const followerMetrics = (await get(follower.metricsPort, '/metrics')).body;
    expect(metric(followerMetrics, 'stencil_leader')).toBe(0);
    expect(followerMetrics).not.toMatch(/^stencil_reconcile_total\{/m);
    // The ConfigMap is there before the pass ends (its status write comes after): the counter
    // follows once the pass is done.
    await eventually(async () => {
      const leaderMetrics = (await get(leader.metricsPort, '/metrics')).body;
      const passes = metric(
        leaderMetrics,
        'stencil_reconcile_total',
        'controller="templateinstance",result="success"',
      );
      return passes > 0;
    }, 'a successful pass counted by the leader');
  }, 60_000);

  it('serve probes, and /metrics with the series of SPEC §9', async () => {
    const leader = (await leaderOf())!;
    expect(await get(leader.probePort, '/healthz')).toMatchObject({ status: 200 });
    expect(await get(leader.probePort, '/readyz')).toMatchObject({ status: 200 });
    // The instance's status is written just after its resources: wait for the gauge to see it.
    const body = await eventually(async () => {
      const text = (await get(leader.metricsPort, '/metrics')).body;
      return metric(text, 'stencil_instances', 'phase="Ready"') === 1 && text;
    }, 'the Ready instance in stencil_instances');
    for (const series of [
      'stencil_reconcile_total',
      'stencil_reconcile_errors_total',
      'stencil_reconcile_duration_seconds_bucket',
      'stencil_workqueue_depth',
      'stencil_workqueue_retries_total',
      'stencil_workqueue_queue_duration_seconds_bucket',
      'stencil_applies_total',
      'stencil_drift_reverts_total',
      'stencil_orphan_deletes_total',
      'stencil_source_watches',
      'stencil_instances',
      'stencil_rotation_lag_seconds_bucket',
    ]) {
      expect(body, series).toContain(series);
    }
    expect(metric(body, 'stencil_applies_total', 'result="applied"')).toBeGreaterThanOrEqual(1);
    expect(metric(body, 'stencil_source_watches', 'kind="ConfigMap (drift)"')).toBe(1);
  });

  it('hand over to the standby when the leader dies, converging a change made during the gap', async () => {
    const leader = (await leaderOf())!;
    leader.child.kill('SIGKILL');
    await user.apply(instance(ns, 'one', 'app', [{ name: 'color', value: 'green' }]));
    await user.apply(instance(ns, 'two', 'app', [{ name: 'color', value: 'blue' }]));
    const next = await eventually(leaderOf, 'the standby to take over', 45_000);
    expect(next).not.toBe(leader);
    await eventually(
      async () => (await color('one')) === 'green' && (await color('two')) === 'blue',
      'the gap to converge',
      30_000,
    );
  }, 90_000);

  it('exit 0 on SIGTERM within the grace period, releasing the Lease', async () => {
    const leader = (await leaderOf())!;
    const started = Date.now();
    const exited = new Promise<number | null>((resolve) =>
      leader.child.once('exit', (code) => resolve(code)),
    );
    leader.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(25_000);
    const lease = (await user.get({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      name: 'stencil-leader',
      namespace: operatorNs,
    })) as unknown as { spec: { holderIdentity?: string } };
    expect(lease.spec.holderIdentity ?? '').toBe('');
    expect(leader.output).toContain('released the lease');
  }, 60_000);
});

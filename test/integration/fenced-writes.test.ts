// Issue #16 on the real API server: a leader that loses its Lease mid-reconcile stops writing
// before the Lease could be anyone else's; status writes never overwrite a newer status; a
// Template that installs a CRD and a resource of it converges; waiting is a requeue, not an
// error backoff.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Condition } from '../../src/api/condition.ts';
import type { TemplateInstanceStatus } from '../../src/api/template-instance.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import type { KubeHttp } from '../../src/kube/http.ts';
import { isClusterError } from '../../src/reconcile/cluster-port.ts';
import { instance, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { conditionOf, instanceStatus } from './support/instances.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

let ns: string;
let user: KubeCluster;
let userHttp: KubeHttp;

const configMaps = (count: number): string =>
  Array.from(
    { length: count },
    (_, i) =>
      `---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}-${i}\ndata:\n  v: "{{instance.name}}"\n`,
  ).join('');

const statusOf = (name: string): Promise<TemplateInstanceStatus | undefined> =>
  instanceStatus(user, ns, name);
const ready = (status: TemplateInstanceStatus | undefined): Condition | undefined =>
  conditionOf(status);

beforeAll(async () => {
  ns = await freshNamespace(connect(), 'fenced');
  const client = await userClient();
  user = client.cluster;
  userHttp = client.connection.http;
});

describe('a leader whose Lease is taken away mid-reconcile', () => {
  const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
  const leaseDurationMs = 4_000;
  let running: RunningOperator;
  let lostAt = 0;

  afterAll(async () => {
    await running?.stop();
  });

  it('stops writing at once: no write after it noticed, none after its Lease expired', async () => {
    const writes: { at: number; path: string }[] = [];
    let lastRenewal = 0;
    running = await startOperator([ns], undefined, {
      leaderElection: {
        identity: 'old-leader',
        namespace: ns,
        name: 'fenced-leader',
        leaseDurationMs,
        renewDeadlineMs: 3_000,
        retryPeriodMs: 500,
        onLost: () => (lostAt = Date.now()),
      },
    });
    running.connection.http.onRequest((method, path, _dryRun, status) => {
      if (path.includes('/leases/')) {
        if (method === 'PUT' && status === 200) lastRenewal = Date.now();
        return;
      }
      if (WRITES.has(method)) writes.push({ at: Date.now(), path });
    });
    await eventually(async () => running.operator.isLeader(), 'the operator to lead');
    await user.apply(template(ns, 'wave', { handlebars: configMaps(6) }));
    for (let i = 0; i < 40; i++) await user.apply(instance(ns, `wave-${i}`, 'wave'));
    // Mid-wave: some instances written, far from all.
    await eventually(async () => writes.length >= 20, 'the wave to start writing');
    // Another holder takes the Lease, as a new leader would once it had expired.
    const path = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/fenced-leader`;
    const lease = await userHttp.request<{ spec: object }>({ method: 'GET', path });
    await userHttp.request({
      method: 'PUT',
      path,
      body: {
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: 'intruder',
          renewTime: new Date().toISOString().replace('Z', '000Z'),
        },
      },
    });
    await eventually(async () => lostAt > 0, 'the old leader to notice', 10_000);
    const expiry = lastRenewal + leaseDurationMs;
    // Nothing can write any more, shown without waiting out the clock: an instance created now
    // reaches the operator's cache (a leading operator would queue it, and its pass would add
    // the finalizer), and once no pass is in flight it is still untouched. So no write can come
    // after the checks below, whenever the Lease expires.
    await user.apply(instance(ns, 'after-loss', 'wave'));
    await eventually(
      async () => running.operator.instances.requests().some((r) => r.name === 'after-loss'),
      'the operator to see an instance created after it lost the Lease',
    );
    await running.operator.idle();
    const untouched = await user.get({
      apiVersion: API_VERSION,
      kind: 'TemplateInstance',
      name: 'after-loss',
      namespace: ns,
    });
    expect(untouched?.metadata.finalizers).toBeUndefined();
    expect(await statusOf('after-loss')).toBeUndefined();
    expect(writes.filter((w) => w.at > lostAt)).toEqual([]);
    expect(writes.filter((w) => w.at > expiry)).toEqual([]);
    expect(running.operator.isLeader()).toBe(false);
    // It was mid-wave: not every instance was finished when it stopped.
    const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => statusOf(`wave-${i}`)));
    expect(statuses.filter((s) => ready(s)?.status === 'True').length).toBeLessThan(40);
  });
});

describe('two writers of one instance status', () => {
  let running: RunningOperator;

  afterAll(async () => {
    await running?.stop();
  });

  it('refuses a write from a stale read instead of overwriting the newer status', async () => {
    running = await startOperator([ns]);
    await user.apply(template(ns, 'plain', { handlebars: configMaps(1) }));
    await user.apply(instance(ns, 'contested', 'plain'));
    await eventually(async () => ready(await statusOf('contested'))?.status === 'True', 'Ready');
    await running.stop();
    const id = {
      apiVersion: API_VERSION,
      kind: 'TemplateInstance',
      name: 'contested',
      namespace: ns,
    };
    const stale = (await user.get(id))!;
    const fresh = (await user.get(id))!;
    // The newer writer (here: the test, as another controller would) writes first...
    await user.patchStatus(fresh, { frozenAt: '2026-12-03T00:00:00Z' });
    // ...then the operator's client writes from its older read: refused, not merged over.
    const error = await running.connection.cluster
      .patchStatus(stale, { frozenAt: '1999-01-01T00:00:00Z' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isClusterError(error, 'Conflict')).toBe(true);
    expect((await statusOf('contested'))?.frozenAt).toBe('2026-12-03T00:00:00Z');
  });
});

describe('a Template that installs a CRD and a resource of it', () => {
  let running: RunningOperator;

  afterAll(async () => {
    await running?.stop();
  });

  it('converges on a cluster where the CRD did not exist', async () => {
    const group = `fenced-${randomBytes(3).toString('hex')}.example.com`;
    const body = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.${group}
spec:
  group: ${group}
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: { type: object, properties: { size: { type: integer } } }
---
apiVersion: ${group}/v1
kind: Widget
metadata:
  name: {{instance.name}}
spec:
  size: 3
`;
    running = await startOperator([ns], undefined, { templateAccess: 'cluster' });
    await user.apply(
      template(ns, 'operator-install', { handlebars: body, allowClusterScopedResources: true }),
    );
    await user.apply(instance(ns, 'with-crd', 'operator-install'));
    const status = await eventually(async () => {
      const s = await statusOf('with-crd');
      return ready(s)?.status === 'True' && s;
    }, 'the instance with a CRD and a Widget to be Ready');
    expect(status.renderedResources?.map((r) => r.kind).sort()).toEqual([
      'CustomResourceDefinition',
      'Widget',
    ]);
    const widget = await user.get({
      apiVersion: `${group}/v1`,
      kind: 'Widget',
      name: 'with-crd',
      namespace: ns,
    });
    expect((widget as { spec?: unknown } | undefined)?.spec).toEqual({ size: 3 });
    // Waiting for the CRD to be served is a requeue: no pass holds its worker polling
    // discovery (it used to, for up to 8 s).
    const passes = running.logs
      .filter((l) => l.includes('"name":"with-crd"') && l.includes('"ms"'))
      .map((l) => (JSON.parse(l) as { ms: number }).ms);
    expect(passes.length).toBeGreaterThan(0);
    expect(Math.max(...passes)).toBeLessThan(2_000);
  });
});

describe('waiting on the cluster', () => {
  let running: RunningOperator;

  afterAll(async () => {
    await running?.stop();
  });

  it('requeues while a pruned object waits on a finalizer, with no error backoff', async () => {
    running = await startOperator([ns]);
    // revert: an `off` instance would freeze after its first apply and never prune.
    await user.apply(
      template(ns, 'shrinking', { sync: { mode: 'revert' }, handlebars: configMaps(2) }),
    );
    await user.apply(instance(ns, 'held', 'shrinking'));
    await eventually(async () => ready(await statusOf('held'))?.status === 'True', 'held Ready');
    const id = { apiVersion: 'v1', kind: 'ConfigMap', name: 'held-1', namespace: ns };
    await user.setFinalizers((await user.get(id))!, ['test.stencil.dev/hold']);
    const before = running.logs.length;
    await user.apply(
      template(ns, 'shrinking', { sync: { mode: 'revert' }, handlebars: configMaps(1) }),
    );
    // The prune is seen waiting first. Passes counted from the Template change alone could be
    // ones that ran before the operator saw it (the finalizer edit above is itself a change of
    // a rendered object), which made this test fail now and then.
    const waiting = (s: Awaited<ReturnType<typeof statusOf>>): boolean =>
      !!s?.renderedResources?.some((r) => r.name === 'held-1' && r.status === 'Failed');
    await eventually(async () => waiting(await statusOf('held')), 'the prune shown waiting');
    const since = running.logs.length;
    // Three more passes while the delete waits: requeued, never reported as a failed reconcile.
    await eventually(
      async () =>
        running.logs
          .slice(since)
          .filter((l) => l.includes('"reconciled"') && l.includes('"name":"held"')).length >= 3,
      'three passes over the waiting instance',
      20_000,
    );
    const failures = running.logs
      .slice(before)
      .filter((l) => l.includes('"name":"held"') && l.includes('will retry'));
    expect(failures).toEqual([]);
    expect(waiting(await statusOf('held'))).toBe(true);
    await user.setFinalizers((await user.get(id))!, []);
    await eventually(async () => {
      const s = await statusOf('held');
      return s?.renderedResources?.length === 1 && ready(s)?.status === 'True';
    }, 'the prune to finish');
  });
});

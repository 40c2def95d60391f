// The request cuts of issue #25 (ADRs 0025–0028), each on the real API server: the instance as an
// ApplySet parent, the adoption check read from the dry-run answer, source values kept by
// (uid, resourceVersion) but never a Secret's, and the applied-hash annotation that lets a
// restarted operator skip every dry run yet still correct what changed while it was away.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import {
  ANNOTATION_APPLIED_HASH,
  ANNOTATION_APPLYSET_GROUP_KINDS,
  ANNOTATION_APPLYSET_NAMESPACES,
  ANNOTATION_APPLYSET_TOOLING,
  API_VERSION,
  FINALIZER_INSTANCE,
  LABEL_APPLYSET_ID,
  LABEL_APPLYSET_PARENT_TYPE,
  LABEL_APPLYSET_PART_OF,
} from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import {
  configMap,
  fromConfigMap,
  fromSecret,
  instance,
  secret,
  template,
} from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { conditionOf, instanceStatus } from './support/instances.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

const BODY = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}
data:
  setting: {{quote parameters.setting}}
  passwordHash: {{quote (sha256 parameters.password)}}
---
apiVersion: v1
kind: Service
metadata:
  name: {{instance.name}}
spec:
  ports: [{port: 80}]
`;

let user: KubeCluster;
let ns: string;
let running: RunningOperator | undefined;
const sent: string[] = [];

async function start(): Promise<RunningOperator> {
  const r = await startOperator([ns]);
  r.connection.http.onRequest((method, path, dryRun) =>
    sent.push(`${method} ${path}${dryRun ? ' (dry run)' : ''}`),
  );
  return r;
}

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
const id = (
  kind: string,
  name: string,
  namespace = ns,
): { apiVersion: string; kind: string; name: string; namespace: string } => ({
  apiVersion: kind === 'TemplateInstance' ? API_VERSION : 'v1',
  kind,
  name,
  namespace,
});

async function ready(name: string, namespace = ns): Promise<void> {
  await eventually(
    async () => conditionOf(await instanceStatus(user, namespace, name))?.status === 'True',
    `${namespace}/${name} Ready`,
  );
}

const dataOf = (o: KubeObject | undefined): Record<string, string> =>
  (o as { data?: Record<string, string> } | undefined)?.data ?? {};

async function hashOf(name: string): Promise<string | undefined> {
  return dataOf(await user.get(id('ConfigMap', name))).passwordHash;
}

beforeAll(async () => {
  const cluster = connect();
  ns = await freshNamespace(cluster, 'lean');
  user = (await userClient()).cluster;
  await user.apply(
    template(ns, 'app', {
      sync: { mode: 'revert' },
      parameters: [{ name: 'setting' }, { name: 'password' }],
      handlebars: BODY,
    }),
  );
  await user.apply(configMap(ns, 'shared', { setting: 'v1' }));
  for (const name of ['a', 'b', 'taken'])
    await user.apply(secret(ns, `db-${name}`, { password: `p-${name}` }));
  running = await start();
}, 60_000);

afterAll(async () => {
  await running?.stop();
});

const app = (name: string): KubeObject =>
  instance(ns, name, 'app', [
    { name: 'setting', valueFrom: fromConfigMap('shared', 'setting') },
    { name: 'password', valueFrom: fromSecret(`db-${name}`, 'password') },
  ]);

describe('ApplySet (KEP-3659)', () => {
  it('the instance is the parent: finalizer and ApplySet record; rendered objects are part of it', async () => {
    await user.apply(app('a'));
    await ready('a');
    const parent = await user.get(id('TemplateInstance', 'a'));
    const setId = parent?.metadata.labels?.[LABEL_APPLYSET_ID];
    expect(setId).toMatch(/^applyset-[A-Za-z0-9_-]{43}-v1$/);
    expect(parent?.metadata.finalizers).toContain(FINALIZER_INSTANCE);
    expect(parent?.metadata.annotations).toMatchObject({
      [ANNOTATION_APPLYSET_TOOLING]: 'stencil/v1',
      [ANNOTATION_APPLYSET_GROUP_KINDS]: 'ConfigMap,Service',
    });
    expect(parent?.metadata.annotations?.[ANNOTATION_APPLYSET_NAMESPACES]).toBeUndefined();
    for (const kind of ['ConfigMap', 'Service'])
      expect((await user.get(id(kind, 'a')))?.metadata.labels?.[LABEL_APPLYSET_PART_OF]).toBe(
        setId,
      );
    const crd = await user.get({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name: 'templateinstances.stencil.dev',
    });
    expect(crd?.metadata.labels?.[LABEL_APPLYSET_PARENT_TYPE]).toBe('true');
    // The namespace's first reader of the shared ConfigMap waited for the source watch's list,
    // which brought the value: no GET of it (ADR 0027). The Secret is read: it is never kept.
    expect(sent.filter((r) => /^GET .*\/configmaps\/shared$/.test(r))).toEqual([]);
    expect(sent.filter((r) => /^GET .*\/secrets\/db-a$/.test(r)).length).toBeGreaterThan(0);
  });

  it('one metadata write before applying, none to the status until the pass ends', async () => {
    sent.length = 0;
    await user.apply(app('b'));
    await ready('b');
    await running!.operator.idle();
    const writes = sent.filter(
      (r) => /^(PATCH|POST|PUT)/.test(r) && r.includes('/templateinstances/b'),
    );
    expect(writes).toEqual([
      expect.stringMatching(/^PATCH .*\/templateinstances\/b$/),
      expect.stringMatching(/^PATCH .*\/templateinstances\/b\/status$/),
    ]);
    // New objects: no read of them before their dry run, and no read of the instance itself.
    expect(sent.filter((r) => /^GET .*\/(services|configmaps)\/b$/.test(r))).toEqual([]);
    expect(sent.filter((r) => /^GET .*\/templateinstances\/b$/.test(r))).toEqual([]);
  });
});

describe('adoption read from the dry-run answer', () => {
  it('an existing unlabelled object is refused, and left as it was', async () => {
    const stranger = await user.apply(configMap(ns, 'taken', { mine: 'yes' }));
    await user.apply(app('taken'));
    const status = await eventually(async () => {
      const s = await instanceStatus(user, ns, 'taken');
      return conditionOf(s)?.reason === 'ApplyFailed' ? s : undefined;
    }, 'the instance refused');
    expect(conditionOf(status)?.message).toContain(
      'already exists and is not managed by this instance',
    );
    const after = await user.get(id('ConfigMap', 'taken'));
    expect(after?.metadata.resourceVersion).toBe(stranger.metadata.resourceVersion);
    expect(dataOf(after)).toEqual({ mine: 'yes' });
    // The gate held: nothing of the instance was written, its Service included.
    expect(await user.get(id('Service', 'taken'))).toBeUndefined();
    await user.delete(id('TemplateInstance', 'taken'));
  });
});

describe('source values kept by (uid, resourceVersion)', () => {
  it('a second reader of a ConfigMap reads it from the cache, and follows its update', async () => {
    await ready('a');
    sent.length = 0;
    await user.apply(configMap(ns, 'shared', { setting: 'v2' }));
    await eventually(
      async () => dataOf(await user.get(id('ConfigMap', 'a'))).setting === 'v2',
      'a follows',
    );
    await eventually(
      async () => dataOf(await user.get(id('ConfigMap', 'b'))).setting === 'v2',
      'b follows',
    );
    await running!.operator.idle();
    // Both re-rendered with the new value, which the watch's event brought: no GET of it.
    expect(sent.filter((r) => /^GET .*\/configmaps\/shared$/.test(r))).toEqual([]);
  });

  it('keeps no Secret after a pass: only the ConfigMap is in the cache', async () => {
    await running!.operator.idle();
    const kinds = running!.operator.sourceValues.kinds();
    expect(kinds).toContain('v1/ConfigMap');
    expect(kinds.filter((k) => k.endsWith('/Secret'))).toEqual([]);
  });
});

describe('the applied-hash annotation after a restart', () => {
  it('a restart sends no dry run for what is unchanged, and corrects what changed meanwhile', async () => {
    await ready('a');
    await ready('b');
    const applied = await user.get(id('ConfigMap', 'a'));
    expect(applied?.metadata.annotations?.[ANNOTATION_APPLIED_HASH]).toMatch(/^[0-9a-f]{64}$/);
    await running!.stop();
    running = undefined;
    // While no operator runs, someone edits what instance a rendered.
    await user.apply(configMap(ns, 'a', { passwordHash: 'edited' }));
    const untouched = (await user.get(id('ConfigMap', 'b')))?.metadata.resourceVersion;
    sent.length = 0;
    running = await start();
    await eventually(async () => (await hashOf('a')) === sha256('p-a'), 'the edit reverted');
    running.operator.resyncAll();
    await running.operator.idle();
    const dryRuns = sent.filter((r) => r.endsWith('(dry run)'));
    // Only the changed ConfigMap of a is checked again; b's objects and a's Service are trusted.
    expect(dryRuns).toEqual([expect.stringMatching(/\/configmaps\/a \(dry run\)$/)]);
    expect((await user.get(id('ConfigMap', 'b')))?.metadata.resourceVersion).toBe(untouched);
  }, 60_000);
});

describe('a leader handover', () => {
  // Two replicas campaign for one Lease, in a namespace of their own. The standby has never
  // applied anything: what it knows of the objects is their applied-hash annotation.
  let handover: string;
  const replicas: RunningOperator[] = [];

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
  });

  async function replica(identity: string): Promise<RunningOperator> {
    const r = await startOperator([handover], undefined, {
      leaderElection: {
        identity,
        namespace: handover,
        name: 'lean-leader',
        leaseDurationMs: 4_000,
        renewDeadlineMs: 3_000,
        retryPeriodMs: 500,
        onLost: () => undefined,
      },
    });
    replicas.push(r);
    return r;
  }

  it('the new leader sends no write and no dry run when nothing changed', async () => {
    handover = await freshNamespace(connect(), 'handover');
    await user.apply(
      template(handover, 'app', {
        sync: { mode: 'revert' },
        parameters: [{ name: 'setting' }, { name: 'password' }],
        handlebars: BODY,
      }),
    );
    await user.apply(configMap(handover, 'shared', { setting: 'v1' }));
    const names = ['h1', 'h2', 'h3'];
    for (const name of names) {
      await user.apply(secret(handover, `db-${name}`, { password: `p-${name}` }));
      await user.apply(
        instance(handover, name, 'app', [
          { name: 'setting', valueFrom: fromConfigMap('shared', 'setting') },
          { name: 'password', valueFrom: fromSecret(`db-${name}`, 'password') },
        ]),
      );
    }
    const first = await replica('first');
    await eventually(async () => first.operator.isLeader(), 'the first replica to lead');
    for (const name of names) await ready(name, handover);
    await first.operator.idle();

    const second = await replica('second');
    const byStandby: string[] = [];
    second.connection.http.onRequest((method, path, dryRun) => {
      if (!path.includes('/leases/'))
        byStandby.push(`${method} ${path}${dryRun ? ' (dry run)' : ''}`);
    });
    expect(second.operator.isLeader()).toBe(false);
    // The leader steps down (its stop releases the Lease); the standby takes over.
    await first.stop();
    replicas.splice(replicas.indexOf(first), 1);
    await eventually(async () => second.operator.isLeader(), 'the standby to lead', 20_000);
    second.operator.resyncAll();
    await eventually(
      async () =>
        names.every((n) =>
          byStandby.some((r) => r.startsWith('GET ') && r.includes(`/secrets/db-${n}`)),
        ),
      'the new leader to have reconciled every instance',
    );
    await second.operator.idle();
    // Reviews are POSTs that store nothing: who the operator is (the extra its impersonated
    // requests carry) and whether a Template's account may read a value the caches keep.
    const review = /^POST \/apis\/(authentication|authorization)\.k8s\.io\/v1\/\w+reviews$/;
    const writes = byStandby.filter((r) => /^(PATCH|POST|PUT|DELETE)/.test(r) && !review.test(r));
    expect(writes).toEqual([]);
    expect(byStandby.filter((r) => r.endsWith('(dry run)'))).toEqual([]);
  }, 90_000);
});

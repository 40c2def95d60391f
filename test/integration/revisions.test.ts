// Issue #13 on the real API server: Template revisions, pinning and a progressive rollout with a
// canary stage. Readiness of the new revision's objects is held by the test: revision 2 renders
// its ConfigMap with a ready-when that needs a label only the test sets, so the rollout can be
// watched step by step (no controller-manager here, nothing else would make them ready).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import type { Template } from '../../src/api/template.ts';
import type { TemplateInstance } from '../../src/api/template-instance.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { instance, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

let platform: string;
let tenants: string[];
let canary: string;
let user: KubeCluster;
let running: RunningOperator;
/** The Template `app` in `platform`, all but its body (set once the namespaces exist). */
let appSpec: Record<string, unknown>;

const BODY = (version: string, annotations = ''): string => `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}
${annotations}data:
  version: "${version}"
`;

/** Ready only once the test labels the live ConfigMap approved=yes. */
const HELD = `  annotations:
    stencil.dev/ready-when: "has(self.metadata.labels) && 'approved' in self.metadata.labels"
`;

async function instances(): Promise<TemplateInstance[]> {
  const all = await Promise.all(
    tenants.map((ns) => user.list(API_VERSION, 'TemplateInstance', { namespace: ns })),
  );
  return all.flat() as unknown as TemplateInstance[];
}

const keyOf = (i: TemplateInstance): string => `${i.metadata.namespace}/${i.metadata.name}`;
const unpinned = (all: TemplateInstance[]): TemplateInstance[] =>
  all.filter((i) => i.spec.templateRef.revision === undefined);
const onRevision = (all: TemplateInstance[], revision: number): TemplateInstance[] =>
  unpinned(all).filter((i) => i.status?.revision === revision);

async function templateStatus(): Promise<Template['status']> {
  const object = await user.get({
    apiVersion: API_VERSION,
    kind: 'Template',
    name: 'app',
    namespace: platform,
  });
  return (object as unknown as Template | undefined)?.status;
}

async function approve(i: TemplateInstance): Promise<void> {
  await user.apply({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: i.metadata.name,
      namespace: i.metadata.namespace,
      labels: { approved: 'yes' },
    },
  });
}

async function configMapVersion(i: TemplateInstance): Promise<string | undefined> {
  const cm = (await user.get({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: i.metadata.name ?? '',
    namespace: i.metadata.namespace,
  })) as { data?: Record<string, string> } | undefined;
  return cm?.data?.version;
}

beforeAll(async () => {
  const cluster = connect();
  platform = await freshNamespace(cluster, 'releases');
  canary = await freshNamespace(cluster, 'canary', { stage: 'canary' });
  tenants = [canary];
  for (const prefix of ['team-b', 'team-c', 'team-d'])
    tenants.push(await freshNamespace(cluster, prefix));
  user = (await userClient()).cluster;
  appSpec = {
    // revert: an `off` instance freezes after its first apply and never moves (SPEC §7).
    sync: { mode: 'revert' },
    revisionHistoryLimit: 2,
    targetNamespaces: { explicit: { allow: { literal: tenants } } },
    rollout: {
      strategy: 'Progressive',
      maxUnavailable: 2,
      stages: [{ name: 'canary', namespaceSelector: { matchLabels: { stage: 'canary' } } }],
    },
  };
  running = await startOperator([platform, ...tenants]);
  await user.apply(template(platform, 'app', { ...appSpec, handlebars: BODY('1') }));
  await eventually(
    async () => (await templateStatus())?.latestRevision === 1,
    'revision 1 of the Template',
  );
  const app = { name: 'app', namespace: platform };
  for (const ns of tenants)
    for (let n = 0; n < 5; n++) await user.apply(instance(ns, `app-${n}`, app));
  await user.apply(instance(canary, 'pinned', { ...app, revision: 1 }));
  await eventually(async () => {
    const all = await instances();
    return (
      all.length === 21 && all.every((i) => i.status?.phase === 'Ready' && i.status.revision === 1)
    );
  }, '21 instances Ready on revision 1');
}, 120_000);

afterAll(async () => {
  await running?.stop();
});

describe('a progressive rollout with a canary stage', () => {
  it('updates the canary namespace first, at most maxUnavailable at a time, then the rest', async () => {
    await user.apply(template(platform, 'app', { ...appSpec, handlebars: BODY('2', HELD) }));
    // Every instance learns of revision 2 within seconds, not at the resync: the pinned one and
    // those the rollout has not moved yet too (issue #23 defect 1).
    await eventually(
      async () => (await instances()).every((i) => i.status?.latestRevision === 2),
      'every instance, pinned and unmoved ones included, to show latestRevision 2',
      10_000,
    );
    const moved = new Set<string>();
    for (let round = 0; round < 20 && moved.size < 20; round++) {
      // Each round: the rollout admits up to two more; they wait for the test's approval.
      const admitted = await eventually(async () => {
        const now = onRevision(await instances(), 2).filter((i) => !moved.has(keyOf(i)));
        return now.length > 0 && now;
      }, `round ${round}: instances moving to revision 2`);
      await running.operator.idle();
      const fresh = onRevision(await instances(), 2).filter((i) => !moved.has(keyOf(i)));
      expect(fresh.length).toBeLessThanOrEqual(2);
      expect(admitted.length).toBeLessThanOrEqual(2);
      // The canary namespace goes first: nobody outside it moves until all five of it are on 2.
      const canaryDone = [...moved].filter((k) => k.startsWith(`${canary}/`)).length === 5;
      if (!canaryDone) expect(fresh.every((i) => i.metadata.namespace === canary)).toBe(true);
      for (const i of fresh) {
        expect(i.status?.phase).toBe('Progressing');
        expect(await configMapVersion(i)).toBe('2');
        await approve(i);
        moved.add(keyOf(i));
      }
    }
    const all = await eventually(async () => {
      const now = await instances();
      return (
        onRevision(now, 2).every((i) => i.status?.phase === 'Ready') &&
        onRevision(now, 2).length === 20 &&
        now
      );
    }, 'all 20 Ready on revision 2');
    const pinned = all.find((i) => i.metadata.name === 'pinned' && i.metadata.namespace === canary);
    expect(pinned?.status?.revision).toBe(1);
    expect(await configMapVersion(pinned!)).toBe('1');
    const done = await eventually(async () => {
      const rollout = (await templateStatus())?.rollout;
      return rollout?.phase === 'Complete' && rollout;
    }, 'the rollout to complete');
    // What described the rollout in progress is gone from the status (a merge patch keeps fields).
    expect(done).toEqual({
      revision: 2,
      stableRevision: 2,
      stage: 0,
      admitted: 0,
      phase: 'Complete',
    });
  }, 180_000);

  it('halts a bad change after the canary, naming the failing instances, with the other 15 untouched', async () => {
    // The API server rejects a ConfigMap data key that is no valid key: its validation, not the
    // schema, which the Template check applies (a number as a data value is refused there).
    await user.apply(
      template(platform, 'app', { ...appSpec, handlebars: `${BODY('3')}  "broken key": x\n` }),
    );
    // Both admitted canary instances fail; the halt names them (the second may report later).
    const status = await eventually(async () => {
      const s = await templateStatus();
      return s?.rollout?.phase === 'Halted' && s.rollout.failing?.length === 2 && s;
    }, 'the rollout to halt, naming the two failing instances');
    expect(status.latestRevision).toBe(3);
    expect(status.rollout?.failing?.every((k) => k.startsWith(`${canary}/`))).toBe(true);
    await running.operator.idle();
    const all = await instances();
    const others = unpinned(all).filter((i) => i.metadata.namespace !== canary);
    expect(others).toHaveLength(15);
    for (const i of others) {
      expect(i.status?.revision).toBe(2);
      expect(i.status?.phase).toBe('Ready');
      expect(await configMapVersion(i)).toBe('2');
    }
    expect(onRevision(all, 3).length).toBe(2);
  }, 120_000);

  it('keeps the pinned revision however short the history, and prunes it once nothing holds it', async () => {
    const status = await templateStatus();
    // Limit 2: the newest (3) and the stable one (2) are kept anyway; 1 stays because it is pinned.
    expect(status?.revisions?.map((r) => r.revision)).toEqual([3, 2, 1]);
    expect(status?.revisions?.find((r) => r.revision === 1)?.pinned).toBe(1);
    const pinnedRevision = {
      apiVersion: API_VERSION,
      kind: 'TemplateRevision',
      name: 'app-r1',
      namespace: platform,
    };
    expect(await user.get(pinnedRevision)).toBeDefined();
    await user.delete({
      ...pinnedRevision,
      kind: 'TemplateInstance',
      name: 'pinned',
      namespace: canary,
    });
    await eventually(
      async () => (await user.get(pinnedRevision)) === undefined,
      'revision 1 pruned',
    );
  }, 60_000);

  it('refuses to rewrite a revision', async () => {
    const revision = await user.get({
      apiVersion: API_VERSION,
      kind: 'TemplateRevision',
      name: 'app-r2',
      namespace: platform,
    });
    const spec = (revision as unknown as { spec: { hash: string } }).spec;
    await expect(
      user.apply({
        apiVersion: API_VERSION,
        kind: 'TemplateRevision',
        metadata: { name: 'app-r2', namespace: platform },
        spec: { ...spec, hash: 'rewritten' },
      }),
    ).rejects.toThrow(/immutable/);
  });
});

describe('migrations', () => {
  const body = (name: string, parameter: string): string => `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}-${name}
data:
  size: "{{parameters.${parameter}}}"
`;

  const sized = [{ name: 'size', value: '10Gi' }];

  const configMap = async (
    name: string,
  ): Promise<(KubeObject & { data?: Record<string, string> }) | undefined> =>
    user.get({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace: tenants[1] });

  it('renames a parameter and keeps a renamed object under its old name, uid and all', async () => {
    const revert = { sync: { mode: 'revert' } };
    const targets = { targetNamespaces: { explicit: { allow: { literal: tenants } } } };
    await user.apply(
      template(platform, 'store', {
        ...revert,
        ...targets,
        parameters: [{ name: 'size' }],
        handlebars: body('db', 'size'),
      }),
    );
    const store = { name: 'store', namespace: platform };
    await user.apply(instance(tenants[1]!, 'orders', store, sized));
    const before = await eventually(async () => {
      const cm = await configMap('orders-db');
      return cm?.data?.size === '10Gi' && cm;
    }, 'orders-db from revision 1');

    // Revision 2: the parameter is now `capacity` and the object `-database`; the instance still
    // says `size`, and nobody edits it.
    await user.apply(
      template(platform, 'store', {
        ...revert,
        ...targets,
        parameters: [{ name: 'capacity' }],
        migrations: [
          { renameParameter: { from: 'size', to: 'capacity' } },
          {
            renameObject: {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              from: '{{instance.name}}-db',
              to: '{{instance.name}}-database',
            },
          },
        ],
        handlebars: body('database', 'capacity'),
      }),
    );
    await eventually(async () => {
      const i = (await user.get({
        apiVersion: API_VERSION,
        kind: 'TemplateInstance',
        name: 'orders',
        namespace: tenants[1],
      })) as unknown as TemplateInstance | undefined;
      return i?.status?.revision === 2 && i.status.phase === 'Ready';
    }, 'orders Ready on revision 2');
    const after = await configMap('orders-db');
    expect(after?.metadata.uid).toBe(before.metadata.uid);
    expect(after?.data).toEqual({ size: '10Gi' });
    expect(await configMap('orders-database')).toBeUndefined();

    // An instance that never had the old object gets the new name.
    await user.apply(instance(tenants[1]!, 'billing', store, sized));
    await eventually(
      async () => (await configMap('billing-database'))?.data?.size === '10Gi',
      'billing-database',
    );
    expect(await configMap('billing-db')).toBeUndefined();
  }, 60_000);
});

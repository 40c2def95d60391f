// Readiness (ADR 0009), restart-on-change and progressive rollout (ADR 0012) against the real
// Deployment and ReplicaSet controllers, kube-scheduler and kwok's fake nodes, where
// health.test.ts, restart-on-change.test.ts and revisions.test.ts write a Deployment's status by
// hand. This file starts a plane of its own: the shared one of global-setup runs no controllers.
// Images in failing.invalid/ never start (kwok Stage pod-image-pull-failed: ImagePullBackOff).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import type { Template } from '../../src/api/template.ts';
import type { TemplateInstance } from '../../src/api/template-instance.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import type { KubeConnection } from '../../src/kube/connection.ts';
import { startControlPlane, type ControlPlane } from '../../tools/control-plane/control-plane.ts';
import { installProjectCrds } from '../../tools/control-plane/crds.ts';
import { fromSecret, instance, secret, template } from './support/builders.ts';
import { conditionOf, instanceStatus } from './support/instances.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

let plane: ControlPlane;
let user: KubeCluster;
let userConnection: KubeConnection;
let running: RunningOperator;
/** One namespace per scenario, all watched by the one operator of this file. */
const ns = { health: '', rotation: '', platform: '', canary: '', early: '', rest: '' };

const GOOD_IMAGE = 'registry.invalid/web:1';
const FAILING_IMAGE = 'failing.invalid/web:1';

interface DeploymentView extends KubeObject {
  spec: {
    replicas?: number;
    template: {
      metadata?: { annotations?: Record<string, string> };
      spec: { containers: { image: string }[] };
    };
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    conditions?: { type: string; status: string; reason?: string; lastTransitionTime?: string }[];
  };
}

interface ReplicaSetView extends KubeObject {
  spec: {
    replicas?: number;
    template: {
      metadata?: { annotations?: Record<string, string> };
      spec: { containers: { image: string }[] };
    };
  };
  status?: { replicas?: number; availableReplicas?: number };
}

interface PodView extends KubeObject {
  status?: {
    phase?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { state?: { waiting?: { reason?: string } } }[];
  };
}

const unique = (prefix: string): string => `${prefix}-${randomBytes(3).toString('hex')}`;

async function namespace(prefix: string, labels: Record<string, string> = {}): Promise<string> {
  const name = unique(prefix);
  await user.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
  return name;
}

beforeAll(async () => {
  plane = await startControlPlane({ controllers: true, log: () => undefined });
  await installProjectCrds(plane);
  ({ cluster: user, connection: userConnection } = await userClient(plane.userKubeconfigPath));
  ns.health = await namespace('health');
  ns.rotation = await namespace('rotation');
  ns.platform = await namespace('platform');
  ns.canary = await namespace('canary', { stage: 'canary' });
  ns.early = await namespace('early');
  ns.rest = await namespace('rest');
  running = await startOperator(Object.values(ns), plane.kubeconfigPath);
}, 180_000);

afterAll(async () => {
  // A test that failed midway leaves its watches open.
  for (const history of watching) history.stop();
  await running?.stop();
  userConnection?.http.close();
  await plane?.stop();
});

/**
 * Every version of the objects under `path` from now on, as a watch delivers them: a poll could
 * miss a status that lasted a moment (an instance Ready too early, then corrected).
 */
interface History {
  versions: KubeObject[];
  /** Why the watch ended, if it did before stop(): the history is then incomplete. */
  ended: unknown[];
  stop(): void;
}

const watching: History[] = [];

async function watchHistory(path: string): Promise<History> {
  const { listWatch } = userConnection;
  const { resourceVersion } = await listWatch.list(path);
  const history: History = { versions: [], ended: [], stop: () => undefined };
  let stopped = false;
  const handle = await listWatch.watch(
    path,
    { resourceVersion, timeoutSeconds: 600 },
    (type, object) => {
      if (type !== 'BOOKMARK') history.versions.push(object as KubeObject);
    },
    (error) => {
      if (!stopped) history.ended.push(error ?? 'closed by the server');
    },
  );
  history.stop = () => {
    stopped = true;
    handle.abort();
  };
  watching.push(history);
  return history;
}

/**
 * Several histories as one, in the order etcd wrote them. A resourceVersion is opaque to clients
 * in general; here there is one etcd, whose revisions are one increasing counter.
 */
function timeline(...histories: History[]): KubeObject[] {
  for (const h of histories) expect(h.ended).toEqual([]);
  return histories
    .flatMap((h) => h.versions)
    .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion));
}

const instancesPath = (namespace?: string): string =>
  namespace
    ? `/apis/${API_VERSION}/namespaces/${namespace}/templateinstances`
    : `/apis/${API_VERSION}/templateinstances`;
const deploymentsPath = (namespace?: string): string =>
  namespace ? `/apis/apps/v1/namespaces/${namespace}/deployments` : '/apis/apps/v1/deployments';

const keyOf = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

async function deploymentOf(namespace: string, name: string): Promise<DeploymentView> {
  const d = await user.get({ apiVersion: 'apps/v1', kind: 'Deployment', name, namespace });
  return d as DeploymentView;
}

function deploymentCondition(
  d: DeploymentView | undefined,
  type: string,
): { status: string; reason?: string; lastTransitionTime?: string } | undefined {
  return d?.status?.conditions?.find((c) => c.type === type);
}

/** Rolled out (kstatus Current): every replica updated and available, no old one left. */
function rolledOut(d: DeploymentView | undefined): boolean {
  const wanted = d?.spec.replicas ?? 1;
  const s = d?.status;
  return (
    s?.observedGeneration === d?.metadata.generation &&
    s?.updatedReplicas === wanted &&
    s?.replicas === wanted &&
    s?.availableReplicas === wanted &&
    deploymentCondition(d, 'Available')?.status === 'True'
  );
}

const imageOf = (d: DeploymentView | ReplicaSetView | undefined): string | undefined =>
  d?.spec.template.spec.containers[0]?.image;

async function replicaSets(namespace: string, app: string): Promise<ReplicaSetView[]> {
  const all = await user.list('apps/v1', 'ReplicaSet', { namespace, labelSelector: `app=${app}` });
  return all as ReplicaSetView[];
}

async function pods(namespace: string, app: string): Promise<PodView[]> {
  return user.list('v1', 'Pod', { namespace, labelSelector: `app=${app}` });
}

const hashOf = (o: KubeObject): string | undefined => o.metadata.labels?.['pod-template-hash'];
const isReadyPod = (p: PodView): boolean =>
  p.status?.phase === 'Running' &&
  p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/** A Deployment of `replicas` pods; image and progress deadline are parameters. */
const WEB = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{instance.name}}
spec:
  replicas: 2
  progressDeadlineSeconds: {{parameters.deadline}}
  selector: {matchLabels: {app: '{{instance.name}}'}}
  template:
    metadata: {labels: {app: '{{instance.name}}'}}
    spec:
      containers: [{name: web, image: '{{parameters.image}}'}]
`;

describe('readiness through the Deployment controller', () => {
  it('is Ready only once the Deployment is Available, and Failed past its progress deadline', async () => {
    const instances = await watchHistory(instancesPath(ns.health));
    const deployments = await watchHistory(deploymentsPath(ns.health));
    await user.apply(
      template(ns.health, 'web', {
        sync: { mode: 'revert' },
        parameters: [
          { name: 'image', type: 'string', value: GOOD_IMAGE },
          { name: 'deadline', type: 'number', value: 600 },
        ],
        handlebars: WEB,
      }),
    );
    await user.apply(instance(ns.health, 'good', 'web'));
    await user.apply(
      instance(ns.health, 'stuck', 'web', [
        { name: 'image', value: FAILING_IMAGE },
        { name: 'deadline', value: 10 },
      ]),
    );

    await eventually(
      async () => (await instanceStatus(user, ns.health, 'good'))?.phase === 'Ready',
      'good Ready',
      60_000,
    );
    const failed = await eventually(
      async () => {
        const s = await instanceStatus(user, ns.health, 'stuck');
        return s?.phase === 'Failed' && s;
      },
      'stuck Failed past its progress deadline',
      60_000,
    );
    instances.stop();
    deployments.stop();

    // Every version of `good` that says Ready came after a Deployment version that is Available
    // with both replicas; every earlier one said something else.
    const seen = { good: [] as string[], stuck: [] as string[] };
    let live: Record<string, DeploymentView | undefined> = {};
    for (const o of timeline(instances, deployments)) {
      const name = o.metadata.name as 'good' | 'stuck';
      if (o.kind === 'Deployment') live = { ...live, [name]: o as DeploymentView };
      if (o.kind !== 'TemplateInstance') continue;
      const status = (o as unknown as TemplateInstance).status;
      const phase = status?.phase ?? '(none)';
      if (seen[name].at(-1) !== phase) seen[name].push(phase);
      if (name === 'good' && phase === 'Ready') {
        const when = `the Deployment when good said Ready (rv ${o.metadata.resourceVersion ?? ''})`;
        expect(live.good?.status?.availableReplicas, when).toBe(2);
        expect(deploymentCondition(live.good, 'Available')?.status, when).toBe('True');
        expect(status?.readyResources).toBe('1/1');
      }
      if (name === 'stuck' && phase === 'Failed')
        expect(deploymentCondition(live.stuck, 'Progressing')).toMatchObject({
          status: 'False',
          reason: 'ProgressDeadlineExceeded',
        });
    }
    // Progressing while the controller rolled it out, then Ready, and nothing else.
    expect(seen.good.filter((p) => p !== '(none)')).toEqual(['Progressing', 'Ready']);
    expect(seen.stuck.filter((p) => p !== '(none)')).toEqual(['Progressing', 'Failed']);

    // The failure as the docs describe it: Degraded names the Deployment, Ready copies its reason.
    expect(conditionOf(failed)).toMatchObject({ status: 'False', reason: 'ResourceFailed' });
    expect(conditionOf(failed, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'ResourceFailed',
      message: expect.stringContaining(
        `Deployment ${ns.health}/stuck is Failed: progress deadline exceeded`,
      ),
    });
    expect(conditionOf(failed, 'Applied')?.status).toBe('True');
    expect(failed.renderedResources?.[0]).toMatchObject({ name: 'stuck', health: 'Failed' });
    const stuckPods = await pods(ns.health, 'stuck');
    expect(stuckPods.length).toBeGreaterThan(0);
    for (const pod of stuckPods) {
      expect(pod.status?.phase).toBe('Pending');
      expect(pod.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('ImagePullBackOff');
    }

    // The instance's Ready follows the Deployment's Available, never precedes it (one clock: both
    // controllers run on this machine; times are in whole seconds).
    const good = await instanceStatus(user, ns.health, 'good');
    const available = deploymentCondition(await deploymentOf(ns.health, 'good'), 'Available');
    expect(Date.parse(conditionOf(good)!.lastTransitionTime)).toBeGreaterThanOrEqual(
      Date.parse(available!.lastTransitionTime!),
    );
  }, 120_000);
});

describe('an off instance', () => {
  it('freezes once its Deployment is Available, and never while it cannot become so', async () => {
    const instances = await watchHistory(instancesPath(ns.health));
    const deployments = await watchHistory(deploymentsPath(ns.health));
    // No sync mode: `off`, which freezes after the first clean apply (SPEC §7, ADR 0009).
    await user.apply(
      template(ns.health, 'web-off', {
        parameters: [
          { name: 'image', type: 'string', value: GOOD_IMAGE },
          { name: 'deadline', type: 'number', value: 600 },
        ],
        handlebars: WEB,
      }),
    );
    await user.apply(instance(ns.health, 'off-good', 'web-off'));
    await user.apply(
      instance(ns.health, 'off-stuck', 'web-off', [
        { name: 'image', value: FAILING_IMAGE },
        { name: 'deadline', value: 10 },
      ]),
    );
    const frozen = await eventually(
      async () => {
        const s = await instanceStatus(user, ns.health, 'off-good');
        return s?.frozen === true && s;
      },
      'off-good frozen',
      60_000,
    );
    expect(frozen.phase).toBe('Ready');
    const stuck = await eventually(
      async () => {
        const s = await instanceStatus(user, ns.health, 'off-stuck');
        return s?.phase === 'Failed' && s;
      },
      'off-stuck Failed past its progress deadline',
      60_000,
    );
    // Still watching its Deployment: a failure is not a clean apply.
    expect(stuck.frozen).toBeUndefined();
    instances.stop();
    deployments.stop();

    let live: DeploymentView | undefined;
    for (const o of timeline(instances, deployments)) {
      if (o.metadata.name !== 'off-good') {
        if (o.kind === 'TemplateInstance')
          expect((o as unknown as TemplateInstance).status?.frozen).toBeUndefined();
        continue;
      }
      if (o.kind === 'Deployment') live = o as DeploymentView;
      const status = (o as unknown as TemplateInstance).status;
      if (o.kind === 'TemplateInstance' && (status?.frozen || status?.phase === 'Ready'))
        expect(rolledOut(live), `the Deployment when off-good said ${status.phase ?? ''}`).toBe(
          true,
        );
    }
  }, 120_000);
});

/** restart-on-change names the parameter read from the Secret the pods consume (docs/templates.md). */
const ROTATED = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{instance.name}}
  annotations:
    stencil.dev/restart-on-change: password
spec:
  replicas: 2
  selector: {matchLabels: {app: '{{instance.name}}'}}
  template:
    metadata: {labels: {app: '{{instance.name}}'}}
    spec:
      containers:
        - name: web
          image: ${GOOD_IMAGE}
          env: [{name: DB_PASSWORD, valueFrom: {secretKeyRef: {name: db, key: password}}}]
`;

describe('a rotated Secret', () => {
  it('rolls the pods: a new ReplicaSet takes over and the old one is scaled to 0', async () => {
    const where = ns.rotation;
    await user.apply(secret(where, 'db', { password: 'first' }));
    await user.apply(
      template(where, 'web', {
        sync: { mode: 'revert' },
        parameters: [{ name: 'password' }],
        handlebars: ROTATED,
      }),
    );
    await user.apply(
      instance(where, 'web', 'web', [
        { name: 'password', valueFrom: fromSecret('db', 'password') },
      ]),
    );
    await eventually(
      async () =>
        (await instanceStatus(user, where, 'web'))?.phase === 'Ready' &&
        rolledOut(await deploymentOf(where, 'web')),
      'web Ready with its Deployment rolled out',
      60_000,
    );
    const [first, ...others] = await replicaSets(where, 'web');
    expect(others).toEqual([]);
    const oldHash = hashOf(first!);
    expect(oldHash).toBeTruthy();
    const before = await pods(where, 'web');
    expect(before.map(hashOf)).toEqual([oldHash, oldHash]);
    const sourcesHash = (o: DeploymentView | ReplicaSetView): string | undefined =>
      o.spec.template.metadata?.annotations?.['stencil.dev/sources-hash'];
    const oldSources = sourcesHash(await deploymentOf(where, 'web'));
    expect(oldSources).toMatch(/^[0-9a-f]{32}$/);

    await user.apply(secret(where, 'db', { password: 'second' }));

    // The operator re-renders with a new sources-hash; the Deployment controller makes a new
    // ReplicaSet for the changed pod template.
    const next = await eventually(
      async () => (await replicaSets(where, 'web')).find((rs) => hashOf(rs) !== oldHash),
      'a second ReplicaSet',
      60_000,
    );
    const newHash = hashOf(next)!;
    expect(newHash).toBeTruthy();
    const d = await deploymentOf(where, 'web');
    expect(sourcesHash(d)).toMatch(/^[0-9a-f]{32}$/);
    expect(sourcesHash(d)).not.toBe(oldSources);
    expect(sourcesHash(next)).toBe(sourcesHash(d));
    expect(JSON.stringify(d)).not.toContain('second');

    // Then the rolling update runs to its end: both pods from the new ReplicaSet, Ready, and
    // nothing left of the old one.
    await eventually(
      async () => {
        const now = await pods(where, 'web');
        const old = (await replicaSets(where, 'web')).find((rs) => hashOf(rs) === oldHash);
        return (
          now.length === 2 &&
          now.every(
            (p) => hashOf(p) === newHash && isReadyPod(p) && !p.metadata.deletionTimestamp,
          ) &&
          old?.spec.replicas === 0 &&
          (old.status?.replicas ?? 0) === 0 &&
          rolledOut(await deploymentOf(where, 'web'))
        );
      },
      'every pod on the new ReplicaSet and the old one at 0',
      60_000,
    );
    await eventually(
      async () => (await instanceStatus(user, where, 'web'))?.phase === 'Ready',
      'web Ready after the rollout',
    );
  }, 120_000);
});

/** The rollout test's Template body: one pod per instance, of `image`. */
const APP = (image: string, progressDeadlineSeconds = 600): string => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{instance.name}}
spec:
  replicas: 1
  progressDeadlineSeconds: ${progressDeadlineSeconds}
  selector: {matchLabels: {app: '{{instance.name}}'}}
  template:
    metadata: {labels: {app: '{{instance.name}}'}}
    spec:
      containers: [{name: app, image: '${image}'}]
`;

describe('a progressive rollout', () => {
  it('halts a revision whose pods never start after the canary, and completes once fixed', async () => {
    const appSpec = {
      // revert: an `off` instance freezes after its first apply and never moves (SPEC §7).
      sync: { mode: 'revert' },
      targetNamespaces: { explicit: { allow: { literal: [ns.canary, ns.early, ns.rest] } } },
      rollout: {
        strategy: 'Progressive',
        maxUnavailable: 2,
        stages: [
          { name: 'canary', namespaceSelector: { matchLabels: { stage: 'canary' } } },
          { name: 'early', instanceSelector: { matchLabels: { tier: 'internal' } } },
        ],
      },
    };
    const apply = (body: string): Promise<KubeObject> =>
      user.apply(template(ns.platform, 'app', { ...appSpec, handlebars: body }));
    const templateStatus = async (): Promise<Template['status']> =>
      (
        (await user.get({
          apiVersion: API_VERSION,
          kind: 'Template',
          name: 'app',
          namespace: ns.platform,
        })) as unknown as Template | undefined
      )?.status;

    await apply(APP('registry.invalid/app:1'));
    await eventually(
      async () => (await templateStatus())?.latestRevision === 1,
      'revision 1 of the Template',
    );
    const ref = { name: 'app', namespace: ns.platform };
    const stages = {
      canary: [`${ns.canary}/c-0`, `${ns.canary}/c-1`],
      early: [`${ns.early}/e-0`],
      rest: [`${ns.rest}/r-0`, `${ns.rest}/r-1`],
    };
    for (const key of Object.values(stages).flat()) {
      const [where, name] = key.split('/') as [string, string];
      const labels: Record<string, string> = where === ns.early ? { tier: 'internal' } : {};
      await user.apply(instance(where, name, ref, [], { labels }));
    }
    const all = Object.values(stages).flat();
    const members = async (): Promise<Map<string, TemplateInstance>> => {
      const lists = await Promise.all(
        [ns.canary, ns.early, ns.rest].map((n) =>
          user.list(API_VERSION, 'TemplateInstance', { namespace: n }),
        ),
      );
      return new Map(lists.flat().map((i) => [keyOf(i), i as unknown as TemplateInstance]));
    };
    const deploymentsOf = async (keys: string[]): Promise<Map<string, DeploymentView>> =>
      new Map(
        await Promise.all(
          keys.map(async (k): Promise<[string, DeploymentView]> => {
            const [where, name] = k.split('/') as [string, string];
            return [k, await deploymentOf(where, name)];
          }),
        ),
      );
    await eventually(
      async () => {
        const now = await members();
        const deployments = await deploymentsOf(all);
        return all.every(
          (k) =>
            now.get(k)?.status?.phase === 'Ready' &&
            now.get(k)?.status?.revision === 1 &&
            rolledOut(deployments.get(k)),
        );
      },
      'five instances Ready on revision 1, their Deployments rolled out',
      60_000,
    );
    const later = [...stages.early, ...stages.rest];
    const untouched = await deploymentsOf(later);

    // Revision 2: pods that never start, and a progress deadline short enough to see it fail.
    const instances = await watchHistory(instancesPath());
    const deployments = await watchHistory(deploymentsPath());
    await apply(APP('failing.invalid/app:2', 10));
    const halted = await eventually(
      async () => {
        const s = await templateStatus();
        return s?.rollout?.phase === 'Halted' && s.rollout.failing?.length === 2 && s;
      },
      'the rollout to halt on both canary instances',
      60_000,
    );
    expect(halted.latestRevision).toBe(2);
    expect(halted.rollout).toMatchObject({ revision: 2, stableRevision: 1, stage: 0 });
    expect([...halted.rollout!.failing!].sort()).toEqual([...stages.canary].sort());
    await running.operator.idle();
    const now = await members();
    const canaryDeployments = await deploymentsOf(stages.canary);
    for (const key of stages.canary) {
      expect(now.get(key)?.status?.revision).toBe(2);
      expect(now.get(key)?.status?.phase).toBe('Failed');
      expect(conditionOf(now.get(key)?.status, 'Degraded')?.message).toContain(
        'progress deadline exceeded',
      );
      const d = canaryDeployments.get(key)!;
      expect(imageOf(d)).toBe('failing.invalid/app:2');
      expect(deploymentCondition(d, 'Progressing')).toMatchObject({
        status: 'False',
        reason: 'ProgressDeadlineExceeded',
      });
      expect(rolledOut(d)).toBe(false);
      // The new ReplicaSet has nothing available; the old pod keeps serving (a rolling update
      // with maxUnavailable 0 of 1 replica), so the Deployment's Available stays True.
      const [where, name] = key.split('/') as [string, string];
      const sets = await replicaSets(where, name);
      const failing = sets.find((rs) => imageOf(rs) === 'failing.invalid/app:2');
      expect(failing).toBeDefined();
      expect(failing?.status?.availableReplicas ?? 0).toBe(0);
      expect(deploymentCondition(d, 'Available')?.status).toBe('True');
    }
    for (const key of later) {
      // They know of revision 2, and stay on 1.
      expect(now.get(key)?.status).toMatchObject({
        revision: 1,
        latestRevision: 2,
        phase: 'Ready',
      });
    }
    // Not once: no later instance rendered revision 2, no later Deployment changed, no canary
    // instance was Ready on revision 2.
    instances.stop();
    deployments.stop();
    for (const o of timeline(instances, deployments)) {
      const key = keyOf(o);
      if (o.kind === 'TemplateInstance') {
        const status = (o as unknown as TemplateInstance).status;
        if (later.includes(key)) expect(status?.revision).toBe(1);
        if (stages.canary.includes(key) && status?.revision === 2)
          expect(status.phase).not.toBe('Ready');
      }
      if (o.kind === 'Deployment' && later.includes(key)) {
        expect(o.metadata.generation).toBe(untouched.get(key)?.metadata.generation);
        expect(imageOf(o as DeploymentView)).toBe('registry.invalid/app:1');
      }
    }
    for (const [key, d] of await deploymentsOf(later)) {
      expect(d.metadata.generation).toBe(untouched.get(key)?.metadata.generation);
      expect(imageOf(d)).toBe('registry.invalid/app:1');
    }

    // The fix is revision 3, a new rollout from the stable revision: canary first, then the rest.
    const fixing = await watchHistory(instancesPath());
    await apply(APP('registry.invalid/app:3'));
    const done = await eventually(
      async () => {
        const rollout = (await templateStatus())?.rollout;
        return rollout?.phase === 'Complete' && rollout;
      },
      'the rollout of revision 3 to complete',
      90_000,
    );
    expect(done).toMatchObject({ revision: 3, stableRevision: 3 });
    const final = await members();
    const finalDeployments = await deploymentsOf(all);
    for (const key of all) {
      expect(final.get(key)?.status).toMatchObject({ revision: 3, phase: 'Ready' });
      expect(imageOf(finalDeployments.get(key))).toBe('registry.invalid/app:3');
      expect(rolledOut(finalDeployments.get(key))).toBe(true);
    }
    fixing.stop();
    // Stage by stage: each moved to revision 3 only once the stage before was Ready on it.
    const movedAt = new Map<string, number>();
    const readyAt = new Map<string, number>();
    for (const o of timeline(fixing)) {
      const status = (o as unknown as TemplateInstance).status;
      const rv = Number(o.metadata.resourceVersion);
      if (!all.includes(keyOf(o)) || status?.revision !== 3) continue;
      if (!movedAt.has(keyOf(o))) movedAt.set(keyOf(o), rv);
      if (status.phase === 'Ready' && !readyAt.has(keyOf(o))) readyAt.set(keyOf(o), rv);
    }
    expect([...readyAt.keys()].sort()).toEqual([...all].sort());
    const last = (keys: string[]): number => Math.max(...keys.map((k) => readyAt.get(k)!));
    const firstMove = (keys: string[]): number => Math.min(...keys.map((k) => movedAt.get(k)!));
    expect(firstMove(stages.early)).toBeGreaterThan(last(stages.canary));
    expect(firstMove(stages.rest)).toBeGreaterThan(last(stages.early));
  }, 120_000);
});

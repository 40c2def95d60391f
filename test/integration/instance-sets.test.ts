// Issue #14 part 2 on the real API server: a TemplateInstanceSet keeps an instance in every
// namespace its selector matches, with overrides from the namespace and a ConfigMap in it; it
// follows namespaces being labelled and unlabelled, releases instead of deleting under
// preserveOnRemoval, never reaches a namespace the Template refuses, and never touches an
// instance it did not stamp.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import type { TemplateInstance } from '../../src/api/template-instance.ts';
import type { TemplateInstanceSetStatus } from '../../src/api/template-instance-set.ts';
import { API_VERSION, LABEL_INSTANCE_SET } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { configMap, instance, instanceSet, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { conditionOf, instanceStatus } from './support/instances.ts';
import {
  eventually,
  rejectionOf,
  startOperator,
  userClient,
  type RunningOperator,
} from './support/operator.ts';

const suffix = randomBytes(3).toString('hex');
const SET = `sets-${suffix}`;
const TEAM = 'sets-test.example.com/team';
const ALLOWED = 'sets-test.example.com/allowed';
let platform: string;
/** n1..n4 may instantiate the Template; refused may not. */
let ns: Record<'n1' | 'n2' | 'n3' | 'n4' | 'refused', string>;
let user: KubeCluster;
let running: RunningOperator;
/** The Set's spec unless a test says otherwise (set once `platform` exists). */
let setSpec: Record<string, unknown>;

/** The Template the Set stamps, in `platform`. */
const TEAM_SETTINGS = {
  parameters: [
    { name: 'greeting', type: 'string', value: 'hello' },
    { name: 'replicas', type: 'number', value: 1 },
    { name: 'color', type: 'string', value: 'blue' },
  ],
  targetNamespaces: { selector: { matchLabels: { [ALLOWED]: 'yes' } } },
  sync: { mode: 'revert' },
  handlebars: [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: team-settings',
    'data:',
    '  greeting: {{quote parameters.greeting}}',
    '  replicas: "{{parameters.replicas}}"',
    '  color: {{quote parameters.color}}',
    '',
  ].join('\n'),
};

/** The user's whole say on a namespace's labels and annotations (server-side apply). */
async function labelNamespace(
  name: string,
  labels: Record<string, string>,
  annotations: Record<string, string> = {},
): Promise<void> {
  await user.apply({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels, annotations },
  });
}

const get = (
  apiVersion: string,
  kind: string,
  name: string,
  namespace?: string,
): Promise<KubeObject | undefined> => user.get({ apiVersion, kind, name, namespace });

const instanceIn = async (namespace: string): Promise<TemplateInstance | undefined> =>
  (await get(API_VERSION, 'TemplateInstance', SET, namespace)) as TemplateInstance | undefined;

const settingsIn = async (namespace: string): Promise<Record<string, string> | undefined> =>
  (await get('v1', 'ConfigMap', 'team-settings', namespace))?.data as
    Record<string, string> | undefined;

const setStatus = async (name = SET): Promise<TemplateInstanceSetStatus | undefined> =>
  ((await get(API_VERSION, 'TemplateInstanceSet', name)) as { status?: TemplateInstanceSetStatus })
    ?.status;

/** Waits until the Set reports exactly these counts (at its current generation). */
async function counts(
  desired: number,
  ready: number,
  failed: number,
): Promise<TemplateInstanceSetStatus> {
  return eventually(async () => {
    const status = await setStatus();
    return (
      status?.desired === desired && status.ready === ready && status.failed === failed && status
    );
  }, `Set ${SET} to count desired ${desired}, ready ${ready}, failed ${failed}`);
}

beforeAll(async () => {
  const cluster = connect();
  platform = await freshNamespace(cluster, 'sets-platform');
  const allowed = { [ALLOWED]: 'yes' };
  ns = {
    n1: await freshNamespace(cluster, 'sets-n1', allowed),
    n2: await freshNamespace(cluster, 'sets-n2', allowed),
    n3: await freshNamespace(cluster, 'sets-n3', allowed),
    n4: await freshNamespace(cluster, 'sets-n4', allowed),
    refused: await freshNamespace(cluster, 'sets-refused'),
  };
  user = (await userClient()).cluster;
  setSpec = {
    namespaceSelector: { matchLabels: { [TEAM]: 'x' } },
    template: {
      metadata: { labels: { 'example.com/fanout': 'yes' } },
      spec: {
        templateRef: { name: 'team-settings', namespace: platform },
        parameters: [{ name: 'greeting', value: 'hi' }],
      },
    },
    overrides: { configMap: { name: 'set-overrides', parameters: ['color'] } },
  };
  running = await startOperator([platform, ...Object.values(ns)]);
  await user.apply(template(platform, 'team-settings', TEAM_SETTINGS));
});

afterAll(async () => {
  await running?.stop();
  for (const name of [SET, `${SET}-missing`])
    await user
      .delete({ apiVersion: API_VERSION, kind: 'TemplateInstanceSet', name })
      .catch(() => undefined);
});

describe('a TemplateInstanceSet over a namespace selector', () => {
  it('stamps an instance into each namespace that gets labelled, with the namespace override', async () => {
    await labelNamespace(
      ns.n1,
      { [ALLOWED]: 'yes' },
      { 'parameters.stencil.dev/greeting': 'hello from n1' },
    );
    await labelNamespace(ns.n2, { [ALLOWED]: 'yes', 'parameters.stencil.dev/replicas': '3' });
    await user.apply(instanceSet(SET, setSpec));
    // Nothing matches yet.
    await counts(0, 0, 0);
    expect(conditionOf(await setStatus())?.status).toBe('True');

    await labelNamespace(
      ns.n1,
      { [ALLOWED]: 'yes', [TEAM]: 'x' },
      { 'parameters.stencil.dev/greeting': 'hello from n1' },
    );
    await labelNamespace(ns.n2, {
      [ALLOWED]: 'yes',
      [TEAM]: 'x',
      'parameters.stencil.dev/replicas': '3',
    });
    const status = await counts(2, 2, 0);
    expect(conditionOf(status)).toMatchObject({ status: 'True', reason: 'AllReady' });

    // n1: the annotation beats the Set's own value; n2: the Set's value, the label's number.
    expect(await settingsIn(ns.n1)).toEqual({
      greeting: 'hello from n1',
      replicas: '1',
      color: 'blue',
    });
    expect(await settingsIn(ns.n2)).toEqual({ greeting: 'hi', replicas: '3', color: 'blue' });
    expect(await settingsIn(ns.n3)).toBeUndefined();

    const stamped = (await instanceIn(ns.n1))!;
    expect(stamped.metadata.labels).toMatchObject({
      [LABEL_INSTANCE_SET]: SET,
      'example.com/fanout': 'yes',
    });
    const set = (await get(API_VERSION, 'TemplateInstanceSet', SET))!;
    expect(stamped.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'TemplateInstanceSet', name: SET, uid: set.metadata.uid }),
    ]);
    expect(stamped.spec.parameters).toEqual([
      { name: 'greeting', value: 'hello from n1' },
      {
        name: 'color',
        valueFrom: { configMapKeyRef: { name: 'set-overrides', key: 'color' } },
        defaultValue: 'blue',
      },
    ]);
    // Written once by the Set's own field manager; a pass over a settled Set writes nothing.
    const managers = (stamped.metadata as { managedFields?: { manager?: string }[] }).managedFields;
    expect(managers?.map((f) => f.manager)).toContain('stencil-instance-set');
    const stampedLog = (): number =>
      running.logs.filter((l) => l.includes('stamped instance') && l.includes(`${ns.n1}/`)).length;
    expect(stampedLog()).toBe(1);
    const setVersion = set.metadata.resourceVersion;
    running.operator.sets.resync();
    await running.operator.idle();
    expect((await instanceIn(ns.n1))?.metadata.generation).toBe(stamped.metadata.generation);
    expect((await get(API_VERSION, 'TemplateInstanceSet', SET))?.metadata.resourceVersion).toBe(
      setVersion,
    );
    expect(stampedLog()).toBe(1);
  });

  it('re-stamps the instance when the namespace override changes', async () => {
    const before = (await instanceIn(ns.n1))!;
    await labelNamespace(
      ns.n1,
      { [ALLOWED]: 'yes', [TEAM]: 'x' },
      { 'parameters.stencil.dev/greeting': 'hello again' },
    );
    await eventually(
      async () => (await settingsIn(ns.n1))?.greeting === 'hello again',
      'n1 greeting re-rendered',
    );
    expect((await instanceIn(ns.n1))?.metadata.generation).toBe(
      (before.metadata.generation ?? 0) + 1,
    );
    await counts(2, 2, 0);
  });

  it('re-renders when the ConfigMap override in the namespace changes', async () => {
    await user.apply(configMap(ns.n2, 'set-overrides', { color: 'green' }));
    await eventually(async () => (await settingsIn(ns.n2))?.color === 'green', 'n2 color green');
    await user.apply(configMap(ns.n2, 'set-overrides', { color: 'red' }));
    await eventually(async () => (await settingsIn(ns.n2))?.color === 'red', 'n2 color red');
    expect((await settingsIn(ns.n1))?.color).toBe('blue');
  });

  it('takes back a parameter and a pinned revision someone else added to a stamped instance', async () => {
    // A tenant with `edit` in n1 (ADR 0033) adds what the Set does not list: server-side apply
    // under another field manager keeps it, so the Set must remove it itself.
    await user.apply({
      apiVersion: API_VERSION,
      kind: 'TemplateInstance',
      metadata: { name: SET, namespace: ns.n1 },
      spec: {
        templateRef: { name: 'team-settings', namespace: platform, revision: 1 },
        parameters: [{ name: 'replicas', value: 99 }],
      },
    });
    await eventually(async () => {
      const spec = (await instanceIn(ns.n1))?.spec;
      return (
        spec?.parameters?.every((p) => p.name !== 'replicas') === true &&
        spec.templateRef.revision === undefined
      );
    }, 'the added parameter and revision removed from the stamped instance');
    await eventually(
      async () => (await settingsIn(ns.n1))?.replicas === '1',
      'n1 rendered with the Set parameters only',
    );
    expect((await instanceIn(ns.n1))?.spec.parameters?.map((p) => p.name)).toEqual([
      'greeting',
      'color',
    ]);
    // The Set counts the instance Ready again (while the entry stayed, it planned an apply on
    // every pass and counted the instance pending for good).
    await counts(2, 2, 0);
  });

  it('gives a namespace the Template refuses no instance, and lists it as failing', async () => {
    await labelNamespace(ns.refused, { [TEAM]: 'x' });
    const status = await counts(3, 2, 1);
    expect(status.failingNamespaces).toEqual([
      expect.objectContaining({ namespace: ns.refused, reason: 'NamespaceNotPermitted' }),
    ]);
    expect(status.failingNamespaces?.[0]?.message).toContain(`Template ${platform}/team-settings`);
    expect(conditionOf(status)).toMatchObject({ status: 'False', reason: 'NotReady' });
    expect(await instanceIn(ns.refused)).toBeUndefined();
  });

  it('never touches an instance of the same name it did not stamp', async () => {
    await user.apply(
      instance(ns.n3, SET, { name: 'team-settings', namespace: platform }, [
        { name: 'greeting', value: 'mine' },
      ]),
    );
    await labelNamespace(ns.n3, { [ALLOWED]: 'yes', [TEAM]: 'x' });
    const status = await counts(4, 2, 2);
    expect(status.failingNamespaces?.find((f) => f.namespace === ns.n3)).toMatchObject({
      reason: 'Conflict',
    });
    const mine = (await instanceIn(ns.n3))!;
    expect(mine.metadata.labels?.[LABEL_INSTANCE_SET]).toBeUndefined();
    expect(mine.metadata.ownerReferences).toBeUndefined();
    expect(mine.spec.parameters).toEqual([{ name: 'greeting', value: 'mine' }]);
    await labelNamespace(ns.n3, { [ALLOWED]: 'yes' });
    await counts(3, 2, 1);
    expect(await instanceIn(ns.n3)).toBeDefined();
  });

  it('refuses a namespace override that does not fit the parameter, naming it', async () => {
    await labelNamespace(
      ns.n4,
      { [ALLOWED]: 'yes', [TEAM]: 'x' },
      { 'parameters.stencil.dev/replicas': 'three' },
    );
    const status = await counts(4, 2, 2);
    const failing = status.failingNamespaces?.find((f) => f.namespace === ns.n4);
    expect(failing).toMatchObject({ reason: 'InvalidOverride' });
    expect(failing?.message).toContain(`namespace "${ns.n4}"`);
    expect(failing?.message).toContain('annotation parameters.stencil.dev/replicas');
    expect(failing?.message).toContain('replicas');
    expect(await instanceIn(ns.n4)).toBeUndefined();
    await labelNamespace(ns.n4, { [ALLOWED]: 'yes' });
    await counts(3, 2, 1);
  });

  it('deletes the instance (and what it rendered) of a namespace that stops matching', async () => {
    await labelNamespace(
      ns.n1,
      { [ALLOWED]: 'yes' },
      { 'parameters.stencil.dev/greeting': 'hello from n1' },
    );
    await eventually(async () => (await instanceIn(ns.n1)) === undefined, 'n1 instance deleted');
    await eventually(async () => (await settingsIn(ns.n1)) === undefined, 'n1 ConfigMap deleted');
    await counts(2, 1, 1);
    expect(await instanceIn(ns.n2)).toBeDefined();
  });

  it('with preserveOnRemoval, releases the instance instead: it stays, without label or owner', async () => {
    await user.apply(instanceSet(SET, { ...setSpec, preserveOnRemoval: true }));
    await labelNamespace(ns.n2, { [ALLOWED]: 'yes', 'parameters.stencil.dev/replicas': '3' });
    await eventually(async () => {
      const live = await instanceIn(ns.n2);
      return (
        live &&
        !live.metadata.labels?.[LABEL_INSTANCE_SET] &&
        !live.metadata.ownerReferences?.length
      );
    }, 'n2 instance released');
    await counts(1, 0, 1);
    const released = (await instanceIn(ns.n2))!;
    expect(released.spec.templateRef).toEqual({ name: 'team-settings', namespace: platform });
    expect(conditionOf(await instanceStatus(user, ns.n2, SET))?.status).toBe('True');
    expect((await settingsIn(ns.n2))?.color).toBe('red');
  });

  it('says when its Template does not exist, and creates nothing', async () => {
    const name = `${SET}-missing`;
    await user.apply(
      instanceSet(name, {
        ...setSpec,
        template: { spec: { templateRef: { name: 'no-such-template', namespace: platform } } },
        overrides: undefined,
      }),
    );
    const status = await eventually(async () => {
      const s = await setStatus(name);
      return conditionOf(s)?.reason === 'TemplateNotFound' && s;
    }, 'TemplateNotFound');
    expect(conditionOf(status)?.message).toContain(`${platform}/no-such-template`);
    expect(await get(API_VERSION, 'TemplateInstance', name, ns.refused)).toBeUndefined();
  });
});

describe('the TemplateInstanceSet CRD', () => {
  const bad = (patch: (spec: Record<string, unknown>) => void): KubeObject => {
    const object = structuredClone(instanceSet(`${SET}-bad`, setSpec));
    patch(object.spec as Record<string, unknown>);
    return object;
  };

  it('rejects a templateRef without a namespace', async () => {
    const message = await rejectionOf(
      user.apply(
        bad((spec) => {
          (spec.template as { spec: { templateRef: object } }).spec.templateRef = { name: 'x' };
        }),
      ),
    );
    expect(message).toContain('spec.template.spec.templateRef.namespace');
  });

  it('rejects a ttl, a selector expression without values and a bad parameter name', async () => {
    const ttl = await rejectionOf(
      user.apply(
        bad((spec) => {
          (spec.template as { spec: Record<string, unknown> }).spec.ttl = '1h';
        }),
      ),
    );
    expect(ttl).toContain('ttl is not supported');
    const selector = await rejectionOf(
      user.apply(
        bad((spec) => {
          spec.namespaceSelector = { matchExpressions: [{ key: 'a', operator: 'In' }] };
        }),
      ),
    );
    expect(selector).toContain('In and NotIn need values');
    const parameter = await rejectionOf(
      user.apply(
        bad((spec) => {
          spec.overrides = { configMap: { name: 'c', parameters: ['not-valid'] } };
        }),
      ),
    );
    expect(parameter).toContain('spec.overrides.configMap.parameters[0]');
  });

  it('rejects a name longer than a label value may be', async () => {
    const message = await rejectionOf(user.apply(instanceSet(`s${'x'.repeat(63)}`, setSpec)));
    expect(message).toContain('at most 63 characters');
  });
});

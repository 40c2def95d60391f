// Why an instance is reconciled, as its Events and metrics tell it: a watch that starts reports
// no change (no false SourceChanged), and a pass that fails keeps its trigger for the retry
// (DriftReverted and the rotation lag survive a transient apply failure).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import { ANNOTATION_RECONCILE_AT, API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { ClusterError } from '../../src/reconcile/cluster-port.ts';
import { configMap, fromSecret, instance, secret, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

let ns: string;
let user: KubeCluster;
let running: RunningOperator;
const rotationLags: number[] = [];

/** A Template rendering a ConfigMap named after the instance, with its password parameter. */
const PASSWORD_SPEC = {
  sync: { mode: 'revert' },
  parameters: [{ name: 'password' }],
  handlebars: `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}
data:
  password: {{parameters.password}}
`,
};

/** The password parameter, read from the key `password` of a Secret. */
const passwordFrom = (secretName: string): unknown[] => [
  { name: 'password', valueFrom: fromSecret(secretName, 'password') },
];

async function password(name: string): Promise<string | undefined> {
  const cm = (await user.get({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace: ns })) as
    { data?: Record<string, string> } | undefined;
  return cm?.data?.password;
}

/** The Events the operator recorded about one instance, with a given reason. */
async function events(instance: string, reason: string): Promise<{ message?: string }[]> {
  const all = (await user.list('v1', 'Event', { namespace: ns })) as unknown as {
    reason?: string;
    message?: string;
    involvedObject?: { kind?: string; name?: string };
  }[];
  return all.filter(
    (e) =>
      e.reason === reason &&
      e.involvedObject?.kind === 'TemplateInstance' &&
      e.involvedObject.name === instance,
  );
}

async function phase(name: string): Promise<string | undefined> {
  const instance = (await user.get({
    apiVersion: API_VERSION,
    kind: 'TemplateInstance',
    name,
    namespace: ns,
  })) as { status?: { phase?: string } } | undefined;
  return instance?.status?.phase;
}

/**
 * Makes the operator's next real (not dry-run) apply of the named object fail as a transient
 * API error would, once: the pass fails after deciding to write, and is retried with backoff.
 */
function failNextApplyOf(name: string): void {
  // Reconcilers work through a view of the cluster bound to their pass's signal, and write
  // through that view acting as the Template's ServiceAccount: arm both.
  const cluster = running.connection.cluster;
  const bind = cluster.bind.bind(cluster);
  let armed = true;
  const arm = (view: KubeCluster): KubeCluster => {
    const apply = view.apply.bind(view);
    const actingAs = view.actingAs.bind(view);
    view.apply = (...args) => {
      const [object, options] = args;
      if (armed && !options?.dryRun && object.metadata.name === name) {
        armed = false;
        return Promise.reject(
          new ClusterError('Transient', 'injected: the API server is briefly unavailable', 503),
        );
      }
      return apply(...args);
    };
    view.actingAs = (user) => arm(actingAs(user));
    return view;
  };
  cluster.bind = (signal) => arm(bind(signal));
}

beforeAll(async () => {
  ns = await freshNamespace(connect(), 'triggers');
  user = (await userClient()).cluster;
  running = await startOperator([ns], undefined, { onRotationLag: (ms) => rotationLags.push(ms) });
});

afterAll(async () => {
  await running?.stop();
});

/** How many passes of the instance controller over `name` the operator has logged. */
function passes(name: string): number {
  return running.logs.filter(
    (l) => l.includes('"controller":"templateinstance"') && l.includes(`"name":"${name}"`),
  ).length;
}

/** Forces one more pass over an instance (SPEC §6 reconcile-at) and waits until it ran. */
async function anotherPass(instance: KubeObject): Promise<void> {
  const name = instance.metadata.name ?? '';
  const before = passes(name);
  await user.apply({
    ...instance,
    metadata: { ...instance.metadata, annotations: { [ANNOTATION_RECONCILE_AT]: `${before}` } },
  });
  await eventually(async () => passes(name) > before, `another pass over ${name}`);
}

describe('a watch that starts', () => {
  it('reports no SourceChanged, also when a new instance reads an already-watched Secret', async () => {
    // The Secret lacks the key: the instances fail and keep their watch, and passes that follow
    // the watch's first list must not report it as a change.
    await user.apply(secret(ns, 'shared-db', { other: 'x' }));
    await user.apply(template(ns, 'shared', PASSWORD_SPEC));
    const first = instance(ns, 'first', 'shared', passwordFrom('shared-db'));
    const second = instance(ns, 'second', 'shared', passwordFrom('shared-db'));
    await user.apply(first);
    await eventually(
      async () => (await events('first', 'ParameterResolutionFailed')).length > 0,
      'the first instance to fail',
    );
    await anotherPass(first);
    await user.apply(second);
    await eventually(
      async () => (await events('second', 'ParameterResolutionFailed')).length > 0,
      'the second instance to fail',
    );
    await anotherPass(second);
    await anotherPass(first);
    await running.operator.idle();
    expect(await events('first', 'SourceChanged')).toEqual([]);
    expect(await events('second', 'SourceChanged')).toEqual([]);

    // A real change is reported, for each instance that reads it.
    await user.apply(secret(ns, 'shared-db', { password: 'one' }));
    await eventually(async () => (await password('first')) === 'one', 'the first instance');
    await eventually(async () => (await password('second')) === 'one', 'the second instance');
    await running.operator.idle();
    for (const name of ['first', 'second'])
      expect((await events(name, 'SourceChanged')).map((e) => e.message)).toEqual([
        `Secret ${ns}/shared-db changed`,
      ]);
  });
});

describe('a pass that fails', () => {
  it('keeps its drift trigger: the retry reports DriftReverted', async () => {
    await user.apply(
      template(ns, 'guarded', {
        sync: { mode: 'revert' },
        handlebars:
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: guarded\ndata:\n  color: blue\n',
      }),
    );
    await user.apply(instance(ns, 'guarded', 'guarded'));
    await eventually(async () => (await phase('guarded')) === 'Ready', 'guarded Ready');
    await running.operator.idle();

    failNextApplyOf('guarded');
    await user.apply(configMap(ns, 'guarded', { color: 'red' }));
    await eventually(async () => {
      const cm = (await user.get({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'guarded',
        namespace: ns,
      })) as { data?: Record<string, string> } | undefined;
      return cm?.data?.color === 'blue';
    }, 'the drift to be reverted');
    await running.operator.idle();
    const failed = await events('guarded', 'ApplyFailed');
    expect(failed.some((e) => e.message?.includes('injected'))).toBe(true);
    const reverted = await eventually(async () => {
      const found = await events('guarded', 'DriftReverted');
      return found.length > 0 && found;
    }, 'the DriftReverted Event');
    expect(reverted[0]!.message).toContain('ConfigMap/guarded');
  });

  it('keeps its source trigger: the rotation lag is recorded by the retry', async () => {
    await user.apply(secret(ns, 'rotating-db', { password: 'old' }));
    await user.apply(template(ns, 'rotating', PASSWORD_SPEC));
    await user.apply(instance(ns, 'rotating', 'rotating', passwordFrom('rotating-db')));
    await eventually(async () => (await password('rotating')) === 'old', 'the first password');
    await running.operator.idle();
    const before = rotationLags.length;

    failNextApplyOf('rotating');
    await user.apply(secret(ns, 'rotating-db', { password: 'new' }));
    await eventually(async () => (await password('rotating')) === 'new', 'the rotated password');
    await running.operator.idle();
    expect((await events('rotating', 'ApplyFailed')).length).toBeGreaterThan(0);
    expect(rotationLags.length).toBe(before + 1);
  });
});

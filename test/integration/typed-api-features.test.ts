// Issue #27: everything a TemplateInstance has works for a typed instance too (ADR 0032), each
// once, with two operators splitting the namespaces by static sharding: a drifted object is
// reverted, waves wait for readiness, a pinned instance stays while a progressive rollout moves
// the canary namespace first and then the rest, and spec.ttl deletes the instance with what it
// owns. Every WebApp is reconciled by the shard its namespace hashes to, and by no other.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import type { Template } from '../../src/api/template.ts';
import type { TemplateInstanceStatus } from '../../src/api/template-instance.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import { parseApiAllowance } from '../../src/engine/typed-api/api-names.ts';
import { ownerOf } from '../../src/framework/coordination/rendezvous.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { configMap, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { conditionOf } from './support/instances.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

const GROUP = `feat-${randomBytes(3).toString('hex')}.example.com`;
let platform: string;
let canary: string;
let rest: string;
let user: KubeCluster;
const operators: RunningOperator[] = [];

/** Wave 0 is healthy once its `state` is ready; wave 1 follows it. */
const HANDLEBARS = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}
  annotations:
    stencil.dev/ready-when: "self.data.state == 'ready'"
data:
  state: "{{parameters.state}}"
  version: "{{parameters.version}}"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}-after
  annotations:
    stencil.dev/wave: "1"
data:
  after: "{{instance.name}}"
`;

function appTemplate(version: string): KubeObject {
  return template(platform, 'app', {
    api: { group: GROUP, version: 'v1', kind: 'App' },
    sync: { mode: 'revert' },
    parameters: [
      { name: 'state', type: 'string', value: 'ready', enum: ['ready', 'pending'] },
      { name: 'version', type: 'string', value: version, disableOverride: true },
    ],
    targetNamespaces: { explicit: { allow: { literal: [canary, rest] } } },
    rollout: {
      strategy: 'Progressive',
      preflight: 'Block',
      stages: [{ name: 'canary', namespaceSelector: { matchLabels: { stage: 'canary' } } }],
    },
    handlebars: HANDLEBARS,
  });
}

type App = KubeObject & { spec: Record<string, unknown>; status?: TemplateInstanceStatus };

function app(namespace: string, name: string, spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'App',
    metadata: { name, namespace },
    spec,
  };
}

async function getApp(namespace: string, name: string): Promise<App | undefined> {
  return (await user.get({ apiVersion: `${GROUP}/v1`, kind: 'App', namespace, name })) as
    App | undefined;
}

async function data(namespace: string, name: string): Promise<Record<string, string> | undefined> {
  const object = await user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name });
  return (object as { data?: Record<string, string> } | undefined)?.data;
}

async function untilApp(
  namespace: string,
  name: string,
  done: (status: TemplateInstanceStatus) => boolean,
  what: string,
): Promise<TemplateInstanceStatus> {
  return eventually(async () => {
    const status = (await getApp(namespace, name))?.status;
    return status && done(status) && status;
  }, what);
}

beforeAll(async () => {
  const cluster = connect();
  user = (await userClient()).cluster;
  platform = await freshNamespace(cluster, 'feat-platform');
  canary = await freshNamespace(cluster, 'feat-canary', { stage: 'canary' });
  rest = await freshNamespace(cluster, 'feat-rest');
  const allowance = parseApiAllowance(`${platform}=${GROUP}`);
  if (!allowance.ok) throw new Error('allowance');
  for (const index of [0, 1])
    operators.push(
      await startOperator([platform, canary, rest], undefined, {
        apiGroups: allowance.value,
        sharding: { mode: 'static', index, count: 2 },
      }),
    );
  await user.apply(appTemplate('v1'));
  await eventually(async () => {
    const t = (await user.get({
      apiVersion: API_VERSION,
      kind: 'Template',
      namespace: platform,
      name: 'app',
    })) as Template | undefined;
    return conditionOf(t?.status, 'APIPublished')?.status === 'True';
  }, 'App published');
}, 60_000);

afterAll(async () => {
  await Promise.all(operators.map((o) => o.stop()));
});

describe('a typed instance', () => {
  it('waits for wave 0 to be ready before wave 1, and follows an edit of its own spec', async () => {
    await eventually(async () => {
      await user.apply(app(canary, 'waves', { state: 'pending' }));
      return true;
    }, 'App waves created (its kind served)');
    const waiting = await untilApp(
      canary,
      'waves',
      (s) =>
        s.phase === 'Progressing' &&
        conditionOf(s, 'Applied')?.message.includes('wave 1 waits for ConfigMap') === true,
      'waves Progressing, waiting for its ConfigMap',
    );
    expect(conditionOf(waiting, 'Applied')?.message).toContain('wave 1 waits for ConfigMap');
    expect(await data(canary, 'waves-after')).toBeUndefined();
    await user.apply(app(canary, 'waves', { state: 'ready' }));
    const ready = await untilApp(canary, 'waves', (s) => s.phase === 'Ready', 'waves Ready');
    expect(ready.readyResources).toBe('2/2');
    expect(await data(canary, 'waves-after')).toEqual({ after: 'waves' });
  });

  it('has drift reverted under sync mode revert', async () => {
    await user.apply(app(rest, 'drift'));
    await untilApp(rest, 'drift', (s) => s.phase === 'Ready', 'drift Ready');
    // Another field manager takes the key over, as a person's kubectl apply would.
    await user.apply(configMap(rest, 'drift-after', { after: 'changed by hand' }));
    await eventually(
      async () => (await data(rest, 'drift-after'))?.after === 'drift',
      'drift reverted',
    );
  });

  it('is deleted with what it owns once its spec.ttl has passed', async () => {
    // Long enough that a poll sees it Ready before it expires on a busy CI machine, where the
    // first pass may start seconds after the creation (3 s was missed there once).
    await user.apply(app(rest, 'brief', { ttl: '8s' }));
    const ready = await untilApp(rest, 'brief', (s) => s.phase === 'Ready', 'brief Ready');
    expect(ready.expiresAt).toBeDefined();
    await eventually(async () => !(await getApp(rest, 'brief')), 'brief deleted', 30_000);
    await eventually(async () => !(await data(rest, 'brief')), 'what it rendered deleted');
  });

  it('stays pinned while a progressive rollout moves the canary first, then the rest', async () => {
    await user.apply(app(canary, 'early'));
    await user.apply(app(rest, 'late'));
    await user.apply(app(rest, 'pinned', { templateRevision: 1 }));
    for (const [ns, name] of [
      [canary, 'early'],
      [rest, 'late'],
      [rest, 'pinned'],
    ] as const)
      await untilApp(
        ns,
        name,
        (s) => s.phase === 'Ready' && s.revision === 1,
        `${name} Ready on 1`,
      );
    await user.apply(appTemplate('v2'));
    await untilApp(
      canary,
      'early',
      (s) => s.revision === 2 && s.phase === 'Ready',
      'the canary on 2',
    );
    await untilApp(rest, 'late', (s) => s.revision === 2 && s.phase === 'Ready', 'the rest on 2');
    expect((await data(rest, 'late'))?.version).toBe('v2');
    const pinned = (await getApp(rest, 'pinned'))?.status;
    expect(pinned?.revision).toBe(1);
    expect(pinned?.latestRevision).toBe(2);
    expect((await data(rest, 'pinned'))?.version).toBe('v1');
    // The canary moved before the rest: its pass on revision 2 came first.
    const movedAt = (name: string, ns: string): number =>
      Math.min(
        ...operators.flatMap((o) =>
          o.logs
            .filter(
              (l) =>
                l.includes(`"name":"${name}@App.${GROUP}"`) &&
                l.includes(`"namespace":"${ns}"`) &&
                l.includes('"revision":2'),
            )
            .map((l) => Date.parse((JSON.parse(l) as { time: string }).time)),
        ),
      );
    expect(movedAt('early', canary)).toBeLessThanOrEqual(movedAt('late', rest));
  });

  it('is reconciled by the shard its namespace hashes to, and by no other', () => {
    for (const ns of [canary, rest]) {
      const shard = Number(ownerOf(ns, ['0', '1']));
      const reconciledBy = operators.map((o) =>
        o.logs.some(
          (l) =>
            l.includes('"msg":"reconciled"') &&
            l.includes(`"namespace":"${ns}"`) &&
            l.includes(`@App.${GROUP}`),
        ),
      );
      expect(reconciledBy).toEqual([shard === 0, shard === 1]);
    }
  });
});

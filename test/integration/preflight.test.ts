// Issue #26 on the real API server: a Template change is rendered and dry-run against every
// instance before any of them moves (ADR 0031). Thirty instances across three namespaces; the
// change adds a Service whose port comes from a parameter, and three instances give a port the
// API server refuses (its validation, not the schema: the schema check passes it). Under Block
// nothing moves; under Warn (the default) the rollout proceeds and the Template says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Template } from '../../src/api/template.ts';
import type { TemplateInstance } from '../../src/api/template-instance.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { fromSecret, instance, secret, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

let platform: string;
let tenants: string[];
let user: KubeCluster;
let running: RunningOperator;

const CONFIG = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}
data:
  port: "{{parameters.port}}"
`;

/** Revision 2: a Service on the instance's port; 70000 is out of range for the API server. */
const WITH_SERVICE = `${CONFIG}---
apiVersion: v1
kind: Service
metadata:
  name: {{instance.name}}
spec:
  selector: { app: "{{instance.name}}" }
  ports:
    - port: {{parameters.port}}
`;

const spec = (handlebars: string, preflight?: 'Block' | 'Warn'): Record<string, unknown> => ({
  // revert: an `off` instance freezes after its first apply and never moves (SPEC §7).
  sync: { mode: 'revert' },
  parameters: [{ name: 'port', type: 'number', value: 8080 }],
  targetNamespaces: { explicit: { allow: { literal: tenants } } },
  rollout: { strategy: 'All', ...(preflight ? { preflight } : {}) },
  handlebars,
});

/** Out of range too, and a Secret's value: nothing may show it. */
const SECRET_PORT = '71234';

/** The three instances of `name` given a port out of range, in name order. */
const breaking = (name: string): string[] => [0, 1, 2].map((t) => `${tenants[t]}/${name}-bad`);

async function instancesOf(name: string): Promise<TemplateInstance[]> {
  const all = await Promise.all(
    tenants.map((ns) => user.list(API_VERSION, 'TemplateInstance', { namespace: ns })),
  );
  return (all.flat() as unknown as TemplateInstance[]).filter(
    (i) => i.spec.templateRef.name === name,
  );
}

async function templateStatus(name: string): Promise<Template['status']> {
  const object = await user.get({
    apiVersion: API_VERSION,
    kind: 'Template',
    name,
    namespace: platform,
  });
  return (object as unknown as Template | undefined)?.status;
}

async function services(prefix: string): Promise<{ name: string; created: string }[]> {
  const all = await Promise.all(tenants.map((ns) => user.list('v1', 'Service', { namespace: ns })));
  return all
    .flat()
    .filter((s) => s.metadata.name?.startsWith(prefix))
    .map((s) => ({ name: s.metadata.name ?? '', created: s.metadata.creationTimestamp ?? '' }));
}

/** Ten instances of `name` per tenant namespace, the `bad` one's port out of range. */
async function fleetOn(name: string, preflight?: 'Block' | 'Warn'): Promise<void> {
  await user.apply(template(platform, name, spec(CONFIG, preflight)));
  await eventually(
    async () => (await templateStatus(name))?.latestRevision === 1,
    `revision 1 of ${name}`,
  );
  for (const ns of tenants)
    for (let n = 0; n < 10; n++) {
      const id = n === 0 ? `${name}-bad` : `${name}-${n}`;
      const port = n === 0 ? 70000 : 8080 + n;
      // The second namespace's bad port comes from a Secret: no report may quote it.
      const fromASecret = n === 0 && ns === tenants[1];
      if (fromASecret) await user.apply(secret(ns, `${name}-port`, { port: SECRET_PORT }));
      const value = fromASecret
        ? { valueFrom: fromSecret(`${name}-port`, 'port') }
        : { value: String(port) };
      await user.apply(
        instance(ns, id, { name, namespace: platform }, [{ name: 'port', ...value }]),
      );
    }
  await eventually(async () => {
    const all = await instancesOf(name);
    return (
      all.length === 30 && all.every((i) => i.status?.phase === 'Ready' && i.status.revision === 1)
    );
  }, `30 instances of ${name} Ready on revision 1`);
}

beforeAll(async () => {
  const cluster = connect();
  platform = await freshNamespace(cluster, 'preflight');
  tenants = [];
  for (const prefix of ['pf-a', 'pf-b', 'pf-c'])
    tenants.push(await freshNamespace(cluster, prefix));
  user = (await userClient()).cluster;
  running = await startOperator([platform, ...tenants]);
}, 60_000);

afterAll(async () => {
  await running?.stop();
});

describe('change preflight', () => {
  it('under Block, reports 3 of 30 failing by name and moves nobody until resumed', async () => {
    await fleetOn('blocked', 'Block');
    await user.apply(template(platform, 'blocked', spec(WITH_SERVICE, 'Block')));
    const status = await eventually(
      async () => {
        const s = await templateStatus('blocked');
        return s?.preflight?.revision === 2 && s.preflight.phase !== 'Running' && s;
      },
      'the preflight of revision 2 to finish',
      60_000,
    );
    expect(status.preflight).toMatchObject({
      revision: 2,
      phase: 'Failed',
      total: 30,
      changed: 27,
      unchanged: 0,
      failed: 3,
    });
    expect(status.preflight?.failing?.map((f) => f.instance)).toEqual(breaking('blocked'));
    for (const f of status.preflight?.failing ?? [])
      expect(f.reason).toMatch(/Service .*bad.* rejected by the API server \(dry run\)/);
    // The literal 70000 is quoted by the API server's refusal; the Secret's port never is.
    expect(status.preflight?.failing?.[0]?.reason).toContain('70000');
    expect(JSON.stringify(status)).not.toContain(SECRET_PORT);
    expect(status.rollout).toMatchObject({
      phase: 'Halted',
      blockedByPreflight: true,
      revision: 2,
      stableRevision: 1,
    });
    expect(status.rollout?.failing).toEqual(breaking('blocked'));
    const condition = status.conditions?.find((c) => c.type === 'Preflight');
    expect(condition).toMatchObject({ status: 'False', reason: 'PreflightFailed' });
    expect(condition?.message).toContain('27 would change, 0 unchanged, 3 would fail');
    expect(condition?.message).toContain('the rollout is blocked (preflight Block)');
    // Nothing moved: every instance renders revision 1, and no Service was made.
    await running.operator.idle();
    const all = await instancesOf('blocked');
    expect(all.every((i) => i.status?.revision === 1 && i.status.phase === 'Ready')).toBe(true);
    expect(await services('blocked-')).toEqual([]);

    // A resume lifts the block: the 27 move; the 3 fail on their own, as their pass reports.
    await user.apply(
      template(platform, 'blocked', spec(WITH_SERVICE, 'Block'), {
        annotations: { 'stencil.dev/rollout': 'resume' },
      }),
    );
    await eventually(
      async () => {
        const now = await instancesOf('blocked');
        const moved = now.filter((i) => i.status?.revision === 2 && i.status.phase === 'Ready');
        return moved.length === 27;
      },
      '27 instances Ready on revision 2 after the resume',
      60_000,
    );
    expect(await services('blocked-')).toHaveLength(27);
  }, 180_000);

  it('under Warn, reports the same before any instance moves, then rolls on and says so', async () => {
    await fleetOn('warned');
    await user.apply(template(platform, 'warned', spec(WITH_SERVICE)));
    const status = await eventually(
      async () => {
        const s = await templateStatus('warned');
        return s?.preflight?.revision === 2 && s.preflight.phase !== 'Running' && s;
      },
      'the preflight of revision 2 to finish',
      60_000,
    );
    expect(status.preflight).toMatchObject({ phase: 'Failed', total: 30, changed: 27, failed: 3 });
    expect(status.preflight?.failing?.map((f) => f.instance)).toEqual(breaking('warned'));
    expect(status.rollout).toMatchObject({ phase: 'Complete', revision: 2 });
    const condition = status.conditions?.find((c) => c.type === 'Preflight');
    expect(condition?.message).toContain('the rollout proceeds (preflight Warn)');
    await eventually(
      async () => {
        const now = await instancesOf('warned');
        return (
          now.filter((i) => i.status?.revision === 2 && i.status.phase === 'Ready').length === 27
        );
      },
      '27 instances Ready on revision 2',
      60_000,
    );
    // Every Service was made after the report: nobody moved before the preflight ended.
    const reported = Date.parse(condition?.lastTransitionTime ?? '');
    const made = await services('warned-');
    expect(made).toHaveLength(27);
    for (const s of made) expect(Date.parse(s.created)).toBeGreaterThanOrEqual(reported);
  }, 180_000);
});

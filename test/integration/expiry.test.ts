// Issue #14 part 3 on the real API server: an instance with a lifetime is deleted with what it
// owns when the lifetime is up; a Template caps lifetimes (maxTTL) or requires one (requireTTL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { instance, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { conditionOf, eventRecorded, instanceStatus } from './support/instances.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

let ns: string;
let user: KubeCluster;
let running: RunningOperator;

const PREVIEW =
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}\ndata:\n  env: preview\n';

const get = (kind: string, name: string): Promise<KubeObject | undefined> =>
  user.get({ apiVersion: kind === 'ConfigMap' ? 'v1' : API_VERSION, kind, name, namespace: ns });

beforeAll(async () => {
  ns = await freshNamespace(connect(), 'expiry');
  user = (await userClient()).cluster;
  running = await startOperator([ns]);
});

afterAll(async () => {
  await running?.stop();
});

describe('an instance with a lifetime', () => {
  it('is deleted with what it owns once spec.ttl has passed', async () => {
    await user.apply(template(ns, 'preview', { handlebars: PREVIEW }));
    await user.apply(instance(ns, 'pr-1', 'preview', [], { spec: { ttl: '4s' } }));
    const status = await eventually(async () => {
      const s = await instanceStatus(user, ns, 'pr-1');
      return s?.phase === 'Ready' && s;
    }, 'pr-1 Ready');
    expect(status.expiresAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(await get('ConfigMap', 'pr-1')).toBeDefined();
    // Nothing touches it: the operator's own timer deletes it, then the finalizer its objects.
    await eventually(
      async () => (await get('TemplateInstance', 'pr-1')) === undefined,
      'pr-1 to be deleted at its expiry',
    );
    expect(await get('ConfigMap', 'pr-1')).toBeUndefined();
    await eventRecorded(user, ns, 'Expired', 'expired at');
  });

  it('is refused by a Template whose maxTTL is shorter, naming the field, with nothing applied', async () => {
    await user.apply(template(ns, 'capped', { maxTTL: '1h', handlebars: PREVIEW }));
    await user.apply(instance(ns, 'long', 'capped', [], { spec: { ttl: '2h' } }));
    const status = await eventually(async () => {
      const s = await instanceStatus(user, ns, 'long');
      return conditionOf(s, 'ParametersValid')?.status === 'False' && s;
    }, 'long refused');
    expect(conditionOf(status, 'ParametersValid')).toMatchObject({ reason: 'TTLNotAllowed' });
    expect(conditionOf(status, 'ParametersValid')?.message).toContain('maxTTL 1h');
    expect(await get('ConfigMap', 'long')).toBeUndefined();
    // An input error: the pass stops until an edit, and is never retried with backoff.
    const lines = (): string[] => running.logs.filter((l) => l.includes('"name":"long"'));
    await eventually(
      async () => lines().some((l) => l.includes('reconcile stopped until an input changes')),
      'the pass over long to stop as terminal',
    );
    expect(lines().filter((l) => l.includes('will retry'))).toEqual([]);
    // Nor is a retry waiting to happen: a backoff is counted as the pass fails, not later.
    expect(running.operator.instances.queue.retries(`${ns}/long`)).toBe(0);
  });

  it('is required by a Template with requireTTL', async () => {
    await user.apply(template(ns, 'ephemeral', { requireTTL: true, handlebars: PREVIEW }));
    await user.apply(instance(ns, 'forever', 'ephemeral'));
    const status = await eventually(async () => {
      const s = await instanceStatus(user, ns, 'forever');
      return conditionOf(s, 'ParametersValid')?.status === 'False' && s;
    }, 'forever refused');
    expect(conditionOf(status, 'ParametersValid')?.message).toContain('requires a lifetime');
    expect(await get('ConfigMap', 'forever')).toBeUndefined();
  });
});

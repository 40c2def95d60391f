// A reconcile that changes nothing performs no write: counted both on the operator's own HTTP
// client and on the API server's apiserver_request_total across a forced resync.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { countRequests, sharedEndpoint } from './support/apiserver-requests.ts';
import { instance, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

let running: RunningOperator;
let user: KubeCluster;
let namespace: string;

/** Non-dry-run mutating requests the API server has served, for the resources the operator touches. */
function serverWrites(): Promise<number> {
  return countRequests(sharedEndpoint(), {
    verbs: ['POST', 'PUT', 'PATCH', 'APPLY', 'DELETE'],
    resources: ['templateinstances', 'templates', 'configmaps', 'services', 'events'],
  });
}

beforeAll(async () => {
  namespace = await freshNamespace(connect(), 'noop');
  user = (await userClient()).cluster;
  running = await startOperator([namespace]);
});

afterAll(async () => {
  await running?.stop();
});

it('performs no write when a forced resync finds nothing to change', async () => {
  await user.apply(
    template(namespace, 'app', {
      // revert: every resync pass evaluates and looks at what it applied (an off instance is
      // frozen after its first apply and sends nothing at all).
      sync: { mode: 'revert' },
      parameters: [{ name: 'color', value: 'blue', exposeInStatus: true }],
      handlebars:
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}\ndata:\n  color: {{parameters.color}}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: {{instance.name}}\nspec:\n  ports: [{port: 80}]\n',
    }),
  );
  for (const name of ['a', 'b', 'c']) await user.apply(instance(namespace, name, 'app'));
  await eventually(async () => {
    const list = await user.list(API_VERSION, 'TemplateInstance', { namespace });
    return (
      list.length === 3 &&
      list.every((i) => (i as { status?: { phase?: string } }).status?.phase === 'Ready')
    );
  }, 'three Ready instances');
  await running.operator.idle();

  const sent: string[] = [];
  running.connection.http.onRequest((method, path, dryRun) =>
    sent.push(`${method} ${path}${dryRun ? ' (dry run)' : ''}`),
  );
  const before = await serverWrites();

  running.operator.resyncAll();
  await running.operator.idle();

  // Each pass looked at what its instance applied (two objects each); the instances themselves
  // come from the informer cache.
  const reads = sent.filter((r) => /^GET .*\/(configmaps|services)\//.test(r));
  expect(reads.length).toBeGreaterThanOrEqual(6);
  expect(sent.filter((r) => r.includes('/templateinstances/'))).toEqual([]);
  expect(sent.filter((r) => !r.startsWith('GET') && !r.endsWith('(dry run)'))).toEqual([]);
  // Nothing changed since the last apply, so not even a dry run is needed.
  expect(sent.filter((r) => r.endsWith('(dry run)'))).toEqual([]);
  expect(await serverWrites()).toBe(before);
});

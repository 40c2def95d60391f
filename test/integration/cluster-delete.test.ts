// Conditional deletes on the real API server: a delete that names the uid (and resourceVersion)
// it saw removes that object only; one re-created under the same name, or changed since, is left
// alone with a Conflict (prune of an orphan, a TemplateInstanceSet removing what it stamped).
import { beforeAll, expect, it } from 'vitest';
import { isClusterError, type ObjectId } from '../../src/reconcile/cluster-port.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { configMap } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { userClient } from './support/operator.ts';

let user: KubeCluster;
let namespace: string;

beforeAll(async () => {
  namespace = await freshNamespace(connect(), 'conditional-delete');
  user = (await userClient()).cluster;
});

const id = (name: string): ObjectId => ({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace });

async function conflictOf(action: Promise<unknown>): Promise<boolean> {
  return action.then(
    () => false,
    (error: unknown) => isClusterError(error, 'Conflict'),
  );
}

it('deletes only the object with the uid it saw', async () => {
  const first = await user.apply(configMap(namespace, 'orphan', { a: '1' }));
  await user.delete(id('orphan'));
  // Re-created under the same name: a new uid.
  await user.apply(configMap(namespace, 'orphan', { a: '2' }));
  expect(await conflictOf(user.delete({ ...id('orphan'), uid: first.metadata.uid }))).toBe(true);
  const second = await user.get(id('orphan'));
  expect(second).toBeDefined();
  expect(await user.delete({ ...id('orphan'), uid: second!.metadata.uid })).toBe('deleted');
  expect(await user.get(id('orphan'))).toBeUndefined();
});

it('deletes only the version it saw when given one', async () => {
  const seen = await user.apply(configMap(namespace, 'stamped', { a: '1' }));
  await user.apply(configMap(namespace, 'stamped', { a: '2' })); // changed since it was read
  const stale = { resourceVersion: seen.metadata.resourceVersion };
  expect(await conflictOf(user.delete({ ...id('stamped'), uid: seen.metadata.uid }, stale))).toBe(
    true,
  );
  const current = await user.get(id('stamped'));
  expect(
    await user.delete(
      { ...id('stamped'), uid: current!.metadata.uid },
      { resourceVersion: current!.metadata.resourceVersion },
    ),
  ).toBe('deleted');
});

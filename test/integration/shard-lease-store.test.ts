// The shard member Leases on the real API server: a renewal creates then updates the Lease with
// the published view; a removal with a resourceVersion leaves a Lease renewed since alone.
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { microTime } from '../../src/framework/coordination/leader-election.ts';
import { connect as connectKube, type KubeConnection } from '../../src/kube/connection.ts';
import { KubeMemberLeaseStore } from '../../src/kube/shard-lease-store.ts';
import { connect, freshNamespace } from './support/cluster.ts';

let connection: KubeConnection;
let namespace: string;

beforeAll(async () => {
  namespace = await freshNamespace(connect(), 'shard-leases');
  connection = await connectKube(inject('kubeconfig'));
});

afterAll(() => connection.http.close());

it('renews, lists with the published view, and removes only the version it saw', async () => {
  const store = new KubeMemberLeaseStore(connection.http, namespace, 'stencil');
  await store.renew('Replica_A', microTime(Date.now()), 15, '');
  await store.renew('Replica_A', microTime(Date.now()), 15, 'view-1');
  const [listed] = await store.list();
  expect(listed).toMatchObject({ identity: 'Replica_A', leaseDurationSeconds: 15, view: 'view-1' });

  // Renewed after it was listed: the stale removal is refused and the Lease stays.
  await store.renew('Replica_A', microTime(Date.now()), 15, 'view-2');
  await store.remove('Replica_A', listed!.resourceVersion);
  expect((await store.list()).map((l) => l.view)).toEqual(['view-2']);

  const [current] = await store.list();
  await store.remove('Replica_A', current!.resourceVersion);
  expect(await store.list()).toEqual([]);
  // Renewing again re-creates it (a member back after its Lease was collected).
  await store.renew('Replica_A', microTime(Date.now()), 15, 'view-3');
  expect((await store.list()).map((l) => l.view)).toEqual(['view-3']);
});

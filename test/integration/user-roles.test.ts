// The chart's roles for people (rbac.aggregateToDefaultRoles, ADR 0033) on a plane whose
// kube-controller-manager folds them into Kubernetes' admin, edit and view: what a namespace
// editor and a namespace viewer may do with Stencil's API, asked of the API server as
// SubjectAccessReviews. The shared plane of global-setup runs no controllers, so no aggregation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import { connect, type KubeConnection } from '../../src/kube/connection.ts';
import { startControlPlane, type ControlPlane } from '../../tools/control-plane/control-plane.ts';
import { installProjectCrds } from '../../tools/control-plane/crds.ts';
import { deployUserRoles } from '../../tools/local/operator-identity.ts';
import { eventually } from './support/operator.ts';

let plane: ControlPlane;
let admin: KubeConnection;
const TENANT = 'team-x';
const OTHER = 'team-y';

interface Access {
  verb: string;
  resource: string;
  subresource?: string;
  namespace?: string;
}

/** Whether `user` may do `access` on Stencil's API group, as the API server's authorizer says. */
async function may(user: string, access: Access): Promise<boolean> {
  const review = await admin.http.request<{ status?: { allowed?: boolean } }>({
    method: 'POST',
    path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user, resourceAttributes: { group: 'stencil.dev', ...access } },
    },
  });
  return review.status?.allowed === true;
}

function roleBinding(user: string, clusterRole: string): KubeObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: user, namespace: TENANT },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  };
}

beforeAll(async () => {
  plane = await startControlPlane({ controllers: true, log: () => undefined });
  await installProjectCrds(plane);
  admin = await connect(plane.kubeconfigPath);
  for (const name of [TENANT, OTHER])
    await admin.cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  for (const role of deployUserRoles()) await admin.cluster.apply(role);
  await admin.cluster.apply(roleBinding('alice', 'edit'));
  await admin.cluster.apply(roleBinding('bob', 'view'));
}, 180_000);

afterAll(async () => {
  admin?.http.close();
  await plane?.stop();
});

describe("the chart's roles for people", () => {
  it('are two ClusterRoles labelled for aggregation, neither bound to anyone', () => {
    const roles = deployUserRoles();
    expect(roles.map((r) => `${r.kind} ${r.metadata.name}`).sort()).toEqual([
      'ClusterRole stencil:edit',
      'ClusterRole stencil:view',
    ]);
  });

  it("let a namespace's editors manage TemplateInstances there, and only there", async () => {
    // The aggregation controller fills `edit` shortly after the roles appear.
    await eventually(
      () => may('alice', { verb: 'create', resource: 'templateinstances', namespace: TENANT }),
      'edit aggregates stencil:edit',
    );
    for (const verb of ['get', 'list', 'watch', 'update', 'patch', 'delete', 'deletecollection'])
      expect(await may('alice', { verb, resource: 'templateinstances', namespace: TENANT })).toBe(
        true,
      );
    for (const resource of ['templates', 'templaterevisions'])
      expect(await may('alice', { verb: 'get', resource, namespace: TENANT })).toBe(true);
    expect(
      await may('alice', { verb: 'create', resource: 'templateinstances', namespace: OTHER }),
    ).toBe(false);
  });

  it('keep Templates, revisions, sets and instance status out of an editor’s hands', async () => {
    await eventually(
      () => may('alice', { verb: 'create', resource: 'templateinstances', namespace: TENANT }),
      'edit aggregates stencil:edit',
    );
    const refused: Access[] = [
      { verb: 'create', resource: 'templates', namespace: TENANT },
      { verb: 'update', resource: 'templates', namespace: TENANT },
      { verb: 'create', resource: 'templaterevisions', namespace: TENANT },
      { verb: 'create', resource: 'templateinstancesets' },
      { verb: 'list', resource: 'templateinstancesets' },
    ];
    for (const access of refused)
      expect(await may('alice', access), JSON.stringify(access)).toBe(false);
    // Status is the operator's to write: an editor must not mark an instance Ready by hand.
    const status = { resource: 'templateinstances', subresource: 'status', namespace: TENANT };
    expect(await may('alice', { verb: 'patch', ...status })).toBe(false);
    expect(await may('alice', { verb: 'get', ...status })).toBe(true);
  });

  it("let a namespace's viewers read, and write nothing", async () => {
    await eventually(
      () => may('bob', { verb: 'list', resource: 'templateinstances', namespace: TENANT }),
      'view aggregates stencil:view',
    );
    for (const resource of ['templateinstances', 'templates', 'templaterevisions'])
      for (const verb of ['get', 'list', 'watch'])
        expect(await may('bob', { verb, resource, namespace: TENANT })).toBe(true);
    for (const verb of ['create', 'update', 'patch', 'delete'])
      expect(await may('bob', { verb, resource: 'templateinstances', namespace: TENANT })).toBe(
        false,
      );
  });
});

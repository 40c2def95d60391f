// A right missing, on the real API server: the operator runs with the chart's RBAC, as an install
// does, and the Template acts as a ServiceAccount of its namespace that may write ConfigMaps but
// not PersistentVolumeClaims, and the Template renders a claim. The instance says so in its status
// (Ready=False, naming the account, verb, resource and namespace) instead of having none, and
// deleting it does not hang on its finalizer.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { connect as connectKube, type KubeConnection } from '../../src/kube/connection.ts';
import type { KubeObject } from '../../src/api/object-meta.ts';
import {
  deployRbac,
  installOperatorIdentity,
  relocateRbac,
  removeClusterScoped,
} from '../../tools/local/operator-identity.ts';
import { instance, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { conditionOf, eventRecorded, instanceStatus } from './support/instances.ts';
import { eventually, startOperator, userClient, type RunningOperator } from './support/operator.ts';

const scratch = mkdtempSync(join(tmpdir(), 'stencil-permission-'));
let admin: KubeConnection;
let user: KubeCluster;
let ns: string;
let rbac: KubeObject[];
let operator: KubeConnection | undefined;
let running: RunningOperator | undefined;

const BODY = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}-config
data:
  size: 1Gi
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: {{instance.name}}-data
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`;

beforeAll(async () => {
  admin = await connectKube(inject('kubeconfig'));
  ns = await freshNamespace(connect(), 'permission');
  const operatorNamespace = await freshNamespace(connect(), 'stencil-permission');
  rbac = relocateRbac(deployRbac(), {
    namespace: operatorNamespace,
    name: `stencil-${randomBytes(3).toString('hex')}`,
  });
  const kubeconfig = join(scratch, 'operator.kubeconfig');
  operator = (await installOperatorIdentity(admin, rbac, kubeconfig)).connection;
  user = (await userClient()).cluster;
  // The Template's account: ConfigMaps only.
  await user.apply({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'templates', namespace: ns },
  });
  await user.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'templates', namespace: ns },
    rules: [
      {
        apiGroups: [''],
        resources: ['configmaps'],
        verbs: ['get', 'list', 'create', 'patch', 'delete'],
      },
    ],
  });
  await user.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'templates', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'templates' },
    subjects: [{ kind: 'ServiceAccount', name: 'templates', namespace: ns }],
  });
  running = await startOperator([ns], kubeconfig, {
    tenancy: { actAs: 'service-account', defaultServiceAccount: 'templates' },
  });
  await user.apply(template(ns, 'with-claim', { sync: { mode: 'revert' }, handlebars: BODY }));
}, 60_000);

afterAll(async () => {
  await running?.stop();
  operator?.http.close();
  await removeClusterScoped(admin, rbac ?? []);
  admin?.http.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe("a kind the Template's ServiceAccount has no rights on", () => {
  it('shows Ready=False naming verb, resource and namespace, and deleting the instance finishes', async () => {
    await user.apply(instance(ns, 'app', 'with-claim'));
    const ready = await eventually(async () => {
      const condition = conditionOf(await instanceStatus(user, ns, 'app'));
      return condition?.status === 'False' && condition;
    }, 'the instance to report the missing right');
    expect(ready.reason).toBe('ApplyFailed');
    expect(ready.message).toContain(`system:serviceaccount:${ns}:templates`);
    expect(ready.message).toContain('cannot patch resource "persistentvolumeclaims"');
    expect(ready.message).toContain(`in the namespace "${ns}"`);

    await user.delete({
      apiVersion: API_VERSION,
      kind: 'TemplateInstance',
      name: 'app',
      namespace: ns,
    });
    await eventually(
      async () =>
        (await user.get({
          apiVersion: API_VERSION,
          kind: 'TemplateInstance',
          name: 'app',
          namespace: ns,
        })) === undefined,
      'the instance to be deleted',
    );
    await eventRecorded(user, ns, 'ListForbidden', 'PersistentVolumeClaim');
  });
});

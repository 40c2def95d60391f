// Strict mode tells the operator from everybody else by its exact identity: the operator runs as
// its own ServiceAccount under the chart's RBAC (as an install does) and writes as the Template's
// ServiceAccount (ADR 0035); a cluster-admin, a system:masters user and that same ServiceAccount
// with its own token (as a Pod of it would) are all refused a patch and a delete, told which
// instance to edit; a member of a break-glass group gets through and the operator reverts the
// change; the operator's own (impersonated) prunes and deletes still pass the webhook.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { connect as connectKube, type KubeConnection } from '../../src/kube/connection.ts';
import {
  deployRbac,
  grantTemplateAccount,
  installOperatorIdentity,
  relocateRbac,
  removeClusterScoped,
  selfAccess,
  TEMPLATE_ACCOUNT,
  waitForAccess,
  writeServiceAccountKubeconfig,
  type ServiceAccountRef,
} from '../../tools/local/operator-identity.ts';
import { configMap, instance, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import {
  eventually,
  installStrictConfiguration,
  loopbackWebhook,
  rejectionOf as rejection,
  removeWebhookConfiguration,
  renameStrictConfiguration,
  startOperator,
  userClient,
  type RunningOperator,
} from './support/operator.ts';

const suffix = randomBytes(3).toString('hex');
const scratch = mkdtempSync(join(tmpdir(), 'stencil-strict-identity-'));
const configuration = `stencil-strict-identity-${suffix}`;
const adminsBinding = `strict-identity-admins-${suffix}`;
let admin: KubeConnection;
let ns: string;
let account: ServiceAccountRef;
let rbac: KubeObject[];
let running: RunningOperator | undefined;
const people = {} as Record<'alice' | 'bob' | 'tester' | 'templates', KubeCluster>;
const connections: KubeConnection[] = [];
let breakGlassGroup: string;
let bobUsername: string;

const TEMPLATE = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  colour: {{parameters.colour}}
{{#if parameters.extra}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: extra
data:
  a: "1"
{{/if}}
`;

const liveConfigMap = (name: string): Promise<KubeObject | undefined> =>
  admin.cluster.get({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace: ns });

const colourOf = async (): Promise<string | undefined> =>
  ((await liveConfigMap('settings')) as { data?: { colour?: string } } | undefined)?.data?.colour;

/**
 * A person with full RBAC: a ServiceAccount (bound to cluster-admin by the test's
 * ClusterRoleBinding) with a kubeconfig of its own.
 */
async function person(namespace: string, name: string): Promise<KubeCluster> {
  await admin.cluster.apply({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name, namespace },
  });
  const path = join(scratch, `${name}.kubeconfig`);
  await writeServiceAccountKubeconfig(admin, { namespace, name }, path);
  const { cluster, connection } = await userClient(path);
  connections.push(connection);
  await waitForAccess(connection, [{ group: '*', resource: '*', verb: '*' }]);
  return cluster;
}

beforeAll(async () => {
  admin = await connectKube(inject('kubeconfig'));
  const kube = connect();
  ns = await freshNamespace(kube, 'strict-identity');
  const operatorNamespace = await freshNamespace(kube, 'stencil-identity');
  const peopleNamespace = await freshNamespace(kube, 'people');
  const oncallNamespace = await freshNamespace(kube, 'oncall');
  // Every ServiceAccount of the on-call namespace is in this group (the API server adds it).
  breakGlassGroup = `system:serviceaccounts:${oncallNamespace}`;

  rbac = renameStrictConfiguration(
    relocateRbac(deployRbac(), { namespace: operatorNamespace, name: `stencil-${suffix}` }),
    configuration,
  );
  const identity = await installOperatorIdentity(admin, rbac, join(scratch, 'operator.kubeconfig'));
  account = identity.account;
  connections.push(identity.connection);

  await admin.cluster.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: adminsBinding },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [
      { kind: 'ServiceAccount', name: 'alice', namespace: peopleNamespace },
      { kind: 'ServiceAccount', name: 'bob', namespace: oncallNamespace },
    ],
  });
  people.alice = await person(peopleNamespace, 'alice');
  people.bob = await person(oncallNamespace, 'bob');
  bobUsername = `system:serviceaccount:${oncallNamespace}:bob`;
  const tester = await userClient();
  connections.push(tester.connection);
  people.tester = tester.cluster;

  // The Template's account, and the same account as a Pod of it would use it: its own token.
  await grantTemplateAccount(admin.cluster, ns);
  const own = join(scratch, 'templates.kubeconfig');
  await writeServiceAccountKubeconfig(admin, { namespace: ns, name: TEMPLATE_ACCOUNT }, own);
  const templates = await userClient(own);
  connections.push(templates.connection);
  people.templates = templates.cluster;

  running = await startOperator([ns], join(scratch, 'operator.kubeconfig'), {
    tenancy: { actAs: 'service-account', defaultServiceAccount: TEMPLATE_ACCOUNT },
    webhook: loopbackWebhook(operatorNamespace, configuration, {
      breakGlassGroups: [breakGlassGroup],
      configurations: 'install',
    }),
  });
  // As config/deploy installs it: the manifest owns the configuration, the operator its caBundle.
  await installStrictConfiguration(admin.cluster, running, configuration);

  await people.tester.apply(
    template(ns, 'locked', {
      parameters: [
        { name: 'colour', type: 'string', value: 'blue' },
        { name: 'extra', type: 'bool', value: true },
      ],
      sync: { mode: 'strict' },
      handlebars: TEMPLATE,
    }),
  );
  await people.tester.apply(instance(ns, 'locked', 'locked', [{ name: 'extra', value: true }]));
  await eventually(
    async () => (await liveConfigMap('extra')) && (await colourOf()) === 'blue',
    'the strict ConfigMaps',
  );
});

afterAll(async () => {
  if (admin) {
    await removeWebhookConfiguration(admin.cluster, configuration).catch(() => undefined);
    await running?.stop();
    const adminsBindingObject = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: adminsBinding },
    };
    await removeClusterScoped(admin, [...(rbac ?? []), adminsBindingObject]);
  }
  for (const connection of connections) connection.http.close();
  admin?.http.close();
  rmSync(scratch, { recursive: true, force: true });
}, 60_000);

describe('strict mode under the operator’s own identity', () => {
  it('runs the operator as its ServiceAccount, which is not an admin', async () => {
    expect(await running!.connection.cluster.identity()).toBe(
      `system:serviceaccount:${account.namespace}:${account.name}`,
    );
    expect(await selfAccess(running!.connection, { group: '*', resource: '*', verb: '*' })).toBe(
      false,
    );
  });

  it.each([
    ['a ServiceAccount bound to cluster-admin', 'alice'],
    ['a system:masters user', 'tester'],
    ["the Template's own ServiceAccount, with its own token", 'templates'],
  ] as const)(
    'refuses %s a patch and a delete, naming the instance to edit',
    async (_who, name) => {
      const user = people[name];
      const managedBy = `ConfigMap ${ns}/settings is managed by TemplateInstance ${ns}/locked (sync mode strict)`;
      // An edit as `kubectl apply --server-side` sends it: a PATCH of the field it names.
      const patched = await rejection(user.apply(configMap(ns, 'settings', { colour: 'red' })));
      expect(patched).toContain(managedBy);
      expect(patched).toContain(
        `data.colour may not be changed; edit TemplateInstance ${ns}/locked or its Template ${ns}/locked instead`,
      );
      const deleted = await rejection(
        user.delete({ apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', namespace: ns }),
      );
      expect(deleted).toContain(managedBy);
      expect(deleted).toContain(`delete TemplateInstance ${ns}/locked, or edit it or its Template`);
      expect(await colourOf()).toBe('blue');
    },
  );

  it('lets a break-glass group member change it, logs that, and the operator reverts it', async () => {
    expect(
      await rejection(people.bob.apply(configMap(ns, 'settings', { colour: 'red' }))),
    ).toBeUndefined();
    const bypass = running!.logs.find(
      (l) => l.includes('strict mode bypassed by a break-glass group') && l.includes(bobUsername),
    );
    expect(bypass).toBeDefined();
    expect(JSON.parse(bypass!)).toMatchObject({
      user: bobUsername,
      group: breakGlassGroup,
      operation: 'UPDATE',
      name: 'settings',
    });
    await eventually(
      async () => (await colourOf()) === 'blue',
      'the operator to revert the colour',
    );
  });

  it('lets the operator’s own prune and clean-up through', async () => {
    await people.tester.apply(instance(ns, 'locked', 'locked', [{ name: 'extra', value: false }]));
    await eventually(
      async () => !(await liveConfigMap('extra')),
      'the operator to prune ConfigMap extra',
    );
    await people.tester.delete({
      apiVersion: API_VERSION,
      kind: 'TemplateInstance',
      name: 'locked',
      namespace: ns,
    });
    await eventually(
      async () => !(await liveConfigMap('settings')),
      'the operator to delete ConfigMap settings with its instance',
    );
    // Nothing the operator did was refused, by RBAC or by its own webhook.
    expect(running!.logs.filter((l) => /forbidden|denied the request/i.test(l))).toEqual([]);
  });
});

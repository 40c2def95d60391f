// A Template acts with the rights its namespace gave it, never with the operator's (ADR 0035). A
// person who may write Templates and instances in one namespace tries, through Stencil, each
// escalation a hostile Template author found against the operator's own identity: another
// namespace's Secret, a cluster-wide Secret LIST, a RoleBinding elsewhere, a ClusterRoleBinding,
// a Namespace, an object in another namespace, the operator's own Secret. Each is refused with a
// condition naming the ServiceAccount and what it may not do; nothing is written; no value
// appears where that person can read. Granted the rights by the other namespace's admin, the
// same Templates work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { instance, secret, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { conditionOf, instanceStatus } from './support/instances.ts';
import {
  eventually,
  rejectionOf,
  startOperator,
  userClient,
  type RunningOperator,
} from './support/operator.ts';
import { deployAdmissionPolicies } from '../../tools/local/operator-identity.ts';

const OTHER_SECRET = 'OTHER-TEAM-PASSWORD-9b71';
const OPERATOR_SECRET = 'OPERATOR-WEBHOOK-KEY-51ad';

let own: string;
let other: string;
let operatorNs: string;
let admin: KubeCluster;
/** The Template author: Templates and instances in `own` only, and what `edit` gives there. */
let author: KubeCluster;
let running: RunningOperator;
let account: string;

const rbac = 'rbac.authorization.k8s.io/v1';

function binding(namespace: string, name: string, role: string, subject: unknown): KubeObject {
  return {
    apiVersion: rbac,
    kind: 'RoleBinding',
    metadata: { name, namespace },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: role.split('/')[0]!,
      name: role.split('/')[1]!,
    },
    subjects: [subject],
  };
}

/** A Role in `namespace` with `rules`, bound to the account the author's Templates act as. */
async function grantAccount(namespace: string, name: string, rules: unknown[]): Promise<void> {
  await admin.apply({ apiVersion: rbac, kind: 'Role', metadata: { name, namespace }, rules });
  await admin.apply(
    binding(namespace, name, `Role/${name}`, {
      kind: 'ServiceAccount',
      name: 'templates',
      namespace: own,
    }),
  );
}

beforeAll(async () => {
  const cluster = connect();
  own = await freshNamespace(cluster, 'tenancy-own');
  other = await freshNamespace(cluster, 'tenancy-other');
  operatorNs = await freshNamespace(cluster, 'tenancy-operator');
  admin = (await userClient()).cluster;
  author = admin.actingAs({ username: 'author@example.com' });
  account = `system:serviceaccount:${own}:templates`;
  // What the namespace's admin gave: a ServiceAccount for its Templates, with a Role for what
  // they render here (as `edit` would, which no controller aggregates on this control plane).
  await admin.apply({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'templates', namespace: own },
  });
  await grantAccount(own, 'workloads', [
    {
      apiGroups: [''],
      resources: ['configmaps', 'secrets', 'events'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    },
  ]);
  // The author: Templates and instances, edit, and the ServiceAccount to act as, in `own` only.
  await admin.apply({
    apiVersion: rbac,
    kind: 'Role',
    metadata: { name: 'template-author', namespace: own },
    rules: [
      {
        apiGroups: ['stencil.dev'],
        resources: ['templates', 'templateinstances'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
      },
      {
        apiGroups: [''],
        resources: ['serviceaccounts'],
        verbs: ['impersonate'],
        resourceNames: ['templates'],
      },
    ],
  });
  const person = {
    kind: 'User',
    name: 'author@example.com',
    apiGroup: 'rbac.authorization.k8s.io',
  };
  await admin.apply(binding(own, 'author', 'Role/template-author', person));
  await admin.apply(binding(own, 'author-workloads', 'Role/workloads', person));
  await admin.apply(secret(other, 'other-secret', { password: OTHER_SECRET }));
  await admin.apply(secret(operatorNs, 'stencil-webhook-tls', { 'tls.key': OPERATOR_SECRET }));
  running = await startOperator([own], undefined, {
    tenancy: { actAs: 'service-account', defaultServiceAccount: 'templates' },
  });
});

afterAll(async () => {
  await running?.stop();
  for (const policy of policies) await admin.delete(idOf(policy)).catch(() => undefined);
});

/** The chart's admission policy, under names of this file's own, while it runs. */
const policies: KubeObject[] = [];
const idOf = (o: KubeObject): { apiVersion: string; kind: string; name: string } => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  name: o.metadata.name ?? '',
});

/** A Template of the author's (its default ServiceAccount: `templates`) and one instance of it. */
async function attempt(
  name: string,
  spec: Record<string, unknown>,
  parameters: unknown[] = [],
): Promise<void> {
  await author.apply(template(own, name, spec));
  await author.apply(instance(own, name, name, parameters));
}

async function refusal(name: string): Promise<{ reason?: string; message?: string }> {
  return eventually(async () => {
    const ready = conditionOf(await instanceStatus(author, own, name));
    return ready?.status === 'False' && ready.reason !== 'Reconciled' && ready;
  }, `instance ${name} refused`);
}

const configMapIn = (namespace: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}\n  namespace: ${namespace}\ndata:\n  v: {{quote parameters.v}}\n`;

describe('a Template author limited to one namespace, through Stencil', () => {
  it("cannot read another namespace's Secret by name", async () => {
    await attempt(
      'other-secret',
      { sourceNamespaces: ['*'], parameters: [{ name: 'v' }], handlebars: configMapIn(own) },
      [
        {
          name: 'v',
          valueFrom: { secretKeyRef: { name: 'other-secret', namespace: other, key: 'password' } },
        },
      ],
    );
    const ready = await refusal('other-secret');
    expect(ready.reason).toBe('ParameterResolutionFailed');
    expect(ready.message).toContain(account);
    expect(ready.message).toMatch(/cannot get resource "secrets"/);
    expect(ready.message).toContain(other);
  });

  it('cannot LIST Secrets across the cluster', async () => {
    await attempt(
      'every-secret',
      {
        sourceNamespaces: ['*'],
        parameters: [{ name: 'v', type: 'array' }],
        handlebars: configMapIn(own).replace(
          '{{quote parameters.v}}',
          '{{quote (join "," parameters.v)}}',
        ),
      },
      [
        {
          name: 'v',
          valueFrom: {
            objectFieldRef: { apiVersion: 'v1', kind: 'Secret', jsonPath: '.items[*].data' },
          },
        },
      ],
    );
    const ready = await refusal('every-secret');
    expect(ready.message).toContain(account);
    expect(ready.message).toMatch(/cannot list resource "secrets"/);
  });

  it("cannot read the operator's own Secret", async () => {
    await attempt(
      'operator-secret',
      { sourceNamespaces: ['*'], parameters: [{ name: 'v' }], handlebars: configMapIn(own) },
      [
        {
          name: 'v',
          valueFrom: {
            secretKeyRef: { name: 'stencil-webhook-tls', namespace: operatorNs, key: 'tls.key' },
          },
        },
      ],
    );
    const ready = await refusal('operator-secret');
    expect(ready.message).toContain(account);
    expect(ready.message).toMatch(/cannot get resource "secrets"/);
  });

  const writes: [string, Record<string, unknown>, string, RegExp][] = [
    [
      'admin-elsewhere',
      { allowCrossNamespaceResources: true },
      `apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: author-admin\n  namespace: ${'OTHER'}\nroleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin }\nsubjects: [{ kind: User, name: author@example.com, apiGroup: rbac.authorization.k8s.io }]\n`,
      /resource "rolebindings" .* in the namespace "OTHER"/,
    ],
    [
      'cluster-admin',
      { allowClusterScopedResources: true },
      `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: author-cluster-admin\nroleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin }\nsubjects: [{ kind: User, name: author@example.com, apiGroup: rbac.authorization.k8s.io }]\n`,
      /resource "clusterrolebindings"/,
    ],
    [
      'namespace',
      { allowClusterScopedResources: true },
      'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: made-by-author\n',
      /resource "namespaces"/,
    ],
    [
      'object-elsewhere',
      { allowCrossNamespaceResources: true },
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planted\n  namespace: OTHER\ndata: { a: b }\n',
      /resource "configmaps" .* in the namespace "OTHER"/,
    ],
  ];
  for (const [name, policy, body, forbidden] of writes) {
    it(`cannot write through Stencil: ${name}`, async () => {
      await attempt(name, { ...policy, handlebars: body.replaceAll('OTHER', other) });
      const ready = await refusal(name);
      expect(ready.reason).toBe('ApplyFailed');
      expect(ready.message).toContain(account);
      expect(ready.message).toMatch(new RegExp(forbidden.source.replaceAll('OTHER', other)));
    });
  }

  it('wrote nothing, and no refused value shows where the author can read', async () => {
    const absent = [
      { apiVersion: rbac, kind: 'RoleBinding', name: 'author-admin', namespace: other },
      { apiVersion: rbac, kind: 'ClusterRoleBinding', name: 'author-cluster-admin' },
      { apiVersion: 'v1', kind: 'Namespace', name: 'made-by-author' },
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'planted', namespace: other },
    ];
    for (const id of absent) expect(await admin.get(id), `${id.kind} ${id.name}`).toBeUndefined();
    const readable = [
      ...(await author.list('v1', 'ConfigMap', { namespace: own })),
      ...(await author.list(API_VERSION, 'TemplateInstance', { namespace: own })),
      ...(await author.list('v1', 'Event', { namespace: own })),
    ];
    const text = JSON.stringify(readable);
    for (const value of [OTHER_SECRET, OPERATOR_SECRET])
      for (const form of [value, Buffer.from(value).toString('base64')])
        expect(text).not.toContain(form);
  });

  it("works once the other namespace's admin grants its ServiceAccount those rights", async () => {
    await grantAccount(other, 'from-tenancy-own', [
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['other-secret'] },
      {
        apiGroups: [''],
        resources: ['configmaps'],
        verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'],
      },
    ]);
    // Nothing tells the operator of a grant: the instances are touched, as their owner would.
    for (const name of ['other-secret', 'object-elsewhere'])
      await author.patchMetadata(
        (await author.get({
          apiVersion: API_VERSION,
          kind: 'TemplateInstance',
          name,
          namespace: own,
        }))!,
        {
          annotations: { 'stencil.dev/reconcile-at': String(Date.now()) },
        },
      );
    for (const name of ['other-secret', 'object-elsewhere'])
      await eventually(
        async () => conditionOf(await instanceStatus(author, own, name))?.status === 'True',
        `${name} Ready`,
      );
    const planted = await admin.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'planted',
      namespace: other,
    });
    expect(planted).toBeDefined();
    expect((await instanceStatus(author, own, 'other-secret'))?.serviceAccount).toBe(
      `${own}/templates`,
    );
  });

  it('cannot make a Template act as a ServiceAccount it may not impersonate itself', async () => {
    // A powerful account in the same namespace, which the author may not use.
    await admin.apply({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'deployer', namespace: own },
    });
    // The chart's policy, as installed with tenancy.defaultServiceAccount: templates.
    const suffix = own.slice(own.lastIndexOf('-'));
    const writers = deployAdmissionPolicies().filter((o) =>
      o.metadata.name?.endsWith('-template-writers'),
    );
    for (const policy of writers) {
      const renamed = JSON.parse(
        JSON.stringify(policy)
          .replaceAll('stencil-template-writers', `stencil-template-writers${suffix}`)
          .replace(': \\"\\"', ': \\"templates\\"'),
      ) as KubeObject;
      policies.push(renamed);
      await admin.apply(renamed);
    }
    const body = configMapIn(own).replace('{{quote parameters.v}}', 'x');
    const asDeployer = template(own, 'as-deployer', {
      serviceAccountName: 'deployer',
      handlebars: body,
    });
    // The API server takes a moment to load a new policy: asked with dry runs until it does.
    await eventually(
      () => rejectionOf(author.apply(asDeployer, { dryRun: true })),
      'the admission policy to refuse the Template',
    );
    const refusal = await rejectionOf(author.apply(asDeployer));
    expect(refusal).toContain(`acts as ServiceAccount ${own}/deployer`);
    expect(refusal).toContain('author@example.com may not impersonate');
    expect(
      await admin.get({
        apiVersion: API_VERSION,
        kind: 'Template',
        name: 'as-deployer',
        namespace: own,
      }),
    ).toBeUndefined();
    // Its own account, named or by default, it may.
    await author.apply(
      template(own, 'as-templates', { serviceAccountName: 'templates', handlebars: body }),
    );
    await author.apply(template(own, 'by-default', { handlebars: body }));
    // An admin who may impersonate it may hand the account to a Template.
    await admin.apply(
      template(own, 'as-deployer', { serviceAccountName: 'deployer', handlebars: body }),
    );
    // ...which the author may then not edit, since editing it is using the account.
    expect(
      await rejectionOf(
        author.apply(
          template(own, 'as-deployer', {
            serviceAccountName: 'deployer',
            handlebars: `${body}# edited\n`,
          }),
        ),
      ),
    ).toContain('may not impersonate');
  });
});

// The operator's own identity on a cluster, as a real install gives it: the chart's ServiceAccount,
// ClusterRole, Role and bindings, and a kubeconfig holding a TokenRequest token of that
// ServiceAccount. Shared by `npm run local` and the integration tests, so that neither runs the
// operator as an admin (whose edits strict mode would then take for the operator's own).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../../src/api/object-meta.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { connect, type KubeConnection } from '../../src/kube/connection.ts';
import { readManifests } from './apply-manifests.ts';

export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

/** What a SelfSubjectAccessReview asks about (authorization.k8s.io/v1 ResourceAttributes). */
export type ResourceAttributes = Partial<
  Record<'group' | 'resource' | 'verb' | 'namespace' | 'name', string>
>;

const RBAC_KINDS = ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'];

/** The chart rendered with default values (tools/generate.ts). */
const DEPLOY_FILE = join(import.meta.dirname, '..', '..', 'config', 'deploy', 'stencil.yaml');

/** The ServiceAccount config/deploy/stencil.yaml (the chart with default values) runs as. */
export const DEPLOY_ACCOUNT: ServiceAccountRef = { namespace: 'stencil-system', name: 'stencil' };

/**
 * The chart's RBAC objects with default values, as config/deploy/stencil.yaml holds them: the
 * ServiceAccount stencil-system/stencil, the ClusterRole (with the default `additionalRules`,
 * enough for every sample), the Role for its Lease and webhook Secret, and their bindings.
 */
export function deployRbac(): KubeObject[] {
  return readManifests([DEPLOY_FILE]).filter((o) => RBAC_KINDS.includes(o.kind) && !isUserRole(o));
}

/** The chart's roles for people, as config/deploy/stencil.yaml holds them (see isUserRole). */
export function deployUserRoles(): KubeObject[] {
  return readManifests([DEPLOY_FILE]).filter(isUserRole);
}

/**
 * The chart's ValidatingAdmissionPolicies and their bindings, as config/deploy/stencil.yaml holds
 * them: who may make a Template act as a ServiceAccount (ADR 0035).
 */
export function deployAdmissionPolicies(): KubeObject[] {
  return readManifests([DEPLOY_FILE]).filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy'));
}

/**
 * The chart's roles for people (`rbac.aggregateToDefaultRoles`): folded into admin/edit/view and
 * bound to no ServiceAccount, so not the operator's identity.
 */
export function isUserRole(object: KubeObject): boolean {
  return Object.keys(object.metadata.labels ?? {}).some((label) =>
    label.startsWith('rbac.authorization.k8s.io/aggregate-to-'),
  );
}

/**
 * The RBAC of the chart with `sharding.enabled`: its Role also lists and deletes Leases (shard
 * members read each other's and remove their own).
 */
export function withShardingRbac(objects: KubeObject[]): KubeObject[] {
  return objects.map((object) => {
    if (object.kind !== 'Role') return object;
    const role = structuredClone(object) as KubeObject & {
      rules?: { resources?: string[]; verbs: string[] }[];
    };
    for (const rule of role.rules ?? [])
      if (rule.resources?.includes('leases'))
        rule.verbs = [...new Set([...rule.verbs, 'list', 'delete'])];
    return role;
  });
}

/** The chart's RBAC with extra ClusterRole rules, as `rbac.additionalRules` would add them. */
export function withClusterRules(rules: object[]): (objects: KubeObject[]) => KubeObject[] {
  return (objects) =>
    objects.map((object) => {
      if (object.kind !== 'ClusterRole') return object;
      const role = structuredClone(object) as KubeObject & { rules?: object[] };
      role.rules = [...(role.rules ?? []), ...rules];
      return role;
    });
}

/**
 * The ServiceAccount that tests' and benchmarks' Templates act as when they name none
 * (`--default-service-account`, ADR 0035).
 */
export const TEMPLATE_ACCOUNT = 'stencil-templates';

const NAMESPACE_ALL_ROLE = 'stencil-test-namespace-all';

/**
 * Gives `namespace` the ServiceAccount TEMPLATE_ACCOUNT, which may do anything inside `targets`
 * (default: that namespace) and nothing outside them: what the admins of those namespaces grant
 * the Templates of `namespace`.
 */
export async function grantTemplateAccount(
  cluster: Pick<KubeCluster, 'apply'>,
  namespace: string,
  targets: readonly string[] = [namespace],
): Promise<void> {
  const rbac = 'rbac.authorization.k8s.io';
  await cluster.apply({
    apiVersion: `${rbac}/v1`,
    kind: 'ClusterRole',
    metadata: { name: NAMESPACE_ALL_ROLE },
    rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
  });
  await cluster.apply({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: TEMPLATE_ACCOUNT, namespace },
  });
  for (const target of targets)
    await cluster.apply({
      apiVersion: `${rbac}/v1`,
      kind: 'RoleBinding',
      metadata: { name: `${TEMPLATE_ACCOUNT}-of-${namespace}`, namespace: target },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: NAMESPACE_ALL_ROLE },
      subjects: [{ kind: 'ServiceAccount', name: TEMPLATE_ACCOUNT, namespace }],
    });
}

/**
 * The RBAC of the chart with `authorizeSources: requester`: its ClusterRole also creates
 * SubjectAccessReviews (each valueFrom read is checked as the instance's requester) and sets the
 * caBundle of the requester webhook's configuration.
 */
export const withRequesterRbac = withClusterRules([
  { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  {
    apiGroups: ['admissionregistration.k8s.io'],
    resources: ['mutatingwebhookconfigurations'],
    resourceNames: ['stencil-requester'],
    verbs: ['get', 'patch'],
  },
]);

/**
 * The RBAC of the chart with `typedApis.allow` set to `groups` (docs/adr/0032): CRDs, the
 * ClusterRoles of published kinds, and the published kinds of those groups.
 */
export function withTypedApiRbac(groups: string[]): (objects: KubeObject[]) => KubeObject[] {
  return withClusterRules([
    {
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    },
    {
      apiGroups: ['rbac.authorization.k8s.io'],
      resources: ['clusterroles'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
    },
    {
      apiGroups: [...new Set(groups)].sort(),
      resources: ['*'],
      verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'],
    },
  ]);
}

type Binding = KubeObject & {
  roleRef?: { name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
  rules?: { resourceNames?: string[] }[];
};

/**
 * `objects` (a chart rendering, where every RBAC object bears the ServiceAccount's name) moved to
 * `account`: names, namespaces, role references, ServiceAccount subjects and the username a rule
 * names rewritten, so tests can install the chart's RBAC next to other copies of it.
 */
export function relocateRbac(objects: KubeObject[], account: ServiceAccountRef): KubeObject[] {
  return objects.map((object) => {
    const copy = structuredClone(object) as Binding;
    copy.metadata.name = account.name;
    if (copy.metadata.namespace) copy.metadata.namespace = account.namespace;
    if (copy.roleRef) copy.roleRef.name = account.name;
    if (copy.subjects)
      copy.subjects = copy.subjects.map((s) =>
        s.kind === 'ServiceAccount' ? { ...s, ...account } : s,
      );
    // The extra only the operator may impersonate names it (ADR 0035): its new name, then.
    const from = `system:serviceaccount:${DEPLOY_ACCOUNT.namespace}:${DEPLOY_ACCOUNT.name}`;
    const to = `system:serviceaccount:${account.namespace}:${account.name}`;
    for (const rule of copy.rules ?? [])
      if (rule.resourceNames)
        rule.resourceNames = rule.resourceNames.map((n) => (n === from ? to : n));
    return copy;
  });
}

/**
 * Writes a kubeconfig (mode 0600) for `account` on `admin`'s cluster, with a token from the
 * TokenRequest API that expires after `expirationSeconds`.
 */
export async function writeServiceAccountKubeconfig(
  admin: KubeConnection,
  account: ServiceAccountRef,
  path: string,
  expirationSeconds = 3600,
): Promise<void> {
  const token = await admin.http.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${account.namespace}/serviceaccounts/${account.name}/token`,
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds },
    },
  });
  const cluster = admin.kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the admin kubeconfig has no current cluster');
  const user = `${account.namespace}-${account.name}`;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [cluster],
    users: [{ name: user, token: token.status.token }],
    contexts: [{ name: user, cluster: cluster.name, user }],
    currentContext: user,
  });
  writeFileSync(path, kubeConfig.exportConfig(), { mode: 0o600 });
}

/** Whether `connection`'s user may do what `attributes` describe (SelfSubjectAccessReview). */
export async function selfAccess(
  connection: KubeConnection,
  attributes: ResourceAttributes,
): Promise<boolean> {
  const review = await connection.http.request<{ status?: { allowed?: boolean } }>({
    method: 'POST',
    path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: attributes },
    },
  });
  return review.status?.allowed === true;
}

/** What the operator does first: watch its own kinds and take its Lease. */
export function operatorStartAccess(operatorNamespace: string): ResourceAttributes[] {
  return [
    { group: 'stencil.dev', resource: 'templateinstances', verb: 'watch' },
    {
      group: 'coordination.k8s.io',
      resource: 'leases',
      verb: 'create',
      namespace: operatorNamespace,
    },
  ];
}

/**
 * Waits until every one of `attributes` is allowed: the RBAC authorizer sees new bindings through
 * its informers, a moment after they were written.
 */
export async function waitForAccess(
  connection: KubeConnection,
  attributes: ResourceAttributes[],
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const denied: ResourceAttributes[] = [];
    for (const a of attributes) if (!(await selfAccess(connection, a))) denied.push(a);
    if (denied.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(`RBAC still denies ${JSON.stringify(denied)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Installs `rbac` (one ServiceAccount and the roles bound to it) as `admin`, writes a kubeconfig
 * for that ServiceAccount to `kubeconfigPath`, and returns a connection as it once the operator's
 * first requests are allowed.
 */
export async function installOperatorIdentity(
  admin: KubeConnection,
  rbac: KubeObject[],
  kubeconfigPath: string,
  expirationSeconds?: number,
): Promise<{ account: ServiceAccountRef; connection: KubeConnection }> {
  const serviceAccount = rbac.find((o) => o.kind === 'ServiceAccount');
  if (!serviceAccount?.metadata.namespace || !serviceAccount.metadata.name)
    throw new Error('the RBAC objects hold no namespaced ServiceAccount');
  const account = {
    namespace: serviceAccount.metadata.namespace,
    name: serviceAccount.metadata.name,
  };
  for (const object of rbac) await admin.cluster.apply(object);
  await writeServiceAccountKubeconfig(admin, account, kubeconfigPath, expirationSeconds);
  const connection = await connect(kubeconfigPath);
  try {
    await waitForAccess(connection, operatorStartAccess(account.namespace));
  } catch (error) {
    connection.http.close();
    throw error;
  }
  return { account, connection };
}

/** Deletes the cluster-scoped ones of `objects` (a ClusterRole and its binding), if present. */
export async function removeClusterScoped(
  admin: KubeConnection,
  objects: KubeObject[],
): Promise<void> {
  for (const { apiVersion, kind, metadata } of objects.filter((o) => !o.metadata.namespace)) {
    await admin.cluster.delete({ apiVersion, kind, name: metadata.name! }).catch(() => undefined);
  }
}

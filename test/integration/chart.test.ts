// The Helm chart (charts/stencil) against the real API server: helm lint, every rendered object
// accepted by a server-side dry run, and the operator reconciling all samples under exactly the
// chart's RBAC (a token of the chart's ServiceAccount), without being cluster-admin.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import type { KubeObject } from '../../src/api/object-meta.ts';
import type { MetadataPatch, ObjectId } from '../../src/reconcile/cluster-port.ts';
import { connect as connectKube, type KubeConnection } from '../../src/kube/connection.ts';
import {
  requesterWebhookConfiguration,
  webhookConfiguration,
} from '../../src/webhook/webhook-configuration.ts';
import { ensureHelm } from '../../tools/control-plane/binaries.ts';
import {
  applyManifests,
  readManifests,
  sampleFiles,
  samplePhase,
} from '../../tools/local/apply-manifests.ts';
import {
  installOperatorIdentity,
  isUserRole,
  removeClusterScoped,
  selfAccess,
} from '../../tools/local/operator-identity.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import {
  eventually,
  loopbackWebhook,
  rejectionOf,
  removeWebhookConfiguration,
  renameStrictConfiguration,
  startOperator,
  userClient,
  type RunningOperator,
} from './support/operator.ts';
import { removePublishedKinds } from './support/published-kinds.ts';

const root = join(import.meta.dirname, '..', '..');
const chart = join(root, 'charts', 'stencil');
const scratch = mkdtempSync(join(tmpdir(), 'stencil-chart-test-'));
let helm: string;
let admin: KubeConnection;

async function helmRun(args: string[]): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(helm, args, { maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(`helm ${args.join(' ')} failed: ${stderr || message}`);
  }
}

/** `helm template` of the chart, parsed: every rendered object. */
async function render(release: string, namespace: string, values?: object): Promise<KubeObject[]> {
  const args = ['template', release, chart, '--namespace', namespace];
  if (values) {
    const file = join(scratch, `values-${release}.yaml`);
    writeFileSync(file, stringify(values));
    args.push('--values', file);
  }
  return parseAllDocuments(await helmRun(args))
    .map((doc) => doc.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null && typeof o === 'object');
}

const label = (o: KubeObject): string =>
  `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name ?? ''}`;

/** Server-side apply with dryRun=All of each object (CRDs are installed by global-setup). */
async function dryRunAll(objects: KubeObject[]): Promise<string[]> {
  const rejected: string[] = [];
  for (const object of objects.filter((o) => o.kind !== 'CustomResourceDefinition')) {
    try {
      await admin.cluster.apply(object, { dryRun: true });
    } catch (error) {
      rejected.push(`${label(object)}: ${(error as Error).message}`);
    }
  }
  return rejected;
}

beforeAll(async () => {
  // Built from tools/helm into .cache on the first run on a machine (a few minutes).
  helm = await ensureHelm((line) => console.log(`[helm] ${line}`));
  admin = await connectKube(inject('kubeconfig'));
}, 900_000);

afterAll(() => {
  admin?.http.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('helm lint', () => {
  it('passes, also with --strict and with every optional template on', async () => {
    await helmRun(['lint', chart]);
    await helmRun(['lint', '--strict', chart]);
    const optional = [
      'webhook.certManager.enabled=true',
      'metrics.serviceMonitor.enabled=true',
      'watchNamespaces={a,b}',
    ];
    await helmRun(['lint', '--strict', chart, ...optional.flatMap((v) => ['--set', v])]);
  }, 60_000);

  it('rejects values the schema does not allow', async () => {
    await expect(helmRun(['lint', chart, '--set', 'replicaCount=two'])).rejects.toThrow(
      /replicaCount/,
    );
    await expect(helmRun(['lint', chart, '--set', 'nosuchvalue=1'])).rejects.toThrow(/nosuchvalue/);
  }, 60_000);
});

describe('helm template', () => {
  it('renders objects the API server accepts (server-side dry run)', async () => {
    const namespace = 'stencil-chart';
    await admin.cluster.apply({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
    const objects = await render('stencil', namespace);
    expect(objects.map((o) => o.kind).sort()).toEqual([
      'ClusterRole',
      'ClusterRole', // stencil:edit and stencil:view, for people (ADR 0033)
      'ClusterRole',
      'ClusterRoleBinding',
      'Deployment',
      'PodDisruptionBudget',
      'Role',
      'RoleBinding',
      'Service',
      'Service',
      'ServiceAccount',
      // Who may make a Template act as a ServiceAccount, and what the platform placed stays the
      // platform's (ADR 0035).
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
      'ValidatingAdmissionPolicyBinding',
      'ValidatingWebhookConfiguration',
    ]);
    expect(await dryRunAll(objects)).toEqual([]);
    const withoutUserRoles = await render('stencil', namespace, {
      rbac: { aggregateToDefaultRoles: false },
    });
    expect(
      withoutUserRoles.filter((o) => o.kind === 'ClusterRole').map((o) => o.metadata.name),
    ).toEqual(['stencil']);
    const deployment = objects.find((o) => o.kind === 'Deployment') as unknown as {
      spec: { template: { spec: { containers: { args: string[] }[] } } };
    };
    expect(deployment.spec.template.spec.containers[0]!.args).toEqual(
      expect.arrayContaining([
        'run',
        '--leader-elect',
        `--webhook-service=${namespace}/stencil-webhook:443`,
        `--operator-namespace=${namespace}`,
        '--act-as=service-account',
      ]),
    );
  }, 60_000);

  it("acts as Templates' ServiceAccounts by default, and as itself only when asked (single-team)", async () => {
    type Role = { rules: { resources?: string[]; verbs: string[]; resourceNames?: string[] }[] };
    const roleOf = (objects: KubeObject[]): Role =>
      objects.find(
        (o) => o.kind === 'ClusterRole' && o.metadata.name === 'stencil',
      ) as unknown as Role;
    const writes = (role: Role): string[] =>
      role.rules
        .filter((r) => r.verbs.some((v) => ['create', 'patch', 'update', 'delete'].includes(v)))
        .flatMap((r) => r.resources ?? []);
    const locked = roleOf(await render('stencil', 'stencil-chart'));
    // Its own API and events only: nothing a Template renders.
    expect(new Set(writes(locked))).toEqual(
      new Set([
        'templates',
        'templateinstances',
        'templates/status',
        'templateinstances/status',
        'templateinstancesets/status',
        'templaterevisions',
        'events',
        'validatingwebhookconfigurations',
        // Reviews, which write nothing: who it is, and whether an account may read a kept value.
        'selfsubjectreviews',
        'subjectaccessreviews',
      ]),
    );
    expect(
      locked.rules.find(
        (r) => r.resources?.includes('serviceaccounts') && r.verbs.includes('impersonate'),
      ),
    ).toBeDefined();
    expect(
      locked.rules.find((r) => r.resources?.includes('userextras/stencil.dev/impersonated-by'))
        ?.resourceNames,
    ).toEqual(['system:serviceaccount:stencil-chart:stencil']);
    const single = await render('stencil', 'stencil-chart', { tenancy: { actAs: 'operator' } });
    expect(writes(roleOf(single))).toEqual(
      expect.arrayContaining(['configmaps', 'secrets', 'deployments']),
    );
    expect(JSON.stringify(single)).not.toContain('impersonate');
    // No writer check (no account to impersonate); what the platform places is kept in both modes.
    expect(
      single.filter((o) => o.kind === 'ValidatingAdmissionPolicy').map((o) => o.metadata.name),
    ).toEqual(['stencil-placed-instances']);
  }, 60_000);

  it('with sharding.enabled runs sharding.replicas shard members instead of a leader', async () => {
    const objects = await render('stencil', 'stencil-chart', {
      sharding: { enabled: true, replicas: 4 },
    });
    const deployment = objects.find((o) => o.kind === 'Deployment') as unknown as {
      spec: { replicas: number; template: { spec: { containers: { args: string[] }[] } } };
    };
    expect(deployment.spec.replicas).toBe(4);
    const args = deployment.spec.template.spec.containers[0]!.args;
    expect(args).toContain('--shards=auto');
    expect(args).not.toContain('--leader-elect');
    const role = objects.find((o) => o.kind === 'Role') as unknown as {
      rules: { resources: string[]; verbs: string[] }[];
    };
    expect(role.rules.find((r) => r.resources.includes('leases'))?.verbs).toEqual(
      expect.arrayContaining(['list', 'delete']),
    );
    await expect(helmRun(['lint', chart, '--set', 'sharding.replicas=0'])).rejects.toThrow(
      /replicas/,
    );
  }, 60_000);

  it('passes webhook.breakGlassGroups to the operator, and no break-glass group by default', async () => {
    const argsOf = (objects: KubeObject[]): string[] =>
      (
        objects.find((o) => o.kind === 'Deployment') as unknown as {
          spec: { template: { spec: { containers: { args: string[] }[] } } };
        }
      ).spec.template.spec.containers[0]!.args;
    const defaults = argsOf(await render('stencil', 'stencil-chart'));
    expect(defaults.filter((a) => a.includes('break-glass'))).toEqual([]);
    const groups = ['platform-oncall', 'system:serviceaccounts:ops'];
    const set = argsOf(
      await render('stencil', 'stencil-chart', { webhook: { breakGlassGroups: groups } }),
    );
    expect(set).toContain(`--webhook-break-glass-groups=${groups.join(',')}`);
    await expect(
      helmRun(['lint', chart, '--set', 'webhook.breakGlassGroups={a\\,b}']),
    ).rejects.toThrow(/breakGlassGroups/);
  }, 60_000);

  it('renders the cert-manager ValidatingWebhookConfiguration the API server accepts', async () => {
    const objects = await render('stencil', 'stencil-chart', {
      webhook: { certManager: { enabled: true } },
    });
    const configuration = objects.find((o) => o.kind === 'ValidatingWebhookConfiguration');
    expect(configuration?.metadata.annotations?.['cert-manager.io/inject-ca-from']).toBe(
      'stencil-chart/stencil-webhook',
    );
    // cert-manager's kinds are not served here; everything else must be accepted.
    const served = objects.filter((o) => !o.apiVersion.startsWith('cert-manager.io/'));
    expect(await dryRunAll(served)).toEqual([]);
  }, 60_000);

  it("owns the webhook configurations in every mode: the operator's own, less the caBundle", async () => {
    for (const certManager of [false, true]) {
      const objects = await render('stencil', 'stencil-chart', {
        authorizeSources: 'requester',
        webhook: { certManager: { enabled: certManager } },
      });
      const endpoint = {
        service: { namespace: 'stencil-chart', name: 'stencil-webhook', port: 443 },
      };
      const withoutCa = (o: KubeObject): unknown => {
        const copy = structuredClone(o) as unknown as {
          metadata: KubeObject['metadata'];
          webhooks: { clientConfig: { caBundle?: string } }[];
        };
        for (const w of copy.webhooks) delete w.clientConfig.caBundle;
        return { webhooks: copy.webhooks, name: copy.metadata.name };
      };
      const rendered = (kind: string): KubeObject => objects.find((o) => o.kind === kind)!;
      expect(withoutCa(rendered('ValidatingWebhookConfiguration'))).toEqual(
        withoutCa(webhookConfiguration(endpoint, 'ca')),
      );
      expect(withoutCa(rendered('MutatingWebhookConfiguration'))).toEqual(
        withoutCa(requesterWebhookConfiguration(endpoint, 'ca')),
      );
      const deployment = JSON.stringify(rendered('Deployment'));
      expect(deployment).toContain('--webhook-configurations=install');
    }
    const off = await render('stencil', 'stencil-chart', { webhook: { enabled: false } });
    expect(off.filter((o) => o.kind.endsWith('WebhookConfiguration'))).toEqual([]);
  }, 60_000);

  it('lets the operator read the schemas the API server publishes (/openapi/v3, ADR 0030)', async () => {
    const role = (await render('stencil', 'stencil-chart')).find(
      (o) => o.kind === 'ClusterRole',
    ) as unknown as { rules: { nonResourceURLs?: string[]; verbs: string[] }[] };
    expect(role.rules.filter((r) => r.nonResourceURLs)).toEqual([
      { nonResourceURLs: ['/openapi/v3', '/openapi/v3/*'], verbs: ['get'] },
    ]);
  });

  it('authorizeSources: requester passes the flag, may review access, and needs the webhook', async () => {
    const objects = await render('stencil', 'stencil-chart', {
      authorizeSources: 'requester',
      webhook: { certManager: { enabled: true } },
      watchNamespaces: ['team-a'],
    });
    const deployment = objects.find((o) => o.kind === 'Deployment') as unknown as {
      spec: { template: { spec: { containers: { args: string[] }[] } } };
    };
    expect(deployment.spec.template.spec.containers[0]!.args).toContain(
      '--authorize-sources=requester',
    );
    const role = objects.find((o) => o.kind === 'ClusterRole') as unknown as {
      rules: { resources?: string[]; verbs: string[] }[];
    };
    expect(role.rules.find((r) => r.resources?.includes('subjectaccessreviews'))?.verbs).toEqual([
      'create',
    ]);
    const mutating = objects.find((o) => o.kind === 'MutatingWebhookConfiguration') as unknown as {
      metadata: KubeObject['metadata'];
      webhooks: { namespaceSelector?: unknown; clientConfig: { service: { path: string } } }[];
    };
    expect(mutating.metadata.annotations?.['cert-manager.io/inject-ca-from']).toBe(
      'stencil-chart/stencil-webhook',
    );
    expect(mutating.webhooks[0]!.clientConfig.service.path).toBe('/mutate-requester');
    expect(mutating.webhooks[0]!.namespaceSelector).toEqual({
      matchExpressions: [
        { key: 'kubernetes.io/metadata.name', operator: 'In', values: ['team-a'] },
      ],
    });
    const served = objects.filter((o) => !o.apiVersion.startsWith('cert-manager.io/'));
    expect(await dryRunAll(served)).toEqual([]);
    // Single-team mode by default renders neither the flag nor the review right (which acting
    // as ServiceAccounts needs for itself).
    const defaults = await render('stencil', 'stencil-chart', { tenancy: { actAs: 'operator' } });
    expect(JSON.stringify(defaults)).not.toContain('subjectaccessreviews');
    expect(JSON.stringify(defaults)).not.toContain('--authorize-sources');
    await expect(
      helmRun([
        'template',
        chart,
        '--set',
        'authorizeSources=requester',
        '--set',
        'webhook.enabled=false',
      ]),
    ).rejects.toThrow(/authorizeSources: requester needs webhook.enabled/);
    await expect(helmRun(['lint', chart, '--set', 'authorizeSources=user'])).rejects.toThrow(
      /authorizeSources/,
    );
  }, 60_000);

  it('config/deploy/stencil.yaml (kubectl users) is accepted too', async () => {
    const file = join(root, 'config', 'deploy', 'stencil.yaml');
    expect(existsSync(file)).toBe(true);
    const objects = readManifests([file]);
    const namespace = objects.find((o) => o.kind === 'Namespace')!;
    expect(namespace.metadata.name).toBe('stencil-system');
    await admin.cluster.apply(namespace);
    expect(objects.filter((o) => o.kind === 'CustomResourceDefinition')).toHaveLength(
      readdirSync(join(root, 'config', 'crd')).filter((f) => f.endsWith('.yaml')).length,
    );
    expect(await dryRunAll(objects.filter((o) => o.kind !== 'Namespace'))).toEqual([]);
  }, 60_000);
});

describe('the operator under exactly the chart RBAC', () => {
  const suffix = randomBytes(3).toString('hex');
  /** The samples' namespaces, renamed so this file never meets what other files applied. */
  const renamed = (name: string): string => `${name}-${suffix}`;
  const platform = renamed('platform');
  const teamA = renamed('team-a');
  const teamD = renamed('team-d');
  const teamE = renamed('team-e');
  /** samples/typed-web-app's group, renamed so no other file's WebApp kind is met. */
  const typedGroup = `apps-${suffix}.stencil.example`;
  const fullname = `stencil-rbac-${suffix}`;
  const configuration = `stencil-strict-chart-${suffix}`;
  let operatorNamespace: string;
  let kubeconfigPath: string;
  let operatorConnection: KubeConnection;
  let running: RunningOperator | undefined;
  let instances: KubeObject[];
  let sets: KubeObject[];
  const rbacObjects: KubeObject[] = [];
  /** The cluster-scoped roles and bindings of the samples' ServiceAccounts. */
  const sampleRbac: KubeObject[] = [];
  let chartConfiguration: KubeObject | undefined;
  /** The chart's policy keeping what the platform places (ADR 0035), once applied. */
  const placedPolicy: KubeObject[] = [];

  beforeAll(async () => {
    operatorNamespace = await freshNamespace(connect(), 'stencil-rbac');
    // The chart names its configuration `stencil-strict` (in the ValidatingWebhookConfiguration
    // and in the ClusterRole's resourceNames); renamed so this file never meets another's.
    const objects = renameStrictConfiguration(
      // The default tenancy: the operator writes nothing Templates render; each sample's
      // ServiceAccount does, with its rbac.yaml's Roles (ADR 0035).
      await render('rbac', operatorNamespace, {
        fullnameOverride: fullname,
        // samples/typed-web-app publishes a kind (its group renamed, like the namespaces).
        typedApis: { allow: { [platform]: [typedGroup] } },
      }),
      configuration,
    );
    chartConfiguration = objects.find((o) => o.kind === 'ValidatingWebhookConfiguration');
    placedPolicy.push(...objects.filter((o) => o.metadata.name === `${fullname}-placed-instances`));
    expect(placedPolicy.map((o) => o.kind).sort()).toEqual([
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
    const rbacKinds = [
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
    ];
    // The operator's own: the roles for people (stencil:edit, stencil:view) bind no one.
    rbacObjects.push(...objects.filter((o) => rbacKinds.includes(o.kind) && !isUserRole(o)));
    expect(rbacObjects.map((o) => o.kind).sort()).toEqual([...rbacKinds].sort());
    // A token for the chart's ServiceAccount (TokenRequest API), in a kubeconfig of its own.
    kubeconfigPath = join(scratch, 'operator.kubeconfig');
    ({ connection: operatorConnection } = await installOperatorIdentity(
      admin,
      rbacObjects,
      kubeconfigPath,
    ));

    // The eleven samples, with their namespaces renamed (platform, team-a to team-e), the group
    // of typed-web-app and the cluster-scoped roles of their ServiceAccounts too.
    const samples = join(scratch, 'samples');
    const files: string[] = [];
    for (const source of sampleFiles(join(root, 'samples'))) {
      const target = join(samples, relative(join(root, 'samples'), source));
      mkdirSync(dirname(target), { recursive: true });
      const text = readFileSync(source, 'utf8')
        .replace(/\b(platform|team-a|team-b|team-c|team-d|team-e)\b/g, (name) => renamed(name))
        .replaceAll('stencil-template-', `stencil-template-${suffix}-`)
        // The Set's selector too: it must not reach another file's sample namespaces.
        .replace(/stencil\.dev\/tier: ([a-z]+)/g, `stencil.dev/tier: $1-${suffix}`)
        .replaceAll('apps.stencil.example', typedGroup)
        // And its kind: published kinds share no name across groups (APIShadowsResource), and
        // other files publish a WebApp (short name wa) on this control plane at the same time.
        .replace(/\bWebApp\b/g, 'ChartWebApp')
        .replace('shortNames: [wa]', 'shortNames: [cwa]');
      writeFileSync(target, text);
      files.push(target);
    }
    const manifests = readManifests(files);
    sampleRbac.push(
      ...manifests.filter((o) => !o.metadata.namespace && o.kind.startsWith('Cluster')),
    );
    instances = manifests.filter((o) => o.kind === 'TemplateInstance' || o.kind === 'ChartWebApp');
    expect(instances).toHaveLength(10);
    // samples/namespace-fanout: one TemplateInstanceSet, stamping into team-d and team-e.
    sets = manifests.filter((o) => o.kind === 'TemplateInstanceSet');
    expect(sets).toHaveLength(1);
    expect(new Set(instances.map((i) => i.metadata.namespace))).toEqual(new Set([platform, teamA]));

    running = await startOperator([platform, teamA, teamD, teamE], kubeconfigPath, {
      tenancy: { actAs: 'service-account' },
      apiGroups: new Map([[platform, new Set([typedGroup])]]),
      leaderElection: {
        identity: `chart-test-${suffix}`,
        namespace: operatorNamespace,
        onLost: () => undefined,
      },
      // As the chart runs it: the release owns the configuration, the operator sets its caBundle.
      webhook: loopbackWebhook(operatorNamespace, configuration, { configurations: 'install' }),
    });
    // Helm's part, once the operator's loopback port is known (a Service cannot reach a process
    // here): the chart's configuration, pointed at that port. The next refresh sets its caBundle.
    const { port } = running.operator.webhook!;
    const webhooks = (chartConfiguration as unknown as { webhooks: Record<string, unknown>[] })
      .webhooks;
    webhooks[0]!.clientConfig = { url: `https://127.0.0.1:${port}/validate-strict` };
    await admin.cluster.apply(chartConfiguration!);
    await applyManifests((await userClient()).cluster, manifests);
  }, 120_000);

  afterAll(async () => {
    await removeWebhookConfiguration(admin.cluster, configuration).catch(() => undefined);
    for (const o of placedPolicy)
      await admin.cluster
        .delete({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name ?? '' })
        .catch(() => undefined);
    await running?.stop();
    operatorConnection?.http.close();
    // The sample's WebApp kind, which no other file's kind may share a name with.
    await removePublishedKinds(admin.cluster, [platform]);
    await removeClusterScoped(admin, [...rbacObjects, ...sampleRbac]);
  }, 60_000);

  it('runs as the chart ServiceAccount, which is not cluster-admin', async () => {
    expect(await operatorConnection.cluster.identity()).toBe(
      `system:serviceaccount:${operatorNamespace}:${fullname}`,
    );
    expect(await selfAccess(operatorConnection, { resource: 'nodes', verb: 'delete' })).toBe(false);
    expect(await selfAccess(operatorConnection, { group: '*', resource: '*', verb: '*' })).toBe(
      false,
    );
    // It writes nothing Templates render, and binds no role: the samples' ServiceAccounts do
    // (the tenant Template's holds `bind` on admin), as their rbac.yaml lets them (ADR 0035).
    for (const [resource, verb, group] of [
      ['configmaps', 'create', ''],
      ['secrets', 'patch', ''],
      ['namespaces', 'create', ''],
      ['deployments', 'patch', 'apps'],
      ['rolebindings', 'create', 'rbac.authorization.k8s.io'],
      ['clusterroles', 'bind', 'rbac.authorization.k8s.io'],
    ] as const)
      expect(
        await selfAccess(operatorConnection, { group, resource, verb }),
        `${verb} ${resource}`,
      ).toBe(false);
    // It watches them, and acts as the ServiceAccounts Templates name.
    expect(await selfAccess(operatorConnection, { resource: 'configmaps', verb: 'watch' })).toBe(
      true,
    );
    expect(
      await selfAccess(operatorConnection, {
        resource: 'serviceaccounts',
        verb: 'impersonate',
        namespace: platform,
        name: 'web-app',
      }),
    ).toBe(true);
    expect(
      await selfAccess(operatorConnection, {
        group: 'rbac.authorization.k8s.io',
        resource: 'clusterrolebindings',
        verb: 'create',
      }),
    ).toBe(false);
  });

  it('reconciles every sample to Ready', async () => {
    let pending: unknown[] = [];
    await eventually(
      async () => {
        pending = [];
        for (const instance of [...instances, ...sets]) {
          const phase = await samplePhase(admin.cluster, instance);
          if (phase !== 'Ready') pending.push({ instance: label(instance), phase });
        }
        return pending.length === 0;
      },
      'every sample instance to be Ready under the chart RBAC',
      90_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message.split(';')[0]}; not Ready: ${JSON.stringify(pending)}`);
    });
    // What the samples rendered exists: a Deployment, the tenant Namespace and its admin binding
    // (which needed `bind` on ClusterRole admin).
    const get = (
      apiVersion: string,
      kind: string,
      name: string,
      namespace?: string,
    ): Promise<KubeObject | undefined> => admin.cluster.get({ apiVersion, kind, name, namespace });
    expect(await get('apps/v1', 'Deployment', 'shop', teamA)).toBeDefined();
    // samples/ordered-rollout: wave 1 read the cluster IP wave 0's Service was given.
    const inventory = (await get('v1', 'Service', 'inventory', teamA)) as unknown as {
      spec: { clusterIP: string };
    };
    expect((await get('v1', 'ConfigMap', 'inventory-endpoints', teamA))?.data).toMatchObject({
      INVENTORY_HOST: inventory.spec.clusterIP,
      INVENTORY_URL: `http://${inventory.spec.clusterIP}:8080`,
    });
    // samples/merged-defaults: the ports merged by name with the Template's reached the server.
    const payments = (await get('v1', 'Service', 'payments', teamA)) as unknown as {
      spec: { ports: { name: string; port: number; targetPort: number }[] };
    };
    expect(payments.spec.ports.map((p) => [p.name, p.port, p.targetPort])).toEqual([
      ['http', 80, 8081],
      ['metrics', 9090, 9090],
      ['grpc', 9000, 9000],
    ]);
    expect(await get('v1', 'Namespace', renamed('team-c'))).toBeDefined();
    // samples/namespace-fanout: the Set's instance in team-e, with the label and ConfigMap overrides.
    expect((await get('v1', 'ConfigMap', 'tenant-settings', teamE))?.data).toMatchObject({
      LOG_LEVEL: 'warn',
      // (renamed with the namespaces: team-e-oncall@ became <team-e renamed>-oncall@)
      SUPPORT_CONTACT: `${teamE}-oncall@example.com`,
    });
    expect((await get('v1', 'ResourceQuota', 'tenant-pod-quota', teamE))?.spec).toEqual({
      hard: { pods: '50' },
    });
    expect((await get('v1', 'ConfigMap', 'tenant-settings', teamD))?.data).toMatchObject({
      LOG_LEVEL: 'debug',
    });
    expect(
      await get('rbac.authorization.k8s.io/v1', 'RoleBinding', 'tenant-admins', renamed('team-c')),
    ).toBeDefined();
    // The operator's own objects in the release namespace: the Lease and the webhook certificate.
    expect(
      await get('coordination.k8s.io/v1', 'Lease', 'stencil-leader', operatorNamespace),
    ).toBeDefined();
    expect(await get('v1', 'Secret', 'stencil-webhook-tls', operatorNamespace)).toBeDefined();
    // The chart's configuration, with the caBundle the operator set under the chart's RBAC (the
    // Secret's CA) and nothing else of it changed.
    // (A refresh is what sets it; only the leader writes, so ask until this replica leads.)
    type Live = {
      webhooks: { clientConfig: { caBundle?: string }; matchConditions?: unknown[] }[];
    };
    const secret = (await get(
      'v1',
      'Secret',
      'stencil-webhook-tls',
      operatorNamespace,
    )) as unknown as {
      data: Record<string, string>;
    };
    let live: Live | undefined;
    await eventually(async () => {
      await running!.operator.webhook!.refresh();
      live = (await get(
        'admissionregistration.k8s.io/v1',
        'ValidatingWebhookConfiguration',
        configuration,
      )) as unknown as Live;
      return live.webhooks[0]!.clientConfig.caBundle === secret.data['ca-bundle.crt'];
    }, 'the operator to set the caBundle of the configuration the chart owns');
    expect(live!.webhooks[0]!.matchConditions).toHaveLength(1);
    expect(live!.webhooks[0]!.clientConfig).toMatchObject({
      url: `https://127.0.0.1:${running!.operator.webhook!.port}/validate-strict`,
    });
    // Nothing it tried was forbidden.
    expect(running!.logs.filter((line) => /forbidden/i.test(line))).toEqual([]);
  }, 120_000);

  it('keeps what the platform placed from namespace editors, and takes a detached one back', async () => {
    const get = (
      apiVersion: string,
      kind: string,
      name: string,
      namespace: string,
    ): Promise<KubeObject | undefined> => admin.cluster.get({ apiVersion, kind, name, namespace });
    const stamped = { apiVersion: 'stencil.dev/v1alpha1', kind: 'TemplateInstance' };
    // The chart's policy, limited to this file's namespaces while it runs.
    for (const o of placedPolicy) {
      const limited = structuredClone(o) as KubeObject & {
        spec: { matchConstraints?: Record<string, unknown> };
      };
      if (limited.spec.matchConstraints)
        limited.spec.matchConstraints.namespaceSelector = {
          matchExpressions: [
            { key: 'kubernetes.io/metadata.name', operator: 'In', values: [teamA, teamE] },
          ],
        };
      await admin.cluster.apply(limited);
    }
    // A namespace editor: everything on instances (as the chart's stencil:edit gives), no `place`.
    const rbac = 'rbac.authorization.k8s.io';
    for (const namespace of [teamA, teamE]) {
      await admin.cluster.apply({
        apiVersion: `${rbac}/v1`,
        kind: 'Role',
        metadata: { name: 'instance-editor', namespace },
        rules: [
          {
            apiGroups: ['stencil.dev'],
            resources: ['templateinstances'],
            verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
          },
        ],
      });
      await admin.cluster.apply({
        apiVersion: `${rbac}/v1`,
        kind: 'RoleBinding',
        metadata: { name: 'instance-editor', namespace },
        roleRef: { apiGroup: rbac, kind: 'Role', name: 'instance-editor' },
        subjects: [{ apiGroup: rbac, kind: 'User', name: 'editor@example.com' }],
      });
    }
    const editor = admin.cluster.actingAs({ username: 'editor@example.com' });
    const fanout = (await get(stamped.apiVersion, stamped.kind, 'tenant-settings', teamE))!;
    const baseline = (await get(stamped.apiVersion, stamped.kind, 'baseline', teamA))!;
    expect(baseline.status).toMatchObject({ syncMode: 'strict' });
    const id = (o: KubeObject): ObjectId => ({
      ...stamped,
      name: o.metadata.name ?? '',
      namespace: o.metadata.namespace,
    });
    const raise = { parameters: [{ name: 'maxPods', value: '100000' }] };
    const live = async (o: KubeObject): Promise<KubeObject> => (await admin.cluster.get(id(o)))!;
    // The API server takes a moment to load a new policy: asked (with a harmless label) until it
    // refuses.
    await eventually(
      async () =>
        rejectionOf(editor.patchMetadata(await live(fanout), { labels: { probe: 'yes' } })),
      'the admission policy to keep the stamped instance',
    );
    const detachOwner = { ownerReferences: null } as unknown as MetadataPatch;
    const attempts: [string, () => Promise<unknown>][] = [
      [
        'detach (label)',
        async () =>
          editor.patchMetadata(await live(fanout), {
            labels: { 'stencil.dev/instance-set': null },
          }),
      ],
      ['detach (owner)', async () => editor.patchMetadata(await live(fanout), detachOwner)],
      ['raise the quota', async () => editor.patchSpec(await live(fanout), raise)],
      ['delete the stamped instance', () => editor.delete(id(fanout))],
      ['delete the strict baseline', () => editor.delete(id(baseline))],
      [
        'edit the strict baseline',
        async () => editor.patchSpec(await live(baseline), { parameters: [] }),
      ],
    ];
    for (const [what, attempt] of attempts)
      expect(await rejectionOf(attempt()), what).toMatch(
        /is the platform's \((stamped by TemplateInstanceSet|under sync mode strict).*editor@example\.com may not (update|delete) it/,
      );
    // Nothing moved: the quota as the Set renders it, the five strict policies.
    expect((await get('v1', 'ResourceQuota', 'tenant-pod-quota', teamE))?.spec).toEqual({
      hard: { pods: '50' },
    });
    const policies = await admin.cluster.list('networking.k8s.io/v1', 'NetworkPolicy', {
      namespace: teamA,
    });
    expect(policies).toHaveLength(5);

    // One who may place it (here the admin) detaches and raises it: the Set takes it back.
    await admin.cluster.patchMetadata(await live(fanout), {
      labels: { 'stencil.dev/instance-set': null },
    });
    await admin.cluster.patchSpec(await live(fanout), raise);
    await eventually(async () => {
      const live = await get(stamped.apiVersion, stamped.kind, 'tenant-settings', teamE);
      const quota = await get('v1', 'ResourceQuota', 'tenant-pod-quota', teamE);
      return (
        live?.metadata.labels?.['stencil.dev/instance-set'] !== undefined &&
        JSON.stringify(quota?.spec) === JSON.stringify({ hard: { pods: '50' } }) &&
        !JSON.stringify(live.spec).includes('100000')
      );
    }, 'the Set to take its instance back');
  }, 120_000);
});

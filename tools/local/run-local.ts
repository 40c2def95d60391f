// `npm run local`: Stencil for real on this machine. Builds if needed, starts a local control
// plane (etcd + kube-apiserver, and kube-controller-manager, kube-scheduler and kwok with two fake
// Nodes, so Deployments roll out and namespaces finish deleting; `--bare` leaves those out),
// installs the CRDs, the webhook configurations and the samples as an install does, runs
// `stencil run` against it under its own ServiceAccount, waits for the sample instances to be
// Ready, prints how to look around, and stops everything on Ctrl-C. The person's (admin) kubeconfig is
// written to .local/kubeconfig, the operator's to .local/operator.kubeconfig.
// `npm run local -- --replicas N` runs N operators sharing the namespaces (--shards=auto).
// `npm run local -- --authorize-sources requester` runs requester mode (ADR 0020): the samples
// are then created once the webhook that records their requester (you, admin) is in place.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { connect } from '../../src/kube/connection.ts';
import { buildIfNeeded } from '../build-if-needed.ts';
import { ensureKubectl } from '../control-plane/binaries.ts';
import { freePort, startControlPlane } from '../control-plane/control-plane.ts';
import { installProjectCrds } from '../control-plane/crds.ts';
import {
  requesterWebhookConfiguration,
  webhookConfiguration,
} from '../../src/webhook/webhook-configuration.ts';
import {
  apiGroupsFor,
  applyManifests,
  readManifests,
  sampleFiles,
  samplePhase,
  splitPublished,
} from './apply-manifests.ts';
import {
  deployAdmissionPolicies,
  deployRbac,
  deployUserRoles,
  installOperatorIdentity,
  withRequesterRbac,
  withShardingRbac,
  withTypedApiRbac,
} from './operator-identity.ts';

const root = join(import.meta.dirname, '..', '..');
const say = (line: string): void => console.log(`[local] ${line}`);

const { values: flags } = parseArgs({
  options: {
    replicas: { type: 'string', default: '1' },
    'authorize-sources': { type: 'string', default: 'operator' },
    bare: { type: 'boolean', default: false },
  },
});
const replicaCount = Number(flags.replicas);
if (!Number.isInteger(replicaCount) || replicaCount < 1 || replicaCount > 9) {
  console.error(`--replicas must be an integer from 1 to 9, got "${flags.replicas}"`);
  process.exit(2);
}
const requesterMode = flags['authorize-sources'] === 'requester';
if (!requesterMode && flags['authorize-sources'] !== 'operator') {
  console.error(
    `--authorize-sources must be operator or requester, got "${flags['authorize-sources']}"`,
  );
  process.exit(2);
}

buildIfNeeded(say);
const kubectl = await ensureKubectl(say);
mkdirSync(join(root, '.local'), { recursive: true });
const kubeconfig = join(root, '.local', 'kubeconfig');
const plane = await startControlPlane({
  kubeconfigPath: kubeconfig,
  log: say,
  controllers: !flags.bare,
});
await installProjectCrds(plane);
const admin = await connect(kubeconfig);
const { cluster, http } = admin;
await cluster.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'stencil-system' } });
// The operator runs as the chart's ServiceAccount with the chart's RBAC, never with the admin
// token: strict mode exempts exactly the operator's username, so sharing the person's identity
// would let every edit of theirs through as if the operator had made it.
const operatorKubeconfig = join(root, '.local', 'operator.kubeconfig');
const samples = readdirSync(join(root, 'samples'));
const files = sampleFiles(join(root, 'samples'));
// The groups the samples' Templates publish, each allowed for its Template's namespace only.
const apiGroups = apiGroupsFor(readManifests(files));
const identity = await installOperatorIdentity(
  admin,
  [
    replicaCount > 1 ? withShardingRbac : undefined,
    requesterMode ? withRequesterRbac : undefined,
    apiGroups.flag ? withTypedApiRbac(apiGroups.groups) : undefined,
  ].reduce((rbac, add) => add?.(rbac) ?? rbac, deployRbac()),
  operatorKubeconfig,
  7 * 24 * 3600, // the token outlives any playground session
);
identity.connection.http.close();
// As the chart installs them: who may edit a namespace may create TemplateInstances there.
for (const role of deployUserRoles()) await cluster.apply(role);
// As the chart installs it: who writes a Template must be allowed to impersonate its ServiceAccount.
for (const policy of deployAdmissionPolicies()) await cluster.apply(policy);
const operatorUser = `system:serviceaccount:${identity.account.namespace}:${identity.account.name}`;
say(`the operator runs as ${operatorUser} (.local/operator.kubeconfig)`);
// The webhook configurations, as the chart installs them (ADR 0023): owned by the install, with
// no caBundle; the operator (--webhook-configurations=install) sets only that. Reached by URL at
// the port each replica's webhook listens on (no Service reaches a process here); with several
// replicas the first one's, which every replica serves alike.
const webhookPorts = await Promise.all(Array.from({ length: replicaCount }, () => freePort()));
const webhookUrl = (port: number): string => `https://127.0.0.1:${port}/validate-strict`;
await cluster.apply(webhookConfiguration({ url: webhookUrl(webhookPorts[0]!) }, undefined));
if (requesterMode)
  await cluster.apply(
    requesterWebhookConfiguration({ url: webhookUrl(webhookPorts[0]!) }, undefined),
  );
// Objects of the kinds the samples' Templates publish wait for a running operator to publish them.
const { published, rest } = splitPublished(readManifests(files));
if (!requesterMode) {
  await applyManifests(cluster, rest);
  say(`installed the CRDs and ${samples.length} samples`);
}

interface Replica {
  child: ChildProcess;
  metricsPort: number;
  probePort: number;
}

/** One `stencil run`; with more than one replica each is a shard member (--shards=auto). */
async function startReplica(webhookPort: number): Promise<Replica> {
  const [metricsPort, probePort] = [await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    [
      join(root, 'dist', 'cli.js'),
      'run',
      `--kubeconfig=${operatorKubeconfig}`,
      '--log-format=text',
      '--operator-namespace=stencil-system',
      `--webhook-port=${webhookPort}`,
      `--webhook-url=${webhookUrl(webhookPort)}`,
      '--webhook-configurations=install',
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      `--health-probe-bind-address=127.0.0.1:${probePort}`,
      ...(replicaCount > 1 ? ['--shards=auto'] : []),
      ...(requesterMode ? ['--authorize-sources=requester'] : []),
      ...(apiGroups.flag ? [`--api-groups=${apiGroups.flag}`] : []),
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  return { child, metricsPort, probePort };
}

const replicas: Replica[] = [];
for (const port of webhookPorts) replicas.push(await startReplica(port));
if (!requesterMode) await applyManifests(cluster, published);

let stopping = false;
async function stop(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    say('stopping...');
    await Promise.all(
      replicas.map(async ({ child }) => {
        if (child.exitCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }),
    );
    http.close();
    await plane.stop();
  }
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
// An outage on demand: kube-apiserver killed and started again a minute later, on the same port
// and data, so anyone can watch what the operator sends and says meanwhile (docs/reliability.md).
let outage = false;
process.on('SIGUSR2', () => {
  if (outage || stopping) return;
  outage = true;
  say('API server stopped for 60 s (SIGUSR2); it comes back on the same port and data');
  void plane
    .restartApiserver('SIGKILL', 60_000)
    .then(() => say('API server back'))
    .catch((error: unknown) => say(`the API server did not come back: ${String(error)}`))
    .finally(() => (outage = false));
});
for (const { child } of replicas)
  child.once('exit', (code) => {
    if (!stopping) {
      say(`stencil run exited (${code}); stopping`);
      void stop(1);
    }
  });

if (requesterMode) {
  // Created by admin through the requester webhook, so each records admin as its requester.
  const until = Date.now() + 60_000;
  const hasCaBundle = async (): Promise<boolean> => {
    const configuration = (await cluster.get({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      name: 'stencil-requester',
    })) as { webhooks?: { clientConfig?: { caBundle?: string } }[] } | undefined;
    return Boolean(configuration?.webhooks?.[0]?.clientConfig?.caBundle);
  };
  while (!(await hasCaBundle())) {
    if (Date.now() > until) {
      say('the operator did not set the requester webhook caBundle within 60 s');
      await stop(1);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await applyManifests(cluster, [...rest, ...published]);
  say(`installed the CRDs and ${samples.length} samples (requester mode: recorded as admin)`);
}

const expected = readManifests(samples.map((s) => join(root, 'samples', s, 'instance.yaml')));
const deadline = Date.now() + 120_000;
for (;;) {
  const phases = await Promise.all(
    expected.map(async (i) => ({
      name: i.metadata.namespace
        ? `${i.metadata.namespace}/${i.metadata.name}`
        : `${i.kind} ${i.metadata.name}`,
      phase: await samplePhase(cluster, i),
    })),
  );
  if (phases.every((p) => p.phase === 'Ready') || Date.now() > deadline) {
    console.log('\nTemplateInstances (and TemplateInstanceSets):');
    for (const p of phases) console.log(`  ${p.name.padEnd(36)} ${p.phase}`);
    break;
  }
  await new Promise((r) => setTimeout(r, 500));
}

const kubectlPath = relative(process.cwd(), kubectl) || kubectl;
console.log(`
Stencil is running against a local control plane. In another shell:

  export KUBECONFIG=${kubeconfig}
  ${kubectlPath} get templateinstances -A
  ${kubectlPath} get templateinstancesets        # tplis: one instance per matching namespace
  ${kubectlPath} get deployment,service,ingress -n team-a -l stencil.dev/instance-name=shop
  ${kubectlPath} annotate networkpolicy default-deny -n team-a example.com/owner=me   # refused: strict mode

You are admin; the operator is ${operatorUser}, the only one strict mode lets change
what the team-a/baseline instance renders. To act as a tenant, make one an editor of team-a
(the chart folds Stencil's roles into edit) and add --as alice:

  ${kubectlPath} create rolebinding alice -n team-a --clusterrole=edit --user=alice
  ${kubectlPath} get templateinstances -n team-a --as alice

${replicas
  .map(
    (r) =>
      `Metrics: http://127.0.0.1:${r.metricsPort}/metrics   Probes: http://127.0.0.1:${r.probePort}/readyz`,
  )
  .join('\n')}${
  replicaCount > 1
    ? `\n${replicaCount} replicas share the namespaces (--shards=auto); their member Leases:\n  ${kubectlPath} get leases -n stencil-system -l stencil.dev/shard-group=stencil`
    : ''
}
To see an API server outage, stop it for a minute (it comes back on the same port and data) and
count what the operator sent meanwhile, by verb and status (0: no answer):

  kill -USR2 ${process.pid}
  curl -s http://127.0.0.1:${replicas[0]!.metricsPort}/metrics | grep -E '^stencil_(api_requests_total|informer_)'

Press Ctrl-C to stop everything.
`);

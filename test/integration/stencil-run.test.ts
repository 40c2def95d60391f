// `stencil run` as a process (the built binary) against the test control plane: it reconciles
// every sample to Ready, never logs or reports a Secret value, and exits 0 on SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inject } from 'vitest';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import {
  apiGroupsFor,
  applyManifests,
  readManifests,
  sampleFiles,
  samplePhase,
} from '../../tools/local/apply-manifests.ts';
import { eventRecorded } from './support/instances.ts';
import { eventually, userClient } from './support/operator.ts';
import { removePublishedKinds } from './support/published-kinds.ts';

const root = join(import.meta.dirname, '..', '..');
const SECRET_VALUE = 's3cr3t-passw0rd'; // samples/database-credentials/objects.yaml
let child: ChildProcess;
let output = '';
let user: KubeCluster;

/** Every sample's objects, ServiceAccount and Roles, Template and instance. */
/**
 * samples/typed-web-app's kind, renamed: published kinds share no name across groups, and other
 * files publish a WebApp (with short name wa) on the same control plane at the same time.
 */
function renamedKind(objects: ReturnType<typeof readManifests>): ReturnType<typeof readManifests> {
  return objects.map((o) => {
    if (o.kind === 'WebApp') return { ...o, kind: 'RunWebApp' };
    const api = (o.spec as { api?: { kind: string; shortNames?: string[] } } | undefined)?.api;
    if (o.kind !== 'Template' || api?.kind !== 'WebApp') return o;
    const spec = { ...(o.spec as Record<string, unknown>) };
    return { ...o, spec: { ...spec, api: { ...api, kind: 'RunWebApp', shortNames: ['rwa'] } } };
  });
}

const sampleManifests = (): ReturnType<typeof readManifests> =>
  renamedKind(readManifests(sampleFiles(join(root, 'samples'))));

beforeAll(async () => {
  user = (await userClient()).cluster;
  // samples/typed-web-app publishes a kind: allowed for its Template's namespace, as npm run local does.
  const { flag: apiGroups } = apiGroupsFor(sampleManifests());
  child = spawn(
    process.execPath,
    [
      join(root, 'dist', 'cli.js'),
      'run',
      '--kubeconfig',
      inject('kubeconfig'),
      `--api-groups=${apiGroups}`,
      '--log-format',
      'json',
      '--log-level',
      'debug',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await applyManifests(user, sampleManifests());
});

afterAll(async () => {
  if (child.exitCode === null) child.kill('SIGKILL');
  // The sample's kind, which no other file's kind may share a name with.
  const publishers = sampleManifests()
    .filter((o) => o.kind === 'Template' && (o.spec as { api?: unknown } | undefined)?.api)
    .map((o) => o.metadata.namespace ?? 'default');
  await removePublishedKinds(user, publishers);
}, 60_000);

it('reconciles every sample to Ready', async () => {
  const expected = renamedKind(
    readManifests(
      readdirSync(join(root, 'samples')).map((s) => join(root, 'samples', s, 'instance.yaml')),
    ),
  );
  let pending: string[] = [];
  await eventually(
    async () => {
      pending = [];
      for (const i of expected) {
        if ((await samplePhase(user, i)) === 'Ready') continue;
        const live = await user.get({
          apiVersion: i.apiVersion,
          kind: i.kind,
          name: i.metadata.name ?? '',
          namespace: i.metadata.namespace,
        });
        const ready = (
          live as { status?: { conditions?: { type: string; message?: string }[] } } | undefined
        )?.status?.conditions?.find((c) => c.type === 'Ready');
        pending.push(`${i.kind} ${i.metadata.name}: ${ready?.message ?? 'no status'}`);
      }
      return pending.length === 0;
    },
    'every sample instance to be Ready',
    60_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message.split(';')[0]}; not Ready:\n${pending.join('\n')}`);
  });
  expect(
    await user.get({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'shop',
      namespace: 'team-a',
    }),
  ).toBeDefined();
  expect(await user.get({ apiVersion: 'v1', kind: 'Namespace', name: 'team-c' })).toBeDefined();
  // samples/namespace-fanout: the Set stamped team-e's settings with its label and ConfigMap.
  expect(
    (
      await user.get({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'tenant-settings',
        namespace: 'team-e',
      })
    )?.data,
  ).toEqual({ LOG_LEVEL: 'warn', SUPPORT_CONTACT: 'team-e-oncall@example.com' });
}, 90_000);

it('never puts a Secret value in status, events or logs', async () => {
  const instances = await user.list(API_VERSION, 'TemplateInstance', { namespace: 'team-a' });
  await eventRecorded(user, 'team-a', 'Applied');
  const events = await user.list('v1', 'Event', { namespace: 'team-a' });
  for (const text of [JSON.stringify(instances), JSON.stringify(events), output]) {
    expect(text).not.toContain(SECRET_VALUE);
    expect(text).not.toContain(Buffer.from(SECRET_VALUE).toString('base64'));
  }
});

it('exits 0 on SIGTERM', async () => {
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(output).toContain('"msg":"shutting down"');
}, 30_000);

// Sharding (issue #15) with real processes: three `stencil run --shards auto` replicas split 300
// instances over 30 namespaces, each instance reconciled by exactly one of them; a SIGKILLed
// replica's namespaces are taken over within a lease duration plus one resync, with a change
// made in the gap applied; a fourth replica joining moves keys with no key reconciled by two
// replicas at once (their logs give every pass's start and end on this machine's clock).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object-meta.ts';
import type { TemplateInstance } from '../../src/api/template-instance.ts';
import { API_VERSION } from '../../src/api/well-known.ts';
import type { KubeCluster } from '../../src/kube/cluster.ts';
import { instance, template } from './support/builders.ts';
import { connect, freshNamespace } from './support/cluster.ts';
import { grantTemplateAccount } from '../../tools/local/operator-identity.ts';
import { conditionOf } from './support/instances.ts';
import { eventually, userClient } from './support/operator.ts';
import {
  alive,
  instancePasses,
  overlappingPasses,
  scrape,
  seriesValue,
  settledMembers,
  startShardReplica,
  type ShardReplica,
  type ShardReplicaOptions,
} from './support/shard-replicas.ts';

const NAMESPACES = 30;
const PER_NAMESPACE = 10;
const LEASE_SECONDS = 6;
const RESYNC_SECONDS = 15;
const run = randomBytes(3).toString('hex');
let user: KubeCluster;
let templateNamespace: string;
const namespaces: string[] = [];
const replicas: ShardReplica[] = [];
let options: ShardReplicaOptions;

// Three objects a pass, so a replica's queue takes seconds to drain after a wave.
const body = ['', '-a', '-b']
  .map(
    (suffix) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}${suffix}
  labels: { shard-run: "${run}" }
data:
  value: {{parameters.value}}
`,
  )
  .join('---\n');

async function setValue(namespace: string, name: string, value: string): Promise<void> {
  await user.apply(
    instance(
      namespace,
      name,
      { name: 'sharded', namespace: templateNamespace },
      [{ name: 'value', value }],
      { labels: { 'shard-run': run } },
    ),
  );
}

const keys = (): string[] =>
  namespaces.flatMap((ns) => Array.from({ length: PER_NAMESPACE }, (_, i) => `${ns}/i-${i}`));

/** Changes every instance, 25 writes at a time: the replicas' queues fill faster than they drain. */
async function setAll(value: string): Promise<void> {
  const all = keys();
  for (let i = 0; i < all.length; i += 25)
    await Promise.all(
      all.slice(i, i + 25).map((key) => {
        const [ns, name] = key.split('/') as [string, string];
        return setValue(ns, name, value);
      }),
    );
}

/** Keys not yet Ready with a ConfigMap of `value` (empty once all converged). */
async function divergence(expected: (key: string) => string): Promise<string[]> {
  const selector = { labelSelector: `shard-run=${run}` };
  const instances = (await user.list(
    API_VERSION,
    'TemplateInstance',
    selector,
  )) as unknown as TemplateInstance[];
  const ready = new Set(
    instances
      .filter(
        (i) =>
          conditionOf(i.status)?.status === 'True' &&
          i.status?.observedGeneration === i.metadata.generation,
      )
      .map((i) => `${i.metadata.namespace}/${i.metadata.name}`),
  );
  const maps = new Map(
    (await user.list('v1', 'ConfigMap', selector)).map((m: KubeObject) => [
      `${m.metadata.namespace}/${m.metadata.name}`,
      (m as { data?: { value?: string } }).data?.value,
    ]),
  );
  const objects = (key: string): (string | undefined)[] =>
    ['', '-a', '-b'].map((suffix) => maps.get(`${key}${suffix}`));
  return keys().filter((k) => !ready.has(k) || objects(k).some((v) => v !== expected(k)));
}

async function converged(
  expected: (key: string) => string,
  what: string,
  timeoutMs = 120_000,
): Promise<void> {
  let last: string[] = [];
  await eventually(
    async () => {
      last = await divergence(expected);
      return last.length === 0;
    },
    what,
    timeoutMs,
  ).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${last.length} left, e.g. ${last.slice(0, 5).join(', ')}`);
  });
}

/** Waits until every live replica settled on exactly `count` members, the same ones. */
async function settledOn(count: number): Promise<string[]> {
  return eventually(
    () => {
      const views = replicas.filter(alive).map((r) => settledMembers(r)?.join(',') ?? '');
      const same = views.every((v) => v === views[0]);
      const members = views[0]!.split(',');
      return Promise.resolve(same && members.length === count && members);
    },
    `every replica to settle on ${count} members`,
    60_000,
  );
}

function reconcilersByKey(): Map<string, Set<string>> {
  const byKey = new Map<string, Set<string>>();
  for (const pass of replicas.flatMap(instancePasses))
    byKey.set(pass.key, new Set([...(byKey.get(pass.key) ?? []), pass.replica]));
  return byKey;
}

beforeAll(async () => {
  const cluster = connect();
  user = (await userClient()).cluster;
  templateNamespace = await freshNamespace(cluster, 'shard-templates');
  const operatorNamespace = await freshNamespace(cluster, 'shard-system');
  for (let i = 0; i < NAMESPACES; i++) namespaces.push(await freshNamespace(cluster, `shard-${i}`));
  await grantTemplateAccount(user, templateNamespace, namespaces);
  await user.apply(
    template(templateNamespace, 'sharded', {
      targetNamespaces: { explicit: { allow: { literal: ['*'] } } },
      sync: { mode: 'revert' },
      parameters: [{ name: 'value' }],
      handlebars: body,
    }),
  );
  options = {
    namespaces: [templateNamespace, ...namespaces],
    operatorNamespace,
    leaseDurationSeconds: LEASE_SECONDS,
    resyncSeconds: RESYNC_SECONDS,
  };
  for (const name of ['r1', 'r2', 'r3']) replicas.push(await startShardReplica(name, options));
}, 120_000);

afterAll(() => {
  for (const r of replicas) if (alive(r)) r.child.kill('SIGKILL');
  // The replicas' logs, for a failure's post-mortem.
  const dir = mkdtempSync(join(tmpdir(), 'stencil-sharding-'));
  for (const r of replicas) writeFileSync(join(dir, `${r.name}.log`), r.output);
  console.log(`[sharding] replica logs in ${dir}`);
});

it('splits 300 instances over 3 replicas, each reconciled by exactly one', async () => {
  await settledOn(3);
  await setAll('v1');
  await converged(() => 'v1', 'all 300 instances to converge');

  const byKey = reconcilersByKey();
  expect(keys().filter((k) => byKey.get(k)?.size !== 1)).toEqual([]);
  const perReplica = replicas.map((r) => [...byKey.values()].filter((s) => s.has(r.name)).length);
  expect(perReplica.every((n) => n > 0)).toBe(true);
  // One namespace, one replica: every instance of a namespace went to the same one.
  for (const ns of namespaces) {
    const owners = new Set(
      keys()
        .filter((k) => k.startsWith(`${ns}/`))
        .flatMap((k) => [...byKey.get(k)!]),
    );
    expect(owners.size).toBe(1);
  }
  const scrapes = await Promise.all(replicas.map(scrape));
  const owned = scrapes.map((s) => seriesValue(s, 'stencil_shard_keys') ?? 0);
  expect(owned.reduce((a, b) => a + b, 0)).toBe(NAMESPACES * PER_NAMESPACE);
  expect(scrapes.map((s) => seriesValue(s, 'stencil_shard_members'))).toEqual([3, 3, 3]);
  // The request counts agree: each replica applied only what it owns.
  const applies = scrapes.map((s) => seriesValue(s, 'stencil_applies_total{result="applied"}'));
  expect(applies).toEqual(perReplica.map((n) => 3 * n));
  // A single field manager owns each ConfigMap's fields, whichever replica applied it.
  const [map] = await user.list('v1', 'ConfigMap', { namespace: namespaces[0] });
  const managers = (map as { metadata: { managedFields?: { manager: string }[] } }).metadata
    .managedFields;
  expect(managers?.map((m) => m.manager)).toEqual(['stencil']);
  console.log(`[sharding] instances per replica: ${perReplica.join(' / ')}`);
}, 240_000);

it('takes over a SIGKILLed replica within a lease duration and one resync, with a change made in the gap', async () => {
  const byKey = reconcilersByKey();
  const victim = replicas[0]!;
  const victimKeys = keys().filter((k) => byKey.get(k)?.has(victim.name));
  expect(victimKeys.length).toBeGreaterThan(0);
  victim.child.kill('SIGKILL');
  const killed = Date.now();
  const [ns, name] = victimKeys[0]!.split('/') as [string, string];
  await setValue(ns, name, 'v2'); // no replica owns this namespace now
  const expected = (k: string): string => (k === victimKeys[0] ? 'v2' : 'v1');
  await converged(
    expected,
    'the change in the killed replica’s namespace to be applied',
    (LEASE_SECONDS + RESYNC_SECONDS + 10) * 1000,
  );
  console.log(`[sharding] change applied ${Date.now() - killed} ms after the SIGKILL`);
  await settledOn(2);
}, 120_000);

it('moves keys to a fourth replica with no key reconciled by two replicas at once', async () => {
  // The fourth starts while a wave keeps the others busy: its namespaces are handed over from
  // replicas that are working through them.
  await setAll('v3');
  await eventually(async () => {
    const depths = (await Promise.all(replicas.filter(alive).map(scrape))).map(
      (s) => seriesValue(s, 'stencil_workqueue_depth{controller="templateinstance"}') ?? 0,
    );
    return depths.every((d) => d >= 20);
  }, 'a backlog on every replica');
  replicas.push(await startShardReplica('r4', options));
  await settledOn(3);
  await converged(() => 'v3', 'the v3 wave after the fourth replica joined');

  const passes = replicas.flatMap(instancePasses);
  expect(passes.some((p) => p.replica === 'r4')).toBe(true);
  expect(overlappingPasses(passes)).toEqual([]);
  const handedOut = (await Promise.all(replicas.filter(alive).map(scrape))).map(
    (s) => seriesValue(s, 'stencil_shard_handoffs_total{direction="out"}') ?? 0,
  );
  expect(handedOut.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  console.log(
    `[sharding] passes logged: ${passes.length}; handed out on the join: ${handedOut.join(' / ')}`,
  );
}, 240_000);

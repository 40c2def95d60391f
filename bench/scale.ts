// `npm run bench:scale`: 200 revert instances across 20 namespaces, each reading its own Secret,
// reconciled by `stencil run` as its own process (the built dist/cli.js). Prints the time to
// converge, the watch connections the operator holds against the distinct (kind, namespace)
// pairs it reads, and the operator's memory — all read from its /metrics endpoint.
import { spawn } from 'node:child_process';
import { freePort } from '../tools/control-plane/control-plane.ts';
import { join } from 'node:path';
import { API_VERSION } from '../src/api/well-known.ts';
import { benchCluster, object, passwordTemplate, until } from './support.ts';

const NAMESPACES = 20;
const PER_NAMESPACE = 10;
const root = join(import.meta.dirname, '..');

function series(metrics: string, name: string): { labels: string; value: number }[] {
  return metrics
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .map((l) => ({ labels: /\{(.*)\}/.exec(l)?.[1] ?? '', value: Number(l.split(' ').pop()) }));
}

const cluster = await benchCluster({}, { inProcessOperator: false });
const { user } = cluster;
const metricsPort = await freePort();
const operator = spawn(
  process.execPath,
  [
    join(root, 'dist', 'cli.js'),
    'run',
    `--kubeconfig=${cluster.plane.kubeconfigPath}`,
    `--metrics-bind-address=127.0.0.1:${metricsPort}`,
    '--health-probe-bind-address=0',
    '--webhook-port=0',
    '--log-level=warn',
  ],
  // Single-team mode: the benchmark's namespaces give no ServiceAccount to act as (ADR 0035).
  { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, STENCIL_ACT_AS: 'operator' } },
);
const scrape = async (): Promise<string> =>
  (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();

try {
  await until(async () => (await scrape().catch(() => '')).includes('stencil_leader 1'));
  const rssIdle = series(await scrape(), 'stencil_process_resident_memory_bytes')[0]?.value ?? NaN;
  for (let n = 0; n < NAMESPACES; n++) {
    const ns = `scale-${n}`;
    await user.apply(object({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }));
    await user.apply(passwordTemplate(ns));
    for (let i = 0; i < PER_NAMESPACE; i++) {
      await user.apply(
        object({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: `db-${i}`, namespace: ns },
          stringData: { password: `p-${n}-${i}` },
        }),
      );
    }
  }
  const started = performance.now();
  for (let n = 0; n < NAMESPACES; n++) {
    for (let i = 0; i < PER_NAMESPACE; i++) {
      await user.apply(
        object({
          apiVersion: API_VERSION,
          kind: 'TemplateInstance',
          metadata: { name: `app-${i}`, namespace: `scale-${n}` },
          spec: {
            templateRef: { name: 'app' },
            parameters: [
              {
                name: 'password',
                valueFrom: { secretKeyRef: { name: `db-${i}`, key: 'password' } },
              },
            ],
          },
        }),
      );
    }
  }
  const created = performance.now();
  await until(
    async () =>
      series(await scrape(), 'stencil_instances').find((s) => s.labels === 'phase="Ready"')
        ?.value ===
      NAMESPACES * PER_NAMESPACE,
    300_000,
  );
  const converged = performance.now();
  const metrics = await scrape();
  const watches = series(metrics, 'stencil_source_watches');
  const secretWatches = watches.find((w) => w.labels === 'kind="Secret"')?.value ?? 0;
  const driftWatches = watches
    .filter((w) => w.labels.includes('(drift)'))
    .reduce((sum, w) => sum + w.value, 0);
  const rss = series(metrics, 'stencil_process_resident_memory_bytes')[0]?.value ?? NaN;
  const heap = series(metrics, 'stencil_nodejs_heap_size_used_bytes')[0]?.value ?? NaN;
  const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
  console.log(
    `instances: ${NAMESPACES * PER_NAMESPACE} in ${NAMESPACES} namespaces, each reading its own Secret`,
  );
  console.log(
    `created in ${((created - started) / 1000).toFixed(1)} s; all Ready ${((converged - started) / 1000).toFixed(1)} s after the first was created`,
  );
  console.log(
    `source watch connections: ${secretWatches} (Secret) for ${NAMESPACES} distinct (kind, namespace) pairs; drift watches: ${driftWatches}`,
  );
  console.log(
    `operator process RSS: ${mib(rss)} (idle before the instances: ${mib(rssIdle)}); heap used ${mib(heap)}`,
  );
} finally {
  operator.kill('SIGTERM');
  await new Promise((r) => operator.once('exit', r));
  await cluster.stop();
}

// `npm run bench:scale`: 200 revert instances across 20 namespaces, each reading its own Secret.
// Prints the time to converge, the source watch connections the operator holds (against the
// distinct (kind, namespace) pairs it reads), and memory.
import { API_VERSION } from '../src/api/well-known.ts';
import { benchCluster, object, passwordTemplate, until } from './support.ts';

const NAMESPACES = 20;
const PER_NAMESPACE = 10;
const cluster = await benchCluster();
const { user, operator } = cluster;
const rssBefore = process.memoryUsage().rss;

try {
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
  await until(async () => {
    const list = await user.list(API_VERSION, 'TemplateInstance');
    return (
      list.length === NAMESPACES * PER_NAMESPACE &&
      list.every((i) => (i as { status?: { phase?: string } }).status?.phase === 'Ready')
    );
  }, 300_000);
  const converged = performance.now();
  await operator.idle();
  const keys = operator.dependencies.registry.watchKeys();
  const sources = keys.filter((k) => k.labelSelector === undefined);
  const pairs = new Set(sources.map((k) => `${k.kind}/${k.namespace ?? '*'}`));
  const memory = process.memoryUsage();
  console.log(
    `instances: ${NAMESPACES * PER_NAMESPACE} in ${NAMESPACES} namespaces, each reading its own Secret`,
  );
  console.log(
    `created in ${((created - started) / 1000).toFixed(1)} s; all Ready ${((converged - started) / 1000).toFixed(1)} s after the first was created`,
  );
  console.log(
    `source watch connections: ${sources.length} for ${pairs.size} distinct (kind, namespace) pairs; drift watches: ${keys.length - sources.length}`,
  );
  console.log(
    `process RSS: ${(memory.rss / 1024 / 1024).toFixed(0)} MiB (before the instances: ${(rssBefore / 1024 / 1024).toFixed(0)} MiB); heap used ${(memory.heapUsed / 1024 / 1024).toFixed(0)} MiB`,
  );
} finally {
  await cluster.stop();
}

// `npm run bench:cluster-schemas`: what the operator's schemas of rendered objects cost when they
// come from the API server (ADR 0030): the requests and bytes of the documents a typical
// Template needs, the time to fetch and convert them, the heap and RSS they hold once loaded
// (after a full GC), a prepare when all is held (every pass pays it), and the check of the
// ten-resource render of bench:render against them. A fresh control plane; run with --expose-gc.
import { performance } from 'node:perf_hooks';
import { validObjects } from '../test/fixtures/built-in-objects.ts';
import { KubernetesSchemas } from '../src/engine/object-schema/kubernetes-schemas.ts';
import {
  OfflineSchemas,
  type Kinded,
  type ObjectSchemas,
} from '../src/engine/object-schema/object-schema.ts';
import {
  convertPublishedDocument,
  type OpenApiDocument,
} from '../src/engine/object-schema/published-schemas.ts';
import { ClusterSchemas } from '../src/kube/cluster-schemas.ts';
import { connect } from '../src/kube/connection.ts';
import { schemaFileReader } from '../src/kubernetes-schema-files.ts';
import { startControlPlane } from '../tools/control-plane/control-plane.ts';
import { installProjectCrds } from '../tools/control-plane/crds.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const MiB = 1024 * 1024;

function memory(): { heap: number; rss: number } {
  gc!();
  gc!();
  const { heapUsed, rss } = process.memoryUsage();
  return { heap: heapUsed, rss };
}

function delta(before: { heap: number; rss: number }): string {
  const after = memory();
  return `heap +${((after.heap - before.heap) / MiB).toFixed(2)} MiB, RSS +${((after.rss - before.rss) / MiB).toFixed(2)} MiB`;
}

const objects = validObjects();
const ten = [
  objects.Deployment!,
  objects.Service!,
  objects.Ingress!,
  { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'web', namespace: 'team-a' } },
  ...Array.from({ length: 6 }, (_, i) => ({
    ...objects.ConfigMap!,
    metadata: { name: `web-config-${i}`, namespace: 'team-a' },
  })),
] as unknown as Kinded[];
const more = ['batch/v1', 'policy/v1', 'rbac.authorization.k8s.io/v1', 'autoscaling/v2'];

/** ms to check the ten objects, after a warm-up; each must pass. */
function checkTen(checker: ObjectSchemas, runs: number): number {
  const once = (): void => {
    for (const o of ten) {
      const verdict = checker.check(o);
      if (!verdict.checked || verdict.problems.length > 0) throw new Error('unexpected problem');
    }
  };
  for (let i = 0; i < 200; i++) once();
  const start = performance.now();
  for (let i = 0; i < runs; i++) once();
  return (performance.now() - start) / runs;
}

const plane = await startControlPlane({ log: (line) => console.error(line) });
try {
  await installProjectCrds(plane);
  const connection = await connect(plane.kubeconfigPath);
  const sent: string[] = [];
  connection.http.onRequest((method, path) => sent.push(`${method} ${path}`));
  const offline = new OfflineSchemas(new KubernetesSchemas(schemaFileReader()));
  const cluster = new ClusterSchemas(connection.http, offline);
  const { schemas } = cluster;

  const baseline = memory();
  let start = performance.now();
  await schemas.prepare(ten);
  const typicalMs = performance.now() - start;
  const typicalSent = [...sent];
  const typicalHeld = delta(baseline);
  await connection.http.request({ method: 'GET', path: '/version' });
  const afterNext = delta(baseline);
  sent.length = 0;
  start = performance.now();
  await cluster.documents(more);
  const moreMs = performance.now() - start;
  const moreSent = sent.length;
  const allHeld = delta(baseline);
  const converted = Object.values(Object.fromEntries(await cluster.documents([])))
    .map((d) => JSON.stringify([...(d?.definitions ?? [])]).length)
    .reduce((a, b) => a + b, 0);
  // The bytes of each document, read once aside (not counted, not held).
  const sizes = new Map<string, number>();
  const documents = new Map<string, OpenApiDocument>();
  for (const path of [
    'api/v1',
    'apis/apps/v1',
    'apis/networking.k8s.io/v1',
    ...more.map((v) => `apis/${v}`),
  ]) {
    const document = await connection.http.request({ method: 'GET', path: `/openapi/v3/${path}` });
    sizes.set(path, JSON.stringify(document).length);
    documents.set(path, document as OpenApiDocument);
  }
  sent.length = 0;
  const typicalBytes = ['api/v1', 'apis/apps/v1', 'apis/networking.k8s.io/v1'].reduce(
    (n, p) => n + sizes.get(p)!,
    0,
  );
  console.log(
    `the ten-resource Template (v1, apps/v1, networking.k8s.io/v1): ${typicalSent.length} requests ` +
      `(${typicalSent.join(', ')}), ${(typicalBytes / MiB).toFixed(2)} MiB of JSON, ` +
      `${typicalMs.toFixed(0)} ms to fetch and convert; held: ${typicalHeld}; ` +
      `after one more request: ${afterNext}`,
  );
  const moreBytes = more.reduce((n, v) => n + sizes.get(`apis/${v}`)!, 0);
  console.log(
    `and ${more.join(', ')}: ${moreSent} requests, ${(moreBytes / MiB).toFixed(2)} MiB, ` +
      `${moreMs.toFixed(0)} ms; all seven held: ${allHeld} (${(converted / 1024).toFixed(0)} KiB of converted definitions as JSON)`,
  );

  // What the converted definitions hold, without the noise of one measure: ten copies of each set.
  for (const set of [3, 7]) {
    const before = memory();
    const copies = Array.from({ length: 10 }, () =>
      [...documents]
        .slice(0, set)
        .map(([path, d]) => convertPublishedDocument(path.replace(/^apis?\//, ''), d)),
    );
    const held = (memory().heap - before.heap) / copies.length / MiB;
    console.log(
      `the converted definitions of ${set} documents hold ${held.toFixed(2)} MiB of heap`,
    );
  }
  sent.length = 0;
  const runs = 2000;
  start = performance.now();
  for (let i = 0; i < runs; i++) await schemas.prepare(ten);
  console.log(
    `prepare when all is held (every pass): ${((performance.now() - start) / runs).toFixed(3)} ms, ${sent.length} requests in ${runs}`,
  );
  await offline.prepare(ten);
  for (const [label, checker] of [
    ['published', schemas],
    ['offline bundle', offline],
  ] as const) {
    console.log(
      `check the ten-resource render against the ${label} schemas: ${checkTen(checker, runs).toFixed(3)} ms`,
    );
  }
  console.log(`node ${process.version}, kube-apiserver ${plane.version}`);
  connection.http.close();
} finally {
  await plane.stop();
}

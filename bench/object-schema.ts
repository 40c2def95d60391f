// `npm run bench:schemas` (and the last section of `npm run bench:render`): the cost of checking
// rendered objects against their schemas (engine/object-schema, ADR 0029). In a fresh process,
// after a full GC each time: the lazy load of each common kind's schemas (first check), the heap
// and RSS they hold once loaded, the same for the first CRD schema (which loads ajv), and the
// time to check a typical ten-resource render. Run with --expose-gc.
import { performance } from 'node:perf_hooks';
import { validObjects } from '../test/fixtures/built-in-objects.ts';
import { KubernetesSchemas } from '../src/engine/object-schema/kubernetes-schemas.ts';
import { validateObject } from '../src/engine/object-schema/object-schema.ts';
import { schemaFileReader } from '../src/kubernetes-schema-files.ts';

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
/** The twelve kinds ADR 0029's figures were measured on (the fixture has grown since). */
const MEASURED = [
  'Deployment',
  'Service',
  'ConfigMap',
  'Secret',
  'Job',
  'CronJob',
  'Ingress',
  'NetworkPolicy',
  'StatefulSet',
  'HorizontalPodAutoscaler',
  'PodDisruptionBudget',
  'Role',
];
const ten = [
  objects.Deployment!,
  objects.Service!,
  objects.Ingress!,
  { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'web', namespace: 'team-a' } },
  ...Array.from({ length: 6 }, (_, i) => ({
    ...objects.ConfigMap!,
    metadata: {
      name: `web-config-${i}`,
      namespace: 'team-a',
      labels: { app: 'web', part: `${i}` },
    },
  })),
];

const baseline = memory();
const schemas = new KubernetesSchemas(schemaFileReader());
const firsts: string[] = [];
let loadMs = 0;
for (const kind of MEASURED) {
  const object = objects[kind]!;
  const start = performance.now();
  const verdict = validateObject(object, schemas);
  const ms = performance.now() - start;
  loadMs += ms;
  if (!verdict.checked || verdict.problems.length > 0) throw new Error(`${kind} is not valid`);
  firsts.push(`${kind} ${ms.toFixed(2)}`);
}
console.log(`first check of each kind (lazy load), ms: ${firsts.join(', ')}`);
const { files, characters } = schemas.loaded;
console.log(
  `built-in schemas of ${MEASURED.length} kinds loaded in ${loadMs.toFixed(1)} ms: ` +
    `${files} files, ${(characters / 1024).toFixed(0)} KiB of JSON; ${delta(baseline)}`,
);

const beforeCrd = memory();
const importStart = performance.now();
// Imported here, not above: what the first custom resource costs includes loading ajv.
const { CrdSchemaCompiler, CustomResourceSchemas } =
  await import('../src/engine/object-schema/crd-schemas.ts');
const importMs = performance.now() - importStart;
const crdSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['size'],
      'x-kubernetes-validations': [{ rule: 'self.size <= 10', message: 'at most 10' }],
      properties: {
        size: { type: 'integer', minimum: 1 },
        mode: { type: 'string', enum: ['fast', 'safe'] },
        config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  },
};
const crds = new CustomResourceSchemas(schemas, new CrdSchemaCompiler()).addAll([
  {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    spec: {
      group: 'example.com',
      names: { kind: 'Widget' },
      versions: [{ name: 'v1', served: true, schema: { openAPIV3Schema: crdSchema } }],
    },
  },
]);
const widget = {
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w' },
  spec: { size: 3 },
};
const crdStart = performance.now();
validateObject(widget, schemas, crds);
console.log(
  `first custom resource: ${importMs.toFixed(1)} ms to import crd-schemas.ts and ajv, ` +
    `${(performance.now() - crdStart).toFixed(1)} ms to compile its CRD schema and check it; ${delta(beforeCrd)}`,
);

function perRun(label: string, iterations: number, run: () => void): number {
  for (let i = 0; i < 200; i++) run();
  const start = performance.now();
  for (let i = 0; i < iterations; i++) run();
  const ms = (performance.now() - start) / iterations;
  console.log(`${label}: ${ms.toFixed(3)} ms each (${iterations} runs)`);
  return ms;
}

perRun(
  'check a ten-resource render (Deployment, Service, Ingress, ServiceAccount, 6 ConfigMaps)',
  5000,
  () => {
    for (const object of ten) {
      const verdict = validateObject(object, schemas);
      if (!verdict.checked || verdict.problems.length > 0) throw new Error('unexpected problem');
    }
  },
);
perRun('check one Deployment', 5000, () => validateObject(objects.Deployment, schemas));
perRun('check one custom resource (CRD schema compiled)', 5000, () =>
  validateObject(widget, schemas, crds),
);
console.log(`node ${process.version}`);

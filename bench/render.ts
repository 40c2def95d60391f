// `npm run bench:render`: compile time and cached render throughput for a typical Template of
// ten resources (Deployment, Service, Ingress, ConfigMaps, ...), through the operator's own path,
// and what checking the rendered objects against their schemas adds (ADR 0029).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parse } from 'yaml';
import type { Template } from '../src/api/template.ts';
import type { TemplateInstance } from '../src/api/template-instance.ts';
import { evaluateInstance } from '../src/engine/evaluation/instance-evaluation.ts';
import { MemorySource } from '../src/engine/sources/memory-source.ts';
import { compileTemplate, renderTemplate } from '../src/engine/render/render.ts';
import { renderInProcess } from '../src/engine/render/render-job.ts';
import { RenderPool } from '../src/operator/render-pool/render-pool.ts';
import { KubernetesSchemas } from '../src/engine/object-schema/kubernetes-schemas.ts';
import { OfflineSchemas } from '../src/engine/object-schema/object-schema.ts';
import { objectSchemaProblems, placementProblems } from '../src/engine/evaluation/schema-checks.ts';
import { schemaFileReader } from '../src/kubernetes-schema-files.ts';

const configMaps = Array.from(
  { length: 6 },
  (_, i) => `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{instance.name}}-config-${i}
  labels: {app: {{instance.name}}, part: "${i}"}
data:
  level: {{parameters.logLevel}}
  hosts: {{quote (toJson parameters.hosts)}}
  checksum: {{sha256 parameters.image}}
`,
).join('');

const body = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{instance.name}}
  labels: {app.kubernetes.io/name: {{instance.name}} }
spec:
  replicas: {{parameters.replicas}}
  selector: {matchLabels: {app: {{instance.name}} }}
  template:
    metadata: {labels: {app: {{instance.name}} }}
    spec:
      containers:
        - name: app
          image: {{parameters.image}}
          resources: {{nindent 12 (toYaml parameters.resources)}}
---
apiVersion: v1
kind: Service
metadata: {name: {{instance.name}} }
spec:
  selector: {app: {{instance.name}} }
  ports: [{port: 80, targetPort: {{parameters.port}} }]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: {{instance.name}} }
spec:
  rules:
{{#each parameters.hosts}}
    - host: {{this}}
      http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: {{@root.instance.name}}, port: {number: 80}}}}]}
{{/each}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: {{instance.name}} }
${configMaps}`;

const template = parse(`apiVersion: stencil.dev/v1alpha1
kind: Template
metadata: {name: bench, namespace: team-a, generation: 1}
spec:
  parameters:
    - {name: image, type: string, value: "nginx:1.27"}
    - {name: replicas, type: number, value: 2}
    - {name: port, type: number, value: 8080}
    - {name: logLevel, value: info}
    - {name: hosts, type: array, value: [a.example.com, b.example.com]}
    - {name: resources, type: object, value: {requests: {cpu: 100m}, limits: {memory: 256Mi}}}
    - {name: password}
  handlebars: ""
`) as Template;
template.spec.handlebars = body;
const names = (template.spec.parameters ?? []).map((p) => p.name);

function instance(i: number): TemplateInstance {
  return {
    apiVersion: 'stencil.dev/v1alpha1',
    kind: 'TemplateInstance',
    metadata: { name: `app-${i}`, namespace: 'team-a', uid: `uid-${i}` },
    spec: {
      templateRef: { name: 'bench' },
      parameters: [
        { name: 'image', value: `ghcr.io/acme/app:${i}` },
        { name: 'password', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
      ],
    },
  };
}

function measure(label: string, iterations: number, run: (i: number) => void): number {
  run(0);
  const start = performance.now();
  for (let i = 0; i < iterations; i++) run(i);
  const ms = performance.now() - start;
  console.log(
    `${label}: ${(ms / iterations).toFixed(3)} ms each, ${Math.round((iterations / ms) * 1000)}/s (${iterations} runs)`,
  );
  return ms / iterations;
}

// Compile: a distinct body each time so the cache never hits.
measure('compile (parse + static checks + AST rewrite + compile), uncached', 200, (i) => {
  const compiled = compileTemplate(`${body}\n# ${i}-${Math.random()}\n`, names);
  if (!compiled.ok) throw new Error(compiled.problems[0]?.message);
});

const compiled = compileTemplate(body, names);
if (!compiled.ok) throw new Error(compiled.problems[0]?.message);
const context = {
  parameters: {
    image: 'nginx:1.27',
    replicas: 2,
    port: 8080,
    logLevel: 'info',
    hosts: ['a.example.com', 'b.example.com'],
    resources: { requests: { cpu: '100m' } },
    password: 'x',
  },
  instance: { name: 'app', namespace: 'team-a', uid: 'uid', labels: {}, annotations: {} },
  template: { name: 'bench', namespace: 'team-a', generation: 1 },
};
measure('render 10 resources, compiled body cached (render + YAML parse)', 2000, () => {
  const result = renderTemplate(compiled.value, context);
  if (!result.ok || result.value.length !== 10) throw new Error('unexpected render');
});

// Issue #26: the ten rendered objects checked against their schemas as `stencil render` and the
// operator check them (engine/evaluation/schema-checks.ts: the values, with the origin of each
// problem; and, once per Template, the types of the parameter placements): what that adds to each
// render (a difference of two render timings drowns in their noise). The schemas' load time and
// memory are measured in a fresh process at the end (bench/object-schema.ts).
{
  const schemas = new OfflineSchemas(new KubernetesSchemas(schemaFileReader()));
  const result = renderTemplate(compiled.value, context);
  if (!result.ok) throw new Error('unexpected render');
  const rendered = result.value.map(({ object, origins }) => ({ object, origins }));
  measure(
    'check the 10 rendered objects against their schemas (added per render; goal 2 ms)',
    5000,
    () => {
      const found = objectSchemaProblems(rendered, schemas, 'InvalidResource');
      if (found.problems.length > 0) throw new Error(found.problems[0]!.message);
    },
  );
  const declared = new Map(template.spec.parameters?.map((p) => [p.name, p.type]));
  measure('check the parameter placements of the 10 objects (once per Template)', 2000, () => {
    const found = placementProblems(rendered, schemas, declared, 'ValidationFailed');
    if (found.problems.length > 0) throw new Error(found.problems[0]!.message);
  });
}

const source = new MemorySource([
  {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace: 'team-a' },
    data: { password: Buffer.from('s3cret').toString('base64') },
  },
]);
{
  const iterations = 2000;
  await evaluateInstance({ instance: instance(0), template, namespaceLabels: {}, port: source });
  const start = performance.now();
  for (let i = 0; i < iterations; i++) {
    const evaluation = await evaluateInstance({
      instance: instance(i),
      template,
      namespaceLabels: {},
      port: source,
    });
    if (!evaluation.ok) throw new Error(evaluation.problem?.message);
  }
  const ms = performance.now() - start;
  console.log(
    `evaluate instance end to end (resolve + render + place + stamp): ${(ms / iterations).toFixed(3)} ms each, ${Math.round((iterations / ms) * 1000)}/s (${iterations} runs)`,
  );
}

/** Mean ms of `iterations` awaited runs after one warm-up. */
async function timed(
  label: string,
  iterations: number,
  run: () => Promise<unknown>,
): Promise<number> {
  await run();
  const start = performance.now();
  for (let i = 0; i < iterations; i++) await run();
  const ms = (performance.now() - start) / iterations;
  console.log(`${label}: ${ms.toFixed(3)} ms each (${iterations} runs)`);
  return ms;
}

// Issue #22: the operator renders in worker threads; what a render costs there vs here.
{
  const job = {
    template: 'team-a/bench',
    body,
    parameters: names,
    context,
    producers: new Map(),
    secret: ['password'],
  };
  const pool = new RenderPool({ size: 2, timeoutMs: 30_000 });
  const here = await timed('render job, this thread', 500, () => renderInProcess(job));
  const there = await timed('render job, worker pool (structured clone both ways)', 500, () =>
    pool.render(job),
  );
  console.log(`worker pool cost per render: ${(there - here).toFixed(3)} ms`);
  const big = {
    ...job,
    context: {
      ...context,
      parameters: {
        ...context.parameters,
        hosts: Array.from({ length: 2_000 }, (_, i) => `h${i}.example.com`),
      },
    },
  };
  const bigHere = await timed('render job with 2,000 hosts (~420 KB), this thread', 20, () =>
    renderInProcess(big),
  );
  const bigThere = await timed('render job with 2,000 hosts (~420 KB), worker pool', 20, () =>
    pool.render(big),
  );
  console.log(`worker pool cost per large render: ${(bigThere - bigHere).toFixed(3)} ms`);
  await pool.close();
}

// Issue #22: a 1 MiB Secret value (a CA bundle) through sha256, b64enc and inserted whole.
{
  const pem = Array.from({ length: 16_384 }, (_, i) => `SECRET${String(i).padStart(58, 'x')}`).join(
    '\n',
  );
  const secretTemplate = (use: string): Template => ({
    ...template,
    spec: {
      parameters: [{ name: 'ca', type: 'string' }],
      handlebars: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ca\ndata:\n  x: ${use}\n`,
    },
  });
  const caInstance: TemplateInstance = {
    ...instance(0),
    spec: {
      templateRef: { name: 'bench' },
      parameters: [{ name: 'ca', valueFrom: { secretKeyRef: { name: 'ca', key: 'ca' } } }],
    },
  };
  const caSource = new MemorySource([
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'ca', namespace: 'team-a' },
      data: { ca: Buffer.from(pem).toString('base64') },
    },
  ]);
  console.log(`Secret value: ${(pem.length / 1024 / 1024).toFixed(2)} MiB`);
  for (const use of [
    '{{sha256 parameters.ca}}',
    '{{b64enc parameters.ca}}',
    '{{quote parameters.ca}}',
  ])
    await timed(`evaluate with a 1 MiB Secret, ${use} (redactor built and used)`, 10, async () => {
      const evaluation = await evaluateInstance({
        instance: caInstance,
        template: secretTemplate(use),
        namespaceLabels: {},
        port: caSource,
      });
      if (!evaluation.ok) throw new Error(evaluation.problem?.message);
      evaluation.redactor.redact('ConfigMap "ca" is invalid: metadata.name: Invalid value');
    });
}

// Issue #22: the checks that were quadratic.
{
  const keys = compileTemplate(
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n{{#each parameters.hosts}}  {{@key}}: {{this}}\n{{/each}}',
    ['hosts'],
  );
  if (!keys.ok) throw new Error('keys body');
  const hosts = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`h${i}`, `v${i}`]));
  measure('60,000 keys laid out from a map (was 31 s)', 3, () => {
    if (!renderTemplate(keys.value, { ...context, parameters: { hosts } }).ok)
      throw new Error('keys');
  });
  const reads = compileTemplate(
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n{{#each parameters.l}}  k{{@index}}: {{observed "v1" "ConfigMap" "p" ".data.x"}}\n{{/each}}',
    ['l'],
  );
  if (!reads.ok) throw new Error('reads body');
  const l = Array.from({ length: 45_000 }, (_, i) => i);
  measure('45,000 observed reads in a loop (was 16 s)', 3, () => {
    if (!renderTemplate(reads.value, { ...context, parameters: { l } }).ok)
      throw new Error('reads');
  });
}

console.log(
  `heap used: ${(process.memoryUsage().heapUsed / 1024 / 1024).toFixed(1)} MiB; node ${process.version}`,
);

// Issue #26: the schemas' lazy load and memory, in a process of their own (goal: 10 MiB).
const schemaBench = spawnSync(
  process.execPath,
  ['--expose-gc', '--import', 'tsx', 'bench/object-schema.ts'],
  { cwd: join(import.meta.dirname, '..'), stdio: 'inherit' },
);
if (schemaBench.status !== 0) throw new Error('bench/object-schema.ts failed');

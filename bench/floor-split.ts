// `npm run bench:floor`: where the CPU of a 1,000-instance converge goes against the limit's,
// on one cluster in one run — Stencil's converge, then the limit, then the requests SPEC adds
// to the limit's (the instances' creation, the Secret GET, the ApplySet record, the Applied
// Event) alone — each with its CPU per instance by process. The limit and the extras together
// are what any operator must cost the API server; docs/benchmarks.md "Where the time goes".
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { TemplateInstance } from '../src/api/template-instance.ts';
import type { KubeObject } from '../src/api/object-meta.ts';
import { parentRecord } from '../src/engine/objects/applyset.ts';
import { runLimit } from './limit.ts';
import { settled, startOperatorProcess, type OperatorProcess } from './operator-process.ts';
import { ProcessCpu, type CpuShare } from './process-cpu.ts';
import { coldConverge } from './scale-rows.ts';
import { benchCluster } from './support.ts';
import { CLIENT_CONCURRENCY, inParallel, instanceObject, prepare, workload } from './workload.ts';

const { values } = parseArgs({ options: { size: { type: 'string', default: '1000' } } });
const size = Number(values.size);
const CONCURRENCY = 8;

function show(what: string, seconds: number, cpu: CpuShare | undefined): void {
  const share = cpu
    ? `API server + etcd ${cpu.server.toFixed(1)} ms, operator ${cpu.operator.toFixed(1)} ms, ` +
      `benchmark ${cpu.bench.toFixed(1)} ms per instance; ${cpu.cores.toFixed(2)} cores busy`
    : 'no /proc here';
  console.log(`${what}: ${seconds.toFixed(1)} s; ${share}`);
}

const cluster = await benchCluster({}, { inProcessOperator: false });
let operator: OperatorProcess | undefined;
const cpu = ProcessCpu.of(cluster.plane, () => operator);
try {
  const w = workload(size);
  await prepare(cluster.user, w);
  operator = await startOperatorProcess({
    kubeconfig: cluster.plane.kubeconfigPath,
    resyncSeconds: 600,
    logPath: join(tmpdir(), `stencil-floor-split-${process.pid}.log`),
  });
  await settled(operator);
  const from = cpu.read();
  const cold = await coldConverge(cluster, w);
  show("Stencil's converge", cold.convergeSeconds, ProcessCpu.share(from, cpu.read(), size));
  await operator.stop();
  operator = undefined;

  const limit = await runLimit(cluster.admin, size, CONCURRENCY, cpu);
  show('the limit', limit.ms / 1000, limit.cpu);

  // The extras alone: 16 clients create the instances while 8 workers, each taking the next one
  // created, read its Secret, write its record and record its Event.
  const x = workload(size, 'extra');
  await prepare(cluster.user, x);
  const created = Array.from({ length: size }, () => {
    let resolve!: (instance: KubeObject) => void;
    return {
      promise: new Promise<KubeObject>((r) => (resolve = r)),
      resolve: (o: KubeObject) => resolve(o),
    };
  });
  const extrasFrom = cpu.read();
  const started = performance.now();
  await Promise.all([
    inParallel(size, CLIENT_CONCURRENCY, async (k) => {
      created[k]!.resolve(await cluster.user.apply(instanceObject(x, k)));
    }),
    inParallel(size, CONCURRENCY, async (k) => {
      const instance = await created[k]!.promise;
      const { namespace, name } = x.instance(k);
      await cluster.admin.get({ apiVersion: 'v1', kind: 'Secret', namespace, name: `db-${k}` });
      const objects: KubeObject[] = ['ConfigMap', 'Secret', 'Service'].map((kind) => ({
        apiVersion: 'v1',
        kind,
        metadata: { name, namespace },
      }));
      const record = parentRecord(instance as unknown as TemplateInstance, objects);
      const recorded = record ? await cluster.admin.patchMetadata(instance, record) : instance;
      await cluster.admin.recordEvent({
        regarding: recorded,
        type: 'Normal',
        reason: 'Applied',
        message: `applied ${objects.length} resources`,
      });
    }),
  ]);
  const extrasSeconds = (performance.now() - started) / 1000;
  show('the extras alone', extrasSeconds, ProcessCpu.share(extrasFrom, cpu.read(), size));
} finally {
  await operator?.stop();
  await cluster.stop();
}

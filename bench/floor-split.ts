// `npm run bench:floor`: where the CPU of a 1,000-instance converge goes against the limit's,
// on one cluster in one run — Stencil's converge, then the limit, then the requests SPEC adds
// to the limit's (the instances' creation, the Secret GET, the ApplySet record, the Applied
// Event) alone — each with its CPU per instance by process. The limit and the extras together
// are what any operator must cost the API server; docs/benchmarks.md "Where the time goes".
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { runFloor, runLimit } from './limit.ts';
import { settled, startOperatorProcess, type OperatorProcess } from './operator-process.ts';
import { ProcessCpu, type CpuShare } from './process-cpu.ts';
import { coldConverge } from './scale-rows.ts';
import { benchCluster } from './support.ts';
import { prepare, workload } from './workload.ts';

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
const cpu = new ProcessCpu(cluster.plane, () => operator);
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

  const extras = await runFloor(cluster.user, cluster.admin, size, CONCURRENCY, {
    cpu,
    limitRequests: false,
  });
  show('the extras alone', extras.ms / 1000, extras.cpu);
} finally {
  await operator?.stop();
  await cluster.stop();
}

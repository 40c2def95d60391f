// `npm run bench:lockdown`: what acting as Templates' ServiceAccounts costs (issue #42, ADR 0035).
// At --size instances (default 1,000), alternating on fresh control planes, --runs times each
// (default 2): the cold converge of the scale benchmark's workload with the operator in
// single-team mode (`--act-as=operator`, its own rights) and locked down (`--act-as
// service-account`: the Template's namespace gives a ServiceAccount that may write and read in
// the instances' namespaces, and every request a pass makes is impersonated). Prints each run's
// converge time and the operator's requests per instance, then the medians.
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { grantTemplateAccount, TEMPLATE_ACCOUNT } from '../tools/local/operator-identity.ts';
import { settled, startOperatorProcess } from './operator-process.ts';
import { coldConverge } from './scale-rows.ts';
import { benchCluster, median } from './support.ts';
import { prepare, TEMPLATE_NAMESPACE, workload } from './workload.ts';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '2' },
  },
});
const size = Number(values.size);
const runs = Number(values.runs);
const logDir = mkdtempSync(join(tmpdir(), 'stencil-bench-lockdown-'));

type Mode = 'operator' | 'service-account';
interface Run {
  mode: Mode;
  convergeSeconds: number;
  requestsPerInstance: number;
  load: number;
}

async function run(mode: Mode, index: number): Promise<Run> {
  const load = loadavg()[0] ?? 0;
  const cluster = await benchCluster({}, { inProcessOperator: false });
  const w = workload(size);
  try {
    await prepare(cluster.user, w);
    if (mode === 'service-account')
      await grantTemplateAccount(cluster.user, TEMPLATE_NAMESPACE, w.namespaces);
    const operator = await startOperatorProcess({
      kubeconfig: cluster.plane.kubeconfigPath,
      resyncSeconds: 600,
      logPath: join(logDir, `operator-${mode}-${index}.log`),
      extraArgs: [`--act-as=${mode}`, `--default-service-account=${TEMPLATE_ACCOUNT}`],
    });
    try {
      await settled(operator);
      const cold = await coldConverge(cluster, w);
      const { writes, dryRuns, reads } = cold.convergeRequests;
      return {
        mode,
        convergeSeconds: cold.convergeSeconds,
        requestsPerInstance: (writes + dryRuns + reads) / size,
        load,
      };
    } finally {
      await operator.stop();
    }
  } finally {
    await cluster.stop();
  }
}

const results: Run[] = [];
for (let i = 0; i < runs; i++)
  for (const mode of ['operator', 'service-account'] as const) {
    const r = await run(mode, i);
    results.push(r);
    console.log(
      `${mode.padEnd(15)} run ${i + 1}: converge ${r.convergeSeconds.toFixed(1)} s, ` +
        `${r.requestsPerInstance.toFixed(1)} requests per instance (load ${r.load.toFixed(1)})`,
    );
  }
const of = (mode: Mode): Run[] => results.filter((r) => r.mode === mode);
const single = median(of('operator').map((r) => r.convergeSeconds));
const locked = median(of('service-account').map((r) => r.convergeSeconds));
console.log(`\n| ${size} instances, medians of ${runs} | single-team | locked down |`);
console.log('| --- | --- | --- |');
console.log(
  `| Converge | ${single.toFixed(1)} s | ${locked.toFixed(1)} s (${((locked / single - 1) * 100).toFixed(1)} %) |`,
);
console.log(
  `| Requests per instance | ${median(of('operator').map((r) => r.requestsPerInstance)).toFixed(1)} | ${median(of('service-account').map((r) => r.requestsPerInstance)).toFixed(1)} |`,
);
console.log(`\noperator logs: ${logDir}`);
process.exit(0);

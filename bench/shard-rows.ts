// The sharding row of issue #15: for R replicas of `stencil run --shards auto` (each its own
// process, on a fresh control plane), the cold converge of the scale workload once all R have
// settled on one view, and what each replica holds at the end.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { settled, startOperatorProcess, type OperatorProcess } from './operator-process.ts';
import { total } from './prometheus-text.ts';
import { byLabel, coldConverge, type ColdConverge } from './scale-rows.ts';
import { benchCluster, until } from './support.ts';
import { namespaceObject, prepare, workload } from './workload.ts';

export interface ReplicaFigures {
  /** `stencil_shard_keys`: the instances in the namespaces it owns. */
  keys: number;
  rss: number;
  /** RSS once settled, before the first instance. */
  idleRss: number;
  heap: number;
  /** `stencil_source_watches` by kind (drift watches marked as such). */
  watches: Record<string, number>;
  handoffs: Record<string, number>;
}

/** `convergeRequests` is what the replicas sent together (Lease renewals not counted). */
export interface ShardResult extends ColdConverge {
  replicas: number;
  size: number;
  namespaces: number;
  /** Seconds from starting the processes until every one settled on all R members. */
  settleSeconds: number;
  perReplica: ReplicaFigures[];
  /** 1-minute load average at the start and end of this run (2 cores: > 2 is contention). */
  load: [number, number];
}

export interface ShardRowOptions {
  logDir: string;
  log: (line: string) => void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The members of the last view this replica logged as settled (JSON lines at info level). */
function settledMembers(logPath: string): number {
  const lines = readFileSync(logPath, 'utf8').split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!lines[i]!.includes('"shard view settled"')) continue;
    const members = (JSON.parse(lines[i]!) as { members?: string[] }).members;
    return members?.length ?? 0;
  }
  return 0;
}

function figures(metrics: string, idleRss: number): ReplicaFigures {
  return {
    keys: total(metrics, 'stencil_shard_keys'),
    rss: total(metrics, 'stencil_process_resident_memory_bytes'),
    idleRss,
    heap: total(metrics, 'stencil_nodejs_heap_size_used_bytes'),
    watches: byLabel(metrics, 'stencil_source_watches', 'kind'),
    handoffs: byLabel(metrics, 'stencil_shard_handoffs_total', 'direction'),
  };
}

/**
 * One cold run with `replicas` shard members: a fresh control plane (no instance converged
 * before, no member Lease left over), the Template, namespaces and Secrets, the replicas started
 * and settled on all `replicas` members, then the N instances created and timed until Ready.
 */
export async function runShards(
  replicas: number,
  size: number,
  options: ShardRowOptions,
): Promise<ShardResult> {
  const load0 = loadavg()[0] ?? 0;
  const cluster = await benchCluster({}, { inProcessOperator: false });
  const w = workload(size);
  const operatorNamespace = `stencil-shards-${replicas}`;
  const logPaths = Array.from({ length: replicas }, (_, i) =>
    join(options.logDir, `shards-${replicas}-replica-${i + 1}.log`),
  );
  const operators: OperatorProcess[] = [];
  try {
    options.log(`R=${replicas}: preparing ${w.namespaces.length} namespaces and ${size} Secrets`);
    await prepare(cluster.user, w);
    await cluster.user.apply(namespaceObject(operatorNamespace));
    const started = performance.now();
    for (const logPath of logPaths)
      operators.push(
        await startOperatorProcess({
          kubeconfig: cluster.plane.kubeconfigPath,
          resyncSeconds: 600,
          logPath,
          logLevel: 'info',
          extraArgs: ['--shards=auto', `--operator-namespace=${operatorNamespace}`],
        }),
      );
    await until(async () => {
      await sleep(250);
      return logPaths.every((p) => settledMembers(p) === replicas);
    }, 120_000);
    const settleSeconds = (performance.now() - started) / 1000;
    const idle = await Promise.all(
      operators.map(async (o) => total(await o.scrape(), 'stencil_process_resident_memory_bytes')),
    );
    options.log(`R=${replicas}: settled after ${settleSeconds.toFixed(1)} s; cold converge`);
    const cold = await coldConverge(cluster, w);
    options.log(`R=${replicas}: all Ready after ${cold.convergeSeconds.toFixed(1)} s; settling`);
    for (const o of operators) await settled(o);
    const perReplica = await Promise.all(
      operators.map(async (o, i) => figures(await o.scrape(), idle[i]!)),
    );
    return {
      replicas,
      size,
      namespaces: w.namespaces.length,
      ...cold,
      settleSeconds,
      perReplica,
      load: [load0, loadavg()[0] ?? 0],
    };
  } finally {
    await Promise.all(operators.map((o) => o.stop()));
    await cluster.stop();
  }
}

// `stencil run --shards auto` replicas as processes for the sharding tests: started with debug
// JSON logs kept in memory, observed through their /metrics and those logs. The logs give, per
// replica, which keys it reconciled and when (a `reconciled` line is written as a pass ends and
// carries its duration), so a test can tell who reconciled what and whether two overlapped.
import { freePort } from '../../../tools/control-plane/control-plane.ts';
import { spawnStencilRun, type StencilProcess } from './stencil-process.ts';

export interface ShardReplica extends StencilProcess {
  name: string;
  metricsPort: number;
}

export interface ShardReplicaOptions {
  namespaces: string[];
  operatorNamespace: string;
  leaseDurationSeconds: number;
  resyncSeconds: number;
}

export async function startShardReplica(
  name: string,
  options: ShardReplicaOptions,
): Promise<ShardReplica> {
  const metricsPort = await freePort();
  const running = spawnStencilRun([
    '--shards=auto',
    `--lease-duration=${options.leaseDurationSeconds}`,
    `--resync-period=${options.resyncSeconds}`,
    `--namespaces=${options.namespaces.join(',')}`,
    `--operator-namespace=${options.operatorNamespace}`,
    `--metrics-bind-address=127.0.0.1:${metricsPort}`,
    '--health-probe-bind-address=0',
    '--webhook-port=0',
    // One pass at a time: a wave keeps each replica busy for seconds.
    '--concurrency=1',
    '--log-level=debug',
    '--log-format=json',
  ]);
  return Object.assign(running, { name, metricsPort });
}

export const alive = (r: ShardReplica): boolean =>
  r.child.exitCode === null && r.child.signalCode === null;

export async function scrape(replica: ShardReplica): Promise<string> {
  return fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`)
    .then((res) => res.text())
    .catch(() => '');
}

/** The value of an unlabelled series (or of one label set), from a scrape. */
export function seriesValue(body: string, series: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

interface LogLine {
  time: string;
  msg: string;
  controller?: string;
  namespace?: string;
  name?: string;
  ms?: number;
  members?: string[];
}

function lines(replica: ShardReplica): LogLine[] {
  return replica.output.split('\n').flatMap((l) => {
    if (!l.startsWith('{')) return [];
    try {
      return [JSON.parse(l) as LogLine];
    } catch {
      return [];
    }
  });
}

/** The member list of the last view this replica settled on. */
export function settledMembers(replica: ShardReplica): string[] | undefined {
  return lines(replica)
    .filter((l) => l.msg === 'shard view settled')
    .at(-1)?.members;
}

/** One pass over an instance key, from its log line: [start, end] on this machine's clock. */
export interface Pass {
  replica: string;
  key: string;
  start: number;
  end: number;
}

/** Every instance pass a replica logged (done, failed, or aborted because the key moved). */
export function instancePasses(replica: ShardReplica): Pass[] {
  return lines(replica).flatMap((l) =>
    l.controller === 'templateinstance' && typeof l.ms === 'number'
      ? [
          {
            replica: replica.name,
            key: `${l.namespace}/${l.name}`,
            start: Date.parse(l.time) - l.ms,
            end: Date.parse(l.time),
          },
        ]
      : [],
  );
}

/** Pairs of passes over one key by two replicas whose times overlap. */
export function overlappingPasses(passes: Pass[]): [Pass, Pass][] {
  const byKey = new Map<string, Pass[]>();
  for (const p of passes) byKey.set(p.key, [...(byKey.get(p.key) ?? []), p]);
  const overlaps: [Pass, Pass][] = [];
  for (const list of byKey.values()) {
    list.sort((a, b) => a.start - b.start);
    for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length && list[j]!.start < list[i]!.end; j++)
        if (list[j]!.replica !== list[i]!.replica) overlaps.push([list[i]!, list[j]!]);
  }
  return overlaps;
}

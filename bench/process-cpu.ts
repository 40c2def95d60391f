// Where a timed phase's CPU went, by process: the API server and etcd, the operator, and this
// benchmark (its creators, or the limit's client). On 2 cores every phase of the scale row is
// CPU-bound, so these shares, not the request counts alone, say why one phase takes longer than
// another. Read from /proc (Linux); elsewhere the figures are left out.
import { readFileSync } from 'node:fs';
import type { ControlPlane } from '../tools/control-plane/control-plane.ts';

/** USER_HZ: the unit of /proc/<pid>/stat times, 100 on every Linux the benchmark runs on. */
const TICKS_PER_SECOND = 100;

/** utime + stime of a process, all its threads, in ms; undefined when it cannot be read. */
function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // The command name (field 2) may hold spaces and parentheses: count from its closing one.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** CPU time by role at one moment, in ms. */
export interface CpuReading {
  server: number;
  operator: number;
  bench: number;
  at: number;
}

/** CPU per instance over a phase, in ms, and the cores kept busy on average. */
export interface CpuShare {
  server: number;
  operator: number;
  bench: number;
  cores: number;
}

export class ProcessCpu {
  constructor(
    /** Its kube-apiserver and etcd are the server side. */
    private readonly plane: ControlPlane,
    /** The operator process running at a reading, if any (none during the limit and the floor). */
    private readonly operator: () => { pid: number } | undefined = () => undefined,
  ) {}

  /** Now, or undefined where /proc cannot be read. */
  read(): CpuReading | undefined {
    const sum = (pids: (number | undefined)[]): number | undefined => {
      let total = 0;
      for (const pid of pids) {
        const ms = processCpuMs(pid);
        if (ms === undefined) return undefined;
        total += ms;
      }
      return total;
    };
    const pids = this.plane.pids();
    const running = this.operator();
    const server = sum([pids.kubeApiserver, pids.etcd]);
    const operator = sum(running ? [running.pid] : []);
    if (server === undefined || operator === undefined) return undefined;
    const own = process.cpuUsage();
    return { server, operator, bench: (own.user + own.system) / 1000, at: performance.now() };
  }

  /** What went to each role between two readings, per instance of `size`. */
  static share(
    from: CpuReading | undefined,
    to: CpuReading | undefined,
    size: number,
  ): CpuShare | undefined {
    if (!from || !to) return undefined;
    const server = to.server - from.server;
    const operator = to.operator - from.operator;
    const bench = to.bench - from.bench;
    return {
      server: server / size,
      operator: operator / size,
      bench: bench / size,
      cores: (server + operator + bench) / (to.at - from.at),
    };
  }
}

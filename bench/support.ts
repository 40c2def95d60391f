// Shared set-up for the benchmarks that need a cluster: a fresh control plane with the CRDs, a
// user client, and the operator running in this process.
import type { KubeObject } from '../src/api/object-meta.ts';
import { API_VERSION } from '../src/api/well-known.ts';
import { KubeCluster } from '../src/kube/cluster.ts';
import { connect } from '../src/kube/connection.ts';
import type { KubeHttp } from '../src/kube/http.ts';
import { createLogger } from '../src/log.ts';
import { StencilOperator, type OperatorOptions } from '../src/operator/stencil-operator.ts';
import { startControlPlane, type ControlPlane } from '../tools/control-plane/control-plane.ts';
import { installProjectCrds } from '../tools/control-plane/crds.ts';

export interface BenchCluster {
  plane: ControlPlane;
  user: KubeCluster;
  /** The user's HTTP client, for watches the benchmark opens itself. */
  userHttp: KubeHttp;
  /** A client with the operator's credentials and field manager (for the limit script). */
  admin: KubeCluster;
  /** Absent when the benchmark runs the operator as its own process. */
  operator?: StencilOperator;
  stop(): Promise<void>;
}

export async function benchCluster(
  options: Partial<OperatorOptions> = {},
  {
    inProcessOperator = true,
    installCrds = installProjectCrds,
  }: {
    inProcessOperator?: boolean;
    /** Stencil's CRDs unless told (the kro peer row installs kro's). */
    installCrds?: (plane: ControlPlane) => Promise<void>;
  } = {},
): Promise<BenchCluster> {
  const plane = await startControlPlane({ log: (line) => console.error(line) });
  await installCrds(plane);
  const userConnection = await connect(plane.userKubeconfigPath);
  const user = new KubeCluster(userConnection.http, 'bench', 'bench-user');
  const connection = await connect(plane.kubeconfigPath);
  const operator = inProcessOperator
    ? new StencilOperator({
        connection,
        concurrency: 8,
        resyncSeconds: 3600,
        log: createLogger({ level: 'warn', format: 'text' }),
        ...options,
      })
    : undefined;
  await operator?.start();
  return {
    plane,
    user,
    userHttp: userConnection.http,
    admin: connection.cluster,
    operator,
    stop: async () => {
      await operator?.stop(2_000);
      connection.http.close();
      userConnection.http.close();
      await plane.stop();
    },
  };
}

export async function until(check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('benchmark timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The middle value; with an even count, the mean of the two middle ones. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? NaN)
    : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

export const object = (value: Record<string, unknown>): KubeObject =>
  value as unknown as KubeObject;

/** A revert Template named `app` that renders a ConfigMap from its `password` parameter. */
export function passwordTemplate(namespace: string): KubeObject {
  return object({
    apiVersion: API_VERSION,
    kind: 'Template',
    metadata: { name: 'app', namespace },
    spec: {
      sync: { mode: 'revert' },
      parameters: [{ name: 'password' }],
      handlebars:
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{instance.name}}\ndata:\n  password: {{parameters.password}}\n',
    },
  });
}

/** What a controller's /metrics say it did: reconciles finished so far, and keys queued now. */
export interface Activity {
  reconciles: number;
  depth: number;
}

/**
 * Waits until a controller has nothing to do: empty queues and no reconcile finished for
 * `quietMs` (a key being reconciled is not in the queue, so the depth alone is not enough).
 */
export async function quietFor(
  read: () => Promise<Activity>,
  quietMs: number,
  timeoutMs: number,
): Promise<void> {
  let last = await read();
  let quietSince = performance.now();
  await until(async () => {
    await new Promise((r) => setTimeout(r, 250));
    const now = await read();
    if (now.reconciles !== last.reconciles || now.depth > 0) {
      last = now;
      quietSince = performance.now();
      return false;
    }
    return performance.now() - quietSince >= quietMs;
  }, timeoutMs);
}

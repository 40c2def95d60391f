// Connects to the API server from a kubeconfig file, $KUBECONFIG, ~/.kube/config or the
// in-cluster ServiceAccount, and builds the clients the operator shares.
import { KubeConfig } from '@kubernetes/client-node';
import { KubeCluster } from './cluster.ts';
import { KubeHttp, UNLIMITED } from './http.ts';
import { KubeListWatch } from './list-watch.ts';
import type { RateLimit } from './rate-limiter.ts';

export interface KubeConnection {
  kubeConfig: KubeConfig;
  http: KubeHttp;
  cluster: KubeCluster;
  listWatch: KubeListWatch;
}

export function loadKubeConfig(path?: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (path) kubeConfig.loadFromFile(path);
  else kubeConfig.loadFromDefault();
  return kubeConfig;
}

/** `rateLimit` is the operator's --kube-qps/--kube-burst; tests and tools go unlimited. */
export async function connect(
  path?: string,
  identity = 'stencil',
  rateLimit: RateLimit = UNLIMITED,
): Promise<KubeConnection> {
  const kubeConfig = loadKubeConfig(path);
  const http = await KubeHttp.create(kubeConfig, rateLimit);
  return {
    kubeConfig,
    http,
    cluster: new KubeCluster(http, identity),
    listWatch: new KubeListWatch(http),
  };
}

// The set-up most fault scenarios share: a control plane of their own, the operator in-process
// against it (concurrency 8, its metrics kept), and a fleet of SOAK.instances instances in revert
// mode; stopped after the file. Registers its own beforeAll/afterAll; the fields are filled in
// before the first test runs.
import { afterAll, beforeAll } from 'vitest';
import type { KubeCluster } from '../../../../src/kube/cluster.ts';
import { StencilMetrics } from '../../../../src/metrics.ts';
import type { ControlPlane } from '../../../../tools/control-plane/control-plane.ts';
import { startOperator, type RunningOperator } from '../../support/operator.ts';
import type { MetricsEndpoint } from '../../support/apiserver-requests.ts';
import { Fleet } from './fleet.ts';
import { ownControlPlane, type OwnPlane } from './own-plane.ts';
import { SOAK } from './soak.ts';

export interface FleetScenario {
  own: OwnPlane;
  plane: ControlPlane;
  user: KubeCluster;
  running: RunningOperator;
  fleet: Fleet;
  metrics: StencilMetrics;
  /** Where the API server's own metrics are read. */
  endpoint: () => MetricsEndpoint;
}

export interface FleetScenarioOptions {
  apiserverArgs?: string[];
  /** Runs before the operator starts (RBAC for the identity it runs as). */
  prepare?: (own: OwnPlane) => Promise<void>;
  /** The kubeconfig the operator runs with; default the control plane's admin. */
  operatorKubeconfig?: (plane: ControlPlane) => string;
}

export function fleetScenario(
  namespace: string,
  options: FleetScenarioOptions = {},
): FleetScenario {
  const metrics = new StencilMetrics();
  const scenario = {
    metrics,
    endpoint: () => scenario.own.endpoint(),
  } as FleetScenario;
  beforeAll(async () => {
    const own = await ownControlPlane(namespace, options.apiserverArgs);
    Object.assign(scenario, { own, plane: own.plane, user: own.user });
    await options.prepare?.(own);
    const kubeconfig = options.operatorKubeconfig?.(own.plane) ?? own.plane.kubeconfigPath;
    scenario.running = await startOperator([namespace], kubeconfig, { metrics, concurrency: 8 });
    scenario.fleet = new Fleet(own.user, namespace, { count: SOAK.instances, mode: 'revert' });
  }, 180_000);
  afterAll(async () => {
    await scenario.running?.stop();
    await scenario.plane?.stop();
  });
  return scenario;
}

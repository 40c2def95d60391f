// A control plane of a fault scenario's own (etcd and kube-apiserver it may kill, restart or
// throttle without disturbing other test files), with the CRDs installed, a namespace for the
// scenario, and the user and admin clients.
import type { KubeCluster } from '../../../../src/kube/cluster.ts';
import {
  startControlPlane,
  type ControlPlane,
} from '../../../../tools/control-plane/control-plane.ts';
import { installProjectCrds } from '../../../../tools/control-plane/crds.ts';
import { userClient } from '../../support/operator.ts';
import type { MetricsEndpoint } from '../../support/apiserver-requests.ts';

export interface OwnPlane {
  plane: ControlPlane;
  /** The test user (`tester`). */
  user: KubeCluster;
  /** The admin of the control plane. */
  admin: KubeCluster;
  /** Where the API server's own metrics are read. */
  endpoint(): MetricsEndpoint;
}

export async function ownControlPlane(
  namespace: string,
  extraApiserverArgs?: string[],
): Promise<OwnPlane> {
  const plane = await startControlPlane({ log: () => undefined, extraApiserverArgs });
  await installProjectCrds(plane);
  const user = (await userClient(plane.userKubeconfigPath)).cluster;
  const admin = (await userClient(plane.kubeconfigPath)).cluster;
  await admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  return {
    plane,
    user,
    admin,
    endpoint: () => ({ server: plane.server, kubeconfigPath: plane.kubeconfigPath }),
  };
}

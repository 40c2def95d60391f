// The controllers of a plane started with `controllers: true`: kube-controller-manager (the
// Deployment, ReplicaSet, garbage-collector, namespace, service-account controllers and the rest),
// kube-scheduler, and kwok, which plays the kubelet for fake Nodes: the pods bound to them become
// Running and Ready through kwok's default Stages (tools/control-plane/kwok/, as kwokctl ships
// them). Each runs under an identity of its own from the plane's token file.
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ControllerBinaries } from './binaries.ts';
import { send, type Endpoint } from './http.ts';
import { launch, type Managed } from './processes.ts';

/** The annotation kwok is told to manage nodes by (`--manage-nodes-with-annotation-selector`). */
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

export const FAKE_NODES = ['kwok-node-0', 'kwok-node-1'];

const STAGES_DIR = join(import.meta.dirname, 'kwok');

/** Where the controllers find the plane. */
export interface ControllerContext {
  runDir: string;
  /** The admin endpoint (creates the fake Nodes, reads readiness). */
  admin: Endpoint & { ca: string };
  /** A kubeconfig file per component, each with that component's token. */
  kubeconfigs: { kubeControllerManager: string; kubeScheduler: string; kwok: string };
  ports: { kubeControllerManager: number; kubeScheduler: number };
}

export interface RunningControllers {
  kubeControllerManager: Managed;
  kubeScheduler: Managed;
  kwok: Managed;
}

/**
 * The component's own HTTPS endpoint (/healthz, /metrics) authenticates bearer tokens through the
 * plane's TokenReview and authorizes through SubjectAccessReview. No client-certificate lookup:
 * the API server has no client CA, so ConfigMap kube-system/extension-apiserver-authentication
 * never exists and looking for it only logs an error several times a second at start-up.
 */
function delegatedAuth(kubeconfig: string): string[] {
  return [
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--authentication-skip-lookup=true',
  ];
}

export function processesOf(r: RunningControllers | undefined): Managed[] {
  return r ? [r.kubeControllerManager, r.kubeScheduler, r.kwok] : [];
}

export function kubeControllerManagerArgs(c: ControllerContext): string[] {
  const kubeconfig = c.kubeconfigs.kubeControllerManager;
  return [
    `--kubeconfig=${kubeconfig}`,
    // Its own health and metrics endpoint, authenticated and authorized through the plane.
    ...delegatedAuth(kubeconfig),
    '--bind-address=127.0.0.1',
    `--secure-port=${c.ports.kubeControllerManager}`,
    `--cert-dir=${join(c.runDir, 'kube-controller-manager-pki')}`,
    '--leader-elect=false',
    // Every default controller; the cloud ones have no cloud provider to talk to.
    '--controllers=*,-cloud-node-lifecycle-controller,-service-lb-controller,-node-route-controller',
    // All controllers act as kube-controller-manager's own identity (system:masters), not as one
    // service account each (kubeadm's default): no RBAC bootstrap to wait for.
    '--use-service-account-credentials=false',
    // The key the API server signs and checks service-account tokens with: the token controller
    // signs legacy token Secrets with it, and the API server verifies them with sa.pub.
    `--service-account-private-key-file=${join(c.runDir, 'sa.key')}`,
    // Published to every namespace as ConfigMap kube-root-ca.crt (and into token Secrets).
    `--root-ca-file=${join(c.runDir, 'pki', 'apiserver.crt')}`,
    '--cluster-name=stencil-local',
    '--kube-api-qps=200',
    '--kube-api-burst=400',
  ];
}

export function kubeSchedulerArgs(c: ControllerContext): string[] {
  const kubeconfig = c.kubeconfigs.kubeScheduler;
  return [
    `--kubeconfig=${kubeconfig}`,
    ...delegatedAuth(kubeconfig),
    '--bind-address=127.0.0.1',
    `--secure-port=${c.ports.kubeScheduler}`,
    `--cert-dir=${join(c.runDir, 'kube-scheduler-pki')}`,
    '--leader-elect=false',
  ];
}

export function kwokArgs(c: ControllerContext): string[] {
  // kwok v0.8 refuses to start without Stages; these are kwokctl's defaults (node-initialize,
  // node-heartbeat-with-lease, pod-ready, pod-complete, pod-delete).
  const stages = readdirSync(STAGES_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => `--config=${join(STAGES_DIR, f)}`);
  return [
    `--kubeconfig=${c.kubeconfigs.kwok}`,
    ...stages,
    '--manage-all-nodes=false',
    `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
    // Renews the fake nodes' Leases, so the node lifecycle controller keeps them Ready (the
    // heartbeat-with-lease Stage refreshes their status only every ten minutes).
    '--node-lease-duration-seconds=40',
    // Pod IPs; kwok's default 10.0.0.0/24 overlaps the Service range and holds 254 pods.
    '--cidr=10.244.0.0/16',
    '--node-ip=127.0.0.1',
  ];
}

export function launchControllers(
  binaries: ControllerBinaries,
  c: ControllerContext,
): RunningControllers {
  const logOf = (name: string): string => join(c.runDir, `${name}.log`);
  mkdirSync(join(c.runDir, 'kube-controller-manager-pki'), { recursive: true });
  mkdirSync(join(c.runDir, 'kube-scheduler-pki'), { recursive: true });
  return {
    kubeControllerManager: launch(
      'kube-controller-manager',
      binaries.kubeControllerManager,
      kubeControllerManagerArgs(c),
      logOf('kube-controller-manager'),
    ),
    kubeScheduler: launch(
      'kube-scheduler',
      binaries.kubeScheduler,
      kubeSchedulerArgs(c),
      logOf('kube-scheduler'),
    ),
    // HOME is the run directory: kwok also loads ~/.kwok/kwok.yaml when one exists.
    kwok: launch('kwok', binaries.kwok, kwokArgs(c), logOf('kwok'), {
      ...process.env,
      HOME: c.runDir,
    }),
  };
}

function fakeNode(name: string): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { [KWOK_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        type: 'kwok',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
      },
    },
  };
}

/** Creates the fake Nodes (kwok gives them status; it already exists after an etcd restart). */
export async function createFakeNodes(admin: Endpoint): Promise<void> {
  for (const name of FAKE_NODES) {
    const res = await send(admin, 'POST', '/api/v1/nodes', fakeNode(name));
    if (res.status !== 201 && res.status !== 409)
      throw new Error(`creating Node ${name}: ${res.status} ${res.body}`);
  }
}

interface NodeStatus {
  spec?: { taints?: { key: string; effect: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

/** Ready (kwok's node-initialize Stage) and untainted (the node lifecycle controller saw it). */
export async function fakeNodesReady(admin: Endpoint): Promise<boolean> {
  for (const name of FAKE_NODES) {
    const res = await send(admin, 'GET', `/api/v1/nodes/${name}`);
    if (res.status !== 200) return false;
    const node = JSON.parse(res.body) as NodeStatus;
    const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    const tainted = (node.spec?.taints ?? []).some((t) => t.effect !== 'PreferNoSchedule');
    if (!ready || tainted) return false;
  }
  return true;
}

/** GET /healthz of a component's own secure port (anonymous: an always-allowed path). */
export async function healthy(port: number): Promise<boolean> {
  const res = await send({ server: `https://127.0.0.1:${port}`, token: '' }, 'GET', '/healthz');
  return res.status === 200;
}

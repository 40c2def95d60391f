// A real Kubernetes control plane (etcd + kube-apiserver) on random loopback ports, for
// integration tests and `npm run local`. The API server generates its own serving certificate;
// the admin authenticates with a static token in group system:masters; RBAC is on. With
// `controllers: true` it also runs kube-controller-manager, kube-scheduler and kwok with fake
// Nodes (controllers.ts), so Deployments roll out, pods become Ready, namespaces finish deleting
// and the garbage collector follows ownerReferences.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ensureBinaries, type Binaries, type Log } from './binaries.ts';
import {
  createFakeNodes,
  fakeNodesReady,
  healthy,
  launchControllers,
  processesOf,
  type ControllerContext,
  type RunningControllers,
} from './controllers.ts';
import { describeLogs, launch, terminate, type Managed } from './processes.ts';
import { send, type Endpoint } from './http.ts';

export interface ControlPlaneOptions {
  log?: Log;
  /** Deadline for both processes to become ready; default 60 s. */
  startTimeoutMs?: number;
  /** Extra kube-apiserver flags (tests use this to provoke failures). */
  extraApiserverArgs?: string[];
  /** Write the kubeconfig here as well as in the run directory (e.g. `.local/kubeconfig`). */
  kubeconfigPath?: string;
  /**
   * Also run kube-controller-manager, kube-scheduler and kwok, and create fake Nodes
   * (controllers.ts FAKE_NODES) whose pods become Running and Ready. Resolves once both nodes are
   * Ready and the two Kubernetes components answer /healthz. Default false.
   */
  controllers?: boolean;
}

export interface ControlPlane extends Endpoint {
  ca: string;
  kubeconfigPath: string;
  /** A kubeconfig for `tester`, a second superuser who is not the operator. */
  userKubeconfigPath: string;
  /**
   * A kubeconfig for `ordinary`, in no group: only RBAC bindings give it rights, and unlike
   * system:masters it is subject to max-in-flight limits and API Priority and Fairness.
   */
  ordinaryKubeconfigPath: string;
  runDir: string;
  /** gitVersion reported by /version. */
  version: string;
  pids(): {
    etcd?: number;
    kubeApiserver?: number;
    kubeControllerManager?: number;
    kubeScheduler?: number;
    kwok?: number;
  };
  /**
   * Stops and starts kube-apiserver on the same port and data (simulates an API server restart).
   * `SIGKILL` kills it without a graceful shutdown, as a crash or an OOM kill would. It stays
   * down `downMs` (default 0) before it starts again.
   */
  restartApiserver(signal?: 'SIGTERM' | 'SIGKILL', downMs?: number): Promise<void>;
  /**
   * SIGKILLs etcd and starts it again on the same port and data after `downMs` (default 0); the
   * API server answers 5xx meanwhile.
   */
  restartEtcd(downMs?: number): Promise<void>;
  /** Compacts etcd to its current revision (physically), so older resourceVersions are gone (410). */
  compactEtcd(): Promise<number>;
  stop(): Promise<void>;
}

const RUN_PREFIX = 'stencil-cp-';

function baseDir(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
}

/** A loopback port that was free a moment ago (bind it soon; clashes are retried by callers). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (killed, not yet reaped by PID 1) holds no ports and no memory.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Removes run directories (and their processes) left behind by runs whose owner died. */
function sweepStaleRuns(log: Log): void {
  for (const entry of readdirSync(baseDir())) {
    if (!entry.startsWith(RUN_PREFIX)) continue;
    const dir = join(baseDir(), entry);
    const owner = Number(readFileOr(join(dir, 'owner.pid'), '0'));
    if (owner && isAlive(owner)) continue;
    for (const pid of readFileOr(join(dir, 'children.pids'), '')
      .split(/\s+/)
      .filter(Boolean)
      .map(Number)) {
      if (isAlive(pid)) {
        log(`killing leftover control-plane process ${pid} from ${dir}`);
        process.kill(pid, 'SIGKILL');
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

function readFileOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return fallback;
  }
}

function hasDefaultRoute(): boolean {
  return readFileOr('/proc/net/route', '')
    .split('\n')
    .slice(1)
    .some((line) => line.split(/\s+/)[1] === '00000000');
}

async function waitUntil(
  what: string,
  deadline: number,
  processes: Managed[],
  check: () => Promise<boolean>,
): Promise<void> {
  for (;;) {
    const dead = processes.find((m) => m.exited !== undefined);
    if (dead)
      throw new Error(
        `${dead.name} exited (${dead.exited}) while waiting for ${what}\n${describeLogs(processes)}`,
      );
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}\n${describeLogs(processes)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

function kubeconfig(server: string, ca: string, token: string, user = 'admin'): string {
  const caData = Buffer.from(ca).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '  - name: stencil-local',
    '    cluster:',
    `      server: ${server}`,
    `      certificate-authority-data: ${caData}`,
    'users:',
    `  - name: ${user}`,
    '    user:',
    `      token: ${token}`,
    'contexts:',
    '  - name: stencil-local',
    `    context: { cluster: stencil-local, user: ${user}, namespace: default }`,
    'current-context: stencil-local',
    '',
  ].join('\n');
}

interface Layout {
  runDir: string;
  etcdPort: number;
  peerPort: number;
  apiPort: number;
  token: string;
  userToken: string;
  ordinaryToken: string;
  /** Tokens of the controllers' own identities (used only with `controllers: true`). */
  controllerTokens: { kubeControllerManager: string; kubeScheduler: string; kwok: string };
}

function etcdArgs(l: Layout): string[] {
  const client = `http://127.0.0.1:${l.etcdPort}`;
  return [
    `--data-dir=${join(l.runDir, 'etcd-data')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=http://127.0.0.1:${l.peerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${l.peerPort}`,
    `--initial-cluster=default=http://127.0.0.1:${l.peerPort}`,
    '--unsafe-no-fsync=true',
    '--log-level=warn',
  ];
}

function apiserverArgs(l: Layout, extra: string[]): string[] {
  const pki = join(l.runDir, 'pki');
  return [
    `--etcd-servers=http://127.0.0.1:${l.etcdPort}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${l.apiPort}`,
    `--cert-dir=${pki}`,
    `--token-auth-file=${join(l.runDir, 'tokens.csv')}`,
    '--authorization-mode=RBAC',
    `--service-account-issuer=https://127.0.0.1:${l.apiPort}`,
    `--service-account-key-file=${join(l.runDir, 'sa.pub')}`,
    `--service-account-signing-key-file=${join(l.runDir, 'sa.key')}`,
    '--service-cluster-ip-range=10.0.0.0/16',
    '--disable-admission-plugins=ServiceAccount',
    '--allow-privileged=true',
    // Without a default route the API server cannot pick an address to advertise; this one is
    // only written into the `kubernetes` Service's endpoints, which nothing here connects to.
    ...(hasDefaultRoute()
      ? []
      : ['--advertise-address=10.0.1.1', '--endpoint-reconciler-type=none']),
    ...extra,
  ];
}

function prepareRunDir(): Layout & { runDir: string } {
  const runDir = mkdtempSync(join(baseDir(), RUN_PREFIX));
  writeFileSync(join(runDir, 'owner.pid'), String(process.pid));
  mkdirSync(join(runDir, 'pki'));
  const token = randomBytes(24).toString('hex');
  const userToken = randomBytes(24).toString('hex');
  const ordinaryToken = randomBytes(24).toString('hex');
  // Two superusers: `admin` (the operator in tests and local runs) and `tester` (a person, whose
  // edits strict mode must tell apart from the operator's).
  // The controllers' identities: kube-controller-manager acts for every controller
  // (--use-service-account-credentials=false) and so needs every right; kube-scheduler has its
  // bootstrap RBAC roles, as in a real cluster; kwok writes node and pod status.
  const controllerTokens = {
    kubeControllerManager: randomBytes(24).toString('hex'),
    kubeScheduler: randomBytes(24).toString('hex'),
    kwok: randomBytes(24).toString('hex'),
  };
  const tokens = [
    `${token},admin,admin-uid,system:masters`,
    `${userToken},tester,tester-uid,system:masters`,
    `${ordinaryToken},ordinary,ordinary-uid`,
    `${controllerTokens.kubeControllerManager},system:kube-controller-manager,kcm-uid,system:masters`,
    `${controllerTokens.kubeScheduler},system:kube-scheduler,scheduler-uid`,
    `${controllerTokens.kwok},kwok-controller,kwok-uid,system:masters`,
    '',
  ].join('\n');
  writeFileSync(join(runDir, 'tokens.csv'), tokens, { mode: 0o600 });
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(join(runDir, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(join(runDir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
  return {
    runDir,
    token,
    userToken,
    ordinaryToken,
    controllerTokens,
    etcdPort: 0,
    peerPort: 0,
    apiPort: 0,
  };
}

async function startApiserver(
  binaries: Binaries,
  layout: Layout,
  etcd: Managed,
  options: ControlPlaneOptions,
): Promise<{ apiserver: Managed; ca: string }> {
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  const apiserver = launch(
    'kube-apiserver',
    binaries.kubeApiserver,
    apiserverArgs(layout, options.extraApiserverArgs ?? []),
    join(layout.runDir, 'kube-apiserver.log'),
  );
  const server = `https://127.0.0.1:${layout.apiPort}`;
  const certPath = join(layout.runDir, 'pki', 'apiserver.crt');
  const processes = [etcd, apiserver];
  await waitUntil('kube-apiserver /readyz', deadline, processes, async () => {
    if (!existsSync(certPath)) return false;
    const res = await send(
      { server, token: layout.token, ca: readFileSync(certPath, 'utf8') },
      'GET',
      '/readyz',
    );
    return res.status === 200;
  });
  const ca = readFileSync(certPath, 'utf8');
  await waitUntil('namespace default', deadline, processes, async () => {
    const res = await send(
      { server, token: layout.token, ca },
      'GET',
      '/api/v1/namespaces/default',
    );
    return res.status === 200;
  });
  return { apiserver, ca };
}

async function startOnce(binaries: Binaries, options: ControlPlaneOptions): Promise<ControlPlane> {
  const log = options.log ?? console.log;
  const started = Date.now();
  const layout = prepareRunDir();
  [layout.etcdPort, layout.peerPort, layout.apiPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
  ]);
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  let etcd = launch('etcd', binaries.etcd, etcdArgs(layout), join(layout.runDir, 'etcd.log'));
  let apiserver: Managed | undefined;
  let controllers: RunningControllers | undefined;
  const recordPids = (): void =>
    writeFileSync(
      join(layout.runDir, 'children.pids'),
      [etcd.child.pid, apiserver?.child.pid, ...processesOf(controllers).map((m) => m.child.pid)]
        .filter(Boolean)
        .join(' '),
    );
  recordPids();
  const stopAll = async (): Promise<void> => {
    // The controllers first, while the API server still answers them.
    await Promise.all(processesOf(controllers).map((m) => terminate(m)));
    if (apiserver) await terminate(apiserver);
    await terminate(etcd);
  };
  const etcdHealthy = (until: number): Promise<void> =>
    waitUntil('etcd /health', until, [etcd], async () => {
      const res = await send(
        { server: `http://127.0.0.1:${layout.etcdPort}`, token: '' },
        'GET',
        '/health',
      );
      return res.status === 200;
    });
  try {
    await etcdHealthy(deadline);
    const started2 = await startApiserver(binaries, layout, etcd, options);
    apiserver = started2.apiserver;
    recordPids();
    const server = `https://127.0.0.1:${layout.apiPort}`;
    const ca = started2.ca;
    const version = JSON.parse(
      (await send({ server, token: layout.token, ca }, 'GET', '/version')).body,
    ) as { gitVersion: string };
    const config = kubeconfig(server, ca, layout.token);
    const kubeconfigPath = join(layout.runDir, 'kubeconfig');
    writeFileSync(kubeconfigPath, config, { mode: 0o600 });
    const ordinaryKubeconfigPath = join(layout.runDir, 'kubeconfig-ordinary');
    writeFileSync(
      ordinaryKubeconfigPath,
      kubeconfig(server, ca, layout.ordinaryToken, 'ordinary'),
      { mode: 0o600 },
    );
    const userKubeconfigPath = join(layout.runDir, 'kubeconfig-tester');
    writeFileSync(userKubeconfigPath, kubeconfig(server, ca, layout.userToken, 'tester'), {
      mode: 0o600,
    });
    if (options.kubeconfigPath) writeFileSync(options.kubeconfigPath, config, { mode: 0o600 });
    if (options.controllers) {
      const upstream = [etcd, apiserver];
      controllers = await startControllers(binaries, layout, { server, ca }, upstream, options);
      recordPids();
    }
    log(
      `control plane ready in ${((Date.now() - started) / 1000).toFixed(1)}s: kube-apiserver ${version.gitVersion} at ${server}${controllers ? ', with kube-controller-manager, kube-scheduler and kwok' : ''} (binaries: ${binaries.source})`,
    );
    const plane: ControlPlane = {
      server,
      token: layout.token,
      ca,
      kubeconfigPath,
      userKubeconfigPath,
      ordinaryKubeconfigPath,
      runDir: layout.runDir,
      version: version.gitVersion,
      pids: () => ({
        etcd: etcd.child.pid,
        kubeApiserver: apiserver?.child.pid,
        kubeControllerManager: controllers?.kubeControllerManager.child.pid,
        kubeScheduler: controllers?.kubeScheduler.child.pid,
        kwok: controllers?.kwok.child.pid,
      }),
      restartEtcd: async (downMs = 0) => {
        await killNow(etcd);
        if (downMs > 0) await delay(downMs);
        etcd = launch('etcd', binaries.etcd, etcdArgs(layout), join(layout.runDir, 'etcd.log'));
        recordPids();
        await etcdHealthy(Date.now() + 30_000);
      },
      compactEtcd: async () => {
        const etcdEndpoint = { server: `http://127.0.0.1:${layout.etcdPort}`, token: '' };
        // A range read of any key answers with the store's current revision in its header.
        const range = await send(etcdEndpoint, 'POST', '/v3/kv/range', { key: 'AA==' });
        const revision = Number(
          (JSON.parse(range.body) as { header?: { revision?: string } }).header?.revision,
        );
        const compacted = await send(etcdEndpoint, 'POST', '/v3/kv/compaction', {
          revision,
          physical: true,
        });
        if (compacted.status !== 200) throw new Error(`etcd compaction: ${compacted.body}`);
        return revision;
      },
      restartApiserver: async (signal = 'SIGTERM', downMs = 0) => {
        if (apiserver && signal === 'SIGKILL') await killNow(apiserver);
        else if (apiserver) await terminate(apiserver);
        if (downMs > 0) await delay(downMs);
        apiserver = (await startApiserver(binaries, layout, etcd, options)).apiserver;
        recordPids();
      },
      stop: async () => {
        await stopAll();
        rmSync(layout.runDir, { recursive: true, force: true });
      },
    };
    return plane;
  } catch (err) {
    await stopAll();
    rmSync(layout.runDir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Starts kube-controller-manager, kube-scheduler and kwok against a ready API server, creates the
 * fake Nodes, and waits until the nodes are Ready and untainted and both components are healthy.
 */
async function startControllers(
  binaries: Binaries,
  layout: Layout,
  { server, ca }: { server: string; ca: string },
  upstream: Managed[],
  options: ControlPlaneOptions,
): Promise<RunningControllers> {
  if (!binaries.controllers) throw new Error('controllers asked for, but no controller binaries');
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  const [kcmPort, schedulerPort] = await Promise.all([freePort(), freePort()]);
  const kubeconfigFor = (name: string, token: string): string => {
    const path = join(layout.runDir, `kubeconfig-${name}`);
    writeFileSync(path, kubeconfig(server, ca, token, name), { mode: 0o600 });
    return path;
  };
  const context: ControllerContext = {
    runDir: layout.runDir,
    admin: { server, token: layout.token, ca },
    kubeconfigs: {
      kubeControllerManager: kubeconfigFor(
        'kube-controller-manager',
        layout.controllerTokens.kubeControllerManager,
      ),
      kubeScheduler: kubeconfigFor('kube-scheduler', layout.controllerTokens.kubeScheduler),
      kwok: kubeconfigFor('kwok', layout.controllerTokens.kwok),
    },
    ports: { kubeControllerManager: kcmPort, kubeScheduler: schedulerPort },
  };
  const running = launchControllers(binaries.controllers, context);
  const processes = [...upstream, ...processesOf(running)];
  try {
    await createFakeNodes(context.admin);
    await waitUntil('kube-controller-manager /healthz', deadline, processes, () =>
      healthy(kcmPort),
    );
    await waitUntil('kube-scheduler /healthz', deadline, processes, () => healthy(schedulerPort));
    await waitUntil('fake nodes Ready (kwok)', deadline, processes, () =>
      fakeNodesReady(context.admin),
    );
  } catch (err) {
    await Promise.all(processesOf(running).map((m) => terminate(m)));
    throw err;
  }
  return running;
}

/** SIGKILL, no grace: what a crash looks like to clients (connections reset mid-request). */
async function killNow(m: Managed): Promise<void> {
  if (m.exited !== undefined || m.child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => m.child.once('exit', () => resolve()));
  m.child.kill('SIGKILL');
  await exited;
}

/**
 * Builds (if needed) and starts etcd + kube-apiserver, resolving once the API server is ready.
 * Retries twice when a randomly chosen port was taken meanwhile.
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = options.log ?? console.log;
  sweepStaleRuns(log);
  const binaries = await ensureBinaries(log, { controllers: options.controllers === true });
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(binaries, options);
    } catch (err) {
      const portClash = /address already in use/.test(String(err));
      if (!portClash || attempt >= 3) throw err;
      log(`control plane start attempt ${attempt} hit a port clash; retrying`);
    }
  }
}

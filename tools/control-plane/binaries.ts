// Locates or builds the Go binaries the tests and tools need: kube-apiserver, etcd (the control
// plane) and helm (chart tests, `npm run generate`). Versions come from the Go tool modules under
// tools/; built binaries live in a gitignored cache keyed by version, so a second run reuses them.
// Users with envtest assets point STENCIL_ASSETS_DIR or KUBEBUILDER_ASSETS at a directory holding
// kube-apiserver and etcd and skip the build; STENCIL_HELM points at an existing helm binary.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';

export interface Binaries {
  kubeApiserver: string;
  etcd: string;
  /** Where they came from, for the log line. */
  source: 'assets' | 'cache' | 'built';
}

export type Log = (line: string) => void;

const repoRoot = join(import.meta.dirname, '..', '..');
const toolsDir = join(repoRoot, 'tools');

interface Tool {
  binary: 'kube-apiserver' | 'etcd' | 'helm' | 'kubectl';
  moduleDir: string;
  pkg: string;
  version: string;
  ldflags: string;
}

/** Reads `<module> vX.Y.Z` from a tool module's go.mod. */
export function requiredVersion(moduleDir: string, module: string): string {
  const goMod = readFileSync(join(moduleDir, 'go.mod'), 'utf8');
  const escaped = module.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const match = new RegExp(`^\\s*${escaped}\\s+(v\\S+)`, 'm').exec(goMod);
  if (!match?.[1]) throw new Error(`${moduleDir}/go.mod does not require ${module}`);
  return match[1];
}

function tools(): Tool[] {
  const kubeDir = join(toolsDir, 'kube-apiserver');
  const etcdDir = join(toolsDir, 'etcd');
  const k8s = requiredVersion(kubeDir, 'k8s.io/kubernetes');
  const [major, minor] = k8s.slice(1).split('.');
  const versionPkg = 'k8s.io/component-base/version';
  return [
    {
      binary: 'kube-apiserver',
      moduleDir: kubeDir,
      pkg: 'k8s.io/kubernetes/cmd/kube-apiserver',
      version: k8s,
      ldflags: `-s -w -X ${versionPkg}.gitVersion=${k8s} -X ${versionPkg}.gitMajor=${major} -X ${versionPkg}.gitMinor=${minor}`,
    },
    {
      binary: 'etcd',
      moduleDir: etcdDir,
      pkg: 'go.etcd.io/etcd/server/v3',
      version: requiredVersion(etcdDir, 'go.etcd.io/etcd/server/v3'),
      ldflags: '-s -w',
    },
  ];
}

export function cacheDir(): string {
  return process.env.STENCIL_CACHE_DIR ?? join(repoRoot, '.cache', 'control-plane');
}

function fromAssets(): Binaries | undefined {
  const overrideApiserver = process.env.TEST_ASSET_KUBE_APISERVER;
  const overrideEtcd = process.env.TEST_ASSET_ETCD;
  if (overrideApiserver && overrideEtcd) {
    return { kubeApiserver: overrideApiserver, etcd: overrideEtcd, source: 'assets' };
  }
  const dir = process.env.STENCIL_ASSETS_DIR ?? process.env.KUBEBUILDER_ASSETS;
  if (!dir) return undefined;
  const found = { kubeApiserver: join(dir, 'kube-apiserver'), etcd: join(dir, 'etcd') };
  for (const path of Object.values(found)) {
    if (!existsSync(path)) throw new Error(`assets directory ${dir} has no ${path}`);
  }
  return { ...found, source: 'assets' };
}

/** Returns usable binaries, building any that are missing from the cache. */
export async function ensureBinaries(log: Log = console.log): Promise<Binaries> {
  const assets = fromAssets();
  if (assets) return assets;
  let built = false;
  const paths: Record<string, string> = {};
  for (const tool of tools()) {
    const target = join(cacheDir(), `${tool.binary}-${tool.version}`, tool.binary);
    if (!existsSync(target)) {
      await build(tool, target, log);
      built = true;
    }
    paths[tool.binary] = target;
  }
  return {
    kubeApiserver: paths['kube-apiserver']!,
    etcd: paths.etcd!,
    source: built ? 'built' : 'cache',
  };
}

function helmTool(): Tool {
  const moduleDir = join(toolsDir, 'helm');
  const version = requiredVersion(moduleDir, 'helm.sh/helm/v3');
  // As helm's Makefile does: the default Capabilities.KubeVersion of `helm template` and the
  // deprecation checks of `helm lint` follow the client-go helm is built with (v0.X -> 1.X).
  const clientGo = requiredVersion(moduleDir, 'k8s.io/client-go');
  const [kubeMajor, kubeMinor] = clientGo.slice(1).split('.');
  const k8sMajor = String(Number(kubeMajor) + 1);
  const x = (pkg: string, name: string, value: string): string =>
    `-X helm.sh/helm/v3/${pkg}.${name}=${value}`;
  return {
    binary: 'helm',
    moduleDir,
    pkg: 'helm.sh/helm/v3/cmd/helm',
    version,
    ldflags: [
      '-s -w',
      x('internal/version', 'version', version),
      x('internal/version', 'gitTreeState', 'clean'),
      x('pkg/lint/rules', 'k8sVersionMajor', k8sMajor),
      x('pkg/lint/rules', 'k8sVersionMinor', kubeMinor!),
      x('pkg/chartutil', 'k8sVersionMajor', k8sMajor),
      x('pkg/chartutil', 'k8sVersionMinor', kubeMinor!),
    ].join(' '),
  };
}

/** The helm version tools/helm/go.mod pins. */
export function helmVersion(): string {
  return helmTool().version;
}

let helmPromise: Promise<string> | undefined;

/**
 * Returns the path of a helm v3 binary: `STENCIL_HELM` if set, else the cached build of the
 * version tools/helm pins, building it on first use (a cold build takes a few minutes).
 */
export function ensureHelm(log: Log = console.log): Promise<string> {
  const override = process.env.STENCIL_HELM;
  if (override) {
    if (!existsSync(override)) {
      return Promise.reject(new Error(`STENCIL_HELM=${override} does not exist`));
    }
    return Promise.resolve(override);
  }
  helmPromise ??= (async () => {
    const tool = helmTool();
    const target = join(cacheDir(), `${tool.binary}-${tool.version}`, tool.binary);
    if (!existsSync(target)) await build(tool, target, log);
    return target;
  })();
  // A failed build is not cached, so a later call retries.
  helmPromise.catch(() => (helmPromise = undefined));
  return helmPromise;
}

async function build(tool: Tool, target: string, log: Log): Promise<void> {
  const dir = join(target, '..');
  mkdirSync(dir, { recursive: true });
  // Per process, so two runs building the same binary at once cannot write one file.
  const partial = `${target}.${process.pid}.partial`;
  log(
    `building ${tool.binary} ${tool.version} with Go (first run on this machine; takes minutes)...`,
  );
  const started = Date.now();
  const args = ['build', '-trimpath', '-ldflags', tool.ldflags, '-o', partial, tool.pkg];
  const env = { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=readonly' };
  const child = spawn('go', args, {
    cwd: tool.moduleDir,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const ticker = setInterval(() => {
    const seconds = Math.round((Date.now() - started) / 1000);
    log(`  still building ${tool.binary} (${seconds}s elapsed)`);
  }, 30_000);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', resolve);
    });
    if (code !== 0)
      throw new Error(`go build of ${tool.binary} failed (exit ${code}):\n${stderr.slice(-4000)}`);
  } finally {
    clearInterval(ticker);
  }
  renameSync(partial, target);
  log(`built ${tool.binary} in ${Math.round((Date.now() - started) / 1000)}s -> ${target}`);
}

let kubectlPromise: Promise<string> | undefined;

/**
 * Returns a kubectl matching the control plane (for `npm run local`): `STENCIL_KUBECTL` if set,
 * else built from the kube-apiserver tool module, which also pins k8s.io/kubernetes/cmd/kubectl.
 */
export function ensureKubectl(log: Log = console.log): Promise<string> {
  const override = process.env.STENCIL_KUBECTL;
  if (override) return Promise.resolve(override);
  kubectlPromise ??= (async () => {
    const apiserver = tools().find((t) => t.binary === 'kube-apiserver')!;
    const tool: Tool = { ...apiserver, binary: 'kubectl', pkg: 'k8s.io/kubernetes/cmd/kubectl' };
    const target = join(cacheDir(), `${tool.binary}-${tool.version}`, tool.binary);
    if (!existsSync(target)) await build(tool, target, log);
    return target;
  })();
  kubectlPromise.catch(() => (kubectlPromise = undefined));
  return kubectlPromise;
}

// Locates or builds the Go binaries the tests and tools need: kube-apiserver, etcd (the control
// plane), kube-controller-manager, kube-scheduler and kwok (its controllers, opt-in) and helm
// (chart tests, `npm run generate`), and kro's controller (the benchmark's peer row). Versions come from the Go tool modules under tools/; built
// binaries live in a gitignored cache keyed by version, so a second run reuses them. Missing
// binaries are built in parallel: the Kubernetes ones in one `go build` (they share most of their
// packages), the other modules in go builds of their own, at most os.availableParallelism() at once.
// Users with envtest assets point STENCIL_ASSETS_DIR or KUBEBUILDER_ASSETS at a directory holding
// kube-apiserver and etcd and skip the build (the controllers are taken from there too when it has
// them, else built); STENCIL_HELM points at an existing helm binary.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

export interface ControllerBinaries {
  kubeControllerManager: string;
  kubeScheduler: string;
  kwok: string;
}

export interface Binaries {
  kubeApiserver: string;
  etcd: string;
  /** Present when asked for (`ensureBinaries(log, { controllers: true })`). */
  controllers?: ControllerBinaries;
  /** Where they came from, for the log line. */
  source: 'assets' | 'cache' | 'built';
}

export type Log = (line: string) => void;

const repoRoot = join(import.meta.dirname, '..', '..');
const toolsDir = join(repoRoot, 'tools');

type BinaryName =
  | 'kube-apiserver'
  | 'etcd'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kwok'
  | 'helm'
  | 'kubectl'
  | 'kro'
  | 'yaml-reference';

interface Tool {
  binary: BinaryName;
  moduleDir: string;
  pkg: string;
  version: string;
  ldflags: string;
}

/** Reads `<module> vX.Y.Z` from a tool module's go.mod (a require block or a require line). */
export function requiredVersion(moduleDir: string, module: string): string {
  const goMod = readFileSync(join(moduleDir, 'go.mod'), 'utf8');
  const escaped = module.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const match = new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v\\S+)`, 'm').exec(goMod);
  if (!match?.[1]) throw new Error(`${moduleDir}/go.mod does not require ${module}`);
  return match[1];
}

/** The Kubernetes binaries: all built from the kube-apiserver tool module, with one ldflags. */
function kubernetesTool(binary: BinaryName): Tool {
  const moduleDir = join(toolsDir, 'kube-apiserver');
  const k8s = requiredVersion(moduleDir, 'k8s.io/kubernetes');
  const [major, minor] = k8s.slice(1).split('.');
  const versionPkg = 'k8s.io/component-base/version';
  return {
    binary,
    moduleDir,
    pkg: `k8s.io/kubernetes/cmd/${binary}`,
    version: k8s,
    ldflags: `-s -w -X ${versionPkg}.gitVersion=${k8s} -X ${versionPkg}.gitMajor=${major} -X ${versionPkg}.gitMinor=${minor}`,
  };
}

function tools(): Tool[] {
  const etcdDir = join(toolsDir, 'etcd');
  return [
    kubernetesTool('kube-apiserver'),
    {
      binary: 'etcd',
      moduleDir: etcdDir,
      pkg: 'go.etcd.io/etcd/server/v3',
      version: requiredVersion(etcdDir, 'go.etcd.io/etcd/server/v3'),
      ldflags: '-s -w',
    },
  ];
}

/** kube-controller-manager, kube-scheduler and kwok: what `controllers: true` runs. */
function controllerTools(): Tool[] {
  const kwokDir = join(toolsDir, 'kwok');
  return [
    kubernetesTool('kube-controller-manager'),
    kubernetesTool('kube-scheduler'),
    {
      binary: 'kwok',
      moduleDir: kwokDir,
      pkg: 'sigs.k8s.io/kwok/cmd/kwok',
      // kwok's version string is a constant of the module (consts.Version); nothing to stamp.
      version: requiredVersion(kwokDir, 'sigs.k8s.io/kwok'),
      ldflags: '-s -w',
    },
  ];
}

function cachedPath(tool: Tool): string {
  return join(cacheDir(), `${tool.binary}-${tool.version}`, tool.binary);
}

export function cacheDir(): string {
  return process.env.STENCIL_CACHE_DIR ?? join(repoRoot, '.cache', 'control-plane');
}

function assetsDir(): string | undefined {
  return process.env.STENCIL_ASSETS_DIR ?? process.env.KUBEBUILDER_ASSETS;
}

function fromAssets(): Pick<Binaries, 'kubeApiserver' | 'etcd'> | undefined {
  const overrideApiserver = process.env.TEST_ASSET_KUBE_APISERVER;
  const overrideEtcd = process.env.TEST_ASSET_ETCD;
  if (overrideApiserver && overrideEtcd) {
    return { kubeApiserver: overrideApiserver, etcd: overrideEtcd };
  }
  const dir = assetsDir();
  if (!dir) return undefined;
  const found = { kubeApiserver: join(dir, 'kube-apiserver'), etcd: join(dir, 'etcd') };
  for (const path of Object.values(found)) {
    if (!existsSync(path)) throw new Error(`assets directory ${dir} has no ${path}`);
  }
  return found;
}

export interface EnsureOptions {
  /** Also kube-controller-manager, kube-scheduler and kwok. */
  controllers?: boolean;
}

/**
 * Returns usable binaries, building any that are missing from the cache (all missing ones at
 * once, see buildAll).
 */
export async function ensureBinaries(
  log: Log = console.log,
  options: EnsureOptions = {},
): Promise<Binaries> {
  const assets = fromAssets();
  const wanted = [...(assets ? [] : tools()), ...(options.controllers ? controllerTools() : [])];
  const paths = new Map<BinaryName, string>();
  const missing: Tool[] = [];
  for (const tool of wanted) {
    const inAssets = assetsDir() && join(assetsDir()!, tool.binary);
    const path = inAssets && existsSync(inAssets) ? inAssets : cachedPath(tool);
    paths.set(tool.binary, path);
    if (!existsSync(path)) missing.push(tool);
  }
  await buildAll(missing, log);
  const controllers: ControllerBinaries | undefined = options.controllers
    ? {
        kubeControllerManager: paths.get('kube-controller-manager')!,
        kubeScheduler: paths.get('kube-scheduler')!,
        kwok: paths.get('kwok')!,
      }
    : undefined;
  return {
    kubeApiserver: assets?.kubeApiserver ?? paths.get('kube-apiserver')!,
    etcd: assets?.etcd ?? paths.get('etcd')!,
    ...(controllers ? { controllers } : {}),
    source: missing.length > 0 ? 'built' : assets ? 'assets' : 'cache',
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

const building = new Map<BinaryName, Promise<string>>();

/**
 * The cached binary of `tool`, built on first use; one build per process however many ask at
 * once. A failed build is not remembered, so a later call retries.
 */
function buildOnce(tool: Tool, log: Log): Promise<string> {
  let promise = building.get(tool.binary);
  if (!promise) {
    promise = (async () => {
      const target = cachedPath(tool);
      if (!existsSync(target)) await buildAll([tool], log);
      return target;
    })();
    building.set(tool.binary, promise);
    promise.catch(() => building.delete(tool.binary));
  }
  return promise;
}

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
  return buildOnce(helmTool(), log);
}

/**
 * tools/yaml-reference: sigs.k8s.io/yaml's reading of YAML, as kubectl and the API server read
 * it, for the table test of Stencil's reader (docs/adr/0036). Versioned by the module it pins and
 * the hash of its source, so an edit of main.go builds anew.
 */
export function ensureYamlReference(log: Log = console.log): Promise<string> {
  const moduleDir = join(toolsDir, 'yaml-reference');
  const source = createHash('sha256')
    .update(readFileSync(join(moduleDir, 'main.go')))
    .digest('hex')
    .slice(0, 12);
  const version = `${requiredVersion(moduleDir, 'sigs.k8s.io/yaml')}-${source}`;
  return buildOnce(
    { binary: 'yaml-reference', moduleDir, pkg: '.', version, ldflags: '-s -w' },
    log,
  );
}

/**
 * Builds `missing` into the cache. Tools of one module with the same ldflags share one `go build`
 * (the Kubernetes binaries compile client-go, apimachinery and the rest once, not once each);
 * the groups run concurrently, at most os.availableParallelism() at a time, each with Go's own
 * default package parallelism.
 */
async function buildAll(missing: Tool[], log: Log): Promise<void> {
  const groups = new Map<string, Tool[]>();
  for (const tool of missing) {
    const key = `${tool.moduleDir}\0${tool.ldflags}`;
    groups.set(key, [...(groups.get(key) ?? []), tool]);
  }
  const queue = [...groups.values()];
  if (queue.length === 0) return;
  const names = missing.map((t) => `${t.binary} ${t.version}`).join(', ');
  log(`building ${names} with Go (first run on this machine; takes minutes)...`);
  const started = Date.now();
  const running = new Set<string>();
  const ticker = setInterval(() => {
    const seconds = Math.round((Date.now() - started) / 1000);
    log(`  still building ${[...running].join('; ')} (${seconds}s elapsed)`);
  }, 30_000);
  const failures: Error[] = [];
  const worker = async (): Promise<void> => {
    for (let group = queue.shift(); group; group = queue.shift()) {
      const label = group.map((t) => t.binary).join(', ');
      running.add(label);
      try {
        await buildGroup(group, log);
      } catch (err) {
        failures.push(err as Error);
      } finally {
        running.delete(label);
      }
    }
  };
  const width = Math.max(1, Math.min(availableParallelism(), queue.length));
  try {
    await Promise.all(Array.from({ length: width }, worker));
  } finally {
    clearInterval(ticker);
  }
  if (failures.length > 0) throw new Error(failures.map((e) => e.message).join('\n'));
}

async function buildGroup(group: Tool[], log: Log): Promise<void> {
  const { moduleDir, ldflags } = group[0]!;
  const started = Date.now();
  mkdirSync(cacheDir(), { recursive: true });
  // Per build, so two runs building the same binary at once cannot write one file.
  const scratch = mkdtempSync(join(cacheDir(), `.build-${process.pid}-`));
  // One package: `-o file`. Several: `-o dir/`, where Go names each binary after its package.
  const output = group.length === 1 ? join(scratch, group[0]!.binary) : `${scratch}/`;
  const args = [
    'build',
    '-trimpath',
    '-ldflags',
    ldflags,
    '-o',
    output,
    ...group.map((t) => t.pkg),
  ];
  const env = { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=readonly' };
  const label = group.map((t) => t.binary).join(', ');
  try {
    const child = spawn('go', args, { cwd: moduleDir, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', resolve);
    });
    if (code !== 0)
      throw new Error(`go build of ${label} failed (exit ${code}):\n${stderr.slice(-4000)}`);
    for (const tool of group) {
      const target = cachedPath(tool);
      mkdirSync(join(target, '..'), { recursive: true });
      renameSync(join(scratch, tool.binary), target);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  log(`built ${label} in ${seconds}s -> ${group.map(cachedPath).join(', ')}`);
}

/**
 * Returns a kubectl matching the control plane (for `npm run local`): `STENCIL_KUBECTL` if set,
 * else built from the kube-apiserver tool module, which also pins k8s.io/kubernetes/cmd/kubectl.
 */
export function ensureKubectl(log: Log = console.log): Promise<string> {
  const override = process.env.STENCIL_KUBECTL;
  if (override) return Promise.resolve(override);
  return buildOnce(kubernetesTool('kubectl'), log);
}

const KRO_MODULE = 'github.com/kubernetes-sigs/kro';

function kroTool(): Tool {
  const moduleDir = join(toolsDir, 'kro');
  return {
    binary: 'kro',
    moduleDir,
    // kro's only command; its Makefile builds it as `controller` and stamps no version.
    pkg: `${KRO_MODULE}/cmd/controller`,
    version: requiredVersion(moduleDir, KRO_MODULE),
    ldflags: '-s -w',
  };
}

/** The kro version tools/kro/go.mod pins. */
export function kroVersion(): string {
  return kroTool().version;
}

/**
 * Returns the path of kro's controller (the benchmark's peer row): the cached build of the version
 * tools/kro pins, built on first use.
 */
export function ensureKro(log: Log = console.log): Promise<string> {
  return buildOnce(kroTool(), log);
}

/**
 * kro's CRDs (ResourceGraphDefinition, GraphRevision) as its module ships them in `helm/crds`:
 * the module is downloaded into the Go module cache if it is not there yet.
 */
export async function kroCrdFiles(): Promise<string[]> {
  const { moduleDir } = kroTool();
  const child = spawn('go', ['mod', 'download', '-json', KRO_MODULE], {
    cwd: moduleDir,
    env: { ...process.env, GOFLAGS: '-mod=readonly' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', resolve);
  });
  if (code !== 0) throw new Error(`go mod download ${KRO_MODULE} failed (exit ${code}): ${stderr}`);
  const dir = (JSON.parse(out) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`go mod download ${KRO_MODULE} reported no directory`);
  const crds = join(dir, 'helm', 'crds');
  return readdirSync(crds)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => join(crds, f));
}

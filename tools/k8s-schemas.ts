// The offline schemas of the built-in kinds (issue #26, ADR 0029), for `npm run generate`: from
// the OpenAPI v3 documents of the k8s.io/kubernetes module that builds the test API server
// (api/openapi-spec/v3), with the enums a default API server serves added back, compacted to
// what validation needs and written as one JSON file per Go package of definitions plus an index.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import {
  compactDefinition,
  kindsOfDefinition,
  packageOf,
  refsOf,
  type GroupVersionKind,
  type Refuse,
} from '../src/engine/object-schema/openapi-definitions.ts';
import { requiredVersion } from './control-plane/binaries.ts';

/** Where the bundle is written, relative to the repository root. */
export const K8S_SCHEMAS_DIR = 'schemas/kubernetes';

type Node = Record<string, unknown>;

interface OpenApiDocument {
  components?: { schemas?: Record<string, Node> };
}

interface EnumAt {
  at: string[];
  enum: unknown[];
}

const root = join(import.meta.dirname, '..');
const apiserverModule = join(root, 'tools', 'kube-apiserver');
const run = promisify(execFile);
/** A keyword, format or shape the dialect does not know stops generation: it is to be decided. */
const refuse: Refuse = (where, what) => {
  throw new Error(`${where}: ${what}`);
};

/** The module's directory, downloaded through the Go module proxy on a machine without it. */
async function kubernetesModule(version: string): Promise<string> {
  const { stdout } = await run('go', ['mod', 'download', '-json', `k8s.io/kubernetes@${version}`], {
    cwd: apiserverModule,
    maxBuffer: 16 * 1024 * 1024,
  });
  const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`go mod download k8s.io/kubernetes@${version} gave no directory`);
  return dir;
}

/** The enums of the Go OpenAPI definitions (tools/kube-apiserver/openapi-enums). */
async function servedEnums(): Promise<Record<string, EnumAt[]>> {
  // The flags and environment of the control-plane build (tools/control-plane/binaries.ts), so
  // the Kubernetes packages it compiled come from the Go build cache instead of being compiled
  // again (minutes on a clean machine).
  const { stdout } = await run('go', ['run', '-trimpath', './openapi-enums'], {
    cwd: apiserverModule,
    env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=readonly' },
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout) as Record<string, EnumAt[]>;
}

/** `apis__apps__v1_openapi.json` → `apps/v1`, `api__v1_openapi.json` → `v1`; else undefined. */
function groupVersionOf(file: string): string | undefined {
  const match = /^(?:api__(v\w+)|apis__([^_]+)__(v\w+))_openapi\.json$/.exec(file);
  if (!match) return undefined;
  return match[1] ?? `${match[2]}/${match[3]}`;
}

function stabilityOf(version: string): 'alpha' | 'beta' | 'ga' {
  if (/alpha/.test(version)) return 'alpha';
  if (/beta/.test(version)) return 'beta';
  return 'ga';
}

/** Every definition of every group-version document, each once (they repeat across documents). */
function readDefinitions(specDir: string): {
  definitions: Map<string, Node>;
  groupVersions: string[];
} {
  const definitions = new Map<string, Node>();
  const seen = new Map<string, string>();
  const groupVersions: string[] = [];
  for (const file of readdirSync(specDir).sort()) {
    const groupVersion = groupVersionOf(file);
    if (!groupVersion) continue;
    groupVersions.push(groupVersion);
    const document = JSON.parse(readFileSync(join(specDir, file), 'utf8')) as OpenApiDocument;
    for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
      // The GVK list of DeleteOptions and WatchEvent names the document's own group: merged.
      const gvks = (schema['x-kubernetes-group-version-kind'] ?? []) as GroupVersionKind[];
      const previous = definitions.get(name);
      const rest = JSON.stringify({ ...schema, 'x-kubernetes-group-version-kind': undefined });
      if (previous && seen.get(name) !== rest) {
        throw new Error(
          `${name} differs between the OpenAPI documents (first seen before ${file})`,
        );
      }
      const known = (previous?.['x-kubernetes-group-version-kind'] ?? []) as GroupVersionKind[];
      const merged = [...known];
      for (const gvk of gvks) {
        if (!merged.some((k) => JSON.stringify(k) === JSON.stringify(gvk))) merged.push(gvk);
      }
      definitions.set(name, { ...schema, 'x-kubernetes-group-version-kind': merged });
      seen.set(name, rest);
    }
  }
  return { definitions, groupVersions };
}

/**
 * Adds the served enums to the definitions. Enums of `...Status` definitions are left out: the
 * API server resets status on create and its validation checks no enum there.
 */
function addEnums(definitions: Map<string, Node>, enums: Record<string, EnumAt[]>): number {
  let added = 0;
  for (const [name, list] of Object.entries(enums)) {
    const definition = definitions.get(name);
    if (!definition || name.endsWith('Status')) continue;
    for (const { at, enum: values } of list) {
      let node: Node | undefined = definition;
      for (const step of at) node = node?.[step] as Node | undefined;
      if (!node) throw new Error(`${name}: no ${at.join('.')} in the OpenAPI documents`);
      node.enum = values;
      added++;
    }
  }
  return added;
}

/** For each package, every other package its definitions reach, transitively, sorted. */
function packageDependencies(files: Map<string, Map<string, Node>>): Record<string, string[]> {
  const direct = new Map<string, Set<string>>();
  for (const [pkg, definitions] of files) {
    const refs = refsOf([...definitions.values()], new Set());
    direct.set(pkg, new Set([...refs].map(packageOf).filter((p) => p !== pkg)));
  }
  const closure: Record<string, string[]> = {};
  for (const pkg of [...files.keys()].sort()) {
    const reached = new Set<string>();
    const queue = [...(direct.get(pkg) ?? [])];
    for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
      if (reached.has(next) || next === pkg) continue;
      reached.add(next);
      queue.push(...(direct.get(next) ?? []));
    }
    closure[pkg] = [...reached].sort();
  }
  return closure;
}

/** One definition a line, so that a regenerated bundle diffs by definition. */
function fileText(definitions: Map<string, Node>): string {
  const lines = [...definitions.keys()]
    .sort()
    .map((name) => `${JSON.stringify(name)}:${JSON.stringify(definitions.get(name))}`);
  return `{\n${lines.join(',\n')}\n}\n`;
}

function indexText(
  version: string,
  groupVersions: string[],
  definitions: Map<string, Node>,
  dependencies: Record<string, string[]>,
): string {
  const kinds = new Map<string, Record<string, string>>();
  for (const [name, schema] of definitions) {
    for (const { apiVersion, kind } of kindsOfDefinition(name, schema)) {
      const byKind = kinds.get(apiVersion) ?? {};
      if (byKind[kind] && byKind[kind] !== name) {
        throw new Error(`${apiVersion} ${kind} is both ${byKind[kind]} and ${name}`);
      }
      kinds.set(apiVersion, { ...byKind, [kind]: name });
    }
  }
  const served = [...new Set(groupVersions)].sort();
  const missing = [...kinds.keys()].filter((gv) => !served.includes(gv));
  if (missing.length > 0) throw new Error(`kinds of undocumented versions: ${missing.join(', ')}`);
  const lines = served.map((gv) => {
    const entry = {
      stability: stabilityOf(gv.split('/').pop() ?? gv),
      kinds: Object.fromEntries(Object.entries(kinds.get(gv) ?? {}).sort()),
    };
    return `    ${JSON.stringify(gv)}: ${JSON.stringify(entry)}`;
  });
  const files = Object.entries(dependencies).map(
    ([pkg, deps]) => `    ${JSON.stringify(pkg)}: ${JSON.stringify(deps)}`,
  );
  return [
    '{',
    `  "kubernetes": ${JSON.stringify(version)},`,
    `  "source": ${JSON.stringify(`k8s.io/kubernetes@${version} api/openapi-spec/v3, enums from pkg/generated/openapi; npm run generate (tools/k8s-schemas.ts)`)},`,
    '  "groupVersions": {',
    lines.join(',\n'),
    '  },',
    '  "files": {',
    files.join(',\n'),
    '  }',
    '}',
    '',
  ].join('\n');
}

/** What writeKubernetesSchemas wrote, for the log and ADR 0029. */
export interface BundleSummary {
  version: string;
  files: number;
  definitions: number;
  kinds: number;
  enums: number;
  bytes: number;
  gzipBytes: number;
  largest: { file: string; bytes: number }[];
}

/**
 * Writes schemas/kubernetes/: `<package>.json` (the package's definitions, refs by definition
 * name) and index.json (apiVersion → stability and kind → definition; package → the packages it
 * needs). Needs Go (the module cache, or the module proxy, and a build of the enum tool).
 */
export async function writeKubernetesSchemas(): Promise<BundleSummary> {
  const version = requiredVersion(apiserverModule, 'k8s.io/kubernetes');
  const specDir = join(await kubernetesModule(version), 'api', 'openapi-spec', 'v3');
  const { definitions, groupVersions } = readDefinitions(specDir);
  const enums = addEnums(definitions, await servedEnums());
  const files = new Map<string, Map<string, Node>>();
  for (const [name, schema] of definitions) {
    const pkg = packageOf(name);
    const file = files.get(pkg) ?? new Map<string, Node>();
    file.set(name, compactDefinition(name, schema, refuse));
    files.set(pkg, file);
  }
  for (const ref of refsOf(
    [...files.values()].map((f) => [...f.values()]),
    new Set(),
  )) {
    if (!definitions.has(ref)) throw new Error(`unresolved $ref ${ref}`);
  }
  const dependencies = packageDependencies(files);
  const dir = join(root, K8S_SCHEMAS_DIR);
  mkdirSync(dir, { recursive: true });
  const texts = new Map<string, string>([...files].map(([pkg, f]) => [`${pkg}.json`, fileText(f)]));
  texts.set('index.json', indexText(version, groupVersions, definitions, dependencies));
  for (const stale of readdirSync(dir).filter((f) => !texts.has(f))) rmSync(join(dir, stale));
  for (const [file, text] of texts) writeFileSync(join(dir, file), text);
  const sizes = [...texts].map(([file, text]) => ({ file, bytes: Buffer.byteLength(text) }));
  const index = JSON.parse(texts.get('index.json') ?? '{}') as {
    groupVersions: Record<string, { kinds: Record<string, string> }>;
  };
  return {
    version,
    files: texts.size,
    definitions: definitions.size,
    kinds: Object.values(index.groupVersions).reduce(
      (n, gv) => n + Object.keys(gv.kinds).length,
      0,
    ),
    enums,
    bytes: sizes.reduce((n, s) => n + s.bytes, 0),
    gzipBytes: [...texts.values()].reduce((n, text) => n + gzipSync(text).length, 0),
    largest: sizes.sort((a, b) => b.bytes - a.bytes).slice(0, 3),
  };
}

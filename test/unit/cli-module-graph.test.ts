// The offline commands load only the engine and its libraries (issue #23 item 9): the built
// `stencil` runs with a module hook that records every module it resolves, and every CommonJS
// module it required by the time it exits; the operator's stack must not be among them, nor ajv
// (the CRD validators are compiled at build time).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const sample = (file: string): string => join(root, 'samples', 'web-app', file);
const scratch = mkdtempSync(join(tmpdir(), 'stencil-module-graph-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs in the loader thread: appends the URL of every module resolved to the trace file. */
const HOOKS = `
import { appendFileSync } from 'node:fs';
let trace;
export function initialize(data) { trace = data.trace; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(trace, resolved.url + '\\n');
  return resolved;
}`;

/** Preloaded with --import: registers HOOKS, and lists require.cache at exit. */
const PRELOAD = `
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';
const trace = process.env.STENCIL_MODULE_TRACE;
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOKS)}), {
  data: { trace },
});
// Any absolute path will do: require.cache is one for the whole process.
const { cache } = createRequire(process.execPath);
process.on('exit', () => {
  appendFileSync(trace, Object.keys(cache).map((f) => pathToFileURL(f).href + '\\n').join(''));
});`;

interface Run {
  status: number | null;
  stderr: string;
  /** The npm packages whose files were loaded, sorted. */
  packages: string[];
}

/** tsc's build of the binary (the image's entry point) and the bundled `stencil` of package.json. */
const UNBUNDLED = join(root, 'dist', 'cli.js');
const BUNDLED = join(root, 'dist', 'stencil.cjs');

/** Runs a built `stencil` (`cli`) with `args`, tracing what it loads. */
function traced(name: string, args: string[], cli = UNBUNDLED): Run {
  const trace = join(scratch, `${name}.trace`);
  const result = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(PRELOAD)}`, cli, ...args],
    { encoding: 'utf8', env: { ...process.env, STENCIL_MODULE_TRACE: trace } },
  );
  const packages = readFileSync(trace, 'utf8')
    .split('\n')
    .flatMap((url) => {
      const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*\/node_modules\/)/.exec(url);
      return match ? [match[1]!] : [];
    });
  return { status: result.status, stderr: result.stderr, packages: [...new Set(packages)].sort() };
}

/** The operator's stack (`stencil run`), and ajv's compiler: none of it renders anything. */
const OPERATOR_ONLY = [
  '@kubernetes/client-node',
  '@dot-i/k8s-operator',
  'prom-client',
  'node-forge',
  'pino',
  'ws',
  'tar-fs',
  'gaxios',
  'ajv',
];

const files = ['--instance', sample('instance.yaml'), '--objects', sample('objects.yaml')];

const OFFLINE: [string, string[]][] = [
  ['render', ['render', '--template', sample('template.yaml'), ...files]],
  ['render -o json', ['render', '--template', sample('template.yaml'), ...files, '-o', 'json']],
  ['validate', ['validate', sample('template.yaml'), sample('instance.yaml')]],
  ['diff', ['diff', '--from', sample('template.yaml'), '--to', sample('template.yaml'), ...files]],
];

describe('the offline commands load only the engine and its libraries', { timeout: 30_000 }, () => {
  it.each(OFFLINE)('stencil %s', (name, args) => {
    const { status, stderr, packages } = traced(name.replace(/\W+/g, '-'), args);
    expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
    // The trace sees what the command does need, so an empty list below means something.
    expect(packages).toEqual(expect.arrayContaining(['handlebars', 'yaml', '@bufbuild/cel']));
    expect(packages.filter((p) => OPERATOR_ONLY.includes(p))).toEqual([]);
  });

  it('stencil run still loads the operator (the trace sees it when it is there)', () => {
    // A bad flag value fails in loadConfig, after the operator's modules are imported.
    const { status, stderr, packages } = traced('run', ['run', '--concurrency', 'many']);
    expect({ status, stderr }).toEqual({
      status: 2,
      stderr: 'stencil: --concurrency must be a positive integer, got "many"\n',
    });
    expect(packages).toEqual(
      expect.arrayContaining(['@kubernetes/client-node', '@dot-i/k8s-operator', 'prom-client']),
    );
  });
});

describe('the bundled stencil (dist/stencil.cjs)', { timeout: 30_000 }, () => {
  it.each(OFFLINE)(
    'stencil %s loads no package file: all it needs is in the bundle',
    (name, args) => {
      const { status, stderr, packages } = traced(
        `bundled-${name.replace(/\W+/g, '-')}`,
        args,
        BUNDLED,
      );
      expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
      expect(packages).toEqual([]);
    },
  );

  it('starts from the V8 code cache the build wrote (V8 does not reject it)', () => {
    const probe = `console.log(require(${JSON.stringify(BUNDLED)}).loadCommands(${JSON.stringify(join(root, 'dist'))}).codeCache)`;
    const result = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
    expect(result.stdout.trim()).toBe('used');
  });

  it('prints what the unbundled one prints', () => {
    const args = OFFLINE[0]![1];
    const run = (cli: string): string =>
      spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' }).stdout;
    expect(run(BUNDLED)).toBe(run(UNBUNDLED));
  });

  it("stencil run is handed to tsc's dist/cli.js, which loads the operator", () => {
    const { status, stderr, packages } = traced(
      'bundled-run',
      ['run', '--concurrency', 'many'],
      BUNDLED,
    );
    expect({ status, stderr }).toEqual({
      status: 2,
      stderr: 'stencil: --concurrency must be a positive integer, got "many"\n',
    });
    expect(packages).toEqual(expect.arrayContaining(['@kubernetes/client-node', 'prom-client']));
  });
});

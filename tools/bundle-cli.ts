// The second half of `npm run build` (ADR 0021): bundles the `stencil` commands
// (src/cli/commands.ts and everything the offline commands load: the engine, yaml, handlebars,
// @bufbuild/cel, and ajv for custom resources: ADR 0029) into the one CommonJS file
// dist/stencil-commands.cjs with esbuild, and their
// loader (src/cli-loader.ts) into dist/stencil.cjs, package.json's bin; then renders
// samples/web-app once through them to write the V8 code cache the loader reads. `stencil run`
// stays outside the bundle: its dynamic import of src/main.ts becomes an import of dist/main.js,
// the operator as tsc built it. The build fails if an operator-only package ends up in the
// bundle, so the offline commands stay as light as they are fast.
import { build, type BuildOptions, type Plugin } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const dist = join(root, 'dist');
const COMMANDS = join(dist, 'stencil-commands.cjs');

/** Packages that only `stencil run` needs: none of them may be bundled. */
const OPERATOR_ONLY = [
  '@kubernetes/client-node',
  '@dot-i/k8s-operator',
  'prom-client',
  'pino',
  'node-forge',
];

/** src/main.ts (the operator) is loaded from tsc's output, next to the bundle, on demand. */
const operatorOutside: Plugin = {
  name: 'operator-outside',
  setup(on) {
    on.onResolve({ filter: /\/main\.ts$/ }, (args) =>
      join(args.resolveDir, args.path) === join(root, 'src', 'main.ts')
        ? { path: './main.js', external: true }
        : undefined,
    );
  },
};

const common: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'warning',
};

const result = await build({
  ...common,
  entryPoints: [join(root, 'src', 'cli', 'commands.ts')],
  outfile: COMMANDS,
  plugins: [operatorOutside],
  metafile: true,
  // src/kubernetes-schema-files.ts reads __dirname in this CommonJS output and import.meta only
  // under ESM: the empty import.meta here is never read.
  logOverride: { 'empty-import-meta': 'silent' },
});
const bundled = Object.keys(result.metafile.inputs);
const leaked = OPERATOR_ONLY.filter((pkg) =>
  bundled.some((input) => input.includes(`node_modules/${pkg}/`)),
);
if (leaked.length > 0) {
  console.error(`${relative(root, COMMANDS)} must not hold ${leaked.join(', ')}`);
  process.exit(1);
}
await build({
  ...common,
  entryPoints: [join(root, 'src', 'cli-loader.ts')],
  outfile: join(dist, 'stencil.cjs'),
  banner: { js: '#!/usr/bin/env node' },
});

// The code cache: written by one render of the sample (the Docker build has no samples and
// goes without; the loader then compiles as tsc's build would).
const cache = `${COMMANDS}.v8-cache`;
rmSync(cache, { force: true });
const sample = (file: string): string => join(root, 'samples', 'web-app', file);
if (existsSync(sample('template.yaml'))) {
  const argv = [
    'render',
    ...['--template', sample('template.yaml'), '--instance', sample('instance.yaml')],
    ...['--objects', sample('objects.yaml')],
  ];
  const train = `require(${JSON.stringify(join(dist, 'stencil.cjs'))}).run(${JSON.stringify(dist)}, ${JSON.stringify(argv)}, true)`;
  const done = spawnSync(process.execPath, ['-e', train], { encoding: 'utf8' });
  if (done.status !== 0 || !existsSync(cache)) {
    console.error(`writing ${relative(root, cache)} failed: ${done.stderr.trim()}`);
    process.exit(1);
  }
}

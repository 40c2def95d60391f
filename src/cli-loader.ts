// The `stencil` of package.json's bin, built by esbuild to dist/stencil.cjs (never by tsc): runs
// the bundled commands (dist/stencil-commands.cjs, src/cli/commands.ts and all it loads) with the
// V8 code cache that `npm run build` wrote beside them after a sample render, so that V8 does not
// compile again on every start what it compiled then (ADR 0021). The cache is as trusted as the
// bundle (built with it, read-only afterwards); one made by another Node or V8 version is rejected
// by V8 and the code is compiled as usual. `stencil run` goes to tsc's dist/cli.js instead (the
// image's entry point): code run from a V8 code cache cannot import() (Node 20 fails it with
// "Invalid host defined options"), and the operator loads its stack as ES modules anyway.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Script } from 'node:vm';
import type { CommandResult } from './cli/render-command.ts';

interface Loaded {
  main: (argv: string[]) => Promise<CommandResult>;
  /** Whether V8 took the cache: `rejected` means it was made by another Node or V8. */
  codeCache: 'used' | 'rejected' | 'absent';
}

/** CommonJS's own wrapper, so the bundle runs as the module it was built to be. */
const wrap = (source: string): string =>
  `(function (exports, require, module, __filename, __dirname) { ${source}\n});`;

/**
 * Compiles and runs the bundled commands with the cache, and returns their `main`. With
 * `writeCache` (the build), the cache is written at exit, after the command ran: V8 compiles
 * functions lazily, so only a cache taken after a run holds the ones a render needs.
 */
export function loadCommands(dir: string, writeCache = false): Loaded {
  const file = join(dir, 'stencil-commands.cjs');
  const cacheFile = `${file}.v8-cache`;
  const cachedData = !writeCache && existsSync(cacheFile) ? readFileSync(cacheFile) : undefined;
  const script = new Script(wrap(readFileSync(file, 'utf8')), {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
  });
  const module = { exports: {} as Pick<Loaded, 'main'> };
  (script.runInThisContext() as (...args: unknown[]) => void)(
    module.exports,
    createRequire(file),
    module,
    file,
    dir,
  );
  if (writeCache)
    process.once('beforeExit', () => writeFileSync(cacheFile, script.createCachedData()));
  const codeCache = !cachedData ? 'absent' : script.cachedDataRejected ? 'rejected' : 'used';
  return { main: module.exports.main, codeCache };
}

/** Runs `stencil` with `argv` and exits with its code. */
export async function run(dir: string, argv: string[], writeCache = false): Promise<void> {
  // dist/cli.js runs itself on process.argv, which holds the same arguments.
  if (argv[0] === 'run') return void (await import(pathToFileURL(join(dir, 'cli.js')).href));
  const result = await loadCommands(dir, writeCache).main(argv);
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exitCode = result.exitCode;
}

// Run when executed as dist/stencil.cjs (also through npm's bin link), not when required by the
// build to write the cache.
if (typeof require !== 'undefined' && require.main === module)
  void run(__dirname, process.argv.slice(2));

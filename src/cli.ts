#!/usr/bin/env node
// The `stencil` binary: runs the command line and exits with its code. Nothing imports this file
// (src/cli/commands.ts is the command table); it is built twice, by tsc to dist/cli.js (the
// operator image's entry point) and by esbuild into the one file dist/stencil.cjs, the `stencil`
// of package.json's bin, which starts in about half the time (ADR 0021). Hence no top-level
// await and no import.meta here: both forms must run it.
import { main } from './cli/commands.ts';

void main(process.argv.slice(2)).then((result) => {
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exitCode = result.exitCode;
});

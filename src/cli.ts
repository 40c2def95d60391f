#!/usr/bin/env node
// The `stencil` command: `render` and `validate` (offline, the operator's own code path).
// Every failure is one clear line on stderr with exit code 1 (checks failed) or 2 (bad usage or
// unreadable files); never a stack trace.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { renderCommand, RENDER_USAGE, type CommandResult } from './cli/render-command.ts';
import { validateCommand, VALIDATE_USAGE } from './cli/validate-command.ts';
import { UsageError } from './cli/manifest-files.ts';
import { ConfigError } from './config.ts';
import { runOperator } from './main.ts';

// Every flag is also STENCIL_<FLAG> in the environment (docs/operations.md).
const RUN_USAGE = [
  'usage: stencil run [--kubeconfig PATH] [--namespaces a,b] [--concurrency N] [--resync-period SECONDS]',
  '      [--leader-elect] [--metrics-bind-address ADDR] [--health-probe-bind-address ADDR]',
  '      [--webhook-port N] [--webhook-service NS/NAME[:PORT] | --webhook-url URL] [--webhook-cert-dir DIR]',
  '      [--operator-namespace NS] [--log-level debug|info|warn|error] [--log-format json|text]',
].join('\n');

const USAGE = [
  'usage: stencil <command> [flags]',
  '',
  'commands:',
  `  ${RUN_USAGE.replace('usage: ', '')}`,
  `  ${RENDER_USAGE.replace('usage: ', '')}`,
  `  ${VALIDATE_USAGE.replace('usage: ', '')}`,
].join('\n');

export async function main(argv: string[]): Promise<CommandResult> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined)
      throw new UsageError(
        'no command given (commands: run, render, validate; see stencil --help)',
      );
    switch (command) {
      case 'render':
        return await renderCommand(rest);
      case 'validate':
        return validateCommand(rest);
      case 'run':
        return { exitCode: await runOperator(rest), stdout: '', stderr: '' };
      case 'help':
      case '--help':
      case '-h':
        return { exitCode: 0, stdout: `${USAGE}\n`, stderr: '' };
      default:
        throw new UsageError(
          `unknown command "${command}" (commands: run, render, validate; see stencil --help)`,
        );
    }
  } catch (err) {
    const usage = err instanceof UsageError || err instanceof ConfigError;
    const message = err instanceof Error ? err.message : String(err);
    return { exitCode: usage ? 2 : 1, stdout: '', stderr: `stencil: ${message.split('\n')[0]}\n` };
  }
}

// Run only when executed as the program (also through the npm bin symlink), not when imported.
const entry = process.argv[1] ? pathToFileURL(realpathSync(process.argv[1])).href : '';
if (import.meta.url === entry) {
  const result = await main(process.argv.slice(2));
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exitCode = result.exitCode;
}

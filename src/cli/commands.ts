// The `stencil` commands: `run` (the operator), `render`, `validate`, `diff` and `crd` (offline,
// the operator's own code path), and `--help` for each; src/cli.ts runs them as the program.
// Every failure is one clear line on stderr with exit code 1 (checks failed) or 2 (bad usage or
// unreadable files); never a stack trace.
import { loggableMessage } from '../engine/redaction/redaction.ts';
import { helpText, usageLine, UsageError, wantsHelp, type CommandSpec } from '../command-line.ts';
import { crdCommand, CRD_COMMAND } from './crd-command.ts';
import { diffCommand, DIFF_COMMAND } from './diff-command.ts';
import { renderCommand, RENDER_COMMAND, type CommandResult } from './render-command.ts';
import { validateCommand, VALIDATE_COMMAND } from './validate-command.ts';
import { RUN_COMMAND } from '../config.ts';

const COMMANDS: Record<
  string,
  { spec: CommandSpec; run: (argv: string[]) => Promise<CommandResult> }
> = {
  run: {
    spec: RUN_COMMAND,
    // Imported on demand: the operator stack (client-node, dot-i, prom-client, pino, node-forge)
    // costs about a second and 100 MiB to load, and the offline commands need none of it.
    run: async (argv) => {
      const { runOperator } = await import('../main.ts');
      return { exitCode: await runOperator(argv), stdout: '', stderr: '' };
    },
  },
  render: { spec: RENDER_COMMAND, run: renderCommand },
  validate: { spec: VALIDATE_COMMAND, run: validateCommand },
  diff: { spec: DIFF_COMMAND, run: diffCommand },
  crd: { spec: CRD_COMMAND, run: crdCommand },
};

const USAGE = [
  'usage: stencil <command> [flags]',
  '',
  'commands:',
  ...Object.values(COMMANDS).map(({ spec }) => `  ${usageLine(spec).replace('usage: ', '')}`),
  '',
  'stencil <command> --help lists the flags of a command.',
].join('\n');

export async function main(argv: string[]): Promise<CommandResult> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined)
      throw new UsageError(
        'no command given (commands: run, render, validate, diff, crd; see stencil --help)',
      );
    if (command === 'help' || command === '--help' || command === '-h')
      return { exitCode: 0, stdout: `${USAGE}\n`, stderr: '' };
    const known = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (!known)
      throw new UsageError(
        `unknown command "${command}" (commands: run, render, validate, diff, crd; see stencil --help)`,
      );
    if (wantsHelp(known.spec, rest))
      return { exitCode: 0, stdout: helpText(known.spec), stderr: '' };
    return await known.run(rest);
  } catch (err) {
    const usage = err instanceof UsageError;
    // Bad usage quotes only what the user typed; anything else may have been thrown while
    // Secret data was in hand, and is shown only if a Redactor went over it.
    const message = usage ? err.message : loggableMessage(err);
    return { exitCode: usage ? 2 : 1, stdout: '', stderr: `stencil: ${message.split('\n')[0]}\n` };
  }
}

// The command line of every `stencil` subcommand, on node:util parseArgs: one declaration per
// command (its flags, each with a value placeholder and a one-line description) yields the
// parser, the usage line, the `--help` text and the one-line error for a flag it does not know.
// A shared leaf beside config.ts (which parses `stencil run`) and cli/ (the offline commands):
// neither imports the other for it.
import { parseArgs } from 'node:util';

/** A failure the user fixes by changing the command line or a file: exit code 2. */
export class UsageError extends Error {}

export interface Flag {
  type: 'string' | 'boolean';
  short?: string;
  /** May be given more than once (values are collected in order). */
  multiple?: boolean;
  /** Placeholder of the value in the help text, e.g. `PATH`; for string flags. */
  value?: string;
  /** One line: what the flag does, and its default. */
  description: string;
}

export interface CommandSpec {
  /** The subcommand, e.g. `render`. */
  name: string;
  /** What follows `stencil <name>` on the usage line; kept to one line. */
  synopsis: string;
  /** One sentence: what the command does. */
  summary: string;
  flags: Readonly<Record<string, Flag>>;
  /** The positional arguments (e.g. `FILE...`); absent = none accepted. */
  positionals?: { value: string; description: string };
  /** Lines printed after the flags. */
  notes?: readonly string[];
}

export type FlagValues = Readonly<Record<string, string | boolean | string[] | undefined>>;

export interface CommandLine {
  values: FlagValues;
  positionals: string[];
}

const HELP: Flag = { type: 'boolean', short: 'h', description: 'print this help and exit' };

function parseOptions(
  spec: CommandSpec,
): Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> {
  const flags = { ...spec.flags, help: HELP };
  return Object.fromEntries(
    Object.entries(flags).map(([name, { type, short, multiple }]) => [
      name,
      { type, ...(short ? { short } : {}), ...(multiple ? { multiple } : {}) },
    ]),
  );
}

/** The option tokens of `argv`, read leniently (unknown flags included, nothing thrown). */
function optionTokens(spec: CommandSpec, argv: string[]): { name: string; rawName: string }[] {
  const { tokens } = parseArgs({
    args: argv,
    options: parseOptions(spec),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  return tokens.flatMap((t) => (t.kind === 'option' ? [{ name: t.name, rawName: t.rawName }] : []));
}

export function usageLine(spec: CommandSpec): string {
  return `usage: stencil ${spec.name} ${spec.synopsis}`;
}

/** Whether `argv` asks for the command's help (`--help` or `-h` anywhere before `--`). */
export function wantsHelp(spec: CommandSpec, argv: string[]): boolean {
  return optionTokens(spec, argv).some((t) => t.name === 'help');
}

type Row = readonly [label: string, description: string];

function flagRow(name: string, flag: Flag): Row {
  const short = flag.short ? `-${flag.short}, ` : '    ';
  const value = flag.type === 'string' ? ` ${flag.value ?? 'VALUE'}` : '';
  const repeat = flag.multiple ? ' (repeatable)' : '';
  return [`${short}--${name}${value}`, `${flag.description}${repeat}`];
}

/** `--help` output: the usage line, the summary, every flag with its description, the notes. */
export function helpText(spec: CommandSpec): string {
  const flags = Object.entries({ ...spec.flags, help: HELP }).map(([n, f]) => flagRow(n, f));
  const args: Row[] = spec.positionals
    ? [[spec.positionals.value, spec.positionals.description]]
    : [];
  const width = Math.max(...[...flags, ...args].map(([label]) => label.length));
  const table = (rows: Row[]): string[] =>
    rows.map(([label, description]) => `  ${label.padEnd(width)}  ${description}`);
  const lines = [
    usageLine(spec),
    '',
    spec.summary,
    ...(args.length > 0 ? ['', 'arguments:', ...table(args)] : []),
    '',
    'flags:',
    ...table(flags),
    ...(spec.notes ? ['', ...spec.notes] : []),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * Parses `argv` (what follows `stencil <name>`). Throws a one-line UsageError that names an
 * unknown flag, or quotes parseArgs' complaint (a missing value, an unexpected argument), and
 * ends with the usage line. `--help` is accepted; callers check {@link wantsHelp} first.
 */
export function parseCommandLine(spec: CommandSpec, argv: string[]): CommandLine {
  const options = parseOptions(spec);
  const unknown = optionTokens(spec, argv).find((t) => !Object.hasOwn(options, t.name));
  if (unknown) throw new UsageError(`unknown flag ${unknown.rawName}; ${usageLine(spec)}`);
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options,
      strict: true,
      allowPositionals: spec.positionals !== undefined,
    });
    return { values: values as FlagValues, positionals };
  } catch (error) {
    // parseArgs' messages run on with advice in further sentences; the first one says it all.
    const first = (error as Error).message.split(/\.(?:\s|$)/)[0];
    throw new UsageError(`${first}; ${usageLine(spec)}`);
  }
}

/** The value of a string flag, or undefined when it was not given. */
export function stringFlag(line: CommandLine, name: string): string | undefined {
  const value = line.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** Every value of a repeatable string flag, in order. */
export function stringFlags(line: CommandLine, name: string): string[] {
  const value = line.values[name];
  return Array.isArray(value) ? value : [];
}

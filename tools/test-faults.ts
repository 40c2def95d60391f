// `npm run test:faults [-- --long] [file filter...]`: runs the fault scenarios of
// test/integration/faults with vitest. vitest refuses flags it does not know, so `--long` is
// parsed here and handed to the scenarios as STENCIL_FAULTS_LONG=1 (test/.../support/soak.ts).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const USAGE = `usage: npm run test:faults [-- --long] [file filter...]
  --long   soak variants: 500 instances, 3 fault/heal cycles, faults held 20 s
  filters  names of scenario files to run (e.g. source-deleted); all of them when none`;

/** What to run for these arguments: vitest's arguments and environment, or a usage answer. */
export type FaultsRun =
  | { run: true; args: string[]; env: Record<string, string | undefined> }
  | { run: false; exitCode: number; output: string };

export function planRun(argv: string[], env: Record<string, string | undefined>): FaultsRun {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { long: { type: 'boolean', default: false }, help: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    return { run: false, exitCode: 2, output: `${(error as Error).message}\n${USAGE}` };
  }
  if (parsed.values.help) return { run: false, exitCode: 0, output: USAGE };
  const filters = parsed.positionals.length > 0 ? parsed.positionals : [''];
  // The variable is set or removed explicitly: a stale one in the shell must not turn a default
  // run into a soak run.
  const { STENCIL_FAULTS_LONG: _stale, ...rest } = env;
  return {
    run: true,
    args: [
      'run',
      '--project',
      'integration',
      ...filters.map((f) => `test/integration/faults/${f}`),
    ],
    env: parsed.values.long ? { ...rest, STENCIL_FAULTS_LONG: '1' } : rest,
  };
}

function main(): number {
  const plan = planRun(process.argv.slice(2), process.env);
  if (!plan.run) {
    (plan.exitCode === 0 ? console.log : console.error)(plan.output);
    return plan.exitCode;
  }
  const root = join(import.meta.dirname, '..');
  const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
  const run = spawnSync(process.execPath, [vitest, ...plan.args], {
    cwd: root,
    env: plan.env,
    stdio: 'inherit',
  });
  if (run.error) {
    console.error(`could not start vitest: ${run.error.message}`);
    return 1;
  }
  return run.status ?? 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = main();

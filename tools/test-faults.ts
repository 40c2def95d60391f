// `npm run test:faults [-- --long] [file filter...]`: runs the fault scenarios of
// test/integration/faults with vitest. vitest refuses flags it does not know, so `--long` is
// parsed here and handed to the scenarios as STENCIL_FAULTS_LONG=1 (test/.../support/soak.ts).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const USAGE = `usage: npm run test:faults [-- --long] [file filter...]
  --long   soak variants: 500 instances, 3 fault/heal cycles, faults held 20 s
  filters  names of scenario files to run (e.g. source-deleted); all of them when none`;

function main(argv: string[]): number {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { long: { type: 'boolean', default: false }, help: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (parsed.values.help) {
    console.log(USAGE);
    return 0;
  }
  const root = join(import.meta.dirname, '..');
  const filters = parsed.positionals.length > 0 ? parsed.positionals : [''];
  const files = filters.map((f) => `test/integration/faults/${f}`);
  const env = { ...process.env };
  if (parsed.values.long) env.STENCIL_FAULTS_LONG = '1';
  else delete env.STENCIL_FAULTS_LONG;
  const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
  const run = spawnSync(process.execPath, [vitest, 'run', '--project', 'integration', ...files], {
    cwd: root,
    env,
    stdio: 'inherit',
  });
  if (run.error) {
    console.error(`could not start vitest: ${run.error.message}`);
    return 1;
  }
  return run.status ?? 1;
}

process.exitCode = main(process.argv.slice(2));

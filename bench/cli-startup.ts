// `npm run bench:cli`: what one offline `stencil` command costs from start to exit (issue #23
// item 9): wall time, CPU time and peak RSS of the built binaries rendering samples/web-app —
// the bundled `stencil` (dist/stencil.cjs, package.json's bin) and tsc's unbundled dist/cli.js —
// median of --runs runs, next to `helm template charts/stencil` (a Go binary doing similar work)
// and a bare `node` as yardsticks. --cli PATH measures other builds instead (repeat it to
// compare builds, e.g. an older one, in the same rounds).
// CPU and RSS of a child come from GNU time, which must be at /usr/bin/time.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureHelm } from '../tools/control-plane/binaries.ts';
import { median } from './support.ts';

const root = join(import.meta.dirname, '..');
const TIME = '/usr/bin/time';
const MARK = 'bench-cli:';
/** The goal issue #23 sets for `stencil render` of samples/web-app. */
const GOAL = { wallMs: 300, rssMiB: 80 };

interface Sample {
  wallMs: number;
  cpuMs: number;
  rssMiB: number;
}

function measure(command: readonly string[]): Sample {
  const started = process.hrtime.bigint();
  const result = spawnSync(TIME, ['-f', `${MARK} %U %S %M`, ...command], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`${command.join(' ')} exited ${result.status}: ${result.stderr.trim()}`);
  }
  const line = result.stderr.split('\n').find((l) => l.startsWith(MARK));
  if (!line) throw new Error(`no figures from ${TIME} for ${command.join(' ')}`);
  const [user = NaN, system = NaN, rssKiB = NaN] = line
    .slice(MARK.length)
    .trim()
    .split(' ')
    .map(Number);
  return { wallMs, cpuMs: (user + system) * 1000, rssMiB: rssKiB / 1024 };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { runs: { type: 'string', default: '10' }, cli: { type: 'string', multiple: true } },
  });
  const runs = Number(values.runs);
  const clis = values.cli ?? [join(root, 'dist', 'stencil.cjs'), join(root, 'dist', 'cli.js')];
  if (!existsSync(TIME))
    throw new Error(`bench:cli needs GNU time at ${TIME} (apt-get install time)`);
  for (const cli of clis)
    if (!existsSync(cli)) throw new Error(`no ${cli}: run npm run build first`);
  const helm = await ensureHelm((line) => console.log(`[helm] ${line}`));
  const sample = (file: string): string => join(root, 'samples', 'web-app', file);
  const node = process.execPath;
  const stencil = (cli: string): [string, string[]][] => {
    const label = clis.length > 1 ? ` (${relative(root, cli)})` : '';
    return [
      [
        `stencil render samples/web-app${label}`,
        [
          node,
          cli,
          'render',
          ...['--template', sample('template.yaml'), '--instance', sample('instance.yaml')],
          ...['--objects', sample('objects.yaml')],
        ],
      ],
      [
        `stencil validate samples/web-app${label}`,
        [node, cli, 'validate', sample('template.yaml'), sample('instance.yaml')],
      ],
    ];
  };
  const commands: [string, string[]][] = [
    ['node -e "" (Node itself)', [node, '-e', '']],
    ...clis.flatMap(stencil),
    [
      'helm template charts/stencil',
      [helm, 'template', 'stencil', join(root, 'charts', 'stencil')],
    ],
  ];
  // One warm-up run each (file cache), then rounds that take every command in turn, so that
  // other load on the machine falls on all of them alike.
  for (const [, command] of commands) measure(command);
  const samples = new Map<string, Sample[]>(commands.map(([name]) => [name, []]));
  for (let round = 0; round < runs; round++) {
    for (const [name, command] of commands) samples.get(name)!.push(measure(command));
  }
  console.log(`median of ${runs} runs (min–max)\n`);
  console.log('| Command | Wall | CPU (user + sys) | Peak RSS |');
  console.log('| --- | --- | --- | --- |');
  for (const [name, list] of samples) {
    const wall = list.map((s) => s.wallMs);
    const figure = (ms: number): string => `${(ms / 1000).toFixed(3)} s`;
    console.log(
      `| ${name} | ${figure(median(wall))} (${figure(Math.min(...wall))}–${figure(Math.max(...wall))}) | ` +
        `${figure(median(list.map((s) => s.cpuMs)))} | ${median(list.map((s) => s.rssMiB)).toFixed(0)} MiB |`,
    );
  }
  for (const [name, list] of samples) {
    if (!name.startsWith('stencil render')) continue;
    const wall = median(list.map((s) => s.wallMs));
    const rss = median(list.map((s) => s.rssMiB));
    console.log(
      `\n${name}: goal ≤ ${GOAL.wallMs / 1000} s ${wall <= GOAL.wallMs ? 'met' : 'missed'}, ` +
        `≤ ${GOAL.rssMiB} MiB ${rss <= GOAL.rssMiB ? 'met' : 'missed'}`,
    );
  }
}

await main();

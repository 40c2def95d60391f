// The Dockerfile's structure (no container engine runs here): stages, a non-root runtime that
// copies only dist/, production node_modules, package.json, config/crd and schemas, npm commands that
// exist, and the same build steps succeeding outside a container.
import { execFileSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  image: string;
  name: string;
  instructions: Instruction[];
}

/** Splits a Dockerfile into instructions (comments dropped, `\` continuations joined). */
function instructions(text: string): Instruction[] {
  const logical: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (current === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(current + line);
    current = '';
  }
  if (current) logical.push(current);
  return logical.map((line) => {
    const match = /^(\S+)\s*(.*)$/.exec(line)!;
    return { keyword: match[1]!.toUpperCase(), args: match[2]!.trim() };
  });
}

function parseDockerfile(text: string): { args: Map<string, string>; stages: Stage[] } {
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const instruction of instructions(text)) {
    if (instruction.keyword === 'FROM') {
      const [rawImage, as, name] = instruction.args.split(/\s+/).filter((a) => !a.startsWith('--'));
      const image = rawImage!.replace(/\$\{?(\w+)\}?/g, (_, arg: string) => args.get(arg) ?? '');
      stages.push({
        image,
        name: as?.toUpperCase() === 'AS' ? name! : String(stages.length),
        instructions: [],
      });
    } else if (stages.length === 0) {
      if (instruction.keyword === 'ARG') {
        const [key, value] = instruction.args.split('=');
        args.set(key!, value ?? '');
      }
    } else {
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return { args, stages };
}

interface Copy {
  from?: string;
  sources: string[];
  destination: string;
}

function copies(stage: Stage): Copy[] {
  return stage.instructions
    .filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD')
    .map((i) => {
      const words = i.args.startsWith('[') ? (JSON.parse(i.args) as string[]) : i.args.split(/\s+/);
      const flags = words.filter((w) => w.startsWith('--'));
      const paths = words.filter((w) => !w.startsWith('--'));
      const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
      return { from, sources: paths.slice(0, -1), destination: paths.at(-1)! };
    });
}

/** `npm ...` command lines run by a stage's RUN instructions. */
function npmCommands(stage: Stage): string[][] {
  return stage.instructions
    .filter((i) => i.keyword === 'RUN')
    .flatMap((i) => i.args.split(/&&|;|\|\|/))
    .map((command) => command.trim().split(/\s+/))
    .filter((words) => words[0] === 'npm');
}

const normal = (path: string): string => path.replace(/^\.\//, '').replace(/\/+$/, '');

const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const { stages } = parseDockerfile(dockerfile);
const runtime = stages.at(-1)!;
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
};
const stageNamed = (name: string | undefined): Stage | undefined =>
  stages.find((s) => s.name === name);
const runs = (stage: Stage | undefined, ...words: string[]): boolean =>
  !!stage && npmCommands(stage).some((c) => words.every((w) => c.includes(w)));

describe('Dockerfile', () => {
  it('has a build stage, a production-dependency stage and a runtime stage', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages.filter((s) => npmCommands(s).length > 0)) {
      // Node >= 20.19 (package.json engines): node:20 images carry the latest 20.x.
      const match = /^node:(\d+)(?:\.(\d+))?/.exec(stage.image);
      expect(match, `stage ${stage.name} runs npm on ${stage.image}`).not.toBeNull();
      const [major, minor] = [Number(match![1]), Number(match![2] ?? 99)];
      expect(major > 20 || (major === 20 && minor >= 19)).toBe(true);
    }
    expect(stages.some((s) => runs(s, 'run', 'build'))).toBe(true);
    expect(stages.some((s) => runs(s, 'ci', '--omit=dev'))).toBe(true);
    expect(npmCommands(runtime)).toEqual([]);
  });

  it('runs the runtime stage as a non-root user', () => {
    const users = runtime.instructions.filter((i) => i.keyword === 'USER');
    expect(users.length).toBeGreaterThan(0);
    const user = users.at(-1)!.args.split(':')[0]!;
    expect(['', '0', 'root']).not.toContain(user);
    expect(user).toBe('65532');
    const entrypoint = runtime.instructions.find((i) => i.keyword === 'ENTRYPOINT')!;
    const command = JSON.parse(entrypoint.args) as string[];
    expect(command[0]).toMatch(/(^|\/)node$/);
    expect(command.slice(1)).toEqual(['dist/cli.js']);
    const cmd = runtime.instructions.find((i) => i.keyword === 'CMD')!;
    expect(JSON.parse(cmd.args)).toEqual(['run']);
  });

  it('copies only dist, production node_modules, package.json, config/crd and schemas into the runtime', () => {
    // Each COPY is one of four kinds; anything else (src/, the build stage's node_modules, ...)
    // is reported as it is.
    const kinds = copies(runtime).flatMap((c) =>
      c.sources.map(normal).map((source) => {
        const stage = stageNamed(c.from);
        if (!c.from && ['package.json', 'config/crd', 'schemas'].includes(source)) return source;
        if (stage && /(^|\/)node_modules$/.test(source)) {
          // Only from a stage that installed production dependencies and built nothing.
          const commands = npmCommands(stage);
          const prodOnly =
            commands.length > 0 && commands.every((w) => w[1] === 'ci' && w.includes('--omit=dev'));
          return prodOnly ? 'production node_modules' : `node_modules of stage ${stage.name}`;
        }
        if (stage && /(^|\/)dist$/.test(source) && runs(stage, 'run', 'build')) return 'dist';
        return `${c.from ?? 'context'}:${source}`;
      }),
    );
    expect(kinds.sort()).toEqual([
      'config/crd',
      'dist',
      'package.json',
      'production node_modules',
      'schemas',
    ]);
  });

  it('runs only npm scripts that exist in package.json, after copying the lockfile', () => {
    for (const stage of stages) {
      for (const command of npmCommands(stage)) {
        const [, verb, script] = command;
        expect(['ci', 'run']).toContain(verb);
        if (verb === 'run') expect(Object.keys(packageJson.scripts)).toContain(script);
        if (verb === 'ci') {
          const copied = copies(stage).flatMap((c) => c.sources.map(normal));
          expect(copied).toContain('package-lock.json');
        }
      }
    }
  });

  it('copies from the build context only files that exist and .dockerignore lets through', () => {
    const ignore = readFileSync(join(root, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    expect(ignore[0]).toBe('*'); // an allowlist
    const allowed = ignore.filter((l) => l.startsWith('!')).map((l) => normal(l.slice(1)));
    for (const stage of stages) {
      for (const source of copies(stage)
        .filter((c) => !c.from)
        .flatMap((c) => c.sources.map(normal))) {
        expect(existsSync(join(root, source)), source).toBe(true);
        expect(
          allowed.some((a) => source === a || source.startsWith(`${a}/`)),
          `${source} is excluded by .dockerignore`,
        ).toBe(true);
      }
    }
  });
});

describe('the Dockerfile build steps, outside a container', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'stencil-dockerfile-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('`npm run build` produced dist/cli.js (npm test builds first)', () => {
    expect(existsSync(join(root, 'dist', 'cli.js'))).toBe(true);
  });

  it('`npm ci --omit=dev` accepts package.json with its lockfile', () => {
    for (const file of ['package.json', 'package-lock.json']) {
      cpSync(join(root, file), join(scratch, file));
    }
    // --dry-run resolves the tree from the lockfile and fails when it is out of sync with
    // package.json, without installing anything.
    execFileSync(
      'npm',
      ['ci', '--omit=dev', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'],
      { cwd: scratch, stdio: 'pipe', timeout: 60_000 },
    );
    // The installed production tree is complete and valid.
    execFileSync('npm', ['ls', '--omit=dev', '--all'], { cwd: root, stdio: 'pipe' });
  }, 90_000);

  it('dist/ imports only production dependencies and Node built-ins', () => {
    const builtins = new Set(builtinModules);
    const allowed = new Set(Object.keys(packageJson.dependencies));
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory()
          ? files(join(dir, e.name))
          : e.name.endsWith('.js')
            ? [join(dir, e.name)]
            : [],
      );
    const missing: string[] = [];
    for (const file of files(join(root, 'dist'))) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"]([^'"]+)['"]/g)) {
        const specifier = match[1]!;
        if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
        const parts = specifier.split('/');
        const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
        if (!builtins.has(name) && !allowed.has(name))
          missing.push(`${relative(root, file)}: ${specifier}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

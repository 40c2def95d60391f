// Builds dist/ (npm run build) when it is missing or older than a source file: the playground and
// the unit tests that run the built `stencil` binary need it, and a fresh clone has none.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

function newestMtime(dir: string): number {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .reduce((newest, e) => Math.max(newest, statSync(join(e.parentPath, e.name)).mtimeMs), 0);
}

export function buildIfNeeded(say: (line: string) => void): void {
  // The bundle is the last thing `npm run build` writes.
  const cli = join(root, 'dist', 'stencil.cjs');
  if (existsSync(cli) && statSync(cli).mtimeMs >= newestMtime(join(root, 'src'))) return;
  say('building (npm run build)...');
  const result = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) throw new Error('npm run build failed');
}

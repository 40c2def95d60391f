// `stencil run` as a process (the built dist/cli.js) against the test control plane, its stdout
// and stderr kept in `output` as they arrive.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { inject } from 'vitest';
import { TEMPLATE_ACCOUNT } from '../../../tools/local/operator-identity.ts';

const root = join(import.meta.dirname, '..', '..', '..');

export interface StencilProcess {
  child: ChildProcess;
  output: string;
}

/**
 * Starts `stencil run --kubeconfig <the test admin's, unless given> …args`. Its Templates act as
 * TEMPLATE_ACCOUNT of their namespace unless they name a ServiceAccount (grantTemplateAccount).
 */
export function spawnStencilRun(args: string[], kubeconfig = inject('kubeconfig')): StencilProcess {
  const child = spawn(
    process.execPath,
    [
      join(root, 'dist', 'cli.js'),
      'run',
      '--kubeconfig',
      kubeconfig,
      `--default-service-account=${TEMPLATE_ACCOUNT}`,
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const running: StencilProcess = { child, output: '' };
  child.stdout?.on('data', (c: Buffer) => (running.output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (running.output += c.toString()));
  return running;
}

// Child processes of the control plane: started so that they die with us (setpriv's parent-death
// signal covers SIGKILL of the Node process; an exit hook covers normal exits), with output in a
// log file whose tail is shown when something goes wrong.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';

export interface Managed {
  name: string;
  logPath: string;
  child: ChildProcess;
  /** Exit code or signal once the process has exited. */
  exited?: string;
}

const live = new Set<Managed>();
let hooked = false;

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  // Synchronous last resort: on any exit of this process, kill whatever is still running.
  process.on('exit', () => {
    for (const m of live) m.child.kill('SIGKILL');
  });
}

const SETPRIV = '/usr/bin/setpriv';

export function launch(
  name: string,
  binary: string,
  args: string[],
  logPath: string,
  env?: NodeJS.ProcessEnv,
): Managed {
  hookExit();
  const out = openSync(logPath, 'a');
  const withDeathSignal = existsSync(SETPRIV);
  const command = withDeathSignal ? SETPRIV : binary;
  const argv = withDeathSignal ? ['--pdeathsig', 'SIGKILL', '--', binary, ...args] : args;
  const child = spawn(command, argv, { stdio: ['ignore', out, out], ...(env ? { env } : {}) });
  closeSync(out);
  const managed: Managed = { name, logPath, child };
  live.add(managed);
  child.on('exit', (code, signal) => {
    managed.exited = signal ?? String(code);
    live.delete(managed);
  });
  child.on('error', (err) => {
    managed.exited = `spawn error: ${err.message}`;
    live.delete(managed);
  });
  return managed;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
export async function terminate(m: Managed, graceMs = 10_000): Promise<void> {
  if (m.exited !== undefined || m.child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => m.child.once('exit', () => resolve()));
  m.child.kill('SIGTERM');
  const timer = setTimeout(() => m.child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export function tail(path: string, lines = 40): string {
  if (!existsSync(path)) return '(no log)';
  const all = readFileSync(path, 'utf8').trimEnd().split('\n');
  return all.slice(-lines).join('\n');
}

export function describeLogs(processes: Managed[]): string {
  return processes
    .map(
      (m) =>
        `--- last lines of ${m.name} (${m.logPath})${m.exited !== undefined ? `, exited ${m.exited}` : ''} ---\n${tail(m.logPath)}`,
    )
    .join('\n');
}

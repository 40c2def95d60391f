// The test control plane itself: failures explain themselves, and nothing outlives a killed run.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startControlPlane } from '../../tools/control-plane/control-plane.ts';

const repoRoot = join(import.meta.dirname, '..', '..');

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function eventually(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

describe('the test control plane', () => {
  it('fails with the last lines of each process log when kube-apiserver cannot start', async () => {
    const error = await startControlPlane({
      extraApiserverArgs: ['--no-such-flag=1'],
      log: () => undefined,
    }).then(
      () => undefined,
      (err: Error) => err.message,
    );
    expect(error).toMatch(/^kube-apiserver exited \(1\)/);
    expect(error).toMatch(
      /last lines of kube-apiserver .*\n(.*\n)*Error: unknown flag: --no-such-flag/,
    );
    expect(error).toMatch(/last lines of etcd .*\n\{"level"/);
  });

  it('gives up at its start deadline, with the last lines of each process log', async () => {
    const error = await startControlPlane({ startTimeoutMs: 1, log: () => undefined }).then(
      () => undefined,
      (err: Error) => err.message,
    );
    expect(error).toMatch(/^timed out waiting for etcd \/health\n--- last lines of etcd/);
  });

  it('leaves no etcd or kube-apiserver behind when its owner is killed with SIGKILL', async () => {
    const owner = spawn(process.execPath, ['--import', 'tsx', 'tools/control-plane/serve.ts'], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const firstLine = await new Promise<string>((resolve, reject) => {
      createInterface({ input: owner.stdout }).once('line', resolve);
      owner.once('exit', (code) => reject(new Error(`serve.ts exited early (${code})`)));
    });
    const { pids } = JSON.parse(firstLine) as { pids: { etcd: number; kubeApiserver: number } };
    expect(isRunning(pids.etcd) && isRunning(pids.kubeApiserver)).toBe(true);

    owner.kill('SIGKILL');

    expect(
      await eventually(() => !isRunning(pids.etcd) && !isRunning(pids.kubeApiserver), 10_000),
    ).toBe(true);
  });
});

// `npm run test:faults`: the --long flag reaches the scenarios as an environment variable, and
// without it the scenarios run exactly the default (CI-sized) variant.
import { describe, expect, it } from 'vitest';
import { soakOf } from '../integration/faults/support/soak.ts';
import { planRun } from '../../tools/test-faults.ts';

describe('npm run test:faults', () => {
  it('runs every scenario file with vitest, without the soak variable, by default', () => {
    expect(planRun([], { PATH: '/bin', STENCIL_FAULTS_LONG: '1' })).toEqual({
      run: true,
      args: ['run', '--project', 'integration', 'test/integration/faults/'],
      env: { PATH: '/bin' },
    });
  });

  it('sets STENCIL_FAULTS_LONG=1 for --long and keeps the file filters', () => {
    expect(planRun(['--long', 'source-deleted'], {})).toEqual({
      run: true,
      args: ['run', '--project', 'integration', 'test/integration/faults/source-deleted'],
      env: { STENCIL_FAULTS_LONG: '1' },
    });
  });

  it('refuses an unknown flag with the usage and exit code 2', () => {
    const plan = planRun(['--longer'], {});
    expect(plan).toMatchObject({ run: false, exitCode: 2 });
    expect(!plan.run && plan.output).toMatch(/usage: npm run test:faults \[-- --long\]/);
  });
});

describe('the soak settings the scenarios read', () => {
  it('are the CI-sized run without the variable: 100 instances, one cycle, no hold', () => {
    const soak = soakOf({});
    expect([soak.long, soak.instances, soak.cycles, soak.holdMs]).toEqual([false, 100, 1, 0]);
    expect(soak.timeout(300_000)).toBe(300_000);
  });

  it('are 500 instances, three cycles and 20 s faults with STENCIL_FAULTS_LONG=1', () => {
    const soak = soakOf({ STENCIL_FAULTS_LONG: '1' });
    expect([soak.long, soak.instances, soak.cycles, soak.holdMs]).toEqual([true, 500, 3, 20_000]);
    expect(soak.timeout(1_000)).toBe(15_000);
  });
});

// How hard the fault scenarios push: the default run (part of `npm test`, sized for CI time) or
// the soak run of `npm run test:faults -- --long` (tools/test-faults.ts sets the variable).
// The default must stay exactly the run the figures in docs/reliability.md were taken from.

/** The variable tools/test-faults.ts sets for `--long`. */
export const LONG_ENV = 'STENCIL_FAULTS_LONG';

export interface Soak {
  readonly long: boolean;
  /** TemplateInstances in the fleet. */
  readonly instances: number;
  /** Fault → heal → check cycles, each with its own changes made during the fault. */
  readonly cycles: number;
  /** How long a fault stays in place before it is healed (0: heal at once, as by default). */
  readonly holdMs: number;
  /** Scales a test's timeout with the fleet and the cycles. */
  timeout(ms: number): number;
}

export function soakOf(env: Record<string, string | undefined>): Soak {
  if (env[LONG_ENV] !== '1') {
    return { long: false, instances: 100, cycles: 1, holdMs: 0, timeout: (ms) => ms };
  }
  // 5× the fleet makes every wave 5× longer; each of the 3 cycles repeats the whole fault.
  return { long: true, instances: 500, cycles: 3, holdMs: 20_000, timeout: (ms) => ms * 5 * 3 };
}

export const SOAK: Soak = soakOf(process.env);

/** The color owners change to during cycle `cycle`: `green` in the default single cycle. */
export function cycleColor(cycle: number): string {
  return cycle === 1 ? 'green' : `green-${cycle}`;
}

/**
 * The ten instances changed during cycle `cycle`, taken from the end of `names` (as the
 * scenarios did before cycles) and moving towards the start with each cycle.
 */
export function changedIn(names: readonly string[], cycle: number): string[] {
  return names.slice(names.length - 10 * cycle, names.length - 10 * (cycle - 1));
}

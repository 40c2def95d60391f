// Two projects: `unit` (pure, parallel) and `integration` (one real control plane per run,
// started by test/integration/global-setup.ts; files run one after another).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    teardownTimeout: 30_000,
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'test/unit/**/*.test.ts', 'test/golden/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/unit/global-setup.ts'],
          // Property-based tests run hundreds of cases: generous on a busy 2-core CI machine.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/integration/global-setup.ts'],
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});

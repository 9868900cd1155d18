import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{packages,services,apps,cli}/*/test/**/*.test.ts', 'cli/test/**/*.test.ts', 'tests/**/*.test.{ts,tsx}'],
    globalSetup: ['tests/support/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests share one Postgres server; each test makes its own tenants, so files may run in parallel.
    fileParallelism: true,
    maxWorkers: 2,
  },
});

import { defineConfig } from 'vitest/config';
import { HAVE_NOISE, HAVE_TAU2 } from './test/fixtures/data.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    pool: 'forks',
    // Tests of real tau2-bench files: skipped when the data is absent (test/fixtures/data.ts).
    tags: [
      { name: 'tau2-data', description: 'reads tau2-bench airline/retail/telecom data', skip: !HAVE_TAU2 },
      { name: 'noise-data', description: "reads tau2-bench's noise recordings", skip: !HAVE_NOISE },
    ],
    reporters: ['default', './test/fixtures/missing-data-reporter.ts'],
  },
});

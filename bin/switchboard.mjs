#!/usr/bin/env node
// Entry point for `npx switchboard`: runs the CLI from its prebuilt JavaScript (bin/prebuilt.mjs,
// built on first use and when a source changes), or, when that cannot be built or
// SWITCHBOARD_NO_PREBUILT is set, the TypeScript sources through tsx's loader.
import { prebuiltEntry } from './prebuilt.mjs';

// Output piped into a reader that stops early (`| head`): end quietly, as Unix tools do.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}

const entry = process.env.SWITCHBOARD_NO_PREBUILT ? undefined : await prebuiltEntry();
let cli;
if (entry) {
  // The bundle's URL: a domain folder's domain.ts imported at run time makes
  // src/adapters/node/ts-imports.ts register tsx, and run's rollout threads start on the
  // bundle's run-thread.js (src/cli/run-trials.ts).
  globalThis[Symbol.for('switchboard.prebuilt')] = entry;
  cli = await import(entry);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import('../src/cli/main.ts');
}
process.exitCode = await cli.main(process.argv.slice(2));

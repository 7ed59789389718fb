#!/usr/bin/env node
// Entry point for `npx switchboard`: runs the TypeScript CLI through tsx's loader.
import { register } from 'tsx/esm/api';

// Output piped into a reader that stops early (`| head`): end quietly, as Unix tools do.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));

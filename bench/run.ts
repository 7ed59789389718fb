/** `npm run bench`: prints medians and their ratio to each target. */
import { coreCases } from './core.ts';
import { runCases } from './harness.ts';

await runCases('Core (carrier domain, sql.js in-process)', await coreCases());

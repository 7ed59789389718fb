/**
 * The child process of the pool bench's "one core" reading (bench/pool.ts, `oneCore`): started
 * under `taskset -c <cpu>`, it runs `--concurrency 1` rounds on that one CPU when asked.
 */
import { serveOneCoreRounds } from './pool.ts';

await serveOneCoreRounds();

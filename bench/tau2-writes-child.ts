/**
 * One child process of the `tau2-writes` bench (bench/tau2-writes.ts, `tau2WritesLines`): it
 * measures every write tool asked for in this process, beside its own tau2 process, and sends its
 * figures (or the error that stopped it) to the parent over IPC.
 */
import { type ChildAnswer, measureWrites } from './tau2-writes.ts';

const root = process.env.SWITCHBOARD_BENCH_WRITES_ROOT;
let answer: ChildAnswer;
try {
  if (!root)
    throw new Error('SWITCHBOARD_BENCH_WRITES_ROOT is not set: run this through `npm run bench -- tau2-writes`');
  answer = await measureWrites(root);
} catch (e) {
  answer = { error: e instanceof Error ? (e.stack ?? e.message) : String(e) };
}
process.send!(answer, () => process.disconnect());

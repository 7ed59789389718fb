/**
 * `run`'s rollout threads (issue 15, item 5): trials run in a pool of worker threads give the
 * same trajectories, byte for byte, and the same summary as all in the CLI's thread; the pool
 * reports a thread's set-up failure and a job's error by message.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startThreadPool } from '../../src/adapters/node/thread-pool.ts';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';

const dir = mkdtempSync(join(tmpdir(), 'sb-threads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `run` with `extra` flags into a fresh folder: the trajectories file and the summary. */
async function run(name: string, domain: string, extra: string[]) {
  const out = join(dir, name);
  const io = capture();
  const code = await main(
    ['run', '--domain', domain, '--trials', '2', '--seed', '7', '--out', out, '--json', ...extra],
    io,
  );
  expect(code, io.stderr).toBe(0);
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
  return { lines: readFileSync(join(out, 'trajectories.jsonl'), 'utf8'), summary };
}

describe('rollout threads', () => {
  for (const domain of ['carrier', 'insurance-renewal']) {
    it(`${domain}: 2 threads give the trajectories of 1, byte for byte`, async () => {
      const one = await run(`${domain}-1`, domain, ['--concurrency', '1']);
      const two = await run(`${domain}-2`, domain, ['--concurrency', '4', '--threads', '2']);
      expect(one.summary.settings.threads).toBe(1);
      expect(two.summary.settings.threads).toBe(2);
      expect(two.lines).toBe(one.lines);
      expect(one.lines.trim().split('\n').length).toBe(one.summary.totals.episodes);
      const { settings: s1, ...rest1 } = one.summary;
      const { settings: s2, ...rest2 } = two.summary;
      expect(rest2).toEqual(rest1);
      expect({ ...s2, concurrency: 1, threads: 1 }).toEqual(s1);
      expect(rest1.totals.valid).toBeGreaterThan(0);
    }, 120_000);
  }

  it('pool: jobs spread over the threads, job errors and set-up failures by message', async () => {
    const entry = new URL('../fixtures/threads/double-thread.ts', import.meta.url);
    const pool = await startThreadPool<number, { value: number; thread: number }>(entry, {}, 2);
    try {
      expect(pool.size).toBe(2);
      const results = await Promise.all([1, 2, 3, 4, 5].map((n) => pool.run(n)));
      expect(results.map((r) => r.value)).toEqual([2, 4, 6, 8, 10]);
      expect(new Set(results.map((r) => r.thread)).size).toBe(2);
      await expect(pool.run(-3)).rejects.toThrow('negative: -3');
      expect((await pool.run(21)).value).toBe(42);
    } finally {
      await pool.close();
    }
    // Every thread gone: a job rejects with why instead of waiting for a reply that never comes.
    await expect(pool.run(1)).rejects.toThrow(/^rollout thread exited with code \d+$/);
    await expect(startThreadPool(entry, { failSetup: 'no data in /nowhere' }, 2)).rejects.toThrow(
      'no data in /nowhere',
    );
  }, 60_000);
});

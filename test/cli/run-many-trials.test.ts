/**
 * Runs of many trials (issue 15's review): `--trials` is capped with a clear error (2^31 − 1 ran
 * out of memory before any trial), and the score table stays readable: pass^1 … pass^8 and a
 * task's first 20 rewards, while summary.json keeps every k and every reward.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { MAX_TRIALS } from '../../src/cli/commands/run.ts';
import { capture } from '../fixtures/cli-io.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('run with many trials', () => {
  it('refuses more than 100,000 trials a task, before any work', async () => {
    const io = capture();
    expect(await main(['run', '--domain', 'carrier', '--trials', String(MAX_TRIALS + 1)], io)).toBe(2);
    expect(io.stderr).toContain(`--trials must be a whole number from 1 to ${MAX_TRIALS}`);
    expect(MAX_TRIALS).toBe(100_000);
  });

  it('30 trials: the table shows pass^1 … pass^8 and 20 rewards a task; summary.json all 30', async () => {
    const out = await mkdtemp(join(tmpdir(), 'sb-many-'));
    dirs.push(out);
    const io = capture();
    const args = ['run', '--domain', 'carrier', '--task-ids', 'carrier-pay-balance-1', '--trials', '30'];
    expect(await main([...args, '--out', out], io), io.stderr).toBe(0);
    const lines = io.stdout.split('\n');
    const header = lines.find((l) => l.startsWith('task '))!;
    expect(header.split(/\s+/)).toEqual([
      'task',
      'rewards',
      'mean',
      ...[1, 2, 3, 4, 5, 6, 7, 8].map((k) => `pass^${k}`),
      'invalid',
    ]);
    const row = lines.find((l) => l.startsWith('carrier-pay-balance-1 '))!;
    expect(row).toContain(`${Array(20).fill('1.00').join(' ')} … (30)`);
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8'));
    expect(summary.tasks[0].rewards).toEqual(Array(30).fill(1));
    expect(Object.keys(summary.totals.pass_hat)).toEqual(Array.from({ length: 30 }, (_, i) => String(i + 1)));
  }, 60_000);
});

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const ids = 'dn-easy-promise,dn-easy-busy-callback,dn-hard-no-ability';

describe('run: the objection-handled score of outbound domains, beside the reward', () => {
  it('summary.json has it per trial and in the totals; the reward is untouched', async () => {
    const out = await mkdtemp(join(tmpdir(), 'sb-obj-'));
    dirs.push(out);
    const io = capture();
    const args = ['run', '--domain', 'debt-negotiation', '--agent', 'reference', '--trials', '2'];
    expect(await main([...args, '--task-ids', ids, '--out', out, '--json'], io)).toBe(0);
    const summary = JSON.parse(io.stdout);
    expect(JSON.parse(await readFile(join(out, 'summary.json'), 'utf8'))).toEqual(summary);
    // In the domain's task order: the busy callee has no negotiation card (absent); dn-easy-promise
    // raises no objection (null);
    // dn-hard-no-ability raises two, both handled (share_finances, register_callback).
    expect(
      summary.tasks.map((t: { task_id: string; rewards: number[]; objections?: unknown }) => [
        t.task_id,
        t.rewards,
        t.objections,
      ]),
    ).toEqual([
      ['dn-easy-busy-callback', [1, 1], undefined],
      ['dn-easy-promise', [1, 1], [null, null]],
      ['dn-hard-no-ability', [1, 1], [1, 1]],
    ]);
    expect(summary.totals.objections).toEqual({ raised: 4, handled: 4, score: 1 });
    expect(summary.totals.mean_reward).toBe(1);
  });

  it('the CLI table shows an objections column for an outbound domain, none for carrier', async () => {
    const io = capture();
    expect(await main(['run', '--domain', 'debt-negotiation', '--agent', 'reference', '--task-ids', ids], io)).toBe(0);
    const lines = io.stdout.split('\n');
    expect(lines[1]).toBe('task                   rewards   mean  pass^1  invalid  objections');
    expect(lines.slice(3, 7)).toEqual([
      'dn-easy-busy-callback  1.00     1.000   1.000        0',
      'dn-easy-promise        1.00     1.000   1.000        0  -',
      'dn-hard-no-ability     1.00     1.000   1.000        0  1.00',
      'ALL                             1.000   1.000        0  2/2',
    ]);
    const carrier = capture();
    expect(
      await main(['run', '--domain', 'carrier', '--agent', 'noop', '--task-ids', 'carrier-change-plan-1'], carrier),
    ).toBe(0);
    expect(carrier.stdout).not.toContain('objections');
  });
});

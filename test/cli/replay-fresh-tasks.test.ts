import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { writeBank } from '../../src/adapters/node/task-bank.ts';
import type { ReplayDocument } from '../../src/cli/commands/replay.ts';
import { main } from '../../src/cli/main.ts';
import { admitToBank } from '../../src/core/evolution/index.ts';
import type { Task } from '../../src/core/schema/task.ts';
import { capture } from '../fixtures/cli-io.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('replay --fresh-tasks: old trajectories re-scored against the current task version', () => {
  it('a version 2 whose new assertion the recorded episode breaks: reward 1 as recorded, 0 fresh', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-fresh-'));
    dirs.push(dir);
    const id = 'carrier-pay-balance-1';
    // Version 1 (the domain's task): the reference agent's episode, reward 1.
    const run = join(dir, 'run');
    expect(await main(['run', '--domain', 'carrier', '--task-ids', id, '--out', run], capture())).toBe(0);
    // Version 2 in a bank: the agent must also check the payment record after paying (R3).
    const domain = await loadBuiltinDomain('carrier');
    const v2: Task = structuredClone(domain.tasks.find((t) => t.id === id)!);
    v2.evaluation_criteria!.assertions!.push({
      id: 'payment-recorded',
      rule: 'R3',
      text: '缴费后查询缴费记录，确认已到账',
      check: { kind: 'read_after_write', tool: 'get_payments', after: 'pay_bill_from_balance' },
    });
    v2.lineage = {
      version: 2,
      parent: { task_id: id, version: 1 },
      generation: 0,
      changes: [{ version: 2, reason: 'check the payment record after paying', by: 'hand' }],
    };
    const bank = join(dir, 'bank');
    await writeBank(bank, domain.tasks, admitToBank({ domain: 'carrier', tasks: [], versions: [] }, [v2]));
    const file = join(run, 'trajectories.jsonl');

    // Default: scored with the version it recorded (1): equal.
    const io = capture();
    expect(await main(['replay', file, '--domain', 'carrier', '--bank', bank, '--json'], io)).toBe(0);
    const same = JSON.parse(io.stdout) as ReplayDocument;
    expect(same.rewards.map((r) => [r.recorded, r.ours, r.equal])).toEqual([[1, 1, true]]);

    // --fresh-tasks: scored with version 2, whose new assertion the episode breaks.
    const io2 = capture();
    expect(await main(['replay', file, '--domain', 'carrier', '--bank', bank, '--fresh-tasks', '--json'], io2)).toBe(1);
    const fresh = JSON.parse(io2.stdout) as ReplayDocument;
    expect(fresh.rewards.map((r) => [r.recorded, r.ours, r.equal])).toEqual([[1, 0, false]]);
    expect(fresh.rewards[0]!.ours_components).toMatchObject({ DB: 1, COMMUNICATE: 1, ASSERTIONS: 0 });
    expect(fresh.rewards[0]!.ours_notes[0]).toMatch(/^ASSERTIONS: .*payment-recorded/);

    // An episode of version 2 (evolve with the bank records task_version 2) needs the bank to
    // be re-scored as recorded; without it the command names the field.
    const ev = join(dir, 'evolve');
    const evolveArgs = ['evolve', '--domain', 'carrier', '--bank', bank, '--task-ids', id, '--k', '1', '--out', ev];
    expect(await main(evolveArgs, capture())).toBe(0);
    const io3 = capture();
    const v2file = join(ev, 'trajectories.jsonl');
    expect(await main(['replay', v2file, '--domain', 'carrier'], io3)).toBe(2);
    expect(io3.stderr).toBe(
      `switchboard: ${v2file}: task_version: episode carrier/${id}/0/0 was scored with version 2 of task ${id}, which neither the domain nor a bank (--bank) has; pass --fresh-tasks to re-score against the current version\n`,
    );
    const io4 = capture();
    expect(await main(['replay', v2file, '--domain', 'carrier', '--bank', bank, '--json'], io4)).toBe(0);
    expect((JSON.parse(io4.stdout) as ReplayDocument).rewards.map((r) => [r.recorded, r.ours])).toEqual([[0, 0]]);
  });
});

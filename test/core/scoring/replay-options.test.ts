/**
 * What scoring's replays leave out (issue 15, item 3): `writes: false` skips the row-by-row
 * writes (one read per written row); the gold state and every reward stay the same. Reads are
 * always replayed (a read tool that writes must show in the DB verdict: attribution-checks.test.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { DomainRuntime } from '../../../src/core/env/environment.ts';
import { evaluate, replayGold, replayTrajectory } from '../../../src/core/scoring/index.ts';
import { bankRuntime, bankTask, Recorder } from './fixture.ts';

const lookUp = (account_id: string) => ({ name: 'get_account', arguments: { account_id } });
const payWater30 = { name: 'pay', arguments: { account_id: 'A1', payee: 'Water', amount: 30 } };

let bank: DomainRuntime;
beforeAll(async () => {
  bank = await bankRuntime();
});

describe('replay options', () => {
  it('writes: false gives the same gold changes and errors, without the row-by-row writes', async () => {
    // A reference with a read that fails (no account A9), a read that succeeds, and a write.
    const task = bankTask({ actions: [lookUp('A9'), lookUp('A1'), payWater30], reward_basis: ['DB'] });
    const all = await replayGold(bank, task);
    const lean = await replayGold(bank, task, { writes: false });
    expect(lean.changes).toEqual(all.changes);
    expect(all.errors.map((e) => [e.index, e.content])).toEqual([[0, 'Error: no account A9']]);
    expect(lean.errors).toEqual(all.errors);
    expect(all.writes.find((w) => w.table === 'accounts')?.row).toEqual({
      id: 'A1',
      owner: 'Li',
      balance: 70,
      nickname: null,
    });
    expect(lean.writes).toEqual([]);
  });

  it('a trajectory replay with writes: false keeps each tool turn’s writes and the same changes', async () => {
    const task = bankTask({ actions: [lookUp('A1'), payWater30], reward_basis: ['DB'] });
    const r = await Recorder.open(bank, task);
    await r.call([
      ['get_account', { account_id: 'A1' }],
      ['pay', payWater30.arguments],
    ]);
    r.agent('Paid 30 to Water.');
    const turns = await r.done();
    const full = await replayTrajectory(bank, task, turns);
    const lean = await replayTrajectory(bank, task, turns, { writes: false });
    try {
      expect(lean.changes).toEqual(full.changes);
      expect(lean.turns).toEqual(full.turns);
      expect(full.writes).toHaveLength(5); // payments: 4 columns inserted; accounts: balance
      expect(lean.writes).toEqual([]);
    } finally {
      await full.env.close();
      await lean.env.close();
    }
    // evaluate replays with both options off: the same reward and DB details as with a full gold.
    const lean2 = await evaluate(bank, task, turns);
    const withFullGold = await evaluate(bank, task, turns, { gold: await replayGold(bank, task) });
    expect(lean2.reward).toBe(1);
    expect(lean2.components.DB).toEqual(withFullGold.components.DB);
  });

  it('diverged lists the tool turns whose replayed content or error flag differs from the recorded one', async () => {
    const task = bankTask({ actions: [payWater30], reward_basis: ['DB'] });
    const r = await Recorder.open(bank, task);
    await r.call([
      ['get_account', { account_id: 'A1' }],
      ['pay', payWater30.arguments],
      ['get_account', { account_id: 'A9' }],
      ['get_account', { account_id: 'A1' }],
    ]);
    const turns = await r.done();
    const same = await replayTrajectory(bank, task, turns);
    // Recorded outcomes edited: another balance (content), and a failure recorded as a success.
    const edited = turns.map((t, i) =>
      t.role !== 'tool'
        ? t
        : i === 1
          ? { ...t, content: t.content.replace('100', '99') }
          : i === 3
            ? { ...t, error: false }
            : t,
    );
    const other = await replayTrajectory(bank, task, edited);
    try {
      expect(turns.map((t) => t.role)).toEqual(['assistant', 'tool', 'tool', 'tool', 'tool']);
      expect(turns[1]!.role === 'tool' && turns[1]!.content).toContain('100');
      expect(same.diverged).toEqual([]);
      expect(other.diverged).toEqual([1, 3]);
      expect(other.turns).toEqual(same.turns);
    } finally {
      await same.env.close();
      await other.env.close();
    }
  });
});

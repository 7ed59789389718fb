/**
 * Issue 12: a reward that needed a judge and had none is marked partial on every row (the field
 * is always present) and counted apart in the summary, never silently an outcome of 0; `groups`
 * and `serve` take `--judge` / `--judge-n` like `run`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { main } from '../../src/cli/main.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ReferenceAgent, ScriptedUser } from '../../src/core/participants/scripted.ts';
import type { Judge } from '../../src/core/participants/types.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import {
  conversationGroups,
  grpoRows,
  runWithMilestones,
  scoreGroups,
  turnGroups,
} from '../../src/core/training/index.ts';
import { capture } from '../fixtures/cli-io.ts';
import { MINI_NOW, miniDomain, payTask } from '../fixtures/mini-domain.ts';

let rt: DomainRuntime;
const clock = (_seed?: number, fromMs?: number) => steppingClock(fromMs ?? MINI_NOW, 1000);
const user = () => new ScriptedUser();
const agent = () => new ReferenceAgent();
const yes: Judge = {
  id: 'yes',
  judge: async (items) => items.map((i) => ({ id: i.id, met: true, turn: null, reason: 'said' })),
};

beforeAll(async () => {
  const nlTask = {
    ...payTask,
    evaluation_criteria: {
      ...payTask.evaluation_criteria,
      reward_basis: ['DB', 'NL_ASSERTION'],
      nl_assertions: ['The agent tells the caller the new balance.'],
    },
  };
  rt = await DomainRuntime.create(miniDomain([nlTask as typeof payTask]), await sqlJsFactory());
});

describe('partial rewards', () => {
  it('without a judge every row is partial (outcome kept), counted apart; with one none is', async () => {
    const task = rt.domain.tasks[0]!;
    const base = { runtime: rt, agent, user, clock, tasks: [task], k: 2, seed: 0 };
    const bare = await conversationGroups(base);
    const batch = scoreGroups(bare.groups);
    const rows = grpoRows(rt.domain, batch);
    expect(rows.map((r) => [r.final_reward, r.outcome, r.partial])).toEqual([
      [1, 1, true],
      [1, 1, true],
    ]);
    expect(batch.supply.partial_rows).toBe(2);
    const judged = scoreGroups((await conversationGroups({ ...base, judge: yes })).groups);
    expect(grpoRows(rt.domain, judged).map((r) => [r.final_reward, r.outcome, r.partial])).toEqual([
      [1, 1, false],
      [1, 1, false],
    ]);
    expect(judged.supply.partial_rows).toBe(0);

    // Turn level: the continued episode needs the judge too.
    const { trajectory } = await runWithMilestones({ runtime: rt, agent, user, clock, task, seed: 0 });
    const at2 = (judge?: Judge) =>
      turnGroups({
        runtime: rt,
        task,
        trajectory,
        agent,
        k: 2,
        seed: 1,
        points: [2],
        ...(judge ? { judge } : {}),
        continuation: { user, clock, ...(judge ? { judge } : {}) },
      });
    const turn = await at2();
    expect(grpoRows(rt.domain, scoreGroups(turn.groups)).map((r) => r.partial)).toEqual([true, true]);
    const turnJudged = await at2(yes);
    // ½ · rubric 1 + ½ · 0.99⁴ · 1: the reference step, then four agent turns to the end of the call.
    expect(grpoRows(rt.domain, scoreGroups(turnJudged.groups)).map((r) => [r.partial, r.final_reward])).toEqual([
      [false, 0.980298005],
      [false, 0.980298005],
    ]);
  });

  it('groups and serve take --judge / --judge-n like run', async () => {
    for (const cmd of ['groups', 'serve']) {
      const io = capture();
      const extra = cmd === 'groups' ? ['--out', '/tmp/never-written.jsonl'] : [];
      expect(await main([cmd, '--domain', 'carrier', '--judge-n', '3', ...extra], io)).toBe(2);
      expect(io.stderr).toContain('--judge-n needs --judge');
    }
    const io = capture();
    expect(await main(['groups', '--help'], io)).toBe(0);
    expect(io.stdout).toMatch(/--judge <spec>[\s\S]*--judge-n <n>[\s\S]*--filter <f>/);
  });
});

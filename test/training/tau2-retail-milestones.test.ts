/**
 * Issue 12, milestones on tau2-bench retail: reference actions that fail on purpose (the
 * deliberate wrong lookups of test/golden/tau2-reference-failures.json) do not block milestone
 * matching. Needs tau2-bench data (test/fixtures/data.ts).
 * @module-tag tau2-data
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DomainRuntime } from '../../src/core/env/environment.ts';
import { ReferenceAgent, ScriptedUser } from '../../src/core/participants/scripted.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import {
  failingReferenceActions,
  milestoneGroups,
  referencePrefix,
  runWithMilestones,
} from '../../src/core/training/index.ts';
import { tau2Runtime } from '../domains/tau2-helpers.ts';

let runtime: DomainRuntime;
let now: number;
const golden = JSON.parse(readFileSync(new URL('../golden/tau2-reference-failures.json', import.meta.url), 'utf8'));

beforeAll(async () => {
  ({ runtime } = await tau2Runtime('tau2-retail'));
  now = runtime.domain.now;
});

describe('milestones past deliberate reference failures (tau2 retail)', () => {
  it('task 2: the failing lookup is skipped and every later reference call still makes a milestone', async () => {
    const task = runtime.domain.tasks.find((t) => t.id === '2')!;
    const failing = await failingReferenceActions(runtime, task);
    const expected = golden.retail
      .filter((f: { task_id: string }) => f.task_id === '2')
      .map((f: { action_index: number }) => f.action_index);
    expect([...failing]).toEqual(expected);
    expect([...failing]).toEqual([1]);
    const clock = (_seed?: number, fromMs?: number) => steppingClock(fromMs ?? now, 1000);
    const user = () => new ScriptedUser();
    const { trajectory, milestones } = await runWithMilestones({
      runtime,
      agent: () => new ReferenceAgent(),
      user,
      clock,
      task,
      seed: 0,
    });
    const agentActions = (task.evaluation_criteria?.actions ?? []).filter((a) => a.requestor === 'assistant');
    expect(agentActions.length).toBe(11);
    // Without skipping, the call after the failed lookup breaks the prefix (only 1 of 11 matched before).
    expect(referencePrefix(task, trajectory.turns)).toBeNull();
    expect(referencePrefix(task, trajectory.turns, failing)).toBe(agentActions.length - 1);
    expect(milestones.map((m) => m.level)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(milestones[1]!.matched.map((c) => c.name)).toEqual([agentActions[0]!.name, agentActions[2]!.name]);
    const out = await milestoneGroups({
      runtime,
      agent: () => new ReferenceAgent(),
      user,
      clock,
      tasks: [task],
      k: 2,
      seed: 0,
    });
    expect(out.groups).toHaveLength(10);
    expect(out.groups.every((g) => g.samples.length === 2 && g.samples.every((s) => s.rewards.final === 1))).toBe(true);
  });
});

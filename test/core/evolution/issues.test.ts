import { describe, expect, it } from 'vitest';
import {
  labelTasks,
  taskIssues,
  updateIssues,
  type Attribution,
  type TaskIssue,
} from '../../../src/core/evolution/index.ts';
import type { Trajectory } from '../../../src/core/schema/trajectory.ts';

/** A scored rollout: reward 1 or 0. */
function rollout(task: string, trial: number, reward: number): Trajectory {
  return {
    schema_version: 1,
    id: `d/${task}/${trial}/${trial}`,
    domain: 'd',
    task_id: task,
    trial,
    seed: trial,
    participants: { agent: 'a', user: 'scripted' },
    termination: 'user_stop',
    valid: true,
    invalid_reason: null,
    turns: [],
    started_at_ms: 0,
    ended_at_ms: 0,
    reward_info: {
      reward,
      partial: false,
      basis: ['DB'],
      components: {},
      assertions: [],
      step_rewards: [],
      returns: [],
      notes: [],
    },
  };
}

const finding = (
  kind: 'noop_passes' | 'unsuppliable_value' | 'db_brittle',
  field: string | undefined,
  ids: string[],
) => ({
  kind,
  component: 'x',
  ...(field ? { field } : {}),
  detail: `${kind} ${field ?? ''}`.trim(),
  trajectory_ids: ids,
});

describe('task issues carried across rounds', () => {
  it('keeps, resolves, reopens and numbers issues by (task, finding, field)', () => {
    const first: Attribution[] = [
      {
        task_id: 'a',
        verdict: 'broken',
        findings: [finding('unsuppliable_value', 'f.x', ['d/a/0/0']), finding('noop_passes', undefined, ['noop-a'])],
      },
      { task_id: 'b', verdict: 'broken', findings: [finding('db_brittle', 'extra_read', ['d/b/0/0'])] },
      { task_id: 'c', verdict: 'broken', findings: [finding('noop_passes', undefined, ['noop-c'])] },
    ];
    const round0 = labelTasks(
      ['a', 'b', 'c'],
      ['a', 'b', 'c'].flatMap((t) => [rollout(t, 0, 0), rollout(t, 1, 0)]),
      2,
    );
    const opened = updateIssues([], 0, round0, first);
    expect(opened).toEqual(taskIssues(first));
    expect(opened.map((i) => [i.id, i.finding, i.field, i.status, i.evidence_trajectory])).toEqual([
      ['a#1', 'unsuppliable_value', 'f.x', 'open', 'd/a/0/0'],
      ['a#2', 'noop_passes', null, 'open', 'noop-a'],
      ['b#1', 'db_brittle', 'extra_read', 'open', 'd/b/0/0'],
      ['c#1', 'noop_passes', null, 'open', 'noop-c'],
    ]);
    // Round 1: a still fails, its value finding again (new evidence), the do-nothing pass gone, and
    // a new finding; b passes half the time; c did not run.
    const second: Attribution[] = [
      {
        task_id: 'a',
        verdict: 'broken',
        findings: [
          finding('unsuppliable_value', 'f.x', ['d/a/0/2', 'd/a/1/3']),
          finding('db_brittle', 'removed_read', ['d/a/1/3']),
        ],
      },
    ];
    const round1 = labelTasks(
      ['a', 'b'],
      [rollout('a', 0, 0), rollout('a', 1, 0), rollout('b', 0, 1), rollout('b', 1, 0)],
      2,
    );
    const carried = updateIssues(opened, 1, round1, second);
    expect(carried.map((i) => [i.id, i.status, i.resolution, i.evidence_trajectories])).toEqual([
      ['a#1', 'open', null, ['d/a/0/2', 'd/a/1/3']],
      ['a#2', 'resolved', 'round 1: the check no longer finds it', ['noop-a']],
      ['b#1', 'resolved', 'round 1: the task is boundary (pass rate 0.5)', ['d/b/0/0']],
      ['c#1', 'open', null, ['noop-c']],
      ['a#3', 'open', null, ['d/a/1/3']],
    ]);
    // Round 2: the do-nothing pass of a is back: the same issue reopens; resolved ones stay resolved.
    const third: Attribution[] = [
      { task_id: 'a', verdict: 'broken', findings: [finding('noop_passes', undefined, ['noop-a2'])] },
    ];
    const round2 = labelTasks(
      ['a', 'b'],
      [rollout('a', 0, 0), rollout('a', 1, 0), rollout('b', 0, 1), rollout('b', 1, 1)],
      2,
    );
    const again: TaskIssue[] = updateIssues(carried, 2, round2, third);
    expect(again.map((i) => [i.id, i.status, i.resolution])).toEqual([
      ['a#1', 'resolved', 'round 2: the check no longer finds it'],
      ['a#2', 'open', null],
      ['b#1', 'resolved', 'round 1: the task is boundary (pass rate 0.5)'],
      ['c#1', 'open', null],
      ['a#3', 'resolved', 'round 2: the check no longer finds it'],
    ]);
  });
});

/**
 * DB scoring compares the two replays' changes (runtime.diffChanges) instead of exported states.
 * Here both paths run side by side and must agree exactly (same `equal`, same lines, same order):
 * - carrier: every task, scored against its reference trajectory, the do-nothing trajectory,
 *   the reference with its last write turn dropped, and the next task's reference trajectory;
 * - tau2 airline and retail: task reference replays against the next one's and against a run
 *   without writes (tau2 tasks have no initial rows, so all start from the same state). Each
 *   needs full exports and full diffs (~0.2 s per airline task), so by default every 5th airline
 *   and every 3rd retail task; `SB_TAU2_COMPARE_ALL=1` takes all 164.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBuiltinDomain } from '../../../src/adapters/node/load-domain.ts';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime, type Environment } from '../../../src/core/env/environment.ts';
import type { StateChanges } from '../../../src/core/env/changes.ts';
import type { DbState } from '../../../src/core/env/state.ts';
import { NoopAgent, ReferenceAgent, ScriptedUser } from '../../../src/core/participants/scripted.ts';
import type { Agent } from '../../../src/core/participants/types.ts';
import { fixedClock } from '../../../src/core/ports/clock.ts';
import { runEpisode } from '../../../src/core/rollout/episode.ts';
import { diffWithGold, evaluate, goldState, replayGold, replayTrajectory } from '../../../src/core/scoring/index.ts';
import type { Task } from '../../../src/core/schema/task.ts';
import type { Turn } from '../../../src/core/schema/trajectory.ts';
import { tau2Runtime } from '../../domains/tau2-helpers.ts';

describe('carrier: change-based DB diff equals the full-state diff', () => {
  let runtime: DomainRuntime;
  beforeAll(async () => {
    runtime = await DomainRuntime.create(await loadBuiltinDomain('carrier'), await sqlJsFactory());
  });
  afterAll(() => runtime.close());

  const episode = async (task: Task, agent: Agent) =>
    (
      await runEpisode({
        runtime,
        task,
        agent,
        user: new ScriptedUser(),
        seed: 0,
        clock: fixedClock(runtime.domain.now),
      })
    ).turns;

  it('every task: reference, do-nothing, reference minus its last write, another task’s reference', async () => {
    const tasks = runtime.domain.tasks;
    const references = new Map<string, Turn[]>();
    for (const task of tasks) references.set(task.id, await episode(task, new ReferenceAgent()));
    let pairs = 0;
    let different = 0;
    for (const [i, task] of tasks.entries()) {
      const gold = await replayGold(runtime, task);
      const full = await goldState(runtime, task);
      const reference = references.get(task.id)!;
      const lastWrite = reference.findLastIndex((t) => t.role === 'tool' && (t.writes?.length ?? 0) > 0);
      const variants: [string, readonly Turn[]][] = [
        ['reference', reference],
        ['do-nothing', await episode(task, new NoopAgent())],
        ['minus last write', lastWrite < 0 ? reference : reference.filter((_, j) => j !== lastWrite)],
        ['next task', references.get(tasks[(i + 1) % tasks.length]!.id)!],
      ];
      for (const [label, turns] of variants) {
        const predicted = await replayTrajectory(runtime, task, turns);
        try {
          const expected = runtime.diff(full, await predicted.env.exportState());
          expect(runtime.diffChanges(gold.changes, predicted.changes), `${task.id} / ${label}`).toEqual(expected);
          expect(await diffWithGold(runtime, task, gold, predicted)).toEqual(expected);
          if (label === 'reference') expect(expected.equal, task.id).toBe(true);
          pairs += 1;
          if (!expected.equal) different += 1;
        } finally {
          await predicted.env.close();
        }
      }
    }
    expect(pairs).toBe(tasks.length * 4);
    expect(different).toBeGreaterThanOrEqual(tasks.length);
  });

  it('DB scores of the reference and the do-nothing agent are unchanged', async () => {
    for (const task of runtime.domain.tasks) {
      const info = await evaluate(runtime, task, await episode(task, new ReferenceAgent()));
      expect(info.components.DB?.score, task.id).toBe(1);
    }
  });
});

describe.each(['tau2-airline', 'tau2-retail'] as const)(
  '%s: change-based DB diff equals the full-state diff',
  { tags: ['tau2-data'] },
  (name) => {
    interface Replay {
      task: Task;
      state: DbState;
      changes: StateChanges;
    }

    async function replay(runtime: DomainRuntime, task: Task, actions: boolean): Promise<Replay> {
      const env: Environment = await runtime.open(task);
      try {
        if (actions) {
          for (const [i, a] of (task.evaluation_criteria?.actions ?? []).entries()) {
            await env.call({ id: `a${i}`, name: a.name, arguments: a.arguments }, a.requestor, i);
          }
        }
        return { task, state: await env.exportState(), changes: await env.changes() };
      } finally {
        await env.close();
      }
    }

    const every = process.env.SB_TAU2_COMPARE_ALL === '1' ? 1 : name === 'tau2-airline' ? 5 : 3;

    it(`reference replays (1 task in ${every}) against the next one and against no writes`, async () => {
      const { domain, runtime } = await tau2Runtime(name);
      const none = await replay(runtime, domain.tasks[0]!, false);
      expect(none.changes).toEqual({ rows: {}, whole: {} });
      const replays: Replay[] = [];
      for (const task of domain.tasks.filter((_, i) => i % every === 0))
        replays.push(await replay(runtime, task, true));
      let different = 0;
      for (const [i, gold] of replays.entries()) {
        const next = replays[(i + 1) % replays.length]!;
        for (const [label, predicted] of [
          ['next', next],
          ['none', none],
        ] as const) {
          const expected = runtime.diff(gold.state, predicted.state);
          expect(runtime.diffChanges(gold.changes, predicted.changes), `${gold.task.id} / ${label}`).toEqual(expected);
          if (!expected.equal) different += 1;
        }
      }
      // Most reference solutions write, and no two neighbours write the same.
      expect(different).toBeGreaterThan(replays.length);
    });
  },
);

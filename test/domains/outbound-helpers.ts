/** Shared harness of the outbound-domain tests (insurance-renewal, debt-negotiation). */
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import type { PlanStep } from '../../src/core/participants/reference-plan.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import type { Agent } from '../../src/core/participants/types.ts';
import { fixedClock } from '../../src/core/ports/clock.ts';
import { runEpisode } from '../../src/core/rollout/episode.ts';
import type { Domain } from '../../src/core/schema/domain.ts';
import type { Task } from '../../src/core/schema/task.ts';
import type { RewardInfo, Trajectory } from '../../src/core/schema/trajectory.ts';
import { evaluate } from '../../src/core/scoring/index.ts';

/** A built-in domain, its runtime, a task by id, and one scored episode against the scripted callee. */
export interface OutboundHarness {
  domain: Domain;
  runtime: DomainRuntime;
  task(id: string): Task;
  play(t: Task, agent: Agent): Promise<{ trajectory: Trajectory; info: RewardInfo }>;
}

/** Load a built-in domain on sql.js and return its harness (seed 0, the domain's fixed clock). */
export async function outboundHarness(name: string): Promise<OutboundHarness> {
  const domain = await loadBuiltinDomain(name);
  const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
  return {
    domain,
    runtime,
    task: (id) => domain.tasks.find((t) => t.id === id)!,
    async play(t, agent) {
      const trajectory = await runEpisode({
        runtime,
        task: t,
        agent,
        user: new ScriptedUser(),
        seed: 0,
        clock: fixedClock(domain.now),
      });
      const info = await evaluate(runtime, t, trajectory.turns, { termination: trajectory.termination });
      return { trajectory, info };
    },
  };
}

/** A scripted agent that follows a fixed plan, one step per assistant turn (like the reference). */
export function planAgent(plan: readonly PlanStep[]): Agent {
  return {
    id: 'plan',
    async respond(view) {
      const step = plan[view.turns.filter((t) => t.role === 'assistant').length];
      if (!step) return { text: '再见。###STOP###' };
      return 'say' in step ? { text: step.say } : { text: '', tool_calls: [step.call] };
    },
  };
}

/** Ids of the failed assertions. */
export const failedIds = (info: RewardInfo) => info.assertions.filter((a) => a.status === 'failed').map((a) => a.id);
/** The callee's spoken lines. */
export const userLines = (t: Trajectory) => t.turns.flatMap((x) => (x.role === 'user' && x.text ? [x.text] : []));

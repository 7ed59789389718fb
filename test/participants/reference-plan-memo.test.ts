/**
 * The reference agents build a task's plan once per participant (PlanMemo) and hand out each call
 * as a fresh copy: the same replies as a plan built at every turn, and no reply shares an object
 * with another or with the kept plan.
 */
import { describe, expect, it } from 'vitest';
import { loadDomain } from '../../src/adapters/node/load-domain.ts';
import { NoisyAgent } from '../../src/core/participants/noisy.ts';
import { referencePlan } from '../../src/core/participants/reference-plan.ts';
import { ReferenceAgent } from '../../src/core/participants/scripted.ts';
import type { Agent, EpisodeView } from '../../src/core/participants/types.ts';
import { seededRng } from '../../src/core/ports/rng.ts';
import type { Domain } from '../../src/core/schema/domain.ts';
import type { Task } from '../../src/core/schema/task.ts';
import type { Turn } from '../../src/core/schema/trajectory.ts';
import { ReferenceContinuationAgent } from '../../src/core/training/continuation.ts';

/** A view in which `done` assistant turns were said (the agent is at plan step `done`). */
function viewAt(domain: Domain, task: Task, done: number): EpisodeView {
  const turns: Turn[] = Array.from({ length: done }, (_, i) => ({ role: 'assistant', text: `turn ${i}` }) as Turn);
  return { domain, task, turns, tools: [], rng: seededRng(1) };
}

describe('reference agents keep the plan, not the calls', async () => {
  const domain = await loadDomain('carrier');
  const withCall = domain.tasks.filter((t) => referencePlan(domain, t).some((s) => 'call' in s));
  const agents: [string, () => Agent][] = [
    ['reference', () => new ReferenceAgent()],
    ['noisy:0', () => new NoisyAgent({ p: 0 })],
  ];

  it.each(agents)('%s: every task, every step, the reply of a freshly built plan', async (_, make) => {
    const agent = make();
    // Tasks in turn, twice over, so the kept plan changes task each time.
    for (const task of [...withCall, ...withCall]) {
      const plan = referencePlan(domain, task);
      for (const [done, step] of plan.entries()) {
        const reply = await agent.respond(viewAt(domain, task, done));
        expect(reply).toEqual('say' in step ? { text: step.say } : { text: '', tool_calls: [step.call] });
      }
    }
  });

  it.each(agents)('%s: a call handed out twice is two objects; changing one changes nothing later', async (_, make) => {
    const agent = make();
    const task = withCall[0]!;
    const at = referencePlan(domain, task).findIndex((s) => 'call' in s);
    const first = (await agent.respond(viewAt(domain, task, at))).tool_calls![0]!;
    const expected = structuredClone(first);
    (first.arguments as Record<string, unknown>).changed = true;
    first.id = 'changed';
    const second = (await agent.respond(viewAt(domain, task, at))).tool_calls![0]!;
    expect(second).toEqual(expected);
    expect(second).not.toBe(first);
    expect(second.arguments).not.toBe(first.arguments);
  });

  it('the continuation agent hands out fresh calls too', async () => {
    const agent = new ReferenceContinuationAgent();
    const task = withCall[0]!;
    const at = referencePlan(domain, task).findIndex((s) => 'call' in s);
    const turns = referencePlan(domain, task)
      .slice(0, at)
      .map((s) => ({ role: 'assistant', text: 'say' in s ? s.say : '' }) as Turn);
    const view = { ...viewAt(domain, task, 0), turns };
    const first = (await agent.respond(view)).tool_calls![0]!;
    (first.arguments as Record<string, unknown>).changed = true;
    const second = (await agent.respond(view)).tool_calls![0]!;
    expect(second.arguments).not.toHaveProperty('changed');
    expect(second).toEqual((referencePlan(domain, task)[at] as { call: unknown }).call);
  });
});

/**
 * Issue 12, turn-level reward: the outcome term ranks a premature hang-up and a pointless reply
 * below the right action. A model agent behind a fake OpenAI-compatible endpoint answers one
 * decision point of a carrier call three ways (by the seed each request carries).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { OpenAiModelClient } from '../../src/adapters/shared/openai-client.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ModelAgent } from '../../src/core/participants/model-agent.ts';
import { ReferenceAgent, ScriptedUser } from '../../src/core/participants/scripted.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import type { Domain } from '../../src/core/schema/domain.ts';
import {
  conversationGroups,
  sampleTurnCandidates,
  scoreTurnCandidate,
  grpoRows,
  milestoneGroups,
  runWithMilestones,
  scoreGroups,
  turnGroups,
  type Group,
  type TurnSample,
} from '../../src/core/training/index.ts';
import type { Task } from '../../src/core/schema/task.ts';
import type { Trajectory } from '../../src/core/schema/trajectory.ts';
import type { Agent, ParticipantReply } from '../../src/core/participants/types.ts';
import { completion, httpError, startOpenAiServer, type Handler, type TestServer } from '../fixtures/openai-server.ts';
import { modelBrain } from '../participants/brain.ts';

let domain: Domain;
let rt: DomainRuntime;
let server: TestServer | undefined;
const clock = (_seed?: number, fromMs?: number) => steppingClock(fromMs ?? domain.now, 1000);
const user = () => new ScriptedUser();

beforeAll(async () => {
  domain = await loadBuiltinDomain('carrier');
  rt = await DomainRuntime.create(domain, await sqlJsFactory());
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Seed 1: the reference step (the brain); seed 2: a pointless reply; seed 3: hangs up mid-task. */
function threeWays(brain: Handler): Handler {
  return (body, i, req) => {
    if (body.seed === 2) return { json: completion({ model: body.model, content: '好的。' }) };
    if (body.seed === 3) return { json: completion({ model: body.model, content: '好的，再见。###STOP###' }) };
    return brain(body, i, req);
  };
}

async function source() {
  const task = domain.tasks.find((t) => t.id === 'carrier-pay-balance-1')!;
  const { trajectory } = await runWithMilestones({
    runtime: rt,
    agent: () => new ReferenceAgent(),
    user,
    clock,
    task,
    seed: 0,
  });
  return { task, trajectory };
}

/** K = 3 candidates (seeds 1, 2, 3) from a model agent at decision point 2 of `trajectory`. */
function atPoint2(client: OpenAiModelClient, task: Task, trajectory: Trajectory, continued: boolean) {
  return turnGroups({
    runtime: rt,
    task,
    trajectory,
    agent: () => new ModelAgent(client),
    k: 3,
    seed: 1,
    points: [2],
    ...(continued ? { continuation: { user, clock } } : {}),
  });
}

describe('turn reward with the outcome term', () => {
  it('a hang-up mid-task gets the lowest turn reward of its group, a pointless reply the next, exact values', async () => {
    server = await startOpenAiServer(threeWays(modelBrain(domain)));
    const client = new OpenAiModelClient({ flavor: 'vllm', model: 'agent-model', baseURL: server.url, maxRetries: 0 });
    const { task, trajectory } = await source();
    // Decision point 2: the caller has just said what they want.
    expect(trajectory.turns.slice(0, 2).map((t) => t.role)).toEqual(['assistant', 'user']);
    const { groups, invalid_attempts, incomplete } = await atPoint2(client, task, trajectory, true);
    expect([invalid_attempts, incomplete]).toEqual([0, []]);
    const samples = groups[0]!.samples;
    expect(samples.map((s) => [s.seed, s.item.candidate.text, s.item.candidate.ended ?? null])).toEqual([
      [1, '请问您的手机号码是多少？', null],
      [2, '好的。', null],
      [3, '好的，再见。', 'agent_stop'],
    ]);
    const c = samples.map((s) => s.item.score.continuation!);
    expect(c.map((x) => [x.reward, x.success, x.termination, x.agent_turns])).toEqual([
      [1, true, 'user_stop', 5],
      [1, true, 'user_stop', 6],
      [0, false, 'agent_stop', 0],
    ]);
    // Every rubric item passes for all three (text only: spoken quality is the one decided item).
    expect(samples.map((s) => s.item.score.score)).toEqual([1, 1, 1]);
    // ½·1 + ½·0.99⁵·1, ½·1 + ½·0.99⁶·1 (one extra exchange), ½·1 + ½·0 (the task is left undone).
    const want = [0.97549502495, 0.9707400747004999, 0.5];
    expect(samples.map((s) => s.rewards.final)).toEqual(want);
    expect(want[0]).toBeCloseTo(0.5 + 0.5 * 0.99 ** 5, 15);
    expect(samples.map((s) => s.rewards.outcome)).toEqual([1, 1, 0]);
    expect(Math.min(...want)).toBe(want[2]);
    const [row0, row1, row2] = grpoRows(domain, scoreGroups(groups));
    const mean = (want[0]! + want[1]! + want[2]!) / 3;
    const sd = Math.sqrt(want.reduce((a, r) => a + (r - mean) ** 2, 0) / 2);
    expect([row0!.advantage, row1!.advantage, row2!.advantage]).toEqual(want.map((r) => (r - mean) / (sd + 1e-6)));
    expect([row0!.partial, row2!.sampling_seed, row2!.messages.at(-1)]).toEqual([
      false,
      3,
      { role: 'assistant', content: '好的，再见。' },
    ]);
  });

  it('an endpoint failing some requests: every group still has exactly K samples, resampled at each granularity', async () => {
    const brain = modelBrain(domain);
    // Every request carrying seed 2 fails (HTTP 500): that sample is resampled with seed 2 + 1,000,003.
    server = await startOpenAiServer((body, i, req) => (body.seed === 2 ? httpError(500) : brain(body, i, req)));
    const client = new OpenAiModelClient({ flavor: 'vllm', model: 'agent-model', baseURL: server.url, maxRetries: 0 });
    const agent = () => new ModelAgent(client);
    const { task, trajectory } = await source();

    const turn = await turnGroups({ runtime: rt, task, trajectory, agent, k: 3, seed: 1, points: [2, 4] });
    expect(turn.groups.map((g) => g.samples.map((s) => s.seed))).toEqual([
      [1, 1_000_005, 3],
      [1, 1_000_005, 3],
    ]);
    expect([turn.invalid_attempts, turn.incomplete]).toEqual([2, []]);

    const ms = await milestoneGroups({ runtime: rt, agent, user, clock, tasks: [task], k: 2, seed: 0 });
    expect(ms.groups.map((g) => g.samples.map((s) => s.seed))).toEqual([
      [1, 1_000_005],
      [1, 1_000_005],
      [1, 1_000_005],
    ]);
    expect([ms.invalid_attempts, ms.incomplete]).toEqual([3, []]);

    const conv = await conversationGroups({ runtime: rt, agent, user, clock, tasks: [task], k: 3, seed: 0 });
    expect(conv.groups[0]!.samples.map((s) => [s.seed, s.rewards.final])).toEqual([
      [0, 1],
      [1, 1],
      [1_000_005, 1],
    ]);
    expect([conv.invalid_attempts, conv.incomplete]).toEqual([1, []]);
    const all: Group<Trajectory | TurnSample>[] = [...conv.groups, ...ms.groups, ...turn.groups];
    const rows = grpoRows(domain, scoreGroups(all), {
      milestoneTurns: new Map(ms.milestones.map((m) => [m.id, m.turns])),
    });
    expect(rows).toHaveLength(3 + 6 + 6);
    expect(rows.filter((r) => r.sampling_seed === 1_000_005)).toHaveLength(1 + 3 + 2);
  });

  it('a sample that cannot be had after its resamples leaves its decision point without a group, never a short group', async () => {
    server = await startOpenAiServer((body) =>
      body.seed % 1_000_003 === 2 ? httpError(500) : { json: completion({ model: body.model, content: '好的。' }) },
    );
    const client = new OpenAiModelClient({ flavor: 'vllm', model: 'agent-model', baseURL: server.url, maxRetries: 0 });
    const { task, trajectory } = await source();
    const turn = await atPoint2(client, task, trajectory, false);
    expect([turn.groups, turn.invalid_attempts, turn.incomplete]).toEqual([[], 3, [`${trajectory.id}@2`]]);
  });
});

describe('turn candidates with bad tool calls are refused as the episode loop refuses them', () => {
  it('unparseable arguments fail calls_succeed without running; a tool the agent lacks is refused as such', async () => {
    const { task, trajectory } = await source();
    const context = trajectory.turns.slice(0, 2);
    // What a model adapter hands over: argument text it could not decode stays a string.
    const agent = (): Agent => ({
      id: 'bad-args',
      respond: async () =>
        ({
          text: '',
          tool_calls: [
            // list_plans takes no arguments: run with {} it would succeed.
            { id: 'a', name: 'list_plans', arguments: '{bad' },
            // A caller's tool: refused as not the agent's, whatever its arguments.
            { id: 'b', name: 'check_wallet_balance', arguments: '{bad' },
            { id: 'c', name: 'list_plans', arguments: {} },
          ],
        }) as unknown as ParticipantReply,
    });
    const [candidate] = await sampleTurnCandidates({ runtime: rt, task, context, agent, seeds: [5] });
    expect(candidate!.problems).toEqual(['invalid arguments for list_plans: not valid JSON: {bad', null, null]);
    expect(candidate!.tool_calls.map((c) => c.raw_arguments ?? null)).toEqual(['{bad', '{bad', null]);
    const score = await scoreTurnCandidate(rt, task, context, candidate!);
    const tools = score.turns
      .slice(3)
      .map((t) => (t.role === 'tool' ? [t.tool_call_id, t.error, t.content.slice(0, 80)] : []));
    expect(tools[0]).toEqual(['a', true, 'Error: invalid arguments for list_plans: not valid JSON: {bad']);
    expect(tools[1]!.slice(0, 2)).toEqual(['b', true]);
    expect(tools[1]![2]).not.toContain('invalid arguments');
    expect(tools[2]!.slice(0, 2)).toEqual(['c', false]);
    const calls = score.items.find((i) => i.id === 'calls_succeed')!;
    expect(calls.status).toBe('failed');
    expect(calls.reason).toContain('list_plans: Error: invalid arguments for list_plans: not valid JSON: {bad');
  });
});

describe('a burst of failing calls in one candidate is vetoed as the episode loop would end it', () => {
  /** An agent whose one reply is `n` calls of get_bill_details for bills that do not exist. */
  const burst =
    (n: number): (() => Agent) =>
    () => ({
      id: `burst-${n}`,
      respond: async () =>
        ({
          text: '',
          tool_calls: Array.from({ length: n }, (_, i) => ({
            id: `c${i}`,
            name: 'get_bill_details',
            arguments: { bill_id: `NO-SUCH-BILL-${i}` },
          })),
        }) as unknown as ParticipantReply,
    });
  const score = async (n: number, maxErrors?: number) => {
    const { task, trajectory } = await source();
    const context = trajectory.turns.slice(0, 2);
    const [candidate] = await sampleTurnCandidates({ runtime: rt, task, context, agent: burst(n), seeds: [5] });
    return scoreTurnCandidate(rt, task, context, candidate!, maxErrors === undefined ? {} : { maxErrors });
  };

  it('9 failed calls score on their other items; the 10th (tau2-bench max_errors) makes calls_succeed a veto', async () => {
    const nine = await score(9);
    const calls9 = nine.items.find((i) => i.id === 'calls_succeed')!;
    expect([calls9.status, calls9.veto]).toEqual(['failed', false]);
    expect(nine.score).toBeGreaterThan(0);
    const decided = nine.items.filter((i) => i.status === 'passed' || i.status === 'failed');
    expect(nine.score).toBe(decided.filter((i) => i.status === 'passed').length / decided.length);
    expect(nine.reward).toBe(nine.score);

    const ten = await score(10);
    const calls10 = ten.items.find((i) => i.id === 'calls_succeed')!;
    expect([calls10.status, calls10.veto]).toEqual(['failed', true]);
    expect(
      calls10.reason.startsWith(
        '10 failed calls, 0 before this turn: the episode ends at 10 (too_many_errors); get_bill_details: ',
      ),
    ).toBe(true);
    expect([ten.score, ten.reward, ten.outcome]).toEqual([0, 0, 0]);
    // The other items are decided as for nine calls: only the veto zeroes the score.
    expect(ten.items.filter((i) => i.id !== 'calls_succeed').map((i) => [i.id, i.status])).toEqual(
      nine.items.filter((i) => i.id !== 'calls_succeed').map((i) => [i.id, i.status]),
    );
  });

  it("counts the context's failed agent calls and follows a lower maxErrors", async () => {
    const { task, trajectory } = await source();
    const context = trajectory.turns.slice(0, 2);
    // The context is the first candidate's turn and its 4 failed calls, then the caller speaks again.
    const [first] = await sampleTurnCandidates({ runtime: rt, task, context, agent: burst(4), seeds: [5] });
    const firstScore = await scoreTurnCandidate(rt, task, context, first!);
    const longer = [...firstScore.turns, { ...context[1]!, t_ms: firstScore.turns.at(-1)!.t_ms + 1 }];
    expect(longer.filter((t) => t.role === 'tool' && t.error).length).toBe(4);
    const [six] = await sampleTurnCandidates({ runtime: rt, task, context: longer, agent: burst(6), seeds: [6] });
    const after4 = await scoreTurnCandidate(rt, task, longer, six!);
    const calls = after4.items.find((i) => i.id === 'calls_succeed')!;
    expect([calls.veto, after4.reward]).toEqual([true, 0]);
    expect(calls.reason.startsWith('6 failed calls, 4 before this turn: the episode ends at 10')).toBe(true);
    // Five of them stay under a limit of 6 only without the context's four.
    const five = await score(5, 6);
    expect(five.items.find((i) => i.id === 'calls_succeed')!.veto).toBe(false);
    const six6 = await score(6, 6);
    expect([six6.items.find((i) => i.id === 'calls_succeed')!.veto, six6.reward]).toEqual([true, 0]);
  });
});

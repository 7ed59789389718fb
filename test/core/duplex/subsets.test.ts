import { describe, expect, it } from 'vitest';
import { DomainRuntime } from '../../../src/core/env/environment.ts';
import { steppingClock } from '../../../src/core/ports/clock.ts';
import { runEpisode } from '../../../src/core/rollout/episode.ts';
import { evaluate } from '../../../src/core/scoring/evaluate.ts';
import { ReferenceAgent, ScriptedUser } from '../../../src/core/participants/scripted.ts';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { nodeGraphRenderer } from '../../../src/adapters/node/audio/renderer.ts';
import { espeakTts } from '../../../src/adapters/node/audio/espeak-tts.ts';
import { subsetChannel, subsetSettings, type SubsetName } from '../../../src/core/duplex/turn-taking.ts';
import { callEvents } from '../../../src/core/duplex/interaction-events.ts';
import { spanTicks } from '../../../src/core/duplex/record.ts';
import type { InteractionPanel } from '../../../src/core/duplex/interaction-metrics.ts';
import { MINI_NOW, miniDomain } from '../../fixtures/mini-domain.ts';

const tts = espeakTts();

async function subsetCall(subset: SubsetName, seed = 7) {
  const rt = await DomainRuntime.create(miniDomain(), await sqlJsFactory());
  const t = await runEpisode({
    runtime: rt,
    task: rt.domain.tasks[0]!,
    agent: new ReferenceAgent(),
    user: new ScriptedUser(),
    seed,
    clock: steppingClock(MINI_NOW, 1000),
    channel: subsetChannel({ tts, renderer: nodeGraphRenderer, preset: 'clean', bargeIn: 0.9 }, subset),
    duplex: subsetSettings(subset),
  });
  const d = t.duplex!;
  return { t, d, m: d.metrics as unknown as InteractionPanel, events: callEvents(spanTicks(d)).events };
}

// The reference agent answers 0.6 s (agent wait, 3 ticks) after a caller turn, plus 0.4 s per
// tool call before it speaks: the mini task's replies follow 0, 1 (find_account) and 1 (pay) calls.
const L_R = (0.6 + 1.0 + 1.0) / 3;
const none = { yield_total: 0, backchannel_total: 0, vocal_tic_total: 0, non_directed_total: 0 };

describe('Full-Duplex-Bench-style subsets (seeded scripted calls, reference agent)', () => {
  it('backchannel: a backchannel over each of the 4 replies, all talked through', async () => {
    const { t, d, m, events } = await subsetCall('backchannel');
    expect(d.subset).toBe('backchannel');
    expect(d.spans.filter((s) => s.kind === 'backchannel').map((s) => s.text)).toEqual([
      'OK, OK.',
      'Right, right.',
      'Right, right.',
      'Mm-hmm.',
    ]);
    expect(t.turns.some((x) => 'interrupted' in x)).toBe(false);
    expect(events.map((e) => e.type)).toEqual([
      'backchannel_correct',
      'response',
      'backchannel_correct',
      'response',
      'backchannel_correct',
      'response',
      'backchannel_correct',
    ]);
    expect(m.selectivity_backchannel).toBe(1);
    expect(m.response_rate).toBe(1);
    expect(m.agent_interruption_rate).toBe(0);
    expect(m.response_latency_mean).toBeCloseTo(L_R, 12);
    expect(m.counts).toEqual({
      n_simulations: 1,
      response_total: 3,
      agent_interrupts_count: 0,
      ...none,
      backchannel_total: 4,
    });
  }, 60_000);

  it('user interruption: 3 barge-ins, each yielded to after 0.4 s; the caller lets each answer finish and the call ends by its goodbye', async () => {
    const { t, d, m, events } = await subsetCall('user-interruption');
    expect(d.subset).toBe('user-interruption');
    // The task's normal end: the caller's goodbye after the payment, 18 turns (max_steps is 100).
    expect(t.termination).toBe('user_stop');
    expect(t.turns).toHaveLength(18);
    expect(t.turns.at(-1)).toMatchObject({ role: 'user', text: 'No, that is all. Thank you, goodbye.' });
    const rt = await DomainRuntime.create(miniDomain(), await sqlJsFactory());
    expect((await evaluate(rt, rt.domain.tasks[0]!, t.turns, { termination: t.termination })).reward).toBe(1);
    // [who, kind, start, end, yielded] per span: a stop is followed by the whole reply, the urge
    // by the rest the caller had not heard (R11: get to the point; before: the whole reply again,
    // 183–204, and the caller's turn at 209–226).
    expect(d.spans.map((s) => [s.who, s.kind, s.start_tick, s.end_tick, s.yielded ?? false])).toEqual([
      ['agent', 'speech', 0, 10, false],
      ['caller', 'turn', 15, 30, false],
      ['agent', 'speech', 33, 38, true],
      ['caller', 'barge_in', 36, 47, false],
      ['agent', 'speech', 50, 60, false],
      ['caller', 'turn', 65, 82, false],
      ['agent', 'speech', 87, 99, true],
      ['caller', 'barge_in', 97, 110, false],
      ['agent', 'speech', 113, 138, false],
      ['caller', 'turn', 143, 153, false],
      ['agent', 'speech', 158, 172, true],
      ['caller', 'barge_in', 170, 180, false],
      ['agent', 'speech', 183, 192, false],
      ['caller', 'turn', 197, 214, false],
    ]);
    expect(t.turns.flatMap((x) => (x.role === 'assistant' && x.interrupted ? [x.interrupted.type] : []))).toEqual([
      'stop',
      'stop',
      'urge',
    ]);
    expect(events.filter((e) => e.category === 'yield').map((e) => [e.tick, e.latency_sec])).toEqual([
      [36, 0.4],
      [97, 0.4],
      [170, 0.4],
    ]);
    expect(m.yield_rate).toBe(1);
    expect(m.yield_latency_mean).toBeCloseTo(0.4, 12);
    expect(m.response_rate).toBe(1);
    expect(m.agent_interruption_rate).toBe(0);
    // 6 answered caller segments: 3 barge-ins and the first turn at 0.6 s, the two after tool calls at 1.0 s.
    expect(m.response_latency_mean).toBeCloseTo((4 * 0.6 + 2 * 1.0) / 6, 12);
    expect(m.counts).toEqual({
      n_simulations: 1,
      response_total: 6,
      agent_interrupts_count: 0,
      ...none,
      yield_total: 3,
    });
  }, 60_000);

  it('talking to others: an aside inside each reply, not answered, not yielded to', async () => {
    const { d, m, events } = await subsetCall('talking-to-others');
    const asides = d.spans.filter((s) => s.kind === 'aside');
    expect(asides).toHaveLength(4);
    for (const a of asides) {
      const agent = d.spans.find((s) => s.who === 'agent' && s.start_tick < a.start_tick && a.end_tick < s.end_tick);
      expect(agent).toBeDefined();
    }
    expect(events.filter((e) => e.category === 'non_directed').map((e) => e.type)).toEqual(
      asides.map(() => 'non_directed_correct'),
    );
    expect(m.selectivity_non_directed).toBe(1);
    expect(m.response_latency_mean).toBeCloseTo(L_R, 12);
    expect(m.counts).toEqual({
      n_simulations: 1,
      response_total: 3,
      agent_interrupts_count: 0,
      ...none,
      non_directed_total: 4,
    });
  }, 60_000);

  it("background speech: another voice after each reply, off the caller's turns; the agent stays silent", async () => {
    const { d, m, events } = await subsetCall('background-speech');
    const bg = d.spans.filter((s) => s.kind === 'background');
    expect(bg).toHaveLength(4);
    // One tick after the agent's reply; the caller's turn starts one tick after it.
    for (const b of bg) {
      expect(d.spans.some((s) => s.who === 'agent' && s.end_tick + 1 === b.start_tick)).toBe(true);
      expect(d.spans.some((s) => s.kind === 'turn' && s.start_tick === b.end_tick + 1)).toBe(true);
    }
    expect(events.filter((e) => e.category === 'non_directed').map((e) => [e.type, e.tick])).toEqual(
      bg.map((b) => ['non_directed_correct', b.start_tick]),
    );
    expect(m.selectivity_non_directed).toBe(1);
    expect(m.response_rate).toBe(1);
    expect(m.response_latency_mean).toBeCloseTo(L_R, 12);
    expect(m.counts).toEqual({
      n_simulations: 1,
      response_total: 3,
      agent_interrupts_count: 0,
      ...none,
      non_directed_total: 4,
    });
  }, 60_000);
});

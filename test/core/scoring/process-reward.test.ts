import { describe, expect, it } from 'vitest';
import { discountedReturns, processRewards } from '../../../src/core/scoring/process-reward.ts';
import type { Turn } from '../../../src/core/schema/trajectory.ts';

const say = (role: 'assistant' | 'user', text: string): Turn => ({ role, text, tool_calls: [], t_ms: 0 });
const tool = (name: string, error: boolean, requestor: 'assistant' | 'user' = 'assistant'): Turn => ({
  role: 'tool',
  requestor,
  tool_call_id: name,
  name,
  arguments: {},
  content: error ? 'Error: x' : 'ok',
  error,
  writes: [],
  t_ms: 0,
});

describe('discountedReturns', () => {
  it('sums discounted future rewards', () => {
    const g = discountedReturns([0, 0, 0.1, 1], 0.99);
    expect(g).toHaveLength(4);
    expect(g[3]).toBeCloseTo(1, 10);
    expect(g[2]).toBeCloseTo(1.09, 10);
    expect(g[1]).toBeCloseTo(1.0791, 10);
    expect(g[0]).toBeCloseTo(1.068309, 10);
  });

  it('is empty for no rewards and the identity for γ = 0', () => {
    expect(discountedReturns([])).toEqual([]);
    expect(discountedReturns([1, 2, 3], 0)).toEqual([1, 2, 3]);
  });
});

describe('processRewards', () => {
  const turns: Turn[] = [
    say('assistant', 'Hello'), // step 0
    say('user', 'Pay please'),
    say('assistant', ''), // step 1: one success, one failure
    tool('get_account', false),
    tool('pay', true),
    say('assistant', ''), // step 2: one success
    tool('pay', false),
    say('user', ''), // a caller tool call: not the agent's
    tool('top_up', true, 'user'),
    say('assistant', 'Done'), // step 3: final reward
  ];

  it('gives one step per assistant turn with ±0.1 per call and the final reward last', () => {
    const p = processRewards(turns, 1);
    expect(p.step_turns).toEqual([0, 2, 5, 9]);
    expect(p.step_rewards).toHaveLength(4);
    expect(p.step_rewards[0]).toBe(0);
    expect(p.step_rewards[1]).toBeCloseTo(0, 10);
    expect(p.step_rewards[2]).toBeCloseTo(0.1, 10);
    expect(p.step_rewards[3]).toBeCloseTo(1, 10);
    expect(p.returns[0]).toBeCloseTo(1.068309, 10);
    expect(p.returns[1]).toBeCloseTo(1.0791, 10);
    expect(p.returns[2]).toBeCloseTo(1.09, 10);
    expect(p.returns[3]).toBeCloseTo(1, 10);
  });

  it('takes custom shaping values', () => {
    const p = processRewards(turns, 0, { success: 1, failure: -2, gamma: 0.5 });
    expect(p.step_rewards).toEqual([0, -1, 1, 0]);
    expect(p.returns).toEqual([-0.25, -0.5, 1, 0]);
  });

  it('has no steps without an assistant turn', () => {
    expect(processRewards([say('user', 'hi')], 1)).toEqual({ step_turns: [], step_rewards: [], returns: [] });
  });
});

/**
 * Process reward (ours, for GRPO turn-level credit): per-step shaping rewards and their
 * discounted returns.
 */
import type { Turn } from '../schema/trajectory.ts';
import { toolTurns } from './turns.ts';

/** Shaping parameters. */
export interface ProcessRewardOptions {
  /** Added per successful agent tool call. Default +0.1. */
  success?: number;
  /** Added per failed agent tool call (a negative number). Default −0.1. */
  failure?: number;
  /** Discount factor γ of the returns. Default 0.99. */
  gamma?: number;
}

/** Defaults of {@link ProcessRewardOptions}. */
export const PROCESS_DEFAULTS: Required<ProcessRewardOptions> = { success: 0.1, failure: -0.1, gamma: 0.99 };

/** Process rewards of one episode. */
export interface ProcessRewards {
  /** Index of the assistant turn of each step. */
  step_turns: number[];
  /** r_t per step, the final reward included in the last one. */
  step_rewards: number[];
  /** G_t = Σ_{k≥t} γ^(k−t) r_k. */
  returns: number[];
}

/**
 * Discounted returns G_t = Σ_{k≥t} γ^(k−t) r_k, computed backwards (G_t = r_t + γ G_{t+1}).
 */
export function discountedReturns(rewards: readonly number[], gamma: number = PROCESS_DEFAULTS.gamma): number[] {
  const out = new Array<number>(rewards.length);
  let g = 0;
  for (let t = rewards.length - 1; t >= 0; t--) {
    g = rewards[t]! + gamma * g;
    out[t] = g;
  }
  return out;
}

/**
 * One step per assistant turn: r_t = `success` × (its successful tool calls) + `failure` × (its
 * failed ones), where a turn's calls are the agent tool turns it issued; `finalReward` is added
 * to the last step. Success is read from the tool turns' `error` flags. An episode without an
 * assistant turn has no steps.
 */
export function processRewards(
  turns: readonly Turn[],
  finalReward: number,
  opts: ProcessRewardOptions = {},
): ProcessRewards {
  const { success, failure, gamma } = { ...PROCESS_DEFAULTS, ...stripUndefined(opts) };
  const step_turns: number[] = [];
  turns.forEach((t, i) => {
    if (t.role === 'assistant') step_turns.push(i);
  });
  const step_rewards = step_turns.map(() => 0);
  const stepOf = new Map(step_turns.map((turn, step) => [turn, step]));
  for (const call of toolTurns(turns, 'assistant')) {
    const step = stepOf.get(call.callerIndex);
    if (step === undefined) continue;
    step_rewards[step]! += call.turn.error ? failure : success;
  }
  if (step_rewards.length > 0) step_rewards[step_rewards.length - 1]! += finalReward;
  return { step_turns, step_rewards, returns: discountedReturns(step_rewards, gamma) };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

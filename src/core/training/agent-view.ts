/**
 * What the agent under training may see of an episode, for trainer protocols (OpenEnv server,
 * rollouts against a policy endpoint): the caller's turns (text and, with the phone channel on,
 * the degraded audio), results of the agent's own tool calls, and agent turns the agent did not
 * write itself (the greeting said for it, a reply the caller cut short). Never the caller's tool
 * turns, database write details, the task's scenario or the gold solution.
 */
import type { DomainRuntime } from '../env/environment.ts';
import { renderAgentPrompt } from '../prompts/agent.ts';
import { toolSchema, toolsFor, type OpenAiToolSchema } from '../schema/domain.ts';
import type { Task } from '../schema/task.ts';
import type { RewardInfo, Turn, UserTurn } from '../schema/trajectory.ts';

/** Caller audio as the agent hears it: the degraded 16 kHz mono 16-bit WAV, base64 (RFC 4648). */
export interface AgentAudio {
  format: 'wav';
  /** Always 16,000 Hz (the channel's output rate). */
  sample_rate_hz: number;
  duration_ms: number;
  /** Base64 of the whole WAV file. */
  data: string;
}

/**
 * One agent-visible message, in OpenAI chat roles. `content` is always a string.
 * - `user`: a caller turn; `content` is what was heard (a dropout cuts it, asides are not in it);
 *   `audio` is the degraded WAV when the channel is on, else null.
 * - `tool`: the result of one of the agent's own tool calls (`Error: …` when it failed).
 * - `assistant`: an agent turn the agent did not write as given: the greeting said for it at the
 *   start of an inbound call, or a reply cut by a barge-in (`content` is the part the caller
 *   heard, which is all the agent's history keeps).
 */
export type AgentMessage =
  | { role: 'user'; content: string; audio: AgentAudio | null }
  | { role: 'tool'; tool_call_id: string; name: string; content: string; error: boolean }
  | { role: 'assistant'; content: string; interrupted: boolean };

/** Reads a caller turn's degraded WAV (base64) or gives null; see `degradedAudioHook`. */
export type CallerAudio = (turn: UserTurn, index: number) => string | null;

/**
 * The agent-visible messages among `turns[from…]`.
 * @param ownTurns agent turns at the start of the slice that the agent itself just sent (its
 *   step's action: 1; at reset: 0); they are left out unless a barge-in cut them.
 * @param audio reads the degraded WAV of a caller turn with channel audio.
 */
export function agentVisibleMessages(
  turns: readonly Turn[],
  from: number,
  ownTurns: number,
  audio?: CallerAudio,
): AgentMessage[] {
  const out: AgentMessage[] = [];
  let own = ownTurns;
  for (let i = from; i < turns.length; i++) {
    const t = turns[i]!;
    if (t.role === 'user') {
      const wav = t.audio ? (audio?.(t, i) ?? null) : null;
      const heard = { role: 'user' as const, content: t.text };
      // A caller turn made only of caller tool calls says nothing to the agent.
      if (!t.text && !wav) continue;
      out.push({
        ...heard,
        audio:
          wav !== null && t.audio
            ? { format: 'wav', sample_rate_hz: 16_000, duration_ms: t.audio.duration_ms, data: wav }
            : null,
      });
    } else if (t.role === 'tool') {
      if (t.requestor !== 'assistant') continue;
      out.push({ role: 'tool', tool_call_id: t.tool_call_id, name: t.name, content: t.content, error: t.error });
    } else {
      const mine = own > 0;
      own--;
      if (mine && !t.interrupted) continue;
      if (!t.text && !t.interrupted) continue;
      out.push({ role: 'assistant', content: t.text, interrupted: t.interrupted !== undefined });
    }
  }
  return out;
}

/** The agent's tools in OpenAI `tools` format (user tools excluded). */
export function agentTools(runtime: DomainRuntime): OpenAiToolSchema[] {
  return toolsFor(runtime.domain, 'assistant').map(toolSchema);
}

/**
 * The system prompt a model agent gets for `task` ({@link renderAgentPrompt}, no teacher
 * guidance): what a trainer's policy should be given so its requests match `switchboard run`.
 */
export function agentSystemPrompt(runtime: DomainRuntime, task: Task): string {
  return renderAgentPrompt({ domain: runtime.domain, task, tools: agentTools(runtime), guidance: null });
}

/**
 * Task reward and rubric components by name (`DB`, `COMMUNICATE`, `WRITE_WHITELIST`, …: the
 * scores in [0, 1], null when not computed), without assertion details or gold values.
 */
export function rewardSummary(info: RewardInfo): {
  task_reward: number;
  partial: boolean;
  basis: string[];
  components: Record<string, number | null>;
} {
  const components: Record<string, number | null> = {};
  for (const [name, c] of Object.entries(info.components)) components[name] = c?.score ?? null;
  return { task_reward: info.reward, partial: info.partial, basis: [...info.basis], components };
}

/**
 * Participant interfaces. An episode has an {@link Agent} (the voice agent under test), a
 * {@link UserSimulator} (the caller) and, for scoring, an optional {@link Judge}. Scripted,
 * remote-model and on-device implementations all sit behind these.
 */
import type { Domain, OpenAiToolSchema } from '../schema/domain.ts';
import type { Task } from '../schema/task.ts';
import type { Generation, ParticipantCard, ReplyCap, ToolCall, Turn } from '../schema/trajectory.ts';
import type { ModelRequestRecord } from '../schema/chat.ts';
import type { Rng } from '../ports/rng.ts';

/** A piece of message content. Text now; audio parts arrive with the phone channel. */
export type ContentPart =
  | { type: 'text'; text: string }
  /** 16 kHz mono 16-bit WAV, by reference (a file name or an IndexedDB key) or inline base64. */
  | { type: 'audio'; ref?: string; base64?: string; transcript?: string };

/** What a participant says or does in one turn. */
export interface ParticipantReply {
  /** Spoken text. May end with a stop token such as `###STOP###`. */
  text: string;
  /** Tool calls (agent tools for the agent, user tools for the caller). */
  tool_calls?: ToolCall[];
  /** Extra content parts (audio) besides the text. */
  parts?: ContentPart[];
  /** Model output details (token ids, logprobs) recorded on the turn; model-backed participants only. */
  generation?: Generation;
  /** The exact request the reply was generated from, recorded on an agent turn; model-backed agents only. */
  request?: ModelRequestRecord;
  /** The reply was stopped at a response limit (streamed agents: the realtime agent); recorded on the turn. */
  capped?: ReplyCap;
  /**
   * Per entry of `tool_calls` (same order), why that call is not run, or null: a refused call is
   * recorded on the turn and answered `Error: <refusal>` as a tool message instead of running
   * (the realtime agent's calls past its calls limit).
   */
  refusals?: (string | null)[];
}

/** Everything a participant may look at when deciding its next turn. */
export interface EpisodeView {
  domain: Domain;
  task: Task;
  /** The turns so far (tool turns included). Each participant reads its own side's view of it. */
  turns: readonly Turn[];
  /** Tool schemas this participant may call. */
  tools: readonly OpenAiToolSchema[];
  /** Seeded randomness for this participant. */
  rng: Rng;
  /** The rollout's seed (model participants send it as the sampling seed). */
  seed?: number;
}

/** The agent under test. */
export interface Agent {
  /** Short description written into trajectories, e.g. `reference` or `openai:qwen3-omni`. */
  readonly id: string;
  /** How a model-backed agent is set up; written into trajectories (`participants.agent_card`). */
  readonly card?: ParticipantCard;
  /**
   * Produce the next assistant turn. Called at the start of an episode (for the greeting or
   * outbound opening), after every caller turn, and after the results of the agent's own tool
   * calls. Throw {@link InfrastructureError} when the model endpoint fails.
   */
  respond(view: EpisodeView): Promise<ParticipantReply>;
  /**
   * Release what the agent holds for its episode (a realtime agent's WebSocket session). Called
   * once when the episode ends, however it ends; errors are ignored. Optional.
   */
  close?(): Promise<void>;
}

/** The simulated caller (or callee on an outbound call). */
export interface UserSimulator {
  readonly id: string;
  /** How a model-backed caller is set up; written into trajectories (`participants.user_card`). */
  readonly card?: ParticipantCard;
  /** Produce the next caller turn, after every agent text turn and after the caller's own tool results. */
  respond(view: EpisodeView): Promise<ParticipantReply>;
}

/** One item for a judge: a natural-language assertion to check against the conversation. */
export interface JudgeItem {
  id: string;
  text: string;
}

/** A judge's verdict on one item. */
export interface JudgeVerdict {
  id: string;
  met: boolean;
  /** Index of the turn that is the evidence, or null. */
  turn: number | null;
  reason: string;
}

/** Judges NL assertions and behaviour assertions that have no deterministic check. */
export interface Judge {
  readonly id: string;
  /** Judge every item in one call. Throw {@link InfrastructureError} when the judge is unreachable. */
  judge(
    items: readonly JudgeItem[],
    view: { domain: Domain; task: Task; turns: readonly Turn[] },
  ): Promise<JudgeVerdict[]>;
}

/** Re-exported where participants have always imported it (see `../errors.ts`). */
export { InfrastructureError } from '../errors.ts';

/** Stop tokens (tau2-bench's user-simulator tokens). The text before a token is still delivered. */
export const STOP_TOKENS = {
  stop: '###STOP###',
  transfer: '###TRANSFER###',
  outOfScope: '###OUT-OF-SCOPE###',
} as const;

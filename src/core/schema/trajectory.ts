/**
 * Turns, trajectories and reward records. These are plain data (JSON-serializable) so that a
 * trajectory written by the CLI and one stored by the page are the same record.
 */
import { z } from 'zod';
import { Requestor, RewardComponent } from './task.ts';
import { EffectEvent } from '../channel/timeline.ts';
import { ModelRequestRecord } from './chat.ts';
import { DuplexRecord } from '../duplex/record.ts';
import { ReplyCap } from './reply-cap.ts';

/** One tool call as a model or a scripted participant emits it. */
export const ToolCall = z.object({
  id: z.string(),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  /**
   * Ours (issue 14): the argument text exactly as the model wrote it, when it was not a JSON
   * object (the call then failed with an error tool message and `arguments` is `{}`).
   */
  raw_arguments: z.string().optional(),
});
export type ToolCall = z.infer<typeof ToolCall>;

/** A value as SQLite stores it, in JSON. */
const JsonScalar = z.union([z.string(), z.number(), z.null()]);

/**
 * One column changed by one write, captured by a database trigger (not by the tool).
 * Inserts log every column with `before: null`; deletes log every column with `after: null`.
 */
export const WriteEntry = z.object({
  /** Position in the episode's write log (1-based, increasing). */
  seq: z.number().int(),
  /** Index of the tool turn whose call made the write; -1 for setup writes. */
  turn: z.number().int(),
  actor: Requestor,
  /** Tool that made the write. */
  tool: z.string(),
  table: z.string(),
  op: z.enum(['insert', 'update', 'delete']),
  /** Primary-key columns → values of the written row. */
  key: z.record(z.string(), JsonScalar),
  column: z.string(),
  before: JsonScalar,
  after: JsonScalar,
});
export type WriteEntry = z.infer<typeof WriteEntry>;

/**
 * Ours (issue 4): what a model generated for one turn, kept for the trainer when the server gives
 * it (vLLM `return_token_ids`, `logprobs`). Absent for scripted participants.
 */
export const Generation = z.object({
  /** Model name the server reported (a LoRA adapter's served name when one was chosen). */
  model: z.string(),
  token_ids: z.array(z.number().int()).nullable().default(null),
  prompt_token_ids: z.array(z.number().int()).nullable().default(null),
  /** Natural-log probability of each generated token. */
  logprobs: z.array(z.number()).nullable().default(null),
  /**
   * Ours (issue 14): why the endpoint's token data was dropped (arrays that do not line up, e.g.
   * 6 token ids but 1 logprob; src/core/participants/token-check.ts); the arrays are then null.
   */
  token_warning: z.string().optional(),
  finish_reason: z.string().nullable().default(null),
  /** Where the tool calls came from: parsed by the server, or by us from `<tool_call>` text. */
  tool_call_source: z.enum(['server', 'text', 'none']).default('none'),
  /**
   * The model's reasoning (a `reasoning_content` / `reasoning` field, or `<think>…</think>` in
   * its text), kept for the trainer. Never delivered, spoken, or scored.
   */
  reasoning: z.string().optional(),
});
export type Generation = z.infer<typeof Generation>;

/**
 * Ours (issue 5): kinds of caller barge-in. `backchannel` ("mm-hmm", "OK OK": the agent should
 * carry on), `urge` (impatient: get to the point), `correction` (a value is corrected),
 * `question` (a new question), `stop` (a real stop).
 */
export const InterruptionType = z.enum(['backchannel', 'urge', 'correction', 'question', 'stop']);
export type InterruptionType = z.infer<typeof InterruptionType>;

/**
 * Ours (issue 5): an assistant reply the caller interrupted. The turn's `text` is only what the
 * caller heard (so COMMUNICATE, quality checks and the agent's own history see nothing else);
 * the rest is kept here for analysis. Tool calls of an interrupted reply belong to its unspoken
 * end and were not executed (the turn's `tool_calls` is empty).
 */
export const Interrupted = z.object({
  /** Sampled interruption type. */
  type: InterruptionType,
  /** What the caller heard (equals the turn's `text`). */
  heard_text: z.string(),
  /** The reply as the agent produced it. */
  full_text: z.string(),
  /** Cut position in characters (code units) of `full_text`. */
  cut_char: z.number().int(),
  /** Cut time in ms from the start of the reply's speech (TTS of the heard part; null without TTS). */
  cut_ms: z.number().nullable(),
  /** Tool calls the reply carried, not executed. */
  dropped_tool_calls: z.array(ToolCall).default([]),
  /**
   * Which picker chose the cut and wrote the caller's words when it was not the default seeded
   * heuristic: a model client's id, or `heuristic (fallback)` after malformed model output.
   */
  picker: z.string().optional(),
});
export type Interrupted = z.infer<typeof Interrupted>;

/**
 * Ours (issue 5): the caller turn's audio through the phone channel: file references (a path
 * relative to the output folder, or an IndexedDB key), length, and the effect timeline.
 */
export const TurnAudioRef = z.object({
  /** TTS audio, 16 kHz mono 16-bit WAV. */
  clean: z.string(),
  /** The same after the channel: what the agent hears, 16 kHz mono 16-bit WAV. */
  degraded: z.string(),
  /** Length of both files in ms. */
  duration_ms: z.number(),
  /** Channel preset name (`custom` for an inline preset). */
  preset: z.string(),
  /** TTS engine id. */
  tts: z.string(),
  /** Ours: the voice the caller spoke with (the persona's choice; see `persona-voice.ts`). */
  voice: z
    .object({
      language: z.string(),
      /** Engine voice name, e.g. espeak-ng `en-us+f3`. */
      name: z.string().nullable(),
      rate_wpm: z.number().nullable(),
      pitch: z.number().nullable(),
    })
    .optional(),
  timeline: z.array(EffectEvent).default([]),
});
export type TurnAudioRef = z.infer<typeof TurnAudioRef>;

/**
 * Ours (issue 5): a caller turn cut off mid-way (dropout). The turn's `text` is the heard part;
 * audio and text end at the same point.
 */
export const Dropout = z.object({
  /** What the caller meant to say. */
  full_text: z.string(),
  /** Cut position in characters (code units) of `full_text`. */
  cut_char: z.number().int(),
  /** `word`: between words; `mid_word`: inside a word. */
  mode: z.enum(['word', 'mid_word']),
  /** Cut time in ms (end of speech of the TTS of the heard part); null without TTS. */
  cut_ms: z.number().nullable(),
});
export type Dropout = z.infer<typeof Dropout>;

/**
 * Ours (issue 5): speech in a caller turn's audio that is not meant for the agent ("hold on a
 * second", said to someone else). It is not part of the turn's `text` (so scoring, COMMUNICATE
 * and the caller's own history never treat it as addressed to the agent); it is in the audio
 * at `start_ms`–`end_ms`, between `text.slice(0, at_char)` and the rest.
 */
export const Aside = z.object({
  text: z.string(),
  /** Where in the turn's `text` (code units) it was said. */
  at_char: z.number().int(),
  start_ms: z.number(),
  end_ms: z.number(),
});
export type Aside = z.infer<typeof Aside>;

export { ReplyCap } from './reply-cap.ts';

export const AssistantTurn = z.object({
  role: z.literal('assistant'),
  text: z.string().default(''),
  tool_calls: z.array(ToolCall).default([]),
  /** Milliseconds since the Unix epoch, from the injected clock. */
  t_ms: z.number(),
  /** Ours: model output details (token ids, logprobs), when a model produced the turn. */
  generation: Generation.optional(),
  /**
   * Ours (issue 12): the exact request (messages, tools, sampling with its seed) the model was
   * sent for this turn, when a model produced it; `generation` belongs to this prompt. Training
   * exports take their prompts from here. Absent for scripted agents.
   */
  request: ModelRequestRecord.optional(),
  /** Ours (issue 5): set when the caller barged in; `text` is then only the heard part. */
  interrupted: Interrupted.optional(),
  /**
   * Ours (issue 11): the reply's length in characters when it was over the reply cap
   * (`MAX_REPLY_CHARS`, src/core/rollout/limits.ts); `text` then holds only its first
   * `MAX_REPLY_CHARS` characters and `QUALITY` fails the turn.
   */
  oversize: z.number().int().positive().optional(),
  /** Ours (issue 17): the reply was stopped at a response limit ({@link ReplyCap}); `QUALITY` fails the turn. */
  capped: ReplyCap.optional(),
});
export const UserTurn = z.object({
  role: z.literal('user'),
  text: z.string().default(''),
  tool_calls: z.array(ToolCall).default([]),
  t_ms: z.number(),
  /** Ours: model output details, when a model produced the turn. */
  generation: Generation.optional(),
  /** Ours (issue 5): the turn's audio through the phone channel (runs with a channel only). */
  audio: TurnAudioRef.optional(),
  /** Ours (issue 5): the turn was cut off mid-way; `text` is the heard part. */
  dropout: Dropout.optional(),
  /** Ours (issue 5): asides in the turn's audio, not addressed to the agent and not in `text`. */
  asides: z.array(Aside).optional(),
  /** Ours (issue 5): the turn is a barge-in generated by the program on the assistant turn just before. */
  barge_in: z
    .object({
      type: InterruptionType,
      /** For `correction`: the value the caller gives, or null. */
      value: z.string().nullable().default(null),
    })
    .optional(),
});
/** Why an episode ended (tau2-bench `TerminationReason`, plus ours). */
export const TerminationReason = z.enum([
  'user_stop',
  'agent_stop',
  'transfer',
  'out_of_scope',
  'max_steps',
  'too_many_errors',
  'infrastructure_error',
]);
export type TerminationReason = z.infer<typeof TerminationReason>;

export const ToolTurn = z.object({
  role: z.literal('tool'),
  requestor: Requestor,
  tool_call_id: z.string(),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  /** Exactly what the caller of the tool sees: a string, a JSON document, or `Error: …`. */
  content: z.string(),
  error: z.boolean(),
  writes: z.array(WriteEntry).default([]),
  t_ms: z.number(),
  /**
   * Ours: set when the call never ran because the episode ended among the calls of one reply
   * (how it ended: `too_many_errors`, `infrastructure_error`, or a stop token in the reply that
   * made the call: `agent_stop`, `user_stop`, `transfer`, `out_of_scope`; a caller's yes-and-stop,
   * whose stop waits for the agent's turn, has its calls answered at once: `user_stop`). The turn only answers the call, so
   * that every call on record has its tool message (a well-formed OpenAI message sequence in every
   * export); `content` is `Error: not run: …` with the reason, `error` is true, `writes` empty.
   * It counts for nothing: no process reward, no failed call, no action match, never replayed
   * ({@link ranToolTurn}).
   */
  not_run: TerminationReason.optional(),
});
export const Turn = z.discriminatedUnion('role', [AssistantTurn, UserTurn, ToolTurn]);
export type AssistantTurn = z.infer<typeof AssistantTurn>;
export type UserTurn = z.infer<typeof UserTurn>;
export type ToolTurn = z.infer<typeof ToolTurn>;
export type Turn = z.infer<typeof Turn>;

/** Result of one reward component. `score` is in [0, 1]; `null` when it could not be computed. */
export const ComponentResult = z.object({
  score: z.number().nullable(),
  /** Human-readable lines explaining the score (diff rows, offending writes, failed checks). */
  details: z.array(z.string()).default([]),
  /** False when the component needs a judge that was not configured. */
  judged: z.boolean().default(true),
});
export type ComponentResult = z.infer<typeof ComponentResult>;

/** Verdict of one behaviour assertion. */
export const AssertionVerdict = z.object({
  id: z.string(),
  rule: z.string(),
  status: z.enum(['passed', 'failed', 'skipped', 'not_judged']),
  reason: z.string(),
  /** Index of the turn the verdict points at, when there is one. */
  turn: z.number().int().nullable().default(null),
});
export type AssertionVerdict = z.infer<typeof AssertionVerdict>;

/** The scored outcome of one episode. */
export const RewardInfo = z.object({
  /** Product of the basis components' scores; 0 on any veto. */
  reward: z.number(),
  /** True when a basis component was not judged: the reward covers the others only. */
  partial: z.boolean(),
  basis: z.array(RewardComponent),
  components: z.partialRecord(RewardComponent, ComponentResult),
  assertions: z.array(AssertionVerdict).default([]),
  /** Per-step process rewards (one step per assistant turn) with the final reward on the last. */
  step_rewards: z.array(z.number()).default([]),
  /** Discounted returns G_t of `step_rewards`. */
  returns: z.array(z.number()).default([]),
  /**
   * The DB comparison with list and key order ignored, for domains whose tables record order in
   * a column (tau2). Reported beside the `DB` verdict; never part of the reward.
   */
  db_order_insensitive: ComponentResult.optional(),
  /**
   * Ours (issue 18), outbound negotiations only: which of the callee's objections the agent
   * addressed (`scoring/objections.ts`); `score` = handled / raised, null when none was raised.
   * Reported beside the reward; never part of the reward basis.
   */
  objections: z
    .object({
      raised: z.number().int(),
      handled: z.number().int(),
      score: z.number().nullable(),
      items: z.array(z.object({ turn: z.number().int(), text: z.string(), handled: z.boolean(), reason: z.string() })),
    })
    .optional(),
  /** Why the reward was overridden, e.g. an episode that hit `max_steps` scores 0. */
  notes: z.array(z.string()).default([]),
});
export type RewardInfo = z.infer<typeof RewardInfo>;

/**
 * Ours (issue 4): how a model-backed participant was set up, recorded so that a trajectory says
 * which model, sampling and prompt produced it. Never holds an API key.
 */
export const ParticipantCard = z.object({
  kind: z.enum(['scripted', 'remote', 'on-device']),
  /** Server flavor (`vllm-omni`, `openai`, `vllm`) or null. */
  flavor: z.string().nullable().default(null),
  model: z.string().nullable().default(null),
  /** Endpoint base URL without credentials, or null. */
  base_url: z.string().nullable().default(null),
  sampling: z
    .object({ temperature: z.number(), top_p: z.number(), top_k: z.number().nullable(), max_tokens: z.number().int() })
    .nullable()
    .default(null),
  /** Version id of the prompt template (e.g. `agent-v1`). */
  prompt_version: z.string().nullable().default(null),
  /** The teacher-only guidance block given to the agent, verbatim, or null (see `Trajectory.teacher_guidance`). */
  teacher_guidance: z.string().nullable().default(null),
});
export type ParticipantCard = z.infer<typeof ParticipantCard>;

/** A recorded episode. */
export const Trajectory = z.object({
  schema_version: z.literal(1),
  id: z.string(),
  domain: z.string(),
  task_id: z.string(),
  /** Ours: the version of the task the episode ran (`Task.lineage.version`); absent: 1. */
  task_version: z.number().int().min(1).optional(),
  trial: z.number().int(),
  seed: z.number().int(),
  participants: z.object({
    agent: z.string(),
    user: z.string(),
    /** Ours (issue 4): how a model-backed agent was set up (never an API key). */
    agent_card: ParticipantCard.optional(),
    /** Ours (issue 4): how a model-backed caller was set up. */
    user_card: ParticipantCard.optional(),
  }),
  termination: TerminationReason,
  /** False for an episode broken by infrastructure: excluded from scores and resampled. */
  valid: z.boolean(),
  invalid_reason: z.string().nullable().default(null),
  turns: z.array(Turn),
  started_at_ms: z.number(),
  ended_at_ms: z.number(),
  reward_info: RewardInfo.nullable().default(null),
  /**
   * True when the agent had teacher-only guidance (e.g. the task's hidden facts or reference
   * solution in its prompt): fine for SFT demonstrations, refused by evaluation and GRPO runs.
   * Absent means false.
   */
  teacher_guidance: z.boolean().optional(),
  /**
   * Ours (issue 12): the caller said yes to a pending write and a stop token in the same
   * message (`turn`): the text was delivered and the agent had its turn to act before the call
   * ended (`user_stop`).
   */
  stop_deferred: z.object({ turn: z.number().int(), reason: z.string() }).optional(),
  /**
   * Ours (issue 17): the call's time axis when it ran with `--duplex` (spans of ticks, turn-taking
   * parameters, stereo WAV and label track, the call's interaction metrics). Absent: turn-based.
   */
  duplex: DuplexRecord.optional(),
});
export type Trajectory = z.infer<typeof Trajectory>;

/**
 * True for a tool turn whose call ran: any tool turn but one answering a call that never ran
 * ({@link ToolTurn}'s `not_run`). Scoring, replays and counts of calls read only these.
 */
export function ranToolTurn(t: Turn): t is ToolTurn {
  return t.role === 'tool' && t.not_run === undefined;
}

/** All writes of a trajectory, in order. */
export function trajectoryWrites(turns: readonly Turn[]): WriteEntry[] {
  const out: WriteEntry[] = [];
  for (const t of turns) if (t.role === 'tool') out.push(...t.writes);
  return out;
}

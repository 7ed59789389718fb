/**
 * The OpenEnv protocol's message shapes as Switchboard speaks them (issue 14), as zod schemas:
 * actions accepted by `step`, the observation and state documents, and the JSON Schemas served
 * at `/schema`. Shapes follow OpenEnv's env server (`openenv.core.env_server.types`): an action
 * is a JSON object with optional `metadata`, unknown fields refused; a step answer is
 * `{observation, reward, done}`; state carries `episode_id` and `step_count`. Written from the
 * protocol's documentation and types, not from its code.
 */
import { z } from 'zod';

/** A tool call in OpenAI chat form; `arguments` is the model's JSON text, kept verbatim. */
export const OpenAiToolCallIn = z
  .object({
    id: z.string().optional(),
    type: z.literal('function').optional(),
    function: z.strictObject({
      name: z.string(),
      /** JSON text as the model wrote it (an object is accepted too). */
      arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
    }),
  })
  .strict();

const Metadata = z.record(z.string(), z.unknown()).optional();

/**
 * The agent's turn: what it says (`content`) and/or the tools it calls (`tool_calls`), as an
 * OpenAI assistant message. `type` may be omitted.
 */
export const MessageAction = z.strictObject({
  type: z.literal('message').optional(),
  content: z.string().nullish(),
  tool_calls: z.array(OpenAiToolCallIn).nullish(),
  metadata: Metadata,
});

/** OpenEnv's MCP action: one tool call as the agent's whole turn. */
export const CallToolAction = z.strictObject({
  type: z.literal('call_tool'),
  tool_name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).default({}),
  metadata: Metadata,
});

/** OpenEnv's MCP action: list the agent's tools (does not advance the episode; needs no reset). */
export const ListToolsAction = z.strictObject({ type: z.literal('list_tools'), metadata: Metadata });

export const Action = z.union([MessageAction, CallToolAction, ListToolsAction]);
export type Action = z.infer<typeof Action>;

/** `reset` parameters: OpenEnv's `seed` and `episode_id`, plus our `task_id`. */
export const ResetParams = z.object({
  seed: z.number().int().min(0).nullish(),
  episode_id: z.string().max(255).nullish(),
  /** Task to play; default: the task at index `seed mod tasks` (so a bare `reset()` works). */
  task_id: z.union([z.string(), z.number()]).transform(String).nullish(),
});

const AudioDoc = z.object({
  format: z.literal('wav'),
  sample_rate_hz: z.number(),
  duration_ms: z.number(),
  data: z.string().describe('base64 of the degraded 16 kHz mono 16-bit WAV the agent hears'),
});

const MessageDoc = z.union([
  z.object({ role: z.literal('user'), content: z.string(), audio: AudioDoc.nullable() }),
  z.object({
    role: z.literal('tool'),
    tool_call_id: z.string(),
    name: z.string(),
    content: z.string(),
    error: z.boolean(),
  }),
  z.object({ role: z.literal('assistant'), content: z.string(), interrupted: z.boolean() }),
]);

const RewardDoc = z.object({
  task_reward: z.number(),
  partial: z.boolean(),
  basis: z.array(z.string()),
  components: z.record(z.string(), z.number().nullable()),
});

/** `observation.metadata`: episode bookkeeping and the reward breakdown. */
export const ObservationMetadata = z.object({
  episode_id: z.string(),
  task_id: z.string(),
  seed: z.number(),
  step_count: z.number().int(),
  /** +0.1 per successful agent tool call in this step, −0.1 per failed one. */
  process_reward: z.number(),
  termination: z.string().nullable(),
  /** False when infrastructure broke the episode: it is not scored and should be resampled. */
  valid: z.boolean(),
  invalid_reason: z.string().nullable(),
  /** The task reward with its components by name, on the last observation of a valid episode. */
  reward: RewardDoc.nullable(),
  /**
   * Only when the server runs on the full-duplex timeline (`serve --duplex`): the call's
   * interaction metrics (tau2-bench's panel) on the last observation, else null. The task reward
   * above is unchanged by it.
   */
  interaction_metrics: z.record(z.string(), z.unknown()).nullable().optional(),
});

/** The `observation` object of a step or reset answer. */
export const ObservationDoc = z.object({
  /** New agent-visible messages since the previous observation. */
  messages: z.array(MessageDoc),
  /** The agent's system prompt (reset only). */
  system_prompt: z.string().optional(),
  /** The agent's tools in OpenAI `tools` format (reset only). */
  tools: z.array(z.unknown()).optional(),
  metadata: ObservationMetadata,
});

/** The answer of `state`. */
export const StateDoc = z.object({
  episode_id: z.string().nullable(),
  step_count: z.number().int(),
  task_id: z.string().nullable(),
  seed: z.number().nullable(),
  done: z.boolean(),
  termination: z.string().nullable(),
  /** The agent-visible history so far (audio left out: it came with each observation). */
  messages: z.array(MessageDoc),
});

/** The JSON Schemas of `/schema`: `{action, observation, state}`. */
export function openEnvSchemas(): { action: unknown; observation: unknown; state: unknown } {
  const js = (s: z.ZodType) => z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' });
  return { action: js(Action), observation: js(ObservationDoc), state: js(StateDoc) };
}

/**
 * One validation problem in the shape FastAPI/pydantic give (OpenEnv's HTTP 422 `detail` items
 * and WebSocket `VALIDATION_ERROR` `errors`): `{type, loc, msg, input}`.
 */
export interface ValidationItem {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
}

/** zod issues as {@link ValidationItem}s under `loc` prefix `at`. */
export function validationItems(error: z.ZodError, at: (string | number)[], input: unknown): ValidationItem[] {
  return error.issues.map((i) => {
    let value: unknown = input;
    for (const k of i.path) value = (value as Record<PropertyKey, unknown> | undefined)?.[k as PropertyKey];
    const keys = i.code === 'unrecognized_keys' ? (i as { keys: string[] }).keys : null;
    return {
      type: keys ? 'extra_forbidden' : i.code === 'invalid_type' && value === undefined ? 'missing' : i.code,
      loc: [...at, ...(i.path as (string | number)[]), ...(keys ? [keys[0]!] : [])],
      msg: keys ? 'Extra inputs are not permitted' : value === undefined ? 'Field required' : i.message,
      input: keys ? (value as Record<string, unknown>)[keys[0]!] : value,
    };
  });
}

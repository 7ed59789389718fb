/**
 * Chat messages as a model agent is sent them and as the training exports write them: the
 * OpenAI chat-completions message shapes (roles, `tool_calls` with JSON-text arguments, `tool`
 * messages answering a `tool_call_id`), with caller audio *by reference* instead of inline
 * base64 (`{type: "audio", audio: <path>}`, the part shape audio chat templates such as
 * Qwen2-Audio's and Qwen2.5-Omni's read: a content item with an `audio` key).
 *
 * Key order inside each object is fixed by these schemas and equals the order our OpenAI wire
 * encoder (`src/adapters/shared/openai-wire.ts`) writes, so a recorded text-only request
 * serializes to the same bytes as the `messages` the endpoint received.
 */
import { z } from 'zod';

/** A function tool call in an OpenAI chat message (arguments as a JSON string). */
export const ChatToolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
export type ChatToolCall = z.infer<typeof ChatToolCall>;

/**
 * A content part of a user message: text, or caller audio by reference. `audio` is the path of
 * the 16 kHz mono 16-bit WAV whose bytes were sent (relative to the run's output folder in a
 * trajectory; relative to the exported file, or under `--audio-root`, in an export).
 */
export const ChatContentPart = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('audio'), audio: z.string() }),
]);
export type ChatContentPart = z.infer<typeof ChatContentPart>;

/** One message in OpenAI chat-completions format (audio by reference, see {@link ChatContentPart}). */
export const ChatMessage = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.union([z.string(), z.array(ChatContentPart).min(1)]) }),
  z.object({
    role: z.literal('assistant'),
    content: z.string().nullable(),
    tool_calls: z.array(ChatToolCall).optional(),
  }),
  z.object({ role: z.literal('tool'), tool_call_id: z.string(), content: z.string() }),
]);
export type ChatMessage = z.infer<typeof ChatMessage>;

/** A tool in OpenAI `tools` format (what `toolSchema` produces). */
export const ChatTool = z.object({
  type: z.literal('function'),
  function: z.object({ name: z.string(), description: z.string(), parameters: z.record(z.string(), z.unknown()) }),
});
export type ChatTool = z.infer<typeof ChatTool>;

/**
 * Sampling as sent on one request: every field the wire encoder writes. `seed` is the seed the
 * request carried (the rollout's or sample's seed), null only when none was sent.
 */
export const SentSampling = z.object({
  temperature: z.number(),
  top_p: z.number(),
  /** Null: not sent (and never sent to the `openai` flavor). */
  top_k: z.number().nullable(),
  /** Most tokens generated for the reply. */
  max_tokens: z.number().int(),
  seed: z.number().int().nullable(),
});
export type SentSampling = z.infer<typeof SentSampling>;

/**
 * Ours (issue 12): the exact request a model agent sent for one turn — the prompt the turn's
 * tokens were generated from. `messages` is the full conversation as the model saw it: the
 * rendered system prompt (policy, tool schemas, speaking guide, teacher guidance if any), merged
 * caller turns, caller audio by reference (the WAV whose bytes were sent base64), the agent's
 * own earlier turns and tool results. `tools` and `sampling` are what went with it.
 *
 * Training exports take their prompts from this record (never re-render them), so the prompt of
 * a GRPO row or SFT record is what the model was sent; a trainer that re-tokenizes it with the
 * served model's chat template reproduces the turn's `generation.prompt_token_ids`.
 */
export const ModelRequestRecord = z.object({
  messages: z.array(ChatMessage).min(1),
  /** Tools offered with `tool_choice: "auto"`; empty when none were sent. */
  tools: z.array(ChatTool).default([]),
  sampling: SentSampling,
  /** Voice asked for spoken output (omni models), or null for text only. */
  voice: z.string().nullable().default(null),
  /** True when the reply was streamed (same result as not streaming). */
  stream: z.boolean().default(false),
});
export type ModelRequestRecord = z.infer<typeof ModelRequestRecord>;

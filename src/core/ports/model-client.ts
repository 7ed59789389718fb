/**
 * The `ModelClient` port: one chat-completion call to a language or omni model, whatever serves
 * it (an OpenAI-compatible endpoint through `src/adapters/shared/openai-client.ts`, an on-device
 * model in a worker, or a test double). Core participants ({@link ModelAgent}, `ModelUser`,
 * `ModelJudge`) speak only this interface.
 *
 * Shapes follow OpenAI chat completions (roles, `tool_calls` with JSON-text arguments, tool
 * messages answering a `tool_call_id`), reduced to what the sandbox uses.
 */
import type { OpenAiToolSchema } from '../schema/domain.ts';

/**
 * Which wire dialect a server speaks.
 * - `vllm-omni`: vLLM-Omni serving Qwen3-Omni / Qwen2.5-Omni. Audio in as `audio_url` data-URL
 *   parts; audio out as a second choice carrying base64 WAV (24 kHz); voice in `speaker`.
 * - `openai`: OpenAI chat completions. Audio in as `input_audio` parts; audio out in the one
 *   choice's `message.audio` with a transcript; voice in `audio.voice`. No `top_k`.
 * - `vllm`: plain vLLM. Text or audio in, text out.
 */
export type RemoteFlavor = 'vllm-omni' | 'openai' | 'vllm';

/**
 * A client's flavor: a server's wire dialect ({@link RemoteFlavor}), or `local` for an on-device
 * model (transformers.js; text or caller audio in, text out, tool calls parsed from
 * `<tool_call>` text by us).
 */
export type ModelFlavor = RemoteFlavor | 'local';

/** The remote flavors, in a fixed order (what `<flavor>:<model>@<url>` accepts; messages and CLI help). */
export const MODEL_FLAVORS: readonly RemoteFlavor[] = ['vllm-omni', 'openai', 'vllm'];

/**
 * One part of a user message. Audio is a complete WAV file (16 kHz mono 16-bit for caller
 * speech), base64 without a data-URL prefix; `ref` (never sent) names the stored file the bytes
 * came from, so the request can be recorded without inlining them.
 */
export type ModelContentPart =
  | { type: 'text'; text: string }
  | { type: 'audio'; base64: string; format: 'wav'; ref?: string };

/** A tool call as a model emitted it, before validation. `arguments` is the raw JSON text. */
export interface ModelToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One chat message. */
export type ModelMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ModelContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ModelToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/**
 * Sampling parameters. They are sent explicitly on every request (GRPO needs varied samples, and
 * server defaults differ), except that a `null` field is left out.
 */
export interface SamplingParams {
  temperature: number;
  top_p: number;
  /** Not sent to the `openai` flavor (the API has no `top_k`). */
  top_k: number | null;
  /** Most tokens generated for one reply. */
  max_tokens: number;
  seed: number | null;
}

/** Defaults when the command line or the caller gives none. */
export const DEFAULT_SAMPLING: Readonly<SamplingParams> = {
  temperature: 1,
  top_p: 1,
  top_k: null,
  max_tokens: 1024,
  seed: null,
};

/** One request. */
export interface ModelRequest {
  messages: readonly ModelMessage[];
  /** Tools the model may call (sent as `tools`, with `tool_choice: "auto"`). */
  tools?: readonly OpenAiToolSchema[];
  sampling: SamplingParams;
  /** Ask for spoken audio besides the text, in this voice. */
  audio?: { voice: string };
  /** Ask for a JSON object as the reply (`response_format: {"type": "json_object"}`). */
  json?: boolean;
  /** Stream the reply (server-sent events) and assemble it. Same result as not streaming. */
  stream?: boolean;
  /**
   * BCP-47 language of the conversation (the domain's `language`). On-device agents transcribe
   * caller audio in it (multilingual Whisper); remote clients do not send it.
   */
  language?: string;
}

/** Audio a model spoke. */
export interface ModelAudio {
  /** A WAV file, base64. */
  base64: string;
  format: 'wav';
  /** Sample rate the flavor documents (24,000 Hz for vLLM-Omni and OpenAI), or null when unknown. */
  sample_rate_hz: number | null;
  /** What the audio says, when the server gives it (OpenAI). */
  transcript: string | null;
}

/** What came back, assembled from one response or one stream. */
export interface ModelResponse {
  /** Spoken text, with any `<tool_call>` blocks and `<think>…</think>` reasoning removed. */
  text: string;
  /**
   * The model's reasoning: the server's `reasoning_content` (vLLM reasoning parsers) or
   * `reasoning` field, and any `<think>…</think>` blocks of the text; absent when there was none.
   * Never spoken or scored.
   */
  reasoning?: string | null;
  tool_calls: ModelToolCall[];
  /** `server`: the server parsed the calls; `text`: we parsed `<tool_call>` blocks out of the text. */
  tool_call_source: 'server' | 'text' | 'none';
  audio: ModelAudio | null;
  finish_reason: string | null;
  /** Model name the server reports (a LoRA adapter's name when one was chosen). */
  model: string;
  /** Generated token ids (vLLM `return_token_ids`), or null when the server gave none. */
  token_ids: number[] | null;
  /** Prompt token ids (vLLM `return_token_ids`), or null. */
  prompt_token_ids: number[] | null;
  /** Log-probability of each generated token (natural log), or null. */
  logprobs: number[] | null;
  /**
   * Set when the endpoint's token arrays did not line up (e.g. 6 token ids but 1 logprob): why,
   * with the lengths received; the three arrays are then null (src/core/participants/token-check.ts).
   */
  token_warning?: string;
  usage: { prompt_tokens: number; completion_tokens: number } | null;
  /** HTTP attempts it took (1 = no retry). */
  attempts: number;
}

/** A chat-completion backend. */
export interface ModelClient {
  /** Short description for trajectories, e.g. `vllm-omni:qwen3-omni` (never a key). */
  readonly id: string;
  readonly flavor: ModelFlavor;
  /** Where the model runs: `remote` (an HTTP endpoint), `on-device` (a worker) or `scripted` (a test double). */
  readonly kind: 'remote' | 'on-device' | 'scripted';
  /** Base URL of a remote endpoint, without credentials; null otherwise. */
  readonly endpoint: string | null;
  /** Model name requested (a LoRA adapter is chosen by its served name). */
  readonly model: string;
  /**
   * One completion. Retries what is worth retrying; then throws `ModelEndpointError` (an
   * `InfrastructureError`) when the endpoint fails or answers with something that is not a
   * chat completion.
   */
  complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse>;
}

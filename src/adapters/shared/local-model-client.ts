/**
 * {@link LocalModelClient}: the `ModelClient` port over an on-device model. The engine runs
 * in-process (Node) or in the page's model worker (reached through comlink); either way it
 * returns raw generated text, and tool calls are parsed from it here with the same parser the
 * remote clients use for hermes-format text (`parseTextToolCalls`).
 */
import type { ModelClient, ModelRequest, ModelResponse } from '../../core/ports/model-client.ts';
import { parseTextToolCalls } from '../../core/participants/model-tool-calls.ts';
import type { LocalGenerateRequest, LocalGeneration } from './local-model-engine.ts';

/** The one method of an engine the client needs (an in-process engine or a worker proxy). */
export interface LocalGenerator {
  generate(request: LocalGenerateRequest): Promise<LocalGeneration>;
}

/**
 * A `ModelClient` of kind `on-device` and flavor `local` (text or caller audio in, text out, tool
 * calls as `<tool_call>` text).
 *
 * - Sampling: temperature 0 is greedy decoding (deterministic); above 0 transformers.js samples
 *   with `top_p` / `top_k`, and `seed` is not honoured (its sampler is not seedable).
 * - `json`, `audio` (spoken replies) and `stream` are ignored: replies are text, whole.
 * - Logprobs are not reported; token ids are.
 */
export class LocalModelClient implements ModelClient {
  readonly id: string;
  readonly flavor = 'local' as const;
  readonly kind = 'on-device' as const;
  readonly endpoint = null;

  /**
   * @param model the manifest id of the agent (`local:<model>`)
   * @param engine where generation runs
   */
  constructor(
    readonly model: string,
    private readonly engine: LocalGenerator,
  ) {
    this.id = `local:${model}`;
  }

  async complete(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
    signal?.throwIfAborted();
    const g = await this.engine.generate({
      messages: request.messages,
      ...(request.tools?.length ? { tools: request.tools } : {}),
      sampling: request.sampling,
      ...(request.language ? { language: request.language } : {}),
    });
    const { text, calls } = parseTextToolCalls(g.text);
    return {
      text,
      tool_calls: calls,
      tool_call_source: calls.length ? 'text' : 'none',
      audio: null,
      finish_reason: calls.length && g.finish_reason === 'stop' ? 'tool_calls' : g.finish_reason,
      model: this.model,
      token_ids: g.token_ids,
      prompt_token_ids: g.prompt_token_ids,
      logprobs: null,
      usage: { prompt_tokens: g.prompt_token_ids.length, completion_tokens: g.token_ids.length },
      attempts: 1,
    };
  }
}

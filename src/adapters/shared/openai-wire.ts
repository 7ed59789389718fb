/**
 * Wire shapes of OpenAI-compatible chat completions per server flavor: request bodies from a
 * {@link ModelRequest}, and a {@link ModelResponse} assembled from a response body or from SSE
 * chunks. Pure functions (no I/O), usable in the browser and Node.
 *
 * Sources of the formats: OpenAI chat completions (messages, `tool_calls`, `input_audio` parts,
 * `modalities` + `audio: {voice, format}` with the reply's `message.audio` {data, transcript},
 * `logprobs.content[].logprob`, `stream_options.include_usage`); vLLM's OpenAI server (`top_k`,
 * `return_token_ids` giving `prompt_token_ids` and `choices[].token_ids`, `audio_url` data-URL
 * parts); vLLM-Omni for Qwen-Omni (`modalities: ["text","audio"]`, top-level `speaker`, the audio
 * reply as a second choice whose `message.audio.data` is base64 WAV at 24 kHz, and stream chunks
 * with a top-level `modality` of `text` or `audio`).
 */
import type {
  ModelAudio,
  RemoteFlavor,
  ModelMessage,
  ModelRequest,
  ModelResponse,
  ModelToolCall,
} from '../../core/ports/model-client.ts';
import { argumentsText, parseTextToolCalls } from '../../core/participants/model-tool-calls.ts';
import { splitReasoning } from '../../core/participants/reply-text.ts';
import { chatFromModel } from '../../core/participants/model-messages.ts';
import { ModelEndpointError } from '../../core/participants/model-errors.ts';
import { checkedTokenData } from '../../core/participants/token-check.ts';

/** Per-flavor wire choices (all overridable on the client). */
export interface WireOptions {
  flavor: RemoteFlavor;
  model: string;
  /** How caller audio goes in: `audio_url` data URL or `input_audio`. Default: `input_audio` for openai, `audio_url` otherwise. */
  audioPart?: 'audio_url' | 'input_audio';
  /** Ask for per-token logprobs. Default true for vllm and vllm-omni, false for openai. */
  logprobs?: boolean;
  /** Ask for token ids (`return_token_ids`). Default true for vllm and vllm-omni; never sent to openai. */
  tokenIds?: boolean;
}

/** Sample rate of the audio each flavor returns when the WAV header cannot be read, Hz. */
export const DEFAULT_OUTPUT_RATE_HZ: Record<RemoteFlavor, number | null> = {
  'vllm-omni': 24_000,
  openai: 24_000,
  vllm: null,
};

type Json = Record<string, unknown>;

/**
 * One message on the wire: the recorded chat shape ({@link chatFromModel}, so a recorded request
 * serializes to the same bytes), with caller audio inline in the flavor's part shape.
 */
function wireMessage(m: ModelMessage, audioPart: 'audio_url' | 'input_audio'): Json {
  if (m.role !== 'user' || typeof m.content === 'string') return chatFromModel([m])[0] as Json;
  return {
    role: 'user',
    content: m.content.map((p) => {
      if (p.type === 'text') return { type: 'text', text: p.text };
      return audioPart === 'input_audio'
        ? { type: 'input_audio', input_audio: { data: p.base64, format: p.format } }
        : { type: 'audio_url', audio_url: { url: `data:audio/${p.format};base64,${p.base64}` } };
    }),
  };
}

/**
 * The JSON body of one request. Sampling is always explicit: `temperature`, `top_p`,
 * `max_tokens` (`max_completion_tokens` for openai), `seed` and `top_k` (not for openai) unless
 * null.
 * @throws Error when audio output is asked of the `vllm` flavor (it has none).
 */
export function requestBody(req: ModelRequest, w: WireOptions): Json {
  const { flavor } = w;
  const vllmLike = flavor !== 'openai';
  const audioPart = w.audioPart ?? (flavor === 'openai' ? 'input_audio' : 'audio_url');
  const s = req.sampling;
  const body: Json = {
    model: w.model,
    messages: req.messages.map((m) => wireMessage(m, audioPart)),
    temperature: s.temperature,
    top_p: s.top_p,
    [flavor === 'openai' ? 'max_completion_tokens' : 'max_tokens']: s.max_tokens,
  };
  if (s.top_k !== null && vllmLike) body.top_k = s.top_k;
  if (s.seed !== null) body.seed = s.seed;
  if (req.tools?.length) {
    body.tools = req.tools;
    body.tool_choice = 'auto';
  }
  if (w.logprobs ?? vllmLike) body.logprobs = true;
  if (vllmLike && (w.tokenIds ?? true)) body.return_token_ids = true;
  if (req.json) body.response_format = { type: 'json_object' };
  if (flavor === 'vllm-omni') {
    body.modalities = req.audio ? ['text', 'audio'] : ['text'];
    if (req.audio) body.speaker = req.audio.voice;
  } else if (req.audio) {
    if (flavor === 'vllm') throw new Error('the vllm flavor returns text only: audio output needs vllm-omni or openai');
    body.modalities = ['text', 'audio'];
    body.audio = { voice: req.audio.voice, format: 'wav' };
  }
  if (req.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

const isObj = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);
const str = (x: unknown): string | null => (typeof x === 'string' ? x : null);
const ints = (x: unknown): number[] | null =>
  Array.isArray(x) && x.every((n) => Number.isInteger(n)) ? (x as number[]) : null;

function bad(message: string): ModelEndpointError {
  return new ModelEndpointError(`not a chat completion: ${message}`, null, false, 1);
}

function logprobsOf(choice: Json): number[] | null {
  const lp = choice.logprobs;
  if (!isObj(lp) || !Array.isArray(lp.content)) return null;
  return lp.content
    .map((t) => (isObj(t) && typeof t.logprob === 'number' ? t.logprob : NaN))
    .filter((n) => !Number.isNaN(n));
}

function serverCalls(raw: unknown): ModelToolCall[] {
  if (!Array.isArray(raw)) return [];
  return raw.map((c, i) => {
    const f = isObj(c) && isObj(c.function) ? c.function : {};
    return {
      id: (isObj(c) && str(c.id)) || `call_${i}`,
      name: str(f.name) ?? '',
      arguments: argumentsText(f.arguments),
    };
  });
}

/** Decode base64 to bytes (atob: browser and Node). */
export function fromBase64(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Encode bytes as base64. */
export function toBase64(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/** Sample rate from a RIFF/WAVE header (bytes 24–27, little-endian), or null when it is not one. */
export function wavSampleRate(bytes: Uint8Array): number | null {
  if (
    bytes.length < 28 ||
    String.fromCharCode(...bytes.subarray(0, 4)) !== 'RIFF' ||
    String.fromCharCode(...bytes.subarray(8, 12)) !== 'WAVE'
  )
    return null;
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(24, true);
}

/** Offset and length of the `data` chunk of a WAV file, or null. */
function wavData(bytes: Uint8Array): { at: number; length: number } | null {
  if (wavSampleRate(bytes) === null) return null;
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let p = 12; p + 8 <= bytes.length; ) {
    const id = String.fromCharCode(...bytes.subarray(p, p + 4));
    const size = v.getUint32(p + 4, true);
    if (id === 'data') return { at: p + 8, length: Math.min(size, bytes.length - p - 8) };
    p += 8 + size + (size % 2);
  }
  return null;
}

/**
 * Join streamed audio pieces (base64). Pieces that are each a whole WAV file are merged into one
 * WAV (header of the first, PCM data of all, sizes fixed); anything else is joined byte by byte.
 */
export function joinAudioPieces(pieces: readonly string[]): string {
  if (pieces.length === 1) return pieces[0]!;
  const bytes = pieces.map(fromBase64);
  const datas = bytes.map(wavData);
  if (datas.every((d) => d !== null)) {
    const first = bytes[0]!;
    const head = first.subarray(0, datas[0]!.at);
    const total = datas.reduce((n, d) => n + d!.length, 0);
    const out = new Uint8Array(head.length + total);
    out.set(head, 0);
    let p = head.length;
    bytes.forEach((b, i) => {
      const d = datas[i]!;
      out.set(b.subarray(d.at, d.at + d.length), p);
      p += d.length;
    });
    const v = new DataView(out.buffer);
    v.setUint32(4, out.length - 8, true);
    v.setUint32(head.length - 4, total, true);
    return toBase64(out);
  }
  const out = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
  let p = 0;
  for (const b of bytes) {
    out.set(b, p);
    p += b.length;
  }
  return toBase64(out);
}

function audioOf(base64: string, transcript: string | null, flavor: RemoteFlavor): ModelAudio {
  let rate: number | null = null;
  try {
    rate = wavSampleRate(fromBase64(base64));
  } catch {
    rate = null;
  }
  return { base64, format: 'wav', sample_rate_hz: rate ?? DEFAULT_OUTPUT_RATE_HZ[flavor], transcript };
}

function finish(
  parts: {
    content: string;
    reasoning: string | null;
    calls: ModelToolCall[];
    audio: ModelAudio | null;
    finish: string | null;
    model: string;
    token_ids: number[] | null;
    prompt_token_ids: number[] | null;
    logprobs: number[] | null;
    usage: ModelResponse['usage'];
  },
  attempts: number,
): ModelResponse {
  // Reasoning first: a `<tool_call>` or stop token inside `<think>` is not part of the reply.
  const split = splitReasoning(parts.content);
  let text = split.text;
  const reasoning = [parts.reasoning, split.reasoning].filter((r): r is string => !!r).join('\n\n') || null;
  let calls = parts.calls;
  let source: ModelResponse['tool_call_source'] = calls.length ? 'server' : 'none';
  if (!calls.length) {
    const parsed = parseTextToolCalls(text);
    if (parsed.calls.length) {
      text = parsed.text;
      calls = parsed.calls;
      source = 'text';
    }
  }
  // Token arrays that do not line up are dropped, with the reason (checkedTokenData).
  const { token_warning, ...tokens } = checkedTokenData(parts);
  return {
    text,
    ...(reasoning ? { reasoning } : {}),
    tool_calls: calls,
    tool_call_source: source,
    audio: parts.audio,
    finish_reason: parts.finish,
    model: parts.model,
    ...tokens,
    ...(token_warning ? { token_warning } : {}),
    usage: parts.usage,
    attempts,
  };
}

function usageOf(u: unknown): ModelResponse['usage'] {
  if (!isObj(u) || typeof u.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return null;
  return { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens };
}

/** Characters of a text body {@link bodyFromText} quotes in its error. */
const TEXT_BODY_QUOTE = 80;

/**
 * The body of a non-streamed reply the `openai` SDK handed back as a string (it parses only a
 * JSON content type): a chat completion served as `text/plain` is parsed; anything else (an HTML
 * page from a proxy, a bare text) is a retryable error quoting its start, as a cut-off JSON body
 * is (a gateway's one-off page should not cost the rollout).
 * @throws ModelEndpointError (retryable) when `text` is not JSON.
 */
export function bodyFromText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const quote = JSON.stringify(text.slice(0, TEXT_BODY_QUOTE));
    const more = text.length > TEXT_BODY_QUOTE ? ` (${text.length} characters)` : '';
    throw new ModelEndpointError(`not a chat completion: a text body, not JSON: ${quote}${more}`, null, true, 1);
  }
}

/**
 * Assemble a response body. With vLLM-Omni audio the body has two choices with the same index:
 * the text one (content, tool calls) and the audio one (`message.audio.data`); with OpenAI audio
 * the one choice has `message.audio` {data, transcript} and its text is the transcript when
 * `content` is null. Text without server tool calls is searched for `<tool_call>` blocks.
 * @throws ModelEndpointError (not retryable) when the body is not a chat completion.
 */
export function responseFromBody(body: unknown, flavor: RemoteFlavor, attempts: number): ModelResponse {
  if (!isObj(body) || !Array.isArray(body.choices) || body.choices.length === 0) throw bad('no choices');
  const choices = body.choices.filter(isObj);
  const withAudio = (c: Json) => isObj(c.message) && isObj(c.message.audio) && typeof c.message.audio.data === 'string';
  const audioChoice = choices.find(withAudio);
  const textChoice =
    choices.find((c) => !withAudio(c)) ?? (flavor === 'openai' ? audioChoice : undefined) ?? choices[0];
  if (!textChoice || !isObj(textChoice.message)) throw bad('choice without a message');
  const msg = textChoice.message;
  const audioMsg =
    audioChoice && isObj(audioChoice.message) && isObj(audioChoice.message.audio) ? audioChoice.message.audio : null;
  const transcript = audioMsg ? str(audioMsg.transcript) : null;
  const content = str(msg.content) ?? (textChoice === audioChoice ? (transcript ?? '') : '');
  return finish(
    {
      content,
      reasoning: str(msg.reasoning_content) ?? str(msg.reasoning),
      calls: serverCalls(msg.tool_calls),
      audio: audioMsg ? audioOf(audioMsg.data as string, transcript, flavor) : null,
      finish: str(textChoice.finish_reason),
      model: str(body.model) ?? '',
      token_ids: ints(textChoice.token_ids),
      prompt_token_ids: ints(body.prompt_token_ids) ?? ints(textChoice.prompt_token_ids),
      logprobs: logprobsOf(textChoice),
      usage: usageOf(body.usage),
    },
    attempts,
  );
}

/**
 * Assembles a streamed reply chunk by chunk. vLLM-Omni chunks carry a top-level `modality`:
 * `audio` chunks hold base64 WAV pieces (in `delta.audio.data`, or `delta.content`), `text`
 * chunks hold text and tool-call deltas. OpenAI audio streams `delta.audio` {data, transcript}.
 * Tool-call deltas are joined by `index` (id and name from the first, arguments concatenated).
 */
export class StreamAssembler {
  private content = '';
  private reasoning = '';
  private audio: string[] = [];
  private transcript = '';
  private calls = new Map<number, { id: string; name: string; arguments: string }>();
  private finishReason: string | null = null;
  private model = '';
  private tokenIds: number[] | null = null;
  private promptTokenIds: number[] | null = null;
  private logprobs: number[] | null = null;
  private usage: ModelResponse['usage'] = null;

  constructor(private readonly flavor: RemoteFlavor) {}

  /** Take one parsed chunk. */
  add(chunk: unknown): void {
    if (!isObj(chunk)) return;
    if (typeof chunk.model === 'string') this.model = chunk.model;
    const pids = ints(chunk.prompt_token_ids);
    if (pids) this.promptTokenIds = pids;
    const u = usageOf(chunk.usage);
    if (u) this.usage = u;
    const modality = str(chunk.modality) ?? 'text';
    for (const choice of Array.isArray(chunk.choices) ? chunk.choices.filter(isObj) : []) {
      const d = isObj(choice.delta) ? choice.delta : {};
      if (modality === 'audio') {
        const piece = (isObj(d.audio) ? str(d.audio.data) : null) ?? str(d.content);
        if (piece) this.audio.push(piece);
        continue;
      }
      if (typeof d.content === 'string') this.content += d.content;
      const thought = str(d.reasoning_content) ?? str(d.reasoning);
      if (thought) this.reasoning += thought;
      if (isObj(d.audio)) {
        if (typeof d.audio.data === 'string' && d.audio.data) this.audio.push(d.audio.data);
        if (typeof d.audio.transcript === 'string') this.transcript += d.audio.transcript;
      }
      if (Array.isArray(d.tool_calls)) {
        for (const tc of d.tool_calls.filter(isObj)) {
          const index = typeof tc.index === 'number' ? tc.index : this.calls.size;
          const cur = this.calls.get(index) ?? { id: '', name: '', arguments: '' };
          if (typeof tc.id === 'string' && tc.id) cur.id = tc.id;
          const f = isObj(tc.function) ? tc.function : {};
          if (typeof f.name === 'string' && f.name) cur.name = f.name;
          if (typeof f.arguments === 'string') cur.arguments += f.arguments;
          this.calls.set(index, cur);
        }
      }
      const tids = ints(choice.token_ids);
      if (tids) this.tokenIds = [...(this.tokenIds ?? []), ...tids];
      const lp = logprobsOf(choice);
      if (lp) this.logprobs = [...(this.logprobs ?? []), ...lp];
      if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason;
    }
  }

  /**
   * The assembled reply.
   * @throws ModelEndpointError (retryable) when no chunk carried a `finish_reason`: the stream
   * ended early (cut off), so the reply may be incomplete.
   */
  result(attempts: number): ModelResponse {
    if (this.finishReason === null)
      throw new ModelEndpointError('stream ended before any finish_reason (cut off)', null, true, attempts);
    const calls = [...this.calls.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([i, c]) => ({ ...c, id: c.id || `call_${i}` }));
    const transcript = this.transcript || null;
    return finish(
      {
        content: this.content || (this.flavor === 'openai' && transcript ? transcript : ''),
        reasoning: this.reasoning || null,
        calls,
        audio: this.audio.length ? audioOf(joinAudioPieces(this.audio), transcript, this.flavor) : null,
        finish: this.finishReason,
        model: this.model,
        token_ids: this.tokenIds,
        prompt_token_ids: this.promptTokenIds,
        logprobs: this.logprobs,
        usage: this.usage,
      },
      attempts,
    );
  }
}

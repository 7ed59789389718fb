import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiModelClient, retryAfterMs, type OpenAiClientOptions } from '../../src/adapters/shared/openai-client.ts';
import { joinAudioPieces, wavSampleRate, fromBase64 } from '../../src/adapters/shared/openai-wire.ts';
import { ModelEndpointError } from '../../src/core/participants/model-errors.ts';
import { MAX_REPLY_BYTES } from '../../src/adapters/shared/reply-body-cap.ts';
import { InfrastructureError } from '../../src/core/participants/types.ts';
import type { ModelRequest } from '../../src/core/ports/model-client.ts';
import {
  chunk,
  completion,
  httpError,
  omniAudioCompletion,
  openaiAudioCompletion,
  startOpenAiServer,
  usageChunk,
  wavBase64,
  wireToolCall,
  type Handler,
  type Reply,
  type TestServer,
} from '../fixtures/openai-server.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(handler: Handler) {
  server = await startOpenAiServer(handler);
  return server;
}

function clientFor(
  s: TestServer,
  o: Partial<OpenAiClientOptions> & Pick<OpenAiClientOptions, 'flavor'>,
  sleeps: number[] = [],
) {
  return new OpenAiModelClient({
    baseURL: s.url,
    model: 'm',
    apiKey: 'sk-test-secret',
    sleep: async (ms) => void sleeps.push(ms),
    ...o,
  });
}

const CALLER_WAV = wavBase64([0, 1000, -1000, 0], 16_000);
const SPOKEN_WAV = wavBase64([5, 6, 7], 24_000);

const request = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: [
    { role: 'system', content: 'sys' },
    { role: 'user', content: [{ type: 'audio', base64: CALLER_WAV, format: 'wav' }] },
  ],
  tools: [{ type: 'function', function: { name: 'get_bills', description: 'd', parameters: { type: 'object' } } }],
  sampling: { temperature: 0.7, top_p: 0.9, top_k: 20, max_tokens: 256, seed: 42 },
  ...extra,
});

describe('OpenAiModelClient: vllm-omni', () => {
  it('sends audio_url data URLs, explicit sampling and modalities; keeps token ids, logprobs and server tool calls', async () => {
    const s = await serve(() => ({
      json: completion({
        model: 'qwen-omni-lora-a',
        content: '',
        tool_calls: [wireToolCall('chatcmpl-tool-1', 'get_bills', { customer_id: 'C1002' })],
        token_ids: [11, 12, 13],
        prompt_token_ids: [1, 2, 3, 4],
        logprobs: [-0.5, -0.25, -0.125],
      }),
    }));
    const c = clientFor(s, { flavor: 'vllm-omni', model: 'qwen-omni-lora-a' });
    const res = await c.complete(request());
    expect(s.requests[0]!.body).toEqual({
      model: 'qwen-omni-lora-a',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: [{ type: 'audio_url', audio_url: { url: `data:audio/wav;base64,${CALLER_WAV}` } }] },
      ],
      temperature: 0.7,
      top_p: 0.9,
      max_tokens: 256,
      top_k: 20,
      seed: 42,
      tools: [{ type: 'function', function: { name: 'get_bills', description: 'd', parameters: { type: 'object' } } }],
      tool_choice: 'auto',
      logprobs: true,
      return_token_ids: true,
      modalities: ['text'],
    });
    expect(s.requests[0]!.headers.authorization).toBe('Bearer sk-test-secret');
    expect(res).toEqual({
      text: '',
      tool_calls: [{ id: 'chatcmpl-tool-1', name: 'get_bills', arguments: '{"customer_id":"C1002"}' }],
      tool_call_source: 'server',
      audio: null,
      finish_reason: 'tool_calls',
      model: 'qwen-omni-lora-a',
      token_ids: [11, 12, 13],
      prompt_token_ids: [1, 2, 3, 4],
      logprobs: [-0.5, -0.25, -0.125],
      usage: { prompt_tokens: 11, completion_tokens: 7 },
      attempts: 1,
    });
    expect(c.id).toBe('vllm-omni:qwen-omni-lora-a');
  });

  it('asks for audio with speaker and reads the two-choice reply (text choice + 24 kHz WAV choice)', async () => {
    const s = await serve(() => ({
      json: omniAudioCompletion({ model: 'm', content: '您好，请讲。', audio: SPOKEN_WAV }),
    }));
    const res = await clientFor(s, { flavor: 'vllm-omni' }).complete(request({ audio: { voice: 'Ethan' } }));
    expect(s.requests[0]!.body.modalities).toEqual(['text', 'audio']);
    expect(s.requests[0]!.body.speaker).toBe('Ethan');
    expect(s.requests[0]!.body.audio).toBeUndefined();
    expect(res.text).toBe('您好，请讲。');
    expect(res.audio).toEqual({ base64: SPOKEN_WAV, format: 'wav', sample_rate_hz: 24_000, transcript: '' });
  });

  it('also sends input_audio parts when configured', async () => {
    const s = await serve(() => ({ json: completion({ model: 'm', content: 'ok' }) }));
    await clientFor(s, { flavor: 'vllm-omni', audioPart: 'input_audio' }).complete(request());
    expect(s.requests[0]!.body.messages[1].content).toEqual([
      { type: 'input_audio', input_audio: { data: CALLER_WAV, format: 'wav' } },
    ]);
  });

  it('assembles SSE chunks with modality text and audio, tool-call deltas, token ids and logprobs', async () => {
    const half1 = wavBase64([1, 2], 24_000);
    const half2 = wavBase64([3], 24_000);
    const s = await serve(() => ({
      sse: [
        chunk('m', { role: 'assistant', content: '好的，' }, { modality: 'text', token_ids: [7], logprobs: [-1] }),
        chunk('m', { content: '我查一下。' }, { modality: 'text', token_ids: [8], logprobs: [-0.5] }),
        chunk(
          'm',
          {
            tool_calls: [
              { index: 0, id: 'call_x', type: 'function', function: { name: 'get_bills', arguments: '{"customer_' } },
            ],
          },
          { modality: 'text' },
        ),
        chunk(
          'm',
          { tool_calls: [{ index: 0, function: { arguments: 'id":"C1002"}' } }] },
          { modality: 'text', finish_reason: 'tool_calls' },
        ),
        chunk('m', { content: half1 }, { modality: 'audio' }),
        chunk('m', { content: half2 }, { modality: 'audio', finish_reason: 'stop' }),
        usageChunk('m'),
      ],
    }));
    const res = await clientFor(s, { flavor: 'vllm-omni' }).complete(
      request({ stream: true, audio: { voice: 'Chelsie' } }),
    );
    expect(s.requests[0]!.body.stream).toBe(true);
    expect(s.requests[0]!.body.stream_options).toEqual({ include_usage: true });
    expect(res.text).toBe('好的，我查一下。');
    expect(res.tool_calls).toEqual([{ id: 'call_x', name: 'get_bills', arguments: '{"customer_id":"C1002"}' }]);
    expect(res.token_ids).toEqual([7, 8]);
    expect(res.logprobs).toEqual([-1, -0.5]);
    expect(res.finish_reason).toBe('tool_calls');
    expect(res.usage).toEqual({ prompt_tokens: 11, completion_tokens: 7 });
    // The two WAV pieces become one WAV with all three samples.
    expect(res.audio!.base64).toBe(wavBase64([1, 2, 3], 24_000));
    expect(res.audio!.sample_rate_hz).toBe(24_000);
  });
});

describe('OpenAiModelClient: openai', () => {
  it('sends input_audio, audio {voice, format}, max_completion_tokens and no top_k / return_token_ids; reads the transcript', async () => {
    const s = await serve(() => ({
      json: openaiAudioCompletion({
        model: 'gpt-4o-audio-preview',
        transcript: 'Hello, how can I help?',
        audio: SPOKEN_WAV,
      }),
    }));
    const res = await clientFor(s, { flavor: 'openai', model: 'gpt-4o-audio-preview' }).complete(
      request({ audio: { voice: 'alloy' } }),
    );
    const body = s.requests[0]!.body;
    expect(body.messages[1].content).toEqual([
      { type: 'input_audio', input_audio: { data: CALLER_WAV, format: 'wav' } },
    ]);
    expect(body.modalities).toEqual(['text', 'audio']);
    expect(body.audio).toEqual({ voice: 'alloy', format: 'wav' });
    expect(body.max_completion_tokens).toBe(256);
    expect(
      Object.keys(body).filter((k) => ['top_k', 'return_token_ids', 'max_tokens', 'logprobs', 'speaker'].includes(k)),
    ).toEqual([]);
    expect([body.temperature, body.top_p, body.seed]).toEqual([0.7, 0.9, 42]);
    expect(res.text).toBe('Hello, how can I help?');
    expect(res.audio).toEqual({
      base64: SPOKEN_WAV,
      format: 'wav',
      sample_rate_hz: 24_000,
      transcript: 'Hello, how can I help?',
    });
    expect(res.token_ids).toBeNull();
  });

  it('streams plain text', async () => {
    const s = await serve(() => ({
      sse: [
        chunk('m', { role: 'assistant', content: 'Hi' }),
        chunk('m', { content: ' there' }, { finish_reason: 'stop' }),
        usageChunk('m'),
      ],
    }));
    const res = await clientFor(s, { flavor: 'openai' }).complete(request({ stream: true }));
    expect([res.text, res.finish_reason, res.tool_call_source]).toEqual(['Hi there', 'stop', 'none']);
  });
});

describe('OpenAiModelClient: vllm', () => {
  it('parses hermes <tool_call> text when the server does not', async () => {
    const s = await serve(() => ({
      json: completion({
        model: 'qwen3',
        content:
          '我帮您查一下。\n<tool_call>\n{"name": "get_bills", "arguments": {"customer_id": "C1002"}}\n</tool_call>',
      }),
    }));
    const res = await clientFor(s, { flavor: 'vllm' }).complete(request());
    expect(s.requests[0]!.body.messages[1].content).toEqual([
      { type: 'audio_url', audio_url: { url: `data:audio/wav;base64,${CALLER_WAV}` } },
    ]);
    expect(s.requests[0]!.body.modalities).toBeUndefined();
    expect(res.text).toBe('我帮您查一下。');
    expect(res.tool_calls).toEqual([{ id: 'call_0', name: 'get_bills', arguments: '{"customer_id":"C1002"}' }]);
    expect(res.tool_call_source).toBe('text');
  });

  it('refuses audio output (text out only)', async () => {
    const s = await serve(() => ({ json: completion({ model: 'm', content: 'x' }) }));
    await expect(clientFor(s, { flavor: 'vllm' }).complete(request({ audio: { voice: 'a' } }))).rejects.toThrow(
      'the vllm flavor returns text only',
    );
    expect(s.requests).toHaveLength(0);
  });
});

describe('OpenAiModelClient: retries and errors', () => {
  it('retries 429 and 503 with exponential backoff, then succeeds', async () => {
    const s = await serve((_b, i) =>
      i === 0 ? httpError(429) : i === 1 ? httpError(503) : { json: completion({ model: 'm', content: 'ok' }) },
    );
    const sleeps: number[] = [];
    const res = await clientFor(s, { flavor: 'vllm' }, sleeps).complete(request());
    expect([res.text, res.attempts]).toEqual(['ok', 3]);
    expect(sleeps).toEqual([500, 1000]);
  });

  it('waits at least Retry-After when the server gives one below the cap', async () => {
    const s = await serve((_b, i) =>
      i === 0
        ? httpError(429, 'slow down', { 'retry-after': '3' })
        : { json: completion({ model: 'm', content: 'ok' }) },
    );
    const sleeps: number[] = [];
    await clientFor(s, { flavor: 'vllm' }, sleeps).complete(request());
    expect(sleeps).toEqual([3000]);
  });

  it('an endpoint that stays down raises a retryable ModelEndpointError, an InfrastructureError', async () => {
    const s = await serve(() => httpError(503, 'overloaded'));
    const sleeps: number[] = [];
    const err = await clientFor(s, { flavor: 'vllm-omni', maxRetries: 4 }, sleeps)
      .complete(request())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelEndpointError);
    expect(err).toBeInstanceOf(InfrastructureError);
    expect(err).toMatchObject({ status: 503, retryable: true, attempts: 5 });
    expect((err as Error).message).toBe(`vllm-omni:m at ${s.url}: HTTP 503: 503 overloaded (5 attempts)`);
    expect(sleeps).toEqual([500, 1000, 2000, 4000]);
    expect(s.requests).toHaveLength(5);
  });

  it('does not retry 401 or a body that is not a chat completion', async () => {
    let s = await serve(() => httpError(401, 'bad key'));
    let err = await clientFor(s, { flavor: 'openai' })
      .complete(request())
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 401, retryable: false, attempts: 1 });
    await s.close();
    s = await serve(() => ({ json: { object: 'chat.completion', choices: [] } }));
    err = await clientFor(s, { flavor: 'openai' })
      .complete(request())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelEndpointError);
    expect(err).toMatchObject({ status: null, retryable: false, attempts: 1 });
    expect((err as Error).message).toContain('not a chat completion: no choices');
  });

  it('retries timeouts and network errors', async () => {
    const s = await serve(() => ({ hang: true }));
    const sleeps: number[] = [];
    const err = await clientFor(s, { flavor: 'vllm', timeoutMs: 100, maxRetries: 1 }, sleeps)
      .complete(request())
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: null, retryable: true, attempts: 2 });
    expect((err as Error).message).toContain('no complete reply within 100 ms');
    const url = s.url;
    await s.close();
    server = undefined;
    const down = new OpenAiModelClient({
      flavor: 'vllm',
      baseURL: url,
      model: 'm',
      maxRetries: 2,
      sleep: async (ms) => void sleeps.push(ms),
    });
    const err2 = await down.complete(request()).catch((e: unknown) => e);
    expect(err2).toMatchObject({ status: null, retryable: true, attempts: 3 });
    expect((err2 as Error).message).toContain('network error');
    expect(sleeps).toEqual([500, 500, 1000]);
  });
});

describe('OpenAiModelClient: cut-off bodies and Retry-After', () => {
  const FULL = JSON.stringify(completion({ model: 'm', content: 'ok' }));
  const STREAM = [
    chunk('m', { role: 'assistant', content: 'o' }),
    chunk('m', { content: 'k' }),
    chunk('m', {}, { finish_reason: 'stop' }),
  ];

  it('retries a body cut off mid-transfer and cut-off JSON like a connection reset, then succeeds', async () => {
    const replies: Reply[] = [
      { raw: FULL, cutAt: 37 }, // connection drops before the announced Content-Length
      { raw: FULL.slice(0, 37) }, // complete transfer of JSON cut short
      { raw: FULL, cutAt: 0 }, // headers, then nothing
      { json: completion({ model: 'm', content: 'ok' }) },
    ];
    const s = await serve((_b, i) => replies[i]!);
    const sleeps: number[] = [];
    const res = await clientFor(s, { flavor: 'vllm' }, sleeps).complete(request());
    expect([res.text, res.attempts]).toEqual(['ok', 4]);
    expect(sleeps).toEqual([500, 1000, 2000]);
    expect(s.requests).toHaveLength(4);
  });

  it('a body whose content type is not JSON: parsed when it is a chat completion, else retried with its start quoted', async () => {
    const page = `<html><body>${'Bad gateway. '.repeat(10)}</body></html>`;
    const replies: Reply[] = [
      { raw: page, headers: { 'content-type': 'text/html' } },
      { raw: FULL, headers: { 'content-type': 'text/plain' } },
    ];
    const s = await serve((_b, i) => replies[i]!);
    const sleeps: number[] = [];
    const res = await clientFor(s, { flavor: 'vllm' }, sleeps).complete(request());
    // Before: "not a chat completion: no choices", not retried, and the rollout invalid.
    expect([res.text, res.attempts, sleeps]).toEqual(['ok', 2, [500]]);
    await s.close();
    const t = await serve(() => ({ raw: page, headers: { 'content-type': 'text/html' } }));
    const err = await clientFor(t, { flavor: 'vllm', maxRetries: 1 })
      .complete(request())
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: null, retryable: true, attempts: 2 });
    expect((err as Error).message).toBe(
      `vllm:m at ${t.url}: not a chat completion: a text body, not JSON: ${JSON.stringify(page.slice(0, 80))} (${page.length} characters) (2 attempts)`,
    );
    await t.close();
  });

  it('reads no more than maxReplyBytes of a reply: a longer one fails at once, not retried', async () => {
    const bytes = Buffer.byteLength(FULL);
    const s = await serve(() => ({ raw: FULL }));
    const sleeps: number[] = [];
    // Exactly at the limit is read; one byte over, announced by Content-Length, is refused unread.
    expect((await clientFor(s, { flavor: 'vllm', maxReplyBytes: bytes }).complete(request())).text).toBe('ok');
    const err = await clientFor(s, { flavor: 'vllm', maxReplyBytes: bytes - 1 }, sleeps)
      .complete(request())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelEndpointError);
    expect(err).toMatchObject({ status: null, retryable: false, attempts: 1 });
    expect((err as Error).message).toBe(
      `vllm:m at ${s.url}: reply of ${bytes} bytes, over the ${bytes - 1}-byte limit (1 attempt)`,
    );
    expect(sleeps).toEqual([]);
    // A stream (no Content-Length) is cut once it has sent more.
    await s.close();
    const t = await serve(() => ({ sse: STREAM }));
    const cut = await clientFor(t, { flavor: 'vllm', maxReplyBytes: 100 })
      .complete(request({ stream: true }))
      .catch((e: unknown) => e);
    expect((cut as Error).message).toBe(`vllm:m at ${t.url}: reply over the 100-byte limit (1 attempt)`);
    expect(MAX_REPLY_BYTES).toBe(48 * 1024 * 1024);
  });

  it('retries a stream cut mid-event or ended without finish_reason', async () => {
    const replies: Reply[] = [{ sse: STREAM, cutAfter: 1 }, { sse: STREAM.slice(0, 2), done: false }, { sse: STREAM }];
    const s = await serve((_b, i) => replies[i]!);
    const res = await clientFor(s, { flavor: 'vllm' }).complete(request({ stream: true }));
    expect([res.text, res.finish_reason, res.attempts]).toEqual(['ok', 'stop', 3]);
  });

  it('an endpoint that keeps cutting replies raises a retryable ModelEndpointError after maxRetries', async () => {
    const s = await serve(() => ({ raw: FULL, cutAt: 20 }));
    const sleeps: number[] = [];
    const err = await clientFor(s, { flavor: 'vllm', maxRetries: 2 }, sleeps)
      .complete(request())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelEndpointError);
    expect(err).toMatchObject({ status: null, retryable: true, attempts: 3 });
    expect((err as Error).message).toMatch(
      new RegExp(`^vllm:m at ${s.url}: reply cut off: terminated .*\\(3 attempts\\)$`),
    );
    expect(sleeps).toEqual([500, 1000]);
    expect(s.requests).toHaveLength(3);
  });

  it('honours Retry-After in seconds and as an HTTP date, and retry-after-ms, up to maxRetryAfterMs', async () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const replies: Reply[] = [
      httpError(429, 'slow', { 'retry-after': '20' }), // longer than the 8 s backoff cap: waited anyway
      httpError(503, 'busy', { 'retry-after': 'Thu, 01 Jan 2026 00:00:45 GMT' }), // a date 45 s ahead
      httpError(429, 'slow', { 'retry-after': '3600' }), // an hour: capped at 60 s
      httpError(429, 'slow', { 'retry-after-ms': '1500', 'retry-after': '1' }),
      httpError(503, 'busy', { 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' }), // in the past: backoff
      { json: completion({ model: 'm', content: 'ok' }) },
    ];
    const s = await serve((_b, i) => replies[i]!);
    const sleeps: number[] = [];
    const res = await clientFor(s, { flavor: 'vllm', maxRetries: 5, now: () => now }, sleeps).complete(request());
    expect(res.attempts).toBe(6);
    expect(sleeps).toEqual([20_000, 45_000, 60_000, 4_000, 8_000]);
  });

  it('reads Retry-After forms exactly', () => {
    const h = (o: Record<string, string>) => new Headers(o);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(h({ 'retry-after': '2.5' }), now)).toBe(2500);
    expect(retryAfterMs(h({ 'retry-after': 'Thu, 01 Jan 2026 00:01:00 GMT' }), now)).toBe(60_000);
    expect(retryAfterMs(h({ 'retry-after': 'Wed, 31 Dec 2025 00:00:00 GMT' }), now)).toBe(0);
    expect(retryAfterMs(h({ 'retry-after-ms': '250' }), now)).toBe(250);
    expect(retryAfterMs(h({ 'retry-after': 'soon' }), now)).toBeNull();
    expect(retryAfterMs(h({}), now)).toBeNull();
  });
});

describe('wire helpers', () => {
  it('reads WAV sample rates and joins raw pieces byte by byte', () => {
    expect(wavSampleRate(fromBase64(wavBase64([1], 16_000)))).toBe(16_000);
    expect(wavSampleRate(new Uint8Array([1, 2, 3]))).toBeNull();
    expect(joinAudioPieces(['AAE=', 'Ag=='])).toBe('AAEC');
  });
});

/**
 * Issue 17 item 4: a realtime server that floods its response (endless audio or transcript
 * deltas, endless events of unknown types or not JSON, one huge event) is stopped at the first
 * response limit: `response.cancel` once, the reply up to the limit kept as the agent's turn
 * (marked `capped`, `QUALITY` fails it), and the call goes on, valid. Against our fake server
 * (test/fixtures/realtime-server.ts), over the Node transport and the page's (a WHATWG
 * WebSocket through `adapters/shared/realtime-socket.ts`).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { MAX_FRAME_BYTES, nodeRealtimeConnect } from '../../src/adapters/node/realtime-ws.ts';
import { realTimers } from '../../src/adapters/shared/timers.ts';
import { webSocketConnect, type WebSocketLike } from '../../src/adapters/shared/realtime-socket.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { main } from '../../src/cli/main.ts';
import { decodeWav } from '../../src/core/audio/wav.ts';
import { fromBase64 } from '../../src/core/channel/audio-store.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import {
  RESPONSE_LIMITS,
  RealtimeAgent,
  type RealtimeAgentOptions,
} from '../../src/core/participants/realtime-agent.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import type { RealtimeConnect } from '../../src/core/ports/realtime.ts';
import type { ParticipantReply } from '../../src/core/participants/types.ts';
import { seededRng } from '../../src/core/ports/rng.ts';
import { runEpisode } from '../../src/core/rollout/episode.ts';
import type { Domain } from '../../src/core/schema/domain.ts';
import { Trajectory, type AssistantTurn, type Turn } from '../../src/core/schema/trajectory.ts';
import { evaluate } from '../../src/core/scoring/evaluate.ts';
import { qualityFindings } from '../../src/core/scoring/quality.ts';
import { capture } from '../fixtures/cli-io.ts';
import { ManualTimers } from '../fixtures/manual-timers.ts';
import { MemoryAudioStore } from '../../src/core/channel/audio-store.ts';
import { espeakTts } from '../../src/adapters/node/audio/espeak-tts.ts';
import { nodeGraphRenderer } from '../../src/adapters/node/audio/renderer.ts';
import {
  planReplies,
  startRealtimeServer,
  type Flood,
  type RealtimeTestServer,
  type ScriptedResponse,
} from '../fixtures/realtime-server.ts';

const TASK = 'carrier-pay-balance-1';
let domain: Domain;
let server: RealtimeTestServer | undefined;
let base: string;

beforeAll(async () => {
  [domain, base] = await Promise.all([loadBuiltinDomain('carrier'), mkdtemp(join(tmpdir(), 'sb-flood-'))]);
});
afterEach(() => server?.close().finally(() => (server = undefined)));
afterAll(() => rm(base, { recursive: true, force: true }));

const transports: [string, (o?: { idleTimeoutMs?: number }) => RealtimeConnect][] = [
  ['node (ws)', (o) => nodeRealtimeConnect(o)],
  ['page (WHATWG WebSocket)', (o) => webSocketConnect((url) => new WebSocket(url) as unknown as WebSocketLike, o)],
];

/** Client events of one type the server received, per connection. */
const sent = (type: string) => server!.received.map((events) => events.filter((e) => e.type === type));

/** The greeting only (the first reply), with `change` applied to it; then a second reply on the same agent. */
async function greeting(
  connect: RealtimeConnect,
  change: Partial<ScriptedResponse>,
  options: Partial<RealtimeAgentOptions> = {},
) {
  server = await startRealtimeServer(
    planReplies(domain, TASK, [], (r, ctx) => (ctx.response === 0 ? { ...r, ...change } : r)),
  );
  const agent = new RealtimeAgent({ timers: realTimers, url: server.url, connect, ...options });
  const task = domain.tasks.find((t) => t.id === TASK)!;
  const view = { domain, task, turns: [], tools: [], rng: seededRng(0) };
  const reply = await agent.respond(view);
  // The call goes on: the next reply comes from the same agent (a fresh session when the first was closed).
  const next = await agent.respond({
    ...view,
    turns: [
      { role: 'assistant', text: reply.text, tool_calls: [], t_ms: 0 },
      { role: 'user', text: '我想交话费', tool_calls: [], t_ms: 0 },
    ],
  });
  await agent.close();
  return { reply, next };
}

const flood = (f: Flood): Partial<ScriptedResponse> => ({ flood: f });

describe.each(transports)('a flooding realtime server, over the %s transport', (_, connect) => {
  it('endless audio deltas: 2 s of audio kept (32,000 samples at 16 kHz), response.cancel sent once, the session goes on', async () => {
    const { reply, next } = await greeting(connect(), flood({ kind: 'audio' }), { maxAudioSeconds: 2 });
    expect(reply.capped).toEqual({ limit: 'audio_s', max: 2, ended: 'done' });
    expect(reply.text).toBe(domain.greeting);
    expect(reply.generation?.finish_reason).toBe('cancelled; cut at the audio_s limit');
    const wav = decodeWav(fromBase64(reply.parts![0]!.type === 'audio' ? reply.parts![0]!.base64! : ''));
    expect([wav.sampleRate, wav.samples.length]).toEqual([16000, 32000]);
    expect(sent('response.cancel')).toEqual([
      [{ type: 'response.cancel', event_id: 'switchboard_cancel_1', response_id: 'resp_4' }],
    ]);
    // One session: the next reply is an ordinary one on it.
    expect(next.capped).toBeUndefined();
    expect(next.generation?.finish_reason).toBe('completed');
  });

  it('endless transcript deltas: exactly the first 16,000 characters kept (the text limit)', async () => {
    const { reply } = await greeting(connect(), flood({ kind: 'transcript', chars: 100 }));
    expect(reply.capped).toEqual({ limit: 'text_chars', max: RESPONSE_LIMITS.textChars, ended: 'done' });
    expect(reply.text).toHaveLength(16_000);
    const flooded = 16_000 - domain.greeting!.length;
    expect(reply.text).toBe(
      domain.greeting! +
        Array.from({ length: Math.ceil(flooded / 100) }, (_, n) => String.fromCharCode(97 + (n % 26)).repeat(100))
          .join('')
          .slice(0, flooded),
    );
    expect(sent('response.cancel').flat()).toHaveLength(1);
  });

  it('endless events of an unknown type: stopped at the event limit', async () => {
    const { reply, next } = await greeting(connect(), flood({ kind: 'unknown' }), { maxEventsPerReply: 100 });
    expect(reply.capped).toEqual({ limit: 'events', max: 100, ended: 'done' });
    expect(reply.text).toBe(domain.greeting);
    expect(next.generation?.finish_reason).toBe('completed');
    expect(sent('response.cancel').flat()).toHaveLength(1);
  });

  it('endless frames that are not JSON: stopped at the event limit, the malformed ones counted', async () => {
    const { reply } = await greeting(connect(), flood({ kind: 'bad-json' }), { maxEventsPerReply: 100 });
    expect(reply.capped).toEqual({ limit: 'events', max: 100, ended: 'done' });
    // Frames 1–10 were well formed (session.created, session.updated, response.created, the
    // message item, one transcript delta, 5 audio deltas); 11–100 were not; the 101st hit the limit.
    expect(reply.generation?.finish_reason).toBe('cancelled; cut at the events limit; 90 malformed frames skipped');
  });

  it('large events of an unknown type: stopped at the byte limit', async () => {
    const { reply } = await greeting(connect(), flood({ kind: 'unknown', chars: 10_000 }), {
      maxBytesPerReply: 200_000,
    });
    expect(reply.capped).toEqual({ limit: 'bytes', max: 200_000, ended: 'done' });
    expect(sent('response.cancel').flat()).toHaveLength(1);
  });

  it('one transcript event of 1.1 MB: cut to the text limit, the response cancelled', async () => {
    const { reply } = await greeting(connect(), { hugeDelta: 1_100_000 });
    expect(reply.capped).toEqual({ limit: 'text_chars', max: 16_000, ended: 'done' });
    expect(reply.text).toBe(domain.greeting! + 'x'.repeat(16_000 - domain.greeting!.length));
    // The response had ended when the cancel came: the server's response_cancel_not_active error is no fault.
    expect(reply.generation?.finish_reason).toBe('completed; cut at the text_chars limit');
  });

  it('one transcript event of emoji and CJK beyond the BMP across the text limit: cut on a code point, the pair at the boundary left out whole', async () => {
    // Pairs from a unit of odd index: unit 16,000 is the first half of one.
    const pad = (16_000 - domain.greeting!.length) % 2 === 1 ? '' : 'a';
    const delta = pad + '😀𠀀'.repeat(5_000);
    const { reply } = await greeting(connect(), { hugeDelta: delta });
    expect(reply.capped).toEqual({ limit: 'text_chars', max: 16_000, ended: 'done' });
    expect(reply.text).toHaveLength(15_999);
    expect(reply.text).toBe(domain.greeting! + delta.slice(0, 15_999 - domain.greeting!.length));
    expect(reply.text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it('five function calls in one reply over a calls limit of 3: the first 3 kept to run, the 4th refused (an error tool message), the 5th dropped; capped, cancel sent once', async () => {
    const call = { name: 'get_bills', arguments: '{"customer_id":"C001"}' };
    const { reply, next } = await greeting(connect(), { text: undefined, calls: Array(5).fill(call) } as never, {
      maxCallsPerReply: 3,
    });
    expect(reply.capped).toEqual({ limit: 'calls', max: 3, ended: 'done' });
    expect(reply.tool_calls!.map((c) => [c.id, c.name])).toEqual(
      ['call_6', 'call_8', 'call_10', 'call_12'].map((id) => [id, 'get_bills']),
    );
    const refusal = "not run: more than 3 function calls in one reply (the realtime agent's calls limit)";
    expect(reply.refusals).toEqual([null, null, null, refusal]);
    // The server had sent the whole response when the cancel came: its response_cancel_not_active is no fault.
    expect(reply.generation?.finish_reason).toBe('completed; cut at the calls limit');
    expect(sent('response.cancel').flat()).toHaveLength(1);
    expect(next.generation?.finish_reason).toBe('completed');
  });

  it('a server that ignores the cancel: drained up to the limits again, its session closed, the next reply from a fresh one', async () => {
    const { reply, next } = await greeting(connect(), flood({ kind: 'unknown', onCancel: 'ignore' }), {
      maxEventsPerReply: 100,
    });
    expect(reply.capped).toEqual({ limit: 'events', max: 100, ended: 'ignored' });
    expect(reply.generation?.finish_reason).toBe('cancel ignored; cut at the events limit');
    expect(sent('response.cancel').map((c) => c.length)).toEqual([1, 0]);
    expect(next.generation?.finish_reason).toBe('completed');
  });

  it('a server that closes on the cancel, or goes quiet until the idle timeout: the reply is kept, the next one from a fresh session', async () => {
    for (const onCancel of ['close', 'quiet'] as const) {
      const { reply, next } = await greeting(connect({ idleTimeoutMs: 300 }), flood({ kind: 'audio', onCancel }), {
        maxAudioSeconds: 1,
      });
      expect(reply.capped).toEqual({ limit: 'audio_s', max: 1, ended: 'closed' });
      expect(reply.text).toBe(domain.greeting);
      expect(sent('response.cancel').map((c) => c.length)).toEqual([1, 0]);
      expect(next.generation?.finish_reason).toBe('completed');
      await server!.close();
      server = undefined;
    }
  });
});

/** `connect` with a count of the frames it handed to the agent. */
function counting(connect: RealtimeConnect): { connect: RealtimeConnect; frames: () => number } {
  let n = 0;
  return {
    connect: (url, handlers) =>
      connect(url, {
        message: (d) => {
          n++;
          handlers.message(d);
        },
        close: handlers.close,
      }),
    frames: () => n,
  };
}

describe.each(transports)(
  'a server that trickles its reply (one event every 59 s), over the %s transport',
  (_, transport) => {
    /** The greeting trickles transcript deltas by hand; the agent's timers are driven by hand too. */
    const trickle = async (onCancel: Flood['onCancel']) => {
      server = await startRealtimeServer(
        planReplies(domain, TASK, [], (r, ctx) =>
          ctx.response === 0 ? { ...r, flood: { kind: 'transcript', chars: 5, pace: 'manual', onCancel } } : r,
        ),
      );
      const timers = new ManualTimers();
      const c = counting(transport());
      const agent = new RealtimeAgent({ url: server.url, connect: c.connect, timers });
      const task = domain.tasks.find((t) => t.id === TASK)!;
      const view = { domain, task, turns: [] as Turn[], tools: [], rng: seededRng(0) };
      const reply = agent.respond(view);
      // Every frame the server sent has reached the agent.
      const synced = () => vi.waitFor(() => expect(c.frames()).toBe(server!.sent[0]));
      await vi.waitFor(() => expect(server!.drip()).toBe(1));
      await synced();
      for (let i = 0; i < 2; i++) {
        timers.advance(59_000);
        expect(server.drip()).toBe(1);
        await synced();
      }
      return { agent, view, reply, timers, synced };
    };

    it('cut at the 180 s wall-clock limit (not before): what came is kept, response.cancel once, capped; the session goes on', async () => {
      const { agent, view, reply, timers, synced } = await trickle('done');
      // 179.999 s in (events at 0, 59 and 118 s): the reply is still read.
      timers.advance(61_999);
      expect(server!.drip()).toBe(1);
      await synced();
      // Let the agent act on it (a real 100 ms, not the limit's time): no cut yet.
      await new Promise((r) => setTimeout(r, 100));
      expect(sent('response.cancel').flat()).toEqual([]);
      timers.advance(1);
      const r = await reply;
      expect(r.capped).toEqual({ limit: 'wall_s', max: 180, ended: 'done' });
      expect(r.text).toBe(`${domain.greeting}aaaaabbbbbcccccddddd`);
      expect(r.generation?.finish_reason).toBe('cancelled; cut at the wall_s limit');
      expect(sent('response.cancel').flat()).toHaveLength(1);
      // Every timer was ended with its reading: none is left to fire into the next reply.
      expect(timers.waiting).toBe(0);
      const next = await agent.respond({
        ...view,
        turns: [
          { role: 'assistant', text: r.text, tool_calls: [], t_ms: 0 },
          { role: 'user', text: '我想交话费', tool_calls: [], t_ms: 0 },
        ],
      });
      await agent.close();
      expect([next.capped, next.generation?.finish_reason, server!.received.length]).toEqual([
        undefined,
        'completed',
        1,
      ]);
    });

    it('a server that trickles on after the cancel: given 15 s to end the response, then its session closed (ended: ignored)', async () => {
      const { reply, timers, synced } = await trickle('ignore');
      timers.advance(62_000);
      await vi.waitFor(() => expect(sent('response.cancel').flat()).toHaveLength(1));
      timers.advance(14_000);
      expect(server!.drip()).toBe(1);
      await synced();
      timers.advance(999);
      expect(server!.closed[0]).toBe(false);
      timers.advance(1);
      const r = await reply;
      expect(r.capped).toEqual({ limit: 'wall_s', max: 180, ended: 'ignored' });
      expect(r.text).toBe(`${domain.greeting}aaaaabbbbbccccc`);
      expect(r.generation?.finish_reason).toBe(
        'no response.done within 15000 ms of the cancel; cut at the wall_s limit',
      );
      await vi.waitFor(() => expect(server!.closed[0]).toBe(true));
    });
  },
);

describe('a flood between turns (after response.done, while no reply is awaited)', () => {
  it.each(transports)(
    'over the %s transport: unread frames stop at a response and its drain (32 MiB), the socket closed there; the next reply is that flood cut at the byte limit, the one after from a fresh session',
    async (_, connect) => {
      server = await startRealtimeServer(
        planReplies(domain, TASK, [], (r, ctx) =>
          ctx.response === 0 ? { ...r, floodAfterDone: { kind: 'unknown', chars: 10_000, max: 10_000 } } : r,
        ),
      );
      const agent = new RealtimeAgent({ timers: realTimers, url: server.url, connect: connect() });
      const task = domain.tasks.find((t) => t.id === TASK)!;
      const view = { domain, task, turns: [] as Turn[], tools: [], rng: seededRng(0) };
      const first = await agent.respond(view);
      expect([first.text, first.capped, first.generation?.finish_reason]).toEqual([
        domain.greeting,
        undefined,
        'completed',
      ]);
      // Nobody reads while the caller speaks: the agent closes the socket once 3,356 frames of
      // 10,000 characters (33,560,000 > 2 × 16 MiB) wait unread, long before the fixture's own stop.
      await vi.waitFor(() => expect(server!.closed[0]).toBe(true), { timeout: 30_000 });
      expect(server.flooded[0]).toBeLessThan(10_000);
      const said = (text: string): Turn => ({ role: 'user', text, tool_calls: [], t_ms: 0 });
      const mine = (r: ParticipantReply): Turn => ({ role: 'assistant', text: r.text ?? '', tool_calls: [], t_ms: 0 });
      const second = await agent.respond({ ...view, turns: [mine(first), said('我想交话费')] });
      // Frames 1–1,677 (16,770,000 characters) were read; the 1,678th passed 16 MiB.
      expect(second.capped).toEqual({ limit: 'bytes', max: RESPONSE_LIMITS.bytes, ended: 'closed' });
      expect([second.text, second.parts, second.generation?.finish_reason]).toEqual([
        '',
        undefined,
        'closed; cut at the bytes limit',
      ]);
      // Nothing more went to the flooding connection: no second response.create, no cancel.
      expect(sent('response.create').map((c) => c.length)).toEqual([1]);
      expect(sent('response.cancel').flat()).toEqual([]);
      const third = await agent.respond({
        ...view,
        turns: [mine(first), said('我想交话费'), mine(second), said('15867452301')],
      });
      await agent.close();
      expect([third.capped, third.generation?.finish_reason]).toEqual([undefined, 'completed']);
      // A fresh session, the call replayed: the greeting and both caller turns as items.
      expect(
        server.received.map((events) => events.filter((e) => e.type === 'conversation.item.create').length),
      ).toEqual([0, 3]);
    },
  );
});

describe('one frame over the Node transport limit', () => {
  it(`a frame over ${MAX_FRAME_BYTES} characters: refused by ws in Node (session closed), counted and dropped over the page transport; both cap the reply at the byte limit`, async () => {
    const huge = { hugeDelta: MAX_FRAME_BYTES + 1 };
    const node = await greeting(transports[0]![1](), huge);
    expect(node.reply.capped).toEqual({ limit: 'bytes', max: MAX_FRAME_BYTES, ended: 'closed' });
    expect(node.reply.text).toBe(domain.greeting);
    expect(server!.received).toHaveLength(2);
    await server!.close();
    server = undefined;
    const page = await greeting(transports[1]![1](), huge);
    expect(page.reply.capped).toEqual({ limit: 'bytes', max: MAX_FRAME_BYTES, ended: 'done' });
    expect(page.reply.text).toBe(domain.greeting);
    expect(sent('response.cancel').flat()).toHaveLength(1);
  });
});

describe('a flood in the middle of a call', () => {
  /**
   * A carrier call against the plan with `change` on the agent's second reply (its question for
   * the phone number, turn 2), or the plan changed by `change` when it is a function; `extra`
   * adds episode settings (a channel, the duplex timeline).
   */
  const call = async (
    connect: RealtimeConnect,
    change: Partial<ScriptedResponse> | ((r: ScriptedResponse) => ScriptedResponse),
    options: Partial<RealtimeAgentOptions> = {},
    extra: Pick<Parameters<typeof runEpisode>[0], 'channel' | 'duplex'> = {},
  ) => {
    server = await startRealtimeServer(
      planReplies(domain, TASK, [], (r, ctx) =>
        typeof change === 'function' ? change(r) : ctx.assistantTurns === 1 ? { ...r, ...change } : r,
      ),
    );
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    const task = domain.tasks.find((t) => t.id === TASK)!;
    const t = await runEpisode({
      runtime,
      task,
      agent: new RealtimeAgent({ timers: realTimers, url: server.url, connect, ...options }),
      user: new ScriptedUser(),
      clock: steppingClock(domain.now, 1000),
      seed: 3,
      ...extra,
    });
    return { t, info: await evaluate(runtime, task, t.turns, { termination: t.termination }) };
  };

  it.each(transports)(
    'over the %s transport: the call stays valid and is scored on what the agent did (reward 0 by QUALITY on the capped turn only)',
    async (_, connect) => {
      const { t, info } = await call(connect(), flood({ kind: 'audio' }), { maxAudioSeconds: 3 });
      expect(t.valid).toBe(true);
      expect(t.termination).toBe('user_stop');
      const capped = t.turns.flatMap((x, i) => (x.role === 'assistant' && x.capped ? [[i, x.capped]] : []));
      expect(capped).toEqual([[2, { limit: 'audio_s', max: 3, ended: 'done' }]]);
      expect(qualityFindings(t.turns)).toEqual([
        {
          turn: 2,
          rule: 'capped',
          detail: 'response stopped at the audio_s limit of 3 (response.cancel sent; ended: done)',
        },
      ]);
      expect(info.reward).toBe(0);
      expect(info.components.QUALITY?.score).toBe(0);
      expect(info.components.DB?.score).toBe(1);
      await vi.waitFor(() => expect(sent('response.cancel').map((c) => c.length)).toEqual([1]));
    },
  );

  it('a server that ignores the cancel: the next turn opens a fresh session with the capped turn replayed as said; still valid', async () => {
    const { t, info } = await call(
      nodeRealtimeConnect(),
      flood({ kind: 'transcript', chars: 1000, onCancel: 'ignore' }),
    );
    expect(t.valid).toBe(true);
    const turn = t.turns[2] as AssistantTurn;
    expect(turn.capped).toEqual({ limit: 'text_chars', max: 16_000, ended: 'ignored' });
    expect(turn.text).toHaveLength(16_000);
    expect(info.reward).toBe(0);
    expect(sent('response.cancel').map((c) => c.length)).toEqual([1, 0]);
    // The fresh session holds the kept text as the agent's own message.
    expect(server!.conversations[1]!.filter((i) => i.role === 'assistant').map((i) => i.text)[1]).toBe(turn.text);
  });

  it('21 calls in one reply (default calls limit 20): 20 run, the 21st answered with an error tool message; the turn capped, QUALITY 0, the call valid', async () => {
    const { t, info } = await call(nodeRealtimeConnect(), (r) =>
      r.calls?.[0]?.name === 'find_customer_by_phone' ? { calls: Array(21).fill(r.calls[0]) } : r,
    );
    expect(t.valid).toBe(true);
    const at = t.turns.findIndex((x) => x.role === 'assistant' && x.capped);
    const turn = t.turns[at] as AssistantTurn;
    expect([turn.capped, turn.tool_calls.length]).toEqual([{ limit: 'calls', max: 20, ended: 'done' }, 21]);
    const results = t.turns.slice(at + 1, at + 22).map((x) => (x.role === 'tool' ? [x.error, x.content] : null));
    expect(results.slice(0, 20).every((x) => x?.[0] === false)).toBe(true);
    expect(results[20]).toEqual([
      true,
      "Error: not run: more than 20 function calls in one reply (the realtime agent's calls limit)",
    ]);
    expect(qualityFindings(t.turns).map((f) => [f.turn, f.rule])).toEqual([[at, 'capped']]);
    expect([info.reward, info.components.QUALITY?.score, info.components.DB?.score]).toEqual([0, 0, 1]);
  });

  it('on the duplex timeline: the capped reply is placed (its 3 s of own audio) and its span and label say it was capped', async () => {
    const store = new MemoryAudioStore();
    const { t } = await call(
      nodeRealtimeConnect(),
      flood({ kind: 'audio' }),
      { maxAudioSeconds: 3 },
      { channel: { tts: espeakTts(), renderer: nodeGraphRenderer, preset: 'clean', store }, duplex: {} },
    );
    expect(t.valid).toBe(true);
    const cap = { limit: 'audio_s', max: 3, ended: 'done' };
    const spans = t.duplex!.spans.filter((x) => x.who === 'agent');
    expect(spans.filter((x) => x.capped).map((x) => [x.turn, x.capped, x.end_tick - x.start_tick])).toEqual([
      [2, cap, 15],
    ]);
    const span = spans.find((x) => x.capped)!;
    const labels = new TextDecoder()
      .decode(await store.get(t.duplex!.audio!.labels))
      .trimEnd()
      .split('\n');
    expect(labels.filter((l) => l.includes('capped'))).toEqual([
      `${(span.start_tick * 0.2).toFixed(6)}\t${(span.end_tick * 0.2).toFixed(6)}\tagent (capped: audio_s limit of 3, ended done): ${(t.turns[2] as AssistantTurn).text}`,
    ]);
  });

  it('every spoken reply over the audio limit (servers that had ended the response when the cancel came): each capped once, no fault', async () => {
    const { t } = await call(nodeRealtimeConnect(), {}, { maxAudioSeconds: 0.3 });
    expect(t.valid).toBe(true);
    const spoken = t.turns.filter((x): x is AssistantTurn => x.role === 'assistant' && x.text !== '');
    expect(spoken.map((x) => x.capped)).toEqual(spoken.map(() => ({ limit: 'audio_s', max: 0.3, ended: 'done' })));
    await vi.waitFor(() => expect(sent('response.cancel').map((c) => c.length)).toEqual([spoken.length]));
  });
});

describe('the CLI against a flooding server (defaults)', () => {
  it('run --agent realtime:<url>: endless audio on the greeting is cut at 120 s, the call valid, reward 0, cancel sent once', async () => {
    server = await startRealtimeServer(
      planReplies(domain, TASK, [], (r, ctx) => (ctx.assistantTurns === 0 ? { ...r, flood: { kind: 'audio' } } : r)),
    );
    const out = join(base, 'cli');
    const io = capture();
    const code = await main(
      ['run', '--domain', 'carrier', '--agent', `realtime:${server.url}`, '--task-ids', TASK, '--out', out, '--json'],
      io,
    );
    expect(code).toBe(0);
    const summary = JSON.parse(io.stdout);
    expect(summary.totals).toMatchObject({ episodes: 1, valid: 1, invalid: 0, mean_reward: 0 });
    const [t] = (await readFile(join(out, 'trajectories.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => Trajectory.parse(JSON.parse(l)));
    const first = t!.turns[0] as AssistantTurn;
    expect(first.capped).toEqual({ limit: 'audio_s', max: 120, ended: 'done' });
    expect(first.text).toBe(domain.greeting);
    expect(first.generation?.finish_reason).toBe('cancelled; cut at the audio_s limit');
    expect(t!.reward_info?.components.QUALITY?.score).toBe(0);
    expect(t!.reward_info?.components.DB?.score).toBe(1);
    await vi.waitFor(() => expect(sent('response.cancel').map((c) => c.length)).toEqual([1]));
  });
});

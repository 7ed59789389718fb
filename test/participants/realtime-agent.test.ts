/**
 * Issue 17 item 4: a voice agent behind an OpenAI-Realtime-compatible WebSocket server, against
 * a fake server of our own (test/fixtures/realtime-server.ts) that plays the reference plan and
 * misbehaves on purpose.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { nodeRealtimeConnect } from '../../src/adapters/node/realtime-ws.ts';
import { realTimers } from '../../src/adapters/shared/timers.ts';
import { webSocketConnect, type WebSocketLike } from '../../src/adapters/shared/realtime-socket.ts';
import { main } from '../../src/cli/main.ts';
import { decodeWav } from '../../src/core/audio/wav.ts';
import { fromBase64 } from '../../src/core/channel/audio-store.ts';
import { RealtimeAgent } from '../../src/core/participants/realtime-agent.ts';
import { ModelEndpointError } from '../../src/core/participants/model-errors.ts';
import type { RealtimeConnect } from '../../src/core/ports/realtime.ts';
import { HearingAgent } from '../../src/core/participants/hearing-agent.ts';
import { personaKey, personaVoice } from '../../src/core/channel/persona-voice.ts';
import { resample } from '../../src/core/audio/wav.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import { runEpisode } from '../../src/core/rollout/episode.ts';
import type { Domain } from '../../src/core/schema/domain.ts';
import { Trajectory } from '../../src/core/schema/trajectory.ts';
import { evaluate } from '../../src/core/scoring/evaluate.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { seededRng } from '../../src/core/ports/rng.ts';
import { capture } from '../fixtures/cli-io.ts';
import { espeakTts } from '../../src/adapters/node/audio/espeak-tts.ts';
import { nodeGraphRenderer } from '../../src/adapters/node/audio/renderer.ts';
import { MemoryAudioStore } from '../../src/core/channel/audio-store.ts';
import { channelBargeIn } from '../../src/core/rollout/channel-step.ts';
import { speechEndSample } from '../../src/core/channel/caller-audio.ts';
import { cutAfterToken, tokenize } from '../../src/core/channel/text-cut.ts';
import {
  planReplies,
  startRealtimeServer,
  type RealtimeTestServer,
  type ScriptContext,
  type ScriptedResponse,
} from '../fixtures/realtime-server.ts';

const SECRET = 'sk-realtime-never-recorded';
const TASK = 'carrier-pay-balance-1';
let domain: Domain;
let server: RealtimeTestServer | undefined;
/** Every run's --out folder sits in here (removed at the end). */
let base: string;
let runs = 0;

beforeAll(async () => {
  [domain, base] = await Promise.all([loadBuiltinDomain('carrier'), mkdtemp(join(tmpdir(), 'sb-realtime-'))]);
  vi.stubEnv('SWITCHBOARD_API_KEY', SECRET);
});
afterEach(() => server?.close().finally(() => (server = undefined)));
afterAll(async () => {
  vi.unstubAllEnvs();
  await rm(base, { recursive: true, force: true });
});

/** The reference plan of `taskId` as realtime replies (see the fixture's {@link planReplies}). */
function planScript(
  taskId: string,
  extra: { at: number; reply: ScriptedResponse }[] = [],
  tweak: (r: ScriptedResponse, ctx: ScriptContext) => ScriptedResponse = (r) => r,
) {
  return planReplies(domain, taskId, extra, tweak);
}

async function runCli(agent: string, more: string[] = []) {
  const out = join(base, `run-${runs++}`);
  const io = capture();
  const code = await main(
    ['run', '--domain', 'carrier', '--agent', agent, '--task-ids', TASK, '--out', out, '--json', ...more],
    io,
  );
  const lines = (await readFile(join(out, 'trajectories.jsonl'), 'utf8').catch(() => ''))
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => Trajectory.parse(JSON.parse(l)));
  return { code, io, summary: JSON.parse(io.stdout), trajectories: lines, out };
}

describe('realtime agent (fake OpenAI-Realtime server)', () => {
  it('plays a carrier call end to end through our tools and scoring: reward 1 like the reference, despite unknown tools, bad JSON arguments and junk frames', async () => {
    server = await startRealtimeServer(
      planScript(
        TASK,
        [
          { at: 4, reply: { calls: [{ name: 'teleport_money', arguments: '{"amount": 5}' }] } },
          { at: 4, reply: { calls: [{ name: 'get_bills', arguments: '{"customer_id": "C1002"' }] } },
        ],
        (r, ctx) =>
          ctx.assistantTurns === 0
            ? { ...r, junk: ['not json at all', '{"no_type": 1}', '{"type": "rate_limits.updated"}'] }
            : r,
      ),
    );
    const { code, summary, trajectories } = await runCli(`realtime:${server.url}`);
    expect(code).toBe(0);
    expect(summary.totals.mean_reward).toBe(1);
    const [t] = trajectories;
    expect(t!.valid).toBe(true);
    expect(t!.participants.agent).toBe('realtime:fake-realtime');
    expect(t!.participants.agent_card).toEqual({
      kind: 'remote',
      flavor: 'realtime',
      model: 'fake-realtime',
      base_url: server.url,
      sampling: null,
      prompt_version: 'agent-v1',
      teacher_guidance: null,
    });
    // The bad calls became error tool messages and the episode went on.
    const errors = t!.turns
      .filter((x) => x.role === 'tool' && x.error)
      .map((x) => (x.role === 'tool' ? x.content : ''));
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/^Error: .*teleport_money/);
    expect(errors[1]).toBe('Error: invalid arguments for get_bills: not valid JSON: {"customer_id": "C1002"');
    // The server got those errors back as the calls' outputs, and every real result too.
    const outputs = server.received[0]!.filter(
      (e) => e.type === 'conversation.item.create' && (e.item as { type: string }).type === 'function_call_output',
    );
    expect(outputs.map((e) => (e.item as { output: string }).output)).toEqual(
      t!.turns
        .filter((x) => x.role === 'tool' && x.requestor === 'assistant')
        .map((x) => (x.role === 'tool' ? x.content : '')),
    );
    // One session: session.update with the agent prompt, the domain's tools, PCM 24 kHz, no server VAD.
    expect(server.received).toHaveLength(1);
    const update = server.received[0]![0] as { type: string; session: Record<string, unknown> };
    expect(update.type).toBe('session.update');
    expect(update.session).toMatchObject({
      type: 'realtime',
      output_modalities: ['audio'],
      audio: {
        input: { format: { type: 'audio/pcm', rate: 24000 }, turn_detection: null },
        output: { format: { type: 'audio/pcm', rate: 24000 } },
      },
      tool_choice: 'auto',
    });
    expect(String(update.session.instructions)).toContain('R1');
    expect((update.session.tools as { name: string }[]).map((x) => x.name)).toEqual(domain.tools.map((x) => x.name));
    // The API key went as a bearer token and is written nowhere.
    expect(server.headers[0]!.authorization).toBe(`Bearer ${SECRET}`);
    expect(JSON.stringify(trajectories)).not.toContain(SECRET);
    // Junk frames were skipped and noted on the turn they came with.
    const greeting = t!.turns.find((x) => x.role === 'assistant');
    expect(greeting!.role === 'assistant' && greeting!.generation?.finish_reason).toBe(
      'completed; 2 malformed frames skipped',
    );
  });

  it('a dropped socket mid-reply reconnects and replays the call so far: the rollout stays valid with reward 1', async () => {
    let dropped = false;
    server = await startRealtimeServer(
      planScript(TASK, [], (r, ctx) => {
        if (ctx.assistantTurns === 3 && !dropped) {
          dropped = true;
          return { ...r, dropAfter: 2 };
        }
        return r;
      }),
    );
    const { code, summary, trajectories } = await runCli(`realtime:${server.url}`);
    expect(code).toBe(0);
    expect(summary.totals.mean_reward).toBe(1);
    expect(trajectories[0]!.valid).toBe(true);
    expect(server.received).toHaveLength(2);
    // The second session got the conversation as items: the caller's words and the agent's own turns.
    const replayed = server.conversations[1]!.slice(0, 6).map((i) => [i.type, i.role ?? null]);
    expect(replayed[0]).toEqual(['message', 'assistant']);
    expect(replayed[1]).toEqual(['message', 'user']);
    const firstCaller = trajectories[0]!.turns.find((x) => x.role === 'user');
    expect(server.conversations[1]![1]!.text).toBe(firstCaller!.text);
  });

  it('transport faults that persist (socket drops, error events, failed responses) make the rollout invalid, resampled, never a 0', async () => {
    for (const fault of [{ dropAfter: 1 }, { error: 'overloaded' }, { status: 'failed' as const }]) {
      server = await startRealtimeServer(
        planScript(TASK, [], (r, ctx) => (ctx.assistantTurns >= 1 ? { ...r, ...fault } : r)),
      );
      const { summary, trajectories } = await runCli(`realtime:${server.url}`, ['--model-retries', '1']);
      // Three attempts (two resamples), each invalid: no reward, no 0 in the mean.
      expect(summary.totals).toMatchObject({
        episodes: 3,
        valid: 0,
        invalid: 1,
        invalid_attempts: 3,
        mean_reward: null,
      });
      expect(trajectories.map((t) => [t.valid, t.termination, t.reward_info])).toEqual(
        Array(3).fill([false, 'infrastructure_error', null]),
      );
      expect(trajectories[0]!.invalid_reason).toMatch(
        /^realtime agent at ws:\/\/127\.0\.0\.1:\d+\/v1\/realtime\?model=fake-realtime: .* \(2 attempts\)$/,
      );
      // Each attempt reconnected once (retries 1): two sessions per attempt.
      expect(server.received).toHaveLength(6);
      await server.close();
      server = undefined;
    }
  });

  it('a refused session.update and a huge error message: the rollout invalid, the reason naming session.update, code and param, the server text clipped to 200 characters', async () => {
    server = await startRealtimeServer(planScript(TASK), {
      rejectSession: "Invalid value: 'audio/pcm'. Supported values are: 'g711_ulaw'.",
    });
    const refused = await runCli(`realtime:${server.url}`, ['--model-retries', '0']);
    expect(refused.summary.totals).toMatchObject({ episodes: 3, valid: 0, invalid_attempts: 3 });
    expect(refused.trajectories[0]!.invalid_reason).toBe(
      `realtime agent at ${server.url}: server error answering session.update: Invalid value: 'audio/pcm'. Supported values are: 'g711_ulaw'. (code invalid_value, param session.audio.input.format) (1 attempt)`,
    );
    await server.close();
    server = await startRealtimeServer(
      planScript(TASK, [], (r, ctx) => (ctx.response === 0 ? { error: 'e'.repeat(5_000_000) } : r)),
    );
    const huge = await runCli(`realtime:${server.url}`, ['--model-retries', '0']);
    // The first attempt got the 5 MB message; the resamples were answered.
    expect(huge.summary.totals).toMatchObject({ episodes: 2, valid: 1, invalid_attempts: 1 });
    expect(huge.trajectories[0]!.invalid_reason).toBe(
      `realtime agent at ${server.url}: server error: ${'e'.repeat(200)}… (5000000 characters) (code fake) (1 attempt)`,
    );
  });

  it('a server that goes quiet mid-reply hits the idle timeout: invalid, not a 0', async () => {
    server = await startRealtimeServer(
      planScript(TASK, [], (r, ctx) => (ctx.assistantTurns >= 1 ? { hang: true } : r)),
    );
    const { summary, trajectories } = await runCli(`realtime:${server.url}`, [
      '--model-retries',
      '0',
      '--model-timeout',
      '300',
    ]);
    expect(summary.totals).toMatchObject({ episodes: 3, valid: 0, invalid_attempts: 3, mean_reward: null });
    expect(trajectories[0]!.invalid_reason).toContain('no event for 300 ms');
  });

  it('a server that opens the socket and never sends a frame (not even session.created) fails each attempt at the open timeout, not the idle one: a ModelEndpointError (the rollout invalid) naming it', async () => {
    const silent = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((r) => silent.once('listening', () => r()));
    let connections = 0;
    let greet = false;
    const said: string[] = [];
    silent.on('connection', (ws) => {
      connections++;
      // The second server of this test: session.created, then silence.
      if (greet) ws.send(JSON.stringify({ type: 'session.created', session: {} }));
      ws.on('message', (d) => said.push(JSON.parse(String(d)).type));
    });
    const url = `ws://127.0.0.1:${(silent.address() as AddressInfo).port}/v1/realtime?model=silent`;
    const task = domain.tasks.find((t) => t.id === TASK)!;
    const view = { domain, task, turns: [], tools: [], rng: seededRng(0) };
    const agent = (connect: RealtimeConnect) => new RealtimeAgent({ timers: realTimers, url, connect, retries: 2 });
    try {
      const connect = nodeRealtimeConnect({ openTimeoutMs: 200, idleTimeoutMs: 60_000 });
      const e = await agent(connect)
        .respond(view)
        .catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ModelEndpointError);
      expect((e as ModelEndpointError).message).toBe(
        `realtime agent at ${url}: connection closed: no event in the 200 ms after the connection opened (not even session.created) (3 attempts)`,
      );
      expect([(e as ModelEndpointError).retryable, connections]).toEqual([true, 3]);
      // Each session was asked for a reply before the silence ended it.
      expect(said).toEqual(Array(3).fill(['session.update', 'response.create']).flat());
      // Once the server has said anything, silence waits for the idle timeout.
      greet = true;
      const quiet = nodeRealtimeConnect({ openTimeoutMs: 200, idleTimeoutMs: 400 });
      const late = await agent(quiet)
        .respond(view)
        .catch((x: unknown) => x);
      expect((late as ModelEndpointError).message).toBe(
        `realtime agent at ${url}: connection closed: no event for 400 ms (3 attempts)`,
      );
    } finally {
      for (const c of silent.clients) c.terminate();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('with the phone channel on it hears the degraded caller audio (24 kHz appends, then a commit), and an interrupted reply is cut back on the server', {
    timeout: 60_000,
  }, async () => {
    server = await startRealtimeServer(planScript(TASK));
    const { trajectories, out } = await runCli(`realtime:${server.url}`, [
      '--preset',
      'control',
      '--barge-in',
      '0.5',
      '--seed',
      '2',
    ]);
    const t = trajectories[0]!;
    expect(t.valid).toBe(true);
    const events = server.received.flat();
    // Every spoken caller turn the agent answered went as audio: its degraded WAV, resampled to 24 kHz PCM.
    const lastReply = t.turns.map((x) => x.role).lastIndexOf('assistant');
    const spoken = t.turns.filter((x, i) => x.role === 'user' && x.audio && i < lastReply);
    expect(spoken.length).toBeGreaterThan(1);
    const commits = events.filter((e) => e.type === 'input_audio_buffer.commit');
    expect(commits).toHaveLength(spoken.length);
    const userTexts = events.filter(
      (e) => e.type === 'conversation.item.create' && (e.item as { role?: string }).role === 'user',
    );
    expect(userTexts).toHaveLength(0);
    const bytes = server.conversations[0]!.filter((i) => i.audioBytes !== undefined).map((i) => i.audioBytes);
    const expected = await Promise.all(
      spoken.map(async (x) => {
        const wav = decodeWav(new Uint8Array(await readFile(join(out, x.role === 'user' ? x.audio!.degraded : ''))));
        return Math.round((wav.samples.length * 24000) / 16000) * 2;
      }),
    );
    expect(bytes).toEqual(expected);
    // Barge-in: the reply the caller cut off is truncated where the caller stopped hearing it.
    const cut = t.turns.filter((x) => x.role === 'assistant' && x.interrupted);
    expect(cut.length).toBeGreaterThan(0);
    const truncates = events.filter((e) => e.type === 'conversation.item.truncate');
    expect(truncates.map((e) => e.audio_end_ms)).toEqual(
      cut.map((x) => (x.role === 'assistant' ? Math.min(Math.round(x.interrupted!.cut_ms ?? 0), 500) : 0)),
    );
  });

  it('refuses a URL that is not ws(s) and redacts credentials in the message', async () => {
    const io = capture();
    expect(
      await main(['run', '--domain', 'carrier', '--agent', 'realtime:http://u:pw@h/v1?api_key=k', '--json'], io),
    ).toBe(2);
    expect(io.stdout).toContain('needs a ws:// or wss:// URL');
    expect(io.stdout).not.toContain('pw@');
  });
});

describe('realtime agent in an episode (library)', () => {
  const episode = async (agent: RealtimeAgent) => {
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    const task = domain.tasks.find((t) => t.id === TASK)!;
    const t = await runEpisode({
      runtime,
      task,
      agent,
      user: new ScriptedUser(),
      clock: steppingClock(domain.now, 1000),
      seed: 3,
    });
    return { t, info: await evaluate(runtime, task, t.turns, { termination: t.termination }) };
  };

  it('beta servers: the beta session shape and event names; the reply audio (capped) comes back as a 16 kHz WAV part', async () => {
    server = await startRealtimeServer(
      planScript(TASK, [], (r, ctx) => (ctx.assistantTurns === 0 ? { ...r, audioS: 6 } : r)),
      { dialect: 'beta' },
    );
    const agent = new RealtimeAgent({
      timers: realTimers,
      url: server.url,
      connect: nodeRealtimeConnect(),
      dialect: 'beta',
      maxAudioSeconds: 2,
    });
    // The greeting alone, straight from respond().
    const task = domain.tasks.find((t) => t.id === TASK)!;
    const reply = await agent.respond({ domain, task, turns: [], tools: [], rng: seededRng(0) });
    await agent.close();
    expect(reply.text).toBe(domain.greeting);
    const part = reply.parts?.[0];
    expect(part?.type).toBe('audio');
    const wav = decodeWav(fromBase64(part!.type === 'audio' ? part!.base64! : ''));
    expect(wav.sampleRate).toBe(16000);
    expect(wav.samples.length).toBe(2 * 16000);
    // Past the audio limit the response is cancelled (the server had already ended it: its
    // response_cancel_not_active error is no fault) and the reply marked capped.
    expect(reply.generation?.finish_reason).toBe('completed; cut at the audio_s limit');
    expect(reply.capped).toEqual({ limit: 'audio_s', max: 2, ended: 'done' });
    await vi.waitFor(() =>
      expect(server!.received[0]!.filter((e) => e.type === 'response.cancel')).toEqual([
        { type: 'response.cancel', event_id: 'switchboard_cancel_1', response_id: 'resp_4' },
      ]),
    );
    const update = server.received[0]![0] as { session: Record<string, unknown> };
    expect(update.session).toMatchObject({
      modalities: ['text', 'audio'],
      input_audio_format: 'pcm16',
      output_audio_format: 'pcm16',
      turn_detection: null,
    });
  });

  it('events of other responses (a second response.done, a response.done of an id never announced, the rest of a response after its early response.done) are skipped: the replies stay on their own turns', async () => {
    const run = async (
      change: Partial<ScriptedResponse>,
      opts: Parameters<typeof startRealtimeServer>[1] = {},
      response = 1,
    ) => {
      server = await startRealtimeServer(
        planScript(TASK, [], (r, ctx) => (ctx.response === response ? { ...r, ...change } : r)),
        opts,
      );
      const { t, info } = await episode(
        new RealtimeAgent({ timers: realTimers, url: server.url, connect: nodeRealtimeConnect() }),
      );
      await server.close();
      server = undefined;
      const said = t.turns.map((x) =>
        x.role === 'assistant'
          ? [x.text, x.tool_calls.map((c) => c.name), x.generation?.finish_reason]
          : [x.role, x.role === 'tool' ? x.name : x.text],
      );
      return { t, said, reward: info.reward };
    };
    const clean = await run({});
    expect([clean.t.valid, clean.reward]).toEqual([true, 1]);
    const tag = (said: unknown[][], at: number, reason: string) =>
      said.map((x, i) => (i === at ? [x[0], x[1], reason] : x));
    // Turn 2 is the reply to the second response.create.
    const ghost = await run({ ghost: true });
    expect([ghost.t.valid, ghost.reward]).toEqual([true, 1]);
    expect(ghost.said).toEqual(tag(clean.said, 2, 'completed; 1 event of other responses skipped'));
    // The second response.done waits for the next reply (turn 4), which skips it.
    const twice = await run({ duplicateDone: true });
    expect([twice.t.valid, twice.reward]).toEqual([true, 1]);
    expect(twice.said).toEqual(tag(clean.said, 4, 'completed; 1 event of other responses skipped'));
    // An early response.done ends turn 2 empty; the rest of that response (its 10 events) is skipped by turn 4.
    const early = await run({ doneFirst: true });
    expect(early.t.valid).toBe(true);
    expect(early.said.slice(0, 6)).toEqual([
      clean.said[0],
      clean.said[1],
      ['', [], 'completed'],
      ['user', '嗯，好的。'],
      [...clean.said[4]!.slice(0, 2), 'completed; 10 events of other responses skipped'],
      clean.said[5],
    ]);
    // Issue 17 (item 4 leftover 7): responses the server makes on its own are not the reply.
    // Every response.create carries response.metadata {switchboard_request: <n>}; the server echoes it.
    const ignored = 'completed; 1 unrequested response ignored; 3 events of other responses skipped';
    // Announced (and done) after our request, ahead of the real response, once the server has
    // shown it echoes the tag: its created has none, so it is not ours.
    const before = await run({ extra: 'before' });
    expect([before.t.valid, before.reward]).toEqual([true, 1]);
    expect(before.said).toEqual(tag(clean.said, 2, ignored));
    // Sent after a reply's response.done, unasked, on a server that echoes no metadata: it was
    // waiting unread when the next request went out (turn 4), so it answers nothing.
    const after = await run({ extra: 'after' }, { echoMetadata: false });
    expect([after.t.valid, after.reward]).toEqual([true, 1]);
    expect(after.said).toEqual(tag(clean.said, 4, ignored));
    // On the greeting (the server's echo not seen yet): the untagged response is taken first, then
    // dropped when the tagged one is announced (its created and delta skipped); its done, sent
    // after the real reply's, is skipped by the next reply.
    const interleaved = await run({ extra: 'interleaved' }, {}, 0);
    expect([interleaved.t.valid, interleaved.reward]).toEqual([true, 1]);
    expect(interleaved.said).toEqual(
      tag(
        tag(clean.said, 0, 'completed; 1 unrequested response ignored; 2 events of other responses skipped'),
        2,
        'completed; 1 event of other responses skipped',
      ),
    );
  });

  it('the same core agent over the page transport (a WHATWG WebSocket) scores 1 on the beta server', async () => {
    server = await startRealtimeServer(planScript(TASK), { dialect: 'beta' });
    const connect = webSocketConnect((url) => new WebSocket(url) as unknown as WebSocketLike);
    const { t, info } = await episode(
      new RealtimeAgent({ timers: realTimers, url: server.url, connect, dialect: 'beta' }),
    );
    expect(t.valid).toBe(true);
    expect(info.reward).toBe(1);
  });
});

describe('realtime agent on the duplex timeline', () => {
  /** A duplex call (clean channel, espeak caller) with the realtime agent; every spoken reply `audioS` s of audio. */
  const duplexCall = async (audioS: number) => {
    server = await startRealtimeServer(planScript(TASK, [], (r) => (r.text ? { ...r, audioS } : r)));
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    const t = await runEpisode({
      runtime,
      task: domain.tasks.find((x) => x.id === TASK)!,
      agent: new RealtimeAgent({ timers: realTimers, url: server.url, connect: nodeRealtimeConnect() }),
      user: new ScriptedUser(),
      clock: steppingClock(domain.now, 1000),
      seed: 3,
      channel: { tts: espeakTts(), renderer: nodeGraphRenderer, preset: 'clean', store: new MemoryAudioStore() },
      duplex: {},
    });
    expect(t.valid).toBe(true);
    const spans = t.duplex!.spans.filter((s) => s.who === 'agent' && s.kind === 'speech');
    return { t, ms: spans.map((s) => (s.end_tick - s.start_tick) * t.duplex!.turn_taking.tick_ms) };
  };

  it("the agent's speech on the timeline is its own audio: each span lasts exactly the audio it sent", async () => {
    // 1.8 s of 24 kHz audio per reply (9 ticks of 200 ms), whatever the text's length.
    const own = await duplexCall(1.8);
    const spoken = own.t.turns.filter((x) => x.role === 'assistant' && x.text);
    expect(own.ms).toHaveLength(spoken.length);
    expect(spoken.length).toBeGreaterThan(3);
    expect(own.ms).toEqual(spoken.map(() => 1800));
    await server!.close();
    server = undefined;
    // Without audio the replies are synthesized from their text: other lengths, varying by reply.
    const synthesized = await duplexCall(0);
    expect(synthesized.ms).toHaveLength(spoken.length);
    expect(new Set(synthesized.ms).size).toBeGreaterThan(1);
    expect(synthesized.ms).not.toContain(1800);
  }, 120_000);
});

describe("a yield with the agent's own audio", () => {
  it('the caller barges in on the realtime reply: yield tick, heard prefix and span lengths are exact', async () => {
    const TICK_MS = 200;
    const TICK = 3200;
    // 1.8 s of audio per reply: 28,800 samples at 16 kHz, 9 ticks, whatever the text says.
    server = await startRealtimeServer(planScript(TASK, [], (r) => (r.text ? { ...r, audioS: 1.8 } : r)));
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    const task = domain.tasks.find((x) => x.id === TASK)!;
    const tts = espeakTts();
    const store = new MemoryAudioStore();
    const channel = { tts, renderer: nodeGraphRenderer, preset: 'clean' as const, store, bargeIn: 1, mix: { stop: 1 } };
    const seed = 5;
    const t = await runEpisode({
      runtime,
      task,
      agent: new RealtimeAgent({ timers: realTimers, url: server.url, connect: nodeRealtimeConnect() }),
      user: new ScriptedUser(),
      clock: steppingClock(domain.now, 1000),
      seed,
      channel,
      duplex: {},
    });
    expect(t.valid).toBe(true);
    const d = t.duplex!;
    const agentSpans = d.spans.filter((s) => s.who === 'agent' && s.kind === 'speech');
    const yielded = agentSpans.filter((s) => s.yielded);
    expect(yielded.length).toBeGreaterThan(0);
    // Replies said whole last exactly their audio: 9 ticks.
    for (const s of agentSpans.filter((x) => !x.yielded)) expect(s.end_tick - s.start_tick).toBe(9);
    const trimmed = async (text: string) => {
      const a = await tts.synthesize(text, { language: domain.language });
      return Math.max(1, speechEndSample(a.samples));
    };
    const [, right] = await import('wavefile').then(({ default: wavefile }) => {
      const wav = new wavefile.WaveFile(store.getSync!(d.audio!.stereo)!);
      return wav.getSamples(false, Float64Array) as unknown as Float64Array[];
    });
    const rmsOf = (a: number, b: number) => {
      let e = 0;
      for (let i = a; i < b; i++) e += (right![i]! / 32768) ** 2;
      return Math.sqrt(e / Math.max(1, b - a));
    };
    for (const y of yielded) {
      const turn = t.turns[y.turn!] as { text: string; interrupted: { full_text: string; cut_ms: number } };
      const full = turn.interrupted.full_text;
      // The yield tick: the caller starts where the channel's barge-in cut the reply (its heard
      // part's end of speech on the synthesis, scaled to the own audio's 28,800 samples, in whole
      // ticks), and the agent stops 400 ms (2 ticks) later.
      const barge = await channelBargeIn(
        channel,
        { domain: domain.name, language: domain.language, task, trial: 0, seed },
        y.turn!,
        full,
        [],
      );
      const scale = 28_800 / (await trimmed(full));
      const onset = Math.min(
        y.start_tick + 8,
        y.start_tick + Math.floor((barge!.interrupted.cut_ms! * scale) / TICK_MS),
      );
      const bargeSpan = d.spans.find((s) => s.kind === 'barge_in' && s.turn === y.turn! + 1)!;
      expect(bargeSpan.start_tick).toBe(onset);
      expect(y.end_tick).toBe(Math.min(y.start_tick + 9, onset + 2));
      expect(turn.interrupted.cut_ms).toBe((y.end_tick - y.start_tick) * TICK_MS);
      // The heard prefix: word ends measured on the synthesis, scaled to the agent's own audio
      // (28,800 samples over the whole reply's synthesis); the words ending by the stop are heard.
      const said = (y.end_tick - y.start_tick) * TICK;
      const tokens = tokenize(full);
      let k = 0;
      while (k < tokens.length && Math.round((await trimmed(full.slice(0, tokens[k]!.end))) * scale) <= said) k++;
      expect(k).toBeLessThan(tokens.length);
      expect(y.text).toBe(cutAfterToken(full, k).heard);
      expect(turn.text).toBe(y.text);
      // Measured on the stereo WAV: the agent's tone plays until the stop and not after.
      const stop = y.end_tick * TICK;
      expect(rmsOf(stop - TICK, stop - 160)).toBeGreaterThan(0.05);
      expect(rmsOf(stop, stop + TICK)).toBeLessThan(1e-4);
    }
  }, 120_000);
});

describe('HearingAgent: a realtime agent that hears the caller without a channel', () => {
  it("each caller turn goes as 24 kHz PCM16 of exactly its text's synthesis in the caller's voice, none as text", async () => {
    server = await startRealtimeServer(planScript(TASK));
    const runtime = await DomainRuntime.create(domain, await sqlJsFactory());
    const task = domain.tasks.find((x) => x.id === TASK)!;
    const tts = espeakTts();
    const t = await runEpisode({
      runtime,
      task,
      agent: new HearingAgent(
        (userAudio) =>
          new RealtimeAgent({ timers: realTimers, url: server!.url, connect: nodeRealtimeConnect(), userAudio }),
        { tts },
      ),
      user: new ScriptedUser(),
      clock: steppingClock(domain.now, 1000),
      seed: 0,
    });
    expect([t.valid, (await evaluate(runtime, task, t.turns, { termination: t.termination })).reward]).toEqual([
      true,
      1,
    ]);
    const lastReply = t.turns.map((x) => x.role).lastIndexOf('assistant');
    const said = t.turns.filter((x, i) => x.role === 'user' && i < lastReply).map((x) => (x as { text: string }).text);
    const want = await Promise.all(
      said.map(async (text) => {
        const a = await tts.synthesize(text, personaVoice(domain.language, personaKey(task)));
        return resample(a.samples, a.sampleRate, 24_000).length * 2;
      }),
    );
    expect(want.length).toBe(3);
    expect(server.conversations[0]!.filter((i) => i.role === 'user').map((i) => i.audioBytes)).toEqual(want);
    expect(server.conversations[0]!.filter((i) => i.role === 'user' && i.text !== undefined)).toHaveLength(0);
  }, 60_000);
});

import { describe, expect, it } from 'vitest';
import { DomainRuntime } from '../../../src/core/env/environment.ts';
import { steppingClock } from '../../../src/core/ports/clock.ts';
import { runEpisode } from '../../../src/core/rollout/episode.ts';
import type { EpisodeChannel } from '../../../src/core/rollout/channel-step.ts';
import { ReferenceAgent, ScriptedUser } from '../../../src/core/participants/scripted.ts';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { nodeGraphRenderer } from '../../../src/adapters/node/audio/renderer.ts';
import { espeakTts } from '../../../src/adapters/node/audio/espeak-tts.ts';
import { MemoryAudioStore, toBase64 } from '../../../src/core/channel/audio-store.ts';
import { encodeWav } from '../../../src/core/audio/wav.ts';
import { agentOwnAudio } from '../../../src/core/duplex/timeline.ts';
import { evaluate } from '../../../src/core/scoring/evaluate.ts';
import { callEvents } from '../../../src/core/duplex/interaction-events.ts';
import { labelTrack, spanTicks } from '../../../src/core/duplex/record.ts';
import type { DuplexSettings } from '../../../src/core/duplex/turn-taking.ts';
import { Trajectory as TrajectorySchema, type Trajectory } from '../../../src/core/schema/trajectory.ts';
import { MINI_NOW, miniDomain } from '../../fixtures/mini-domain.ts';
import wavefile from 'wavefile';
import { speechEndSample } from '../../../src/core/channel/caller-audio.ts';
import { cutAfterToken, tokenize } from '../../../src/core/channel/text-cut.ts';
import { wordsSaidWithin } from '../../../src/core/duplex/word-timing.ts';

const tts = espeakTts();
const TICK = 3200; // samples of one 200 ms tick at 16 kHz

async function call(over: Partial<EpisodeChannel>, duplex: DuplexSettings | undefined, seed = 3) {
  const rt = await DomainRuntime.create(miniDomain(), await sqlJsFactory());
  const store = new MemoryAudioStore();
  const task = rt.domain.tasks[0]!;
  const t = await runEpisode({
    runtime: rt,
    task,
    agent: new ReferenceAgent(),
    user: new ScriptedUser(),
    seed,
    clock: steppingClock(MINI_NOW, 1000),
    channel: { tts, renderer: nodeGraphRenderer, preset: 'clean', store, ...over },
    ...(duplex ? { duplex } : {}),
  });
  const reward = t.valid ? (await evaluate(rt, task, t.turns, { termination: t.termination })).reward : null;
  return { t, store, reward };
}

/** Left and right channels of a stored stereo WAV as floats. */
function channels(bytes: Uint8Array): [Float64Array, Float64Array] {
  const wav = new wavefile.WaveFile(bytes);
  const fmt = wav.fmt as { numChannels: number; sampleRate: number; bitsPerSample: number };
  expect([fmt.numChannels, fmt.sampleRate, fmt.bitsPerSample]).toEqual([2, 16000, 16]);
  const s = wav.getSamples(false, Float64Array) as unknown as Float64Array[];
  return [s[0]!, s[1]!];
}
const rms = (x: Float64Array, a: number, b: number) => {
  let e = 0;
  for (let i = a; i < b; i++) e += (x[i]! / 32768) ** 2;
  return Math.sqrt(e / Math.max(1, b - a));
};
const assistantTexts = (t: Trajectory) => t.turns.filter((x) => x.role === 'assistant').map((x) => x.text);

describe('full-duplex timeline (--duplex)', () => {
  it('places real speech on one tick axis: stereo WAV (caller left, agent right) and labels match the spans', async () => {
    const { t, store } = await call({}, {});
    expect(TrajectorySchema.parse(t)).toEqual(t);
    const d = t.duplex!;
    expect(d.turn_taking).toEqual({
      tick_ms: 200,
      agent_wait_ms: 600,
      caller_wait_ms: 1000,
      yield_after_ms: 400,
      tool_call_ms: 400,
    });
    // Without overlaps and barge-ins the speakers alternate with the documented waits.
    const spans = d.spans;
    expect(spans.map((s) => `${s.who}:${s.kind}`)).toEqual([
      'agent:speech',
      'caller:turn',
      'agent:speech',
      'caller:turn',
      'agent:speech',
      'caller:turn',
      'agent:speech',
      'caller:turn',
    ]);
    for (let i = 1; i < spans.length; i++) {
      const gap = spans[i]!.start_tick - spans[i - 1]!.end_tick;
      // Caller waits 1.0 s (5 ticks); the agent 0.6 s (3 ticks), plus 0.4 s (2 ticks) per tool call before it speaks.
      if (spans[i]!.who === 'caller') expect(gap).toBe(5);
      else expect(gap % 2 === 1 && gap >= 3).toBe(true);
    }
    // Durations are the synthesized speech's, in whole ticks.
    for (const s of spans.filter((x) => x.who === 'agent')) {
      const a = await tts.synthesize(s.text, { language: 'en-US' });
      const speech = speechEndSample(a.samples);
      expect(speech).toBeGreaterThan(0.5 * a.samples.length);
      expect(s.end_tick - s.start_tick).toBe(Math.ceil(speech / TICK));
    }
    const [left, right] = channels(await store.get(d.audio!.stereo));
    expect(left.length).toBe(d.total_ticks * TICK);
    for (const s of spans) {
      const [a, b] = [s.start_tick * TICK, s.end_tick * TICK];
      const own = s.who === 'agent' ? right : left;
      const other = s.who === 'agent' ? left : right;
      expect(rms(own, a, b)).toBeGreaterThan(0.02);
      expect(rms(other, a, b)).toBeLessThan(1e-3);
    }
    const labels = new TextDecoder()
      .decode(await store.get(d.audio!.labels))
      .trimEnd()
      .split('\n');
    expect(labels).toHaveLength(spans.length);
    expect(labels[0]).toBe(
      `0.000000\t${(spans[0]!.end_tick * 0.2).toFixed(6)}\tagent: Hello, how can I help you today?`,
    );
    expect(labelTrack(d).trimEnd().split('\n')).toEqual(labels);
  }, 60_000);

  it('a seeded call replays bit for bit, WAV included', async () => {
    const settings = { overlaps: { aside: 0.5, vocalTic: 0.5, background: 0.5 } };
    const a = await call({ bargeIn: 0.5 }, settings, 11);
    const b = await call({ bargeIn: 0.5 }, settings, 11);
    expect(JSON.stringify(a.t)).toBe(JSON.stringify(b.t));
    expect(
      Buffer.from(await a.store.get(a.t.duplex!.audio!.stereo)).equals(
        Buffer.from(await b.store.get(b.t.duplex!.audio!.stereo)),
      ),
    ).toBe(true);
  }, 60_000);

  it('with --barge-in 0.5 backchannels overlap the reply: no turn, no restart, the same reward', async () => {
    const plain = await call({}, {});
    const bc = await call({ bargeIn: 0.5, mix: { backchannel: 1 } }, {});
    const d = bc.t.duplex!;
    const backchannels = d.spans.filter((s) => s.kind === 'backchannel');
    expect(backchannels.length).toBeGreaterThan(0);
    // Each backchannel lies inside an agent span that goes on at least 1 s after it starts.
    for (const b of backchannels) {
      const agent = d.spans.find(
        (s) => s.who === 'agent' && s.start_tick <= b.start_tick && b.start_tick < s.end_tick,
      )!;
      expect(agent.end_tick - b.start_tick).toBeGreaterThan(5);
      expect(agent.yielded).toBeUndefined();
    }
    expect(bc.t.turns.some((x) => 'interrupted' in x || 'barge_in' in x)).toBe(false);
    expect(assistantTexts(bc.t)).toEqual(assistantTexts(plain.t));
    expect(plain.reward).toBe(1);
    expect(bc.reward).toBe(1);
    const m = d.metrics as { selectivity_backchannel: number; counts: { backchannel_total: number } };
    expect(m.selectivity_backchannel).toBe(1);
    expect(m.counts.backchannel_total).toBe(backchannels.length);
    // The same flags on the turn-based loop cut the reply and make the backchannel a caller turn.
    const turnBased = await call({ bargeIn: 0.5, mix: { backchannel: 1 } }, undefined);
    expect(turnBased.t.turns.some((x) => 'interrupted' in x)).toBe(true);
  }, 90_000);

  it('a real barge-in makes the agent yield after 0.4 s; its history keeps only the words said by then', async () => {
    const { t, store } = await call({ bargeIn: 0.5, mix: { stop: 1 } }, {}, 4);
    const d = t.duplex!;
    const yielded = d.spans.filter((s) => s.yielded);
    expect(yielded.length).toBeGreaterThan(0);
    for (const y of yielded) {
      const barge = d.spans.find((s) => s.kind === 'barge_in' && s.turn === y.turn! + 1)!;
      expect(y.end_tick - barge.start_tick).toBe(2);
      const turn = t.turns[y.turn!]!;
      expect(turn.role).toBe('assistant');
      expect((turn as { text: string }).text).toBe(y.text);
      const full = (turn as { interrupted: { full_text: string } }).interrupted.full_text;
      expect(full.startsWith(y.text)).toBe(true);
      expect(y.text.length).toBeLessThan(full.length);
    }
    const [, right] = channels(await store.get(d.audio!.stereo));
    const y = yielded[0]!;
    // The agent channel is silent once it has yielded (until its next reply).
    const next = d.spans.find((s) => s.who === 'agent' && s.start_tick >= y.end_tick)!;
    expect(rms(right, y.end_tick * TICK, next.start_tick * TICK)).toBeLessThan(1e-4);
    const ev = callEvents(spanTicks(d)).events.filter((e) => e.category === 'yield');
    expect(ev.map((e) => [e.type, e.latency_sec])).toEqual(yielded.map(() => ['yield', 0.4]));
  }, 60_000);

  it('the heard words on a yield are exactly those whose end, measured on the synthesis, precedes the stop', async () => {
    const { t } = await call({ bargeIn: 0.5, mix: { stop: 1 } }, {}, 4);
    const d = t.duplex!;
    const yielded = d.spans.filter((s) => s.yielded);
    expect(yielded.length).toBeGreaterThan(0);
    // End of speech of the reply up to each word, spoken alone (as the timeline measures it).
    const speechOf = async (prefix: string) => {
      const a = await tts.synthesize(prefix, { language: 'en' });
      return Math.max(1, speechEndSample(a.samples));
    };
    for (const y of yielded) {
      const full = (t.turns[y.turn!] as { interrupted: { full_text: string } }).interrupted.full_text;
      const tokens = tokenize(full);
      const ends = [0];
      for (const tok of tokens) ends.push(await speechOf(full.slice(0, tok.end)));
      // Word ends grow word by word (the binary search relies on it).
      for (let k = 1; k < ends.length; k++) expect(ends[k]!).toBeGreaterThan(ends[k - 1]!);
      const cut = (y.end_tick - y.start_tick) * TICK;
      const k = ends.filter((e, i) => i > 0 && e <= cut).length;
      expect(k).toBeLessThan(tokens.length);
      expect(ends[k]!).toBeLessThanOrEqual(cut);
      expect(ends[k + 1]!).toBeGreaterThan(cut);
      expect(y.text).toBe(cutAfterToken(full, k).heard);
      expect((t.turns[y.turn!] as { text: string }).text).toBe(y.text);
    }
  }, 90_000);

  it('wordsSaidWithin: the largest k whose end is at or before the cut, in ⌈log2(n + 1)⌉ syntheses', async () => {
    const text = 'one two three four five six seven';
    const tokens = tokenize(text);
    // A TTS stand-in whose words each take 1,000 samples: word k ends at 1,000 k.
    const asked: string[] = [];
    const speech = async (prefix: string) => {
      asked.push(prefix);
      return 1000 * tokenize(prefix).length;
    };
    for (const [cut, k] of [
      [0, 0],
      [999, 0],
      [1000, 1],
      [3500, 3],
      [6999, 6],
      [7000, 7],
      [1e9, 7],
    ] as const) {
      asked.length = 0;
      const r = await wordsSaidWithin(text, tokens, cut, speech);
      expect(r.k).toBe(k);
      expect(asked.length).toBe(3);
      for (const [j, end] of r.ends) expect(end).toBe(1000 * j);
    }
    expect((await wordsSaidWithin('', [], 5, speech)).k).toBe(0);
  });

  it('a huge agent reply is spoken up to MAX_SPOKEN_AGENT_CHARS, the rest marked unspoken; the call stays valid', async () => {
    const rt = await DomainRuntime.create(miniDomain(), await sqlJsFactory());
    const text = 'Hello there, thanks for calling. '.repeat(120);
    const t = await runEpisode({
      runtime: rt,
      task: rt.domain.tasks[0]!,
      agent: { id: 'huge', respond: async () => ({ text: `${text}###STOP###` }) },
      user: new ScriptedUser(),
      seed: 1,
      clock: steppingClock(MINI_NOW, 1000),
      channel: { tts, renderer: nodeGraphRenderer, preset: 'clean', bargeIn: 1 },
      duplex: {},
    });
    expect([t.valid, t.termination]).toEqual([true, 'agent_stop']);
    const [agent] = t.duplex!.spans;
    // 3,960 characters: the first 1,000 are spoken (cut after the last word ending within them,
    // "… calling. Hello"), about a minute on the axis (it was over two minutes whole).
    expect(agent!.text).toBe(`${'Hello there, thanks for calling. '.repeat(30)}Hello`);
    expect(agent!.unspoken_chars).toBe(text.trim().length - agent!.text.length);
    expect((agent!.end_tick - agent!.start_tick) * 0.2).toBeGreaterThan(40);
    expect((agent!.end_tick - agent!.start_tick) * 0.2).toBeLessThan(90);
    expect(t.turns[0]).toMatchObject({ role: 'assistant', text: text.trim() });
    // A 16,000-character reply is about 26 minutes of speech: its end of speech is found without
    // spreading 150,000 frame powers into Math.max (which overflowed the stack).
    const long = new Float32Array(16000 * 60 * 26);
    long.fill(0.1, 0, 16000 * 60 * 20);
    expect(speechEndSample(long)).toBe(16000 * 60 * 20);
  }, 120_000);
});

describe('agentOwnAudio', () => {
  const part = (base64: string) => ({ text: 'hi', parts: [{ type: 'audio', base64 }] });
  it('a 24 kHz WAV part becomes 16 kHz samples of the same duration', () => {
    const wav = toBase64(encodeWav(new Float32Array(24_000 * 0.6).fill(0.1), 24_000));
    const got = agentOwnAudio(part(wav));
    expect(got && 'samples' in got ? got.samples.length : null).toBe(9600);
  });
  it('no part: null; not a WAV, an empty WAV, a rate outside 8–48 kHz or over 120 s: refused with the reason', () => {
    expect(agentOwnAudio({ text: 'hi' })).toBeNull();
    expect(agentOwnAudio(null)).toBeNull();
    expect(agentOwnAudio(part('bm90IGEgd2F2'))).toEqual({ refused: expect.stringMatching(/^not a WAV file \(/) });
    expect(agentOwnAudio(part('%%%'))).toEqual({ refused: expect.stringMatching(/^not a WAV file \(/) });
    expect(agentOwnAudio(part(toBase64(encodeWav(new Float32Array(0), 16_000))))).toEqual({
      refused: 'the WAV holds no samples',
    });
    expect(agentOwnAudio(part(toBase64(encodeWav(new Float32Array(100), 96_000))))).toEqual({
      refused: 'sample rate 96000 Hz, outside 8000–48000 Hz',
    });
    expect(agentOwnAudio(part(toBase64(encodeWav(new Float32Array(8000 * 121), 8000))))).toEqual({
      refused: '121.0 s of audio, over the 120-s limit',
    });
    // Longer than 120 s of 48 kHz stereo: refused on its length, before decoding.
    const huge = 'A'.repeat(31_000_000);
    expect(agentOwnAudio(part(huge))).toEqual({ refused: '23250000 bytes of audio, over the 120-s limit' });
  });
});

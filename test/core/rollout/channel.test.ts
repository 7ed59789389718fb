import { describe, expect, it } from 'vitest';
import { toneTts } from '../../fixtures/tone-tts.ts';
import { DomainRuntime } from '../../../src/core/env/environment.ts';
import { steppingClock } from '../../../src/core/ports/clock.ts';
import { runEpisode } from '../../../src/core/rollout/episode.ts';
import { channelBargeIn, type EpisodeChannel } from '../../../src/core/rollout/channel-step.ts';
import { ReferenceAgent, ScriptedUser } from '../../../src/core/participants/scripted.ts';
import type { Agent, EpisodeView } from '../../../src/core/participants/types.ts';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { nodeGraphRenderer } from '../../../src/adapters/node/audio/renderer.ts';
import { espeakTts } from '../../../src/adapters/node/audio/espeak-tts.ts';
import { MemoryAudioStore } from '../../../src/core/channel/audio-store.ts';
import { speechEndSample } from '../../../src/core/channel/caller-audio.ts';
import { voiceFromRecord } from '../../../src/core/channel/persona-voice.ts';
import { decodeWav } from '../../../src/core/audio/wav.ts';
import { samplesToMs } from '../../../src/core/audio/pcm.ts';
import { scoreCommunicate } from '../../../src/core/scoring/communicate.ts';
import { evaluate } from '../../../src/core/scoring/evaluate.ts';
import { INTERRUPTION_TYPES, normalizeMix } from '../../../src/core/channel/barge-in.ts';
import type { Trajectory, UserTurn } from '../../../src/core/schema/trajectory.ts';
import { Trajectory as TrajectorySchema } from '../../../src/core/schema/trajectory.ts';
import { MINI_NOW, miniDomain } from '../../fixtures/mini-domain.ts';

async function runtime() {
  return DomainRuntime.create(miniDomain(), await sqlJsFactory());
}
const tts = espeakTts();
const channel = (over: Partial<EpisodeChannel> = {}) => ({
  tts,
  renderer: nodeGraphRenderer,
  preset: 'regular' as const,
  ...over,
  store: new MemoryAudioStore(),
});
const users = (t: Trajectory) => t.turns.filter((x): x is UserTurn => x.role === 'user');

describe('episode loop with the phone channel', () => {
  it('without a channel the trajectory is unchanged; with a channel at rate 0 the words are the same', async () => {
    const rt = await runtime();
    const task = rt.domain.tasks[0]!;
    const run = (ch?: EpisodeChannel) =>
      runEpisode({
        runtime: rt,
        task,
        agent: new ReferenceAgent(),
        user: new ScriptedUser(),
        seed: 5,
        clock: steppingClock(MINI_NOW, 1000),
        ...(ch ? { channel: ch } : {}),
      });
    const a = await run();
    const b = await run();
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(a.turns.some((t) => 'audio' in t || 'interrupted' in t || 'dropout' in t)).toBe(false);
    const c = await run(channel());
    const strip = (t: Trajectory) =>
      t.turns.map((x) => {
        const { audio: _a, ...rest } = x as UserTurn;
        return rest;
      });
    expect(strip(c)).toEqual(a.turns);
  });

  it('stores clean and degraded 16 kHz mono 16-bit WAV for every caller turn; same seed → identical bytes', async () => {
    const rt = await runtime();
    const task = rt.domain.tasks[0]!;
    const run = async () => {
      const ch = channel();
      const t = await runEpisode({
        runtime: rt,
        task,
        agent: new ReferenceAgent(),
        user: new ScriptedUser(),
        seed: 7,
        clock: steppingClock(MINI_NOW, 1000),
        channel: ch,
      });
      return { t, ch };
    };
    const one = await run();
    const two = await run();
    TrajectorySchema.parse(one.t);
    const spoken = users(one.t).filter((u) => u.text);
    expect(spoken.length).toBeGreaterThan(2);
    for (const u of spoken) {
      expect(u.audio).toBeDefined();
      const a = u.audio!;
      expect(a.preset).toBe('regular');
      expect(a.degraded).toMatch(/^audio\/mini\/.+\/0-7\/turn-\d{3}\.degraded\.wav$/);
      for (const ref of [a.clean, a.degraded]) {
        const bytes = one.ch.store.files.get(ref)!;
        const view = new DataView(bytes.buffer, bytes.byteOffset);
        expect([view.getUint16(22, true), view.getUint32(24, true), view.getUint16(34, true)]).toEqual([1, 16000, 16]);
        expect(samplesToMs(decodeWav(bytes).samples.length, 16000)).toBeCloseTo(a.duration_ms, 6);
        expect(Buffer.from(bytes).equals(Buffer.from(two.ch.store.files.get(ref)!))).toBe(true);
      }
      expect(a.timeline.some((e) => e.type === 'telephony')).toBe(true);
    }
    expect(JSON.stringify(one.t)).toBe(JSON.stringify(two.t));
  });

  it('dropout: the agent gets audio and transcript up to the cut, and the audio length equals the cut of the transcript (ms)', async () => {
    const rt = await runtime();
    const task = rt.domain.tasks[0]!;
    const ch = channel({ dropout: 1 });
    const t = await runEpisode({
      runtime: rt,
      task,
      agent: new ReferenceAgent(),
      user: new ScriptedUser(),
      seed: 11,
      clock: steppingClock(MINI_NOW, 1000),
      channel: ch,
      maxSteps: 12,
    });
    const cut = users(t).filter((u) => u.dropout);
    expect(cut.length).toBeGreaterThan(1);
    for (const u of cut) {
      const d = u.dropout!;
      expect(d.full_text.startsWith(u.text)).toBe(true);
      expect(u.text.length).toBeLessThan(d.full_text.length);
      // The transcript cut, timed independently: end of speech of the TTS of the heard text.
      // In the caller's recorded voice (the persona's).
      const voice = voiceFromRecord(u.audio!.voice!);
      const heard = await tts.synthesize(u.text, voice);
      const expectedMs = samplesToMs(Math.max(1, speechEndSample(heard.samples)), 16000);
      const degraded = decodeWav(ch.store.files.get(u.audio!.degraded)!);
      const clean = decodeWav(ch.store.files.get(u.audio!.clean)!);
      const full = await tts.synthesize(d.full_text, voice);
      const fullMs = samplesToMs(full.samples.length, 16000);
      expect(Math.min(expectedMs, fullMs)).toBeCloseTo(d.cut_ms!, 6);
      expect(samplesToMs(degraded.samples.length, 16000)).toBeCloseTo(d.cut_ms!, 6);
      expect(samplesToMs(clean.samples.length, 16000)).toBeCloseTo(d.cut_ms!, 6);
      expect(d.cut_ms!).toBeLessThan(fullMs);
      // What is audible is the transcript: the clean audio is the heard words' own speech up to
      // its end (16-bit rounding only), nothing of the next word.
      const own = heard.samples.subarray(0, clean.samples.length);
      expect(Math.max(...Array.from(clean.samples, (v, i) => Math.abs(v - (own[i] as number))))).toBeLessThanOrEqual(
        0.51 / 32768,
      );
    }
    // The reaction checks ran and were recorded (the reference agent ignores cuts: they fail).
    const info = await evaluate(rt, task, t.turns);
    const verdicts = info.assertions.filter((v) => v.id.startsWith('channel:dropout@'));
    expect(verdicts).toHaveLength(cut.length);
  });
});

describe('barge-in', () => {
  /** Says a long reply with a fact to communicate near its end, plus a write call. */
  class Talker implements Agent {
    readonly id = 'talker';
    async respond(view: EpisodeView) {
      const n = view.turns.filter((t) => t.role === 'assistant').length;
      if (n === 0)
        return {
          text: 'Hello, thanks for calling, I can help you with your balance today, one moment while I look at it.',
        };
      return {
        text: 'Your account shows a balance that we can settle now, and the amount still due after this payment is 20 dollars.',
        tool_calls: [{ id: `c${n}`, name: 'pay', arguments: { account_id: 'A1', amount: 10 } }],
      };
    }
  }

  it('keeps only the heard part, marked interrupted; unheard COMMUNICATE items fail; dropped calls do not run', async () => {
    const rt = await runtime();
    const task = rt.domain.tasks[0]!;
    const t = await runEpisode({
      runtime: rt,
      task,
      agent: new Talker(),
      user: new ScriptedUser(),
      seed: 3,
      clock: steppingClock(MINI_NOW, 1000),
      channel: channel({ tts: toneTts, bargeIn: 1 }),
      maxSteps: 8,
    });
    TrajectorySchema.parse(t);
    const cut = t.turns.filter((x) => x.role === 'assistant' && x.interrupted);
    expect(cut.length).toBeGreaterThan(1);
    for (const a of cut) {
      if (a.role !== 'assistant' || !a.interrupted) continue;
      expect(a.text).toBe(a.interrupted.heard_text);
      expect(a.interrupted.full_text.startsWith(a.text)).toBe(true);
      expect(a.text.length).toBeLessThan(a.interrupted.full_text.length);
      expect(a.tool_calls).toEqual([]);
      expect(a.text).not.toContain('20 dollars');
    }
    const i = t.turns.indexOf(cut[0]!);
    expect(t.turns[i + 1]).toMatchObject({ role: 'user', barge_in: { type: expect.any(String) } });
    // Every reply was interrupted before "20 dollars": COMMUNICATE fails; no pay call ran.
    expect(t.turns.some((x) => x.role === 'tool')).toBe(false);
    expect(scoreCommunicate(t.turns, ['20']).score).toBe(0);
    const full = t.turns.map((x) =>
      x.role === 'assistant' && x.interrupted ? { ...x, text: x.interrupted.full_text } : x,
    );
    expect(scoreCommunicate(full, ['20']).score).toBe(1);
  });

  it('the reference agent carries on after a backchannel and still solves the task', async () => {
    const rt = await runtime();
    const task = rt.domain.tasks[0]!;
    const t = await runEpisode({
      runtime: rt,
      task,
      agent: new ReferenceAgent(),
      user: new ScriptedUser(),
      seed: 5,
      clock: steppingClock(MINI_NOW, 1000),
      channel: channel({ tts: toneTts, bargeIn: 0.5, mix: { backchannel: 1 } }),
    });
    const cut = t.turns.filter((x) => x.role === 'assistant' && x.interrupted);
    expect(cut.length).toBeGreaterThan(0);
    // After the caller's backchannel the agent carries on with the unheard rest of the reply.
    for (const a of cut) {
      if (a.role !== 'assistant' || !a.interrupted) continue;
      const i = t.turns.indexOf(a);
      const again = t.turns.slice(i + 1).find((x) => x.role === 'assistant');
      const rest = a.interrupted.full_text.slice(a.interrupted.cut_char).trim();
      expect(again && again.role === 'assistant' && (again.text === rest || !!again.interrupted)).toBe(true);
    }
    const info = await evaluate(rt, task, t.turns, { termination: t.termination });
    expect(['user_stop', 'agent_stop']).toContain(t.termination);
    expect(info.reward).toBe(1);
  });

  it('samples the interruption types in the configured ratios', async () => {
    const rt = await runtime();
    const task = rt.domain.tasks[0]!;
    const mix = { backchannel: 0.5, urge: 0.1, correction: 0.2, question: 0.15, stop: 0.05 };
    const ch = channel({ tts: toneTts, bargeIn: 0.3, mix });
    const counts = Object.fromEntries(INTERRUPTION_TYPES.map((k) => [k, 0])) as Record<string, number>;
    const text = 'Your account shows a balance of 30 dollars, and I can take a payment of any amount now if you like.';
    const N = 6000;
    let hits = 0;
    for (let s = 0; s < N; s++) {
      const b = await channelBargeIn(ch, { domain: 'mini', language: 'en-US', task, trial: 0, seed: s }, 4, text, []);
      if (!b) continue;
      hits++;
      counts[b.interrupted.type]!++;
    }
    expect(Math.abs(hits / N - 0.3)).toBeLessThan(0.02);
    const norm = normalizeMix(mix);
    for (const k of INTERRUPTION_TYPES) {
      const p = norm[k];
      const sd = Math.sqrt((p * (1 - p)) / hits);
      expect(Math.abs(counts[k]! / hits - p)).toBeLessThan(4 * sd + 1e-9);
    }
  });
});

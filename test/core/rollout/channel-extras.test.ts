/** Issue 5 remainder in the episode loop: asides in caller turns, persona voices, the model barge-in picker. */
import { afterEach, describe, expect, it } from 'vitest';
import { DomainRuntime } from '../../../src/core/env/environment.ts';
import { steppingClock } from '../../../src/core/ports/clock.ts';
import { runEpisode } from '../../../src/core/rollout/episode.ts';
import {
  callerVoice,
  channelBargeIn,
  channelCallerTurn,
  type ChannelEpisodeKey,
  type EpisodeChannel,
} from '../../../src/core/rollout/channel-step.ts';
import { ReferenceAgent, ScriptedUser } from '../../../src/core/participants/scripted.ts';
import { sqlJsFactory } from '../../../src/adapters/shared/sqljs-db.ts';
import { OpenAiModelClient } from '../../../src/adapters/shared/openai-client.ts';
import { nodeGraphRenderer } from '../../../src/adapters/node/audio/renderer.ts';
import { espeakTts } from '../../../src/adapters/node/audio/espeak-tts.ts';
import { MemoryAudioStore } from '../../../src/core/channel/audio-store.ts';
import { pickBargeIn } from '../../../src/core/channel/barge-in.ts';
import { modelBargeInPicker } from '../../../src/core/channel/picker.ts';
import { personaKey, personaVoice } from '../../../src/core/channel/persona-voice.ts';
import { PRESETS, type ChannelPreset } from '../../../src/core/channel/presets.ts';
import { rngFromState } from '../../../src/core/ports/rng.ts';
import { Trajectory as TrajectorySchema, type Trajectory, type UserTurn } from '../../../src/core/schema/trajectory.ts';
import { pickerFromSpec } from '../../../src/cli/channel.ts';
import { UsageError } from '../../../src/cli/participants.ts';
import { completion, startOpenAiServer, type TestServer } from '../../fixtures/openai-server.ts';
import { MINI_NOW, miniDomain } from '../../fixtures/mini-domain.ts';

const runtime = async () => DomainRuntime.create(miniDomain(), await sqlJsFactory());
const tts = espeakTts();
const users = (t: Trajectory) => t.turns.filter((x): x is UserTurn => x.role === 'user');

describe('asides and tics in the episode', () => {
  it('caller turns carry asides in audio and in the documented `asides` field, never in `text`', async () => {
    const rt = await runtime();
    const task = rt.domain.tasks[0]!;
    const preset: ChannelPreset = {
      ...PRESETS.control,
      tics: { probability: 1, levelDb: [0, 0] },
      asides: { probability: 1, levelDb: [-6, -6] },
    };
    const run = (ch?: EpisodeChannel) =>
      runEpisode({
        runtime: rt,
        task,
        agent: new ReferenceAgent(),
        user: new ScriptedUser(),
        seed: 3,
        clock: steppingClock(MINI_NOW, 1000),
        ...(ch ? { channel: ch } : {}),
      });
    const plain = await run();
    const t = await run({ tts, renderer: nodeGraphRenderer, preset, store: new MemoryAudioStore() });
    TrajectorySchema.parse(JSON.parse(JSON.stringify(t)));
    expect(users(t).map((u) => u.text)).toEqual(users(plain).map((u) => u.text));
    const spoken = users(t).filter((u) => u.text.trim());
    expect(spoken.length).toBeGreaterThan(1);
    for (const u of spoken) {
      expect(u.asides).toHaveLength(1);
      const a = u.asides![0]!;
      expect(u.text).not.toContain(a.text);
      const ev = u.audio!.timeline.find((e) => e.type === 'aside')!;
      expect([ev.start_ms, ev.end_ms]).toEqual([a.start_ms, a.end_ms]);
      expect(a.end_ms).toBeLessThanOrEqual(u.audio!.duration_ms);
      expect(u.audio!.timeline.filter((e) => e.type === 'vocal_tic')).toHaveLength(1);
    }
  });
});

describe('persona voices in the trajectory', () => {
  it('two personas get different, stable voices, recorded in the turn audio', async () => {
    const rt = await runtime();
    const base = rt.domain.tasks[0]!;
    const withPersona = (persona: string) => ({ ...base, user_scenario: { ...base.user_scenario, persona } });
    const voices: unknown[] = [];
    for (const persona of [
      'A retired teacher, slow and careful',
      'A busy courier calling from the road',
      'A retired teacher, slow and careful',
    ]) {
      const task = withPersona(persona);
      const t = await runEpisode({
        runtime: rt,
        task,
        agent: new ReferenceAgent(),
        user: new ScriptedUser(),
        seed: 1,
        clock: steppingClock(MINI_NOW, 1000),
        channel: { tts, renderer: nodeGraphRenderer, preset: 'clean', store: new MemoryAudioStore() },
        maxSteps: 4,
      });
      const v = users(t).find((u) => u.audio)!.audio!.voice!;
      const expected = personaVoice(rt.domain.language, personaKey(task));
      expect(v).toEqual({
        language: expected.language,
        name: expected.voice,
        rate_wpm: expected.rateWpm,
        pitch: expected.pitch,
      });
      voices.push(v);
    }
    expect(voices[0]).toEqual(voices[2]);
    expect(voices[0]).not.toEqual(voices[1]);
    // A fixed channel voice still wins.
    const key: ChannelEpisodeKey = { domain: 'mini', language: 'en', task: base, trial: 0, seed: 1 };
    expect(callerVoice({ tts, renderer: nodeGraphRenderer, preset: 'clean', voice: { language: 'en' } }, key)).toEqual({
      language: 'en',
    });
  });
});

describe('model barge-in picker', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  const reply = 'Your phone number on file is 5550001, and I can change it for you now if you confirm.';
  const task = miniDomain().tasks[0]!;
  const key: ChannelEpisodeKey = { domain: 'mini', language: 'en', task, trial: 0, seed: 9 };
  const ctx = { language: 'en', facts: task.user_scenario.facts ?? [] };

  it('uses the model’s cut and words; the type is still sampled by the program', async () => {
    server = await startOpenAiServer(() => ({
      json: completion({
        model: 'picker',
        content: '{"cut_after_token": 7, "text": "No, it is 5550002 now.", "value": "5550002"}',
      }),
    }));
    const picker = modelBargeInPicker(
      new OpenAiModelClient({ flavor: 'vllm', model: 'picker', baseURL: server.url, maxRetries: 0 }),
    );
    const r = await picker.pick(reply, 'correction', rngFromState(1), ctx);
    expect(r.note).toBeNull();
    expect(r.picker).toBe('vllm:picker');
    expect(r.pick!.cut.heard).toBe('Your phone number on file is 5550001');
    expect(r.pick!.text).toBe('No, it is 5550002 now.');
    expect(r.pick!.value).toBe('5550002');
    const body = server.requests[0]!.body;
    expect(body.response_format).toEqual({ type: 'json_object' });
    expect(body.temperature).toBe(0.3);
    expect(body.messages[1].content).toContain('correction');

    // In the episode step: same type as the heuristic run (same draw), the model's cut, the picker recorded.
    const ch: EpisodeChannel = {
      tts,
      renderer: nodeGraphRenderer,
      preset: 'clean',
      bargeIn: 1,
      mix: { correction: 1 },
      bargeInPicker: picker,
    };
    const b = await channelBargeIn(ch, key, 4, reply, []);
    expect(b!.interrupted.type).toBe('correction');
    expect(b!.interrupted.heard_text).toBe('Your phone number on file is 5550001');
    expect(b!.interrupted.picker).toBe('vllm:picker');
    expect(b!.caller.text).toBe('No, it is 5550002 now.');
  });

  for (const [what, content] of [
    ['not JSON', 'Sure! I would cut after the number.'],
    ['cut out of range', '{"cut_after_token": 99, "text": "Wait."}'],
    ['empty text', '{"cut_after_token": 3, "text": "  "}'],
    ['wrong types', '{"cut_after_token": "3", "text": 5}'],
  ] as const) {
    it(`malformed output (${what}) falls back to the heuristic, with a note on the next caller turn's timeline`, async () => {
      server = await startOpenAiServer(() => ({ json: completion({ model: 'picker', content }) }));
      const picker = modelBargeInPicker(
        new OpenAiModelClient({ flavor: 'vllm', model: 'picker', baseURL: server.url, maxRetries: 0 }),
      );
      const r = await picker.pick(reply, 'urge', rngFromState(7), ctx);
      expect(r.picker).toBe('heuristic (fallback)');
      expect(r.note).toMatch(/model picker vllm:picker: .*; used the heuristic/);
      expect(r.pick).toEqual(pickBargeIn(reply, 'urge', rngFromState(7), ctx));

      const ch: EpisodeChannel = {
        tts,
        renderer: nodeGraphRenderer,
        preset: 'clean',
        bargeIn: 1,
        mix: { urge: 1 },
        bargeInPicker: picker,
        store: new MemoryAudioStore(),
      };
      const heuristic = await channelBargeIn({ ...ch, bargeInPicker: undefined }, key, 4, reply, []);
      const b = await channelBargeIn(ch, key, 4, reply, []);
      expect(b!.interrupted.heard_text).toBe(heuristic!.interrupted.heard_text);
      expect(b!.caller.text).toBe(heuristic!.caller.text);
      expect(b!.interrupted.picker).toBe('heuristic (fallback)');
      const turn = await channelCallerTurn(ch, key, 5, b!.caller.text, false);
      const note = turn.audio!.timeline.find((e) => e.type === 'note')!;
      expect(note.params).toMatchObject({ what: 'barge_in_picker_fallback', picker: 'vllm:picker' });
      // Consumed: a later turn at the same index has no note.
      expect(
        (await channelCallerTurn(ch, key, 5, b!.caller.text, false)).audio!.timeline.some((e) => e.type === 'note'),
      ).toBe(false);
    });
  }

  it('CLI: --barge-in-model needs <flavor>:<model>@<url>', () => {
    expect(() => pickerFromSpec('nonsense')).toThrow(UsageError);
    expect(pickerFromSpec('vllm:qwen@http://127.0.0.1:9/v1', {}).id).toBe('vllm:qwen');
  });
});

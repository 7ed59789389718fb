/**
 * Issue 17: the audio output of an OpenAI-compatible chat-completions agent (`message.audio.data`,
 * base64 WAV, as OpenAI's audio-output models return it) on the full-duplex timeline. A fake
 * endpoint plays the reference plan and answers each spoken reply with different audio: good
 * audio (placed as it came: its span lasts exactly its length), garbage that is not a WAV, a WAV
 * whose header says 2 kHz, and a 5 MB WAV (about 109 s) for a short reply. Each bad one is
 * refused with its reason on the span and the reply synthesized from its text; the call stays
 * valid and scores 1.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { espeakTts } from '../../src/adapters/node/audio/espeak-tts.ts';
import { speechEndSample } from '../../src/core/channel/caller-audio.ts';
import { referencePlan } from '../../src/core/participants/reference-plan.ts';
import { STOP_TOKENS } from '../../src/core/participants/types.ts';
import { phrasesFor } from '../../src/core/participants/phrases.ts';
import type { Domain } from '../../src/core/schema/domain.ts';
import { Trajectory } from '../../src/core/schema/trajectory.ts';
import { capture } from '../fixtures/cli-io.ts';
import {
  completion,
  openaiAudioCompletion,
  startOpenAiServer,
  wavBase64,
  wireToolCall,
  type TestServer,
} from '../fixtures/openai-server.ts';

const TASK = 'carrier-pay-balance-1';
const MODEL = 'gpt-audio-test';
let domain: Domain;
let server: TestServer;
/** Spoken replies answered so far (indexes {@link AUDIO}). */
let spoken = 0;

/** A 300 Hz tone of `seconds` at `rate` Hz, as 16-bit samples. */
const tone = (seconds: number, rate: number) =>
  Array.from({ length: Math.round(seconds * rate) }, (_, i) =>
    Math.round(8000 * Math.sin((2 * Math.PI * 300 * i) / rate)),
  );

/** The audio of the spoken replies, in order: good 1 s at 24 kHz, garbage, 2 kHz, 5 MB, then good again. */
const AUDIO = [
  wavBase64(tone(1, 24_000), 24_000),
  Buffer.from('this is not a RIFF file at all, just words').toString('base64'),
  wavBase64(tone(1, 2_000), 2_000),
  wavBase64(tone(5e6 / 2 / 24_000, 24_000), 24_000),
];
const good = AUDIO[0]!;

beforeAll(async () => {
  domain = await loadBuiltinDomain('carrier');
  const task = domain.tasks.find((t) => t.id === TASK)!;
  const plan = referencePlan(domain, task);
  server = await startOpenAiServer(
    (body: any) => {
      const k = (body.messages as { role: string }[]).filter((m) => m.role === 'assistant').length;
      const step = plan[k];
      if (step && 'call' in step)
        return {
          json: completion({
            model: MODEL,
            content: null,
            tool_calls: [wireToolCall(`call_${k}`, step.call.name, step.call.arguments)],
          }),
        };
      const transcript = step ? step.say : `${phrasesFor(domain.language).goodbye}${STOP_TOKENS.stop}`;
      const audio = AUDIO[spoken++] ?? good;
      return { json: openaiAudioCompletion({ model: MODEL, transcript, audio }) };
    },
    { maxBodyBytes: 64 * 1024 * 1024 },
  );
});
afterAll(() => server.close());

describe("an OpenAI-compatible agent's audio output on the duplex timeline", () => {
  it('good audio is placed as it came; garbage, a wrong rate and a 5 MB blob are refused with the reason and synthesized', async () => {
    const out = mkdtempSync(join(tmpdir(), 'sb-agent-audio-'));
    const io = capture();
    const code = await main(
      [
        'run',
        '--domain',
        'carrier',
        '--task-ids',
        TASK,
        '--agent',
        `openai:${MODEL}@${server.url}`,
        '--agent-voice',
        'alloy',
        '--duplex',
        '--out',
        out,
        '--json',
      ],
      io,
    );
    expect(code, io.stderr).toBe(0);
    const [t] = readFileSync(join(out, 'trajectories.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => Trajectory.parse(JSON.parse(l)));
    expect([t!.valid, t!.reward_info!.reward]).toEqual([true, 1]);
    // Every request asked for audio in the voice given.
    for (const r of server.requests)
      expect([r.body.modalities, r.body.audio]).toEqual([['text', 'audio'], { voice: 'alloy', format: 'wav' }]);
    const spans = t!.duplex!.spans.filter((s) => s.who === 'agent');
    expect(spans.length).toBeGreaterThanOrEqual(4);
    const tts = espeakTts();
    const synthTicks = async (text: string) => {
      const a = await tts.synthesize(text, { language: domain.language });
      return Math.max(1, Math.ceil(Math.max(1, speechEndSample(a.samples)) / 3200));
    };
    // Good audio: 1 s is 5 ticks of 200 ms, whatever the text.
    expect([spans[0]!.own_audio, spans[0]!.end_tick - spans[0]!.start_tick]).toEqual(['used', 5]);
    const refused = spans.slice(1, 4).map((s) => s.own_audio!);
    expect(refused[0]).toMatch(/^refused: not a WAV file \(/);
    expect(refused[1]).toBe('refused: sample rate 2000 Hz, outside 8000–48000 Hz');
    expect(refused[2]).toMatch(/^refused: 104\.2 s of audio for \d+\.\d s of speech \(over 3× \+ 5 s\)$/);
    // A refused reply is its text's synthesis, exactly as long.
    for (const s of spans.slice(1, 4)) expect(s.end_tick - s.start_tick).toBe(await synthTicks(s.text));
    expect(spans.slice(4).every((s) => s.own_audio === 'used')).toBe(true);
  }, 180_000);

  it('groups --agent-voice: milestone forks ask for audio too, and the misbehaving audio never makes a sample invalid', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sb-agent-audio-groups-')), 'rows.jsonl');
    const asked = server.requests.length;
    // The source call gets the good, garbage, 2 kHz and 5 MB audio again.
    spoken = 0;
    const io = capture();
    const flags = `groups --domain carrier --task-ids ${TASK} --granularity milestone --duplex --k 2 --json`.split(' ');
    const agent = ['--agent', `openai:${MODEL}@${server.url}`, '--agent-voice', 'alloy'];
    const code = await main([...flags, ...agent, '--out', out], io);
    expect(code, io.stderr).toBe(0);
    const report = JSON.parse(io.stdout);
    expect([report.invalid_attempts, report.incomplete]).toEqual([0, []]);
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.length).toBe(2 * report.groups);
    expect(rows.every((r) => r.final_reward === 1 && r.interaction_metrics !== null)).toBe(true);
    expect(server.requests.slice(asked).every((r) => r.body.audio?.voice === 'alloy')).toBe(true);
  }, 180_000);
});

/** `switchboard run --tts <endpoint>`: caller speech from an endpoint's own audio output. */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { decodeWav } from '../../src/core/audio/wav.ts';
import { Trajectory } from '../../src/core/schema/trajectory.ts';
import { capture } from '../fixtures/cli-io.ts';
import { omniAudioCompletion, startOpenAiServer, wavBase64, type TestServer } from '../fixtures/openai-server.ts';

let server: TestServer;
let dir: string;
// 0.75 s of a 300 Hz tone at 24 kHz: what the endpoint "says" for every caller turn.
const tone = Array.from({ length: 18000 }, (_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 24000)));

beforeAll(async () => {
  server = await startOpenAiServer(() => ({
    json: omniAudioCompletion({ model: 'omni', content: 'ok', audio: wavBase64(tone, 24000) }),
  }));
  dir = await mkdtemp(join(tmpdir(), 'sb-tts-'));
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('run --tts <endpoint>', () => {
  it('speaks every caller turn with the endpoint and stores 16 kHz WAVs of its length', async () => {
    const io = capture();
    const out = join(dir, 'run');
    const code = await main(
      [
        'run',
        '--domain',
        'carrier',
        '--task-ids',
        'carrier-change-plan-1',
        '--preset',
        'clean',
        '--tts',
        `vllm-omni:omni@${server.url}`,
        '--out',
        out,
        '--json',
      ],
      io,
    );
    expect(code).toBe(0);
    const t = Trajectory.parse(JSON.parse((await readFile(join(out, 'trajectories.jsonl'), 'utf8')).trim()));
    const spoken = t.turns.filter((x) => x.role === 'user' && x.audio);
    expect(spoken.length).toBeGreaterThan(0);
    for (const u of spoken) {
      if (u.role !== 'user' || !u.audio) continue;
      expect(u.audio.tts).toBe('endpoint:vllm-omni:omni');
      const wav = decodeWav(new Uint8Array(await readFile(join(out, u.audio.clean))));
      expect(wav.sampleRate).toBe(16000);
      expect(wav.samples.length).toBe(12000); // 0.75 s at 16 kHz
    }
    // One speech request per caller turn, each asking for audio.
    expect(server.requests.length).toBe(spoken.length);
    expect(server.requests.every((r) => JSON.stringify(r.body.modalities) === '["text","audio"]')).toBe(true);
    expect(JSON.parse(io.stdout).settings.channel.preset).toBe('clean');
  });

  it('an endpoint whose speech is garbage makes the call invalid, naming the endpoint and why; nothing hangs', async () => {
    // Each reply's audio: an empty WAV, a 1 Hz header (24,000 samples would be 6.7 hours at 16 kHz:
    // the run used to spend minutes resampling it), HTML, and text that is not base64.
    const garbage: Record<string, string> = {
      empty: wavBase64([], 24000),
      '1hz': wavBase64(tone, 1),
      html: Buffer.from('<html>not audio</html>').toString('base64'),
      b64: '!!not base64',
    };
    const expected: Record<string, string> = {
      empty: 'the WAV holds no samples',
      '1hz': 'sample rate 1 Hz, outside 8000–48000 Hz',
      html: 'not a WAV file (Not a supported format.)',
      b64: 'not a WAV file (not base64: character "!" at 0)',
    };
    for (const [kind, audio] of Object.entries(garbage)) {
      const bad = await startOpenAiServer(() => ({
        json: omniAudioCompletion({ model: 'omni', content: 'ok', audio }),
      }));
      try {
        const io = capture();
        const out = join(dir, `garbage-${kind}`);
        const code = await main(
          ['run', '--domain', 'carrier', '--task-ids', 'carrier-change-plan-1', '--preset', 'clean', '--tts'].concat([
            `vllm-omni:omni@${bad.url}`,
            '--model-retries',
            '0',
            '--out',
            out,
            '--json',
          ]),
          io,
        );
        expect(code, kind).toBe(1);
        const lines = (await readFile(join(out, 'trajectories.jsonl'), 'utf8')).trim().split('\n');
        // The first attempt and its two resamples, each invalid for the same reason.
        expect(lines.length).toBe(3);
        for (const line of lines) {
          const t = Trajectory.parse(JSON.parse(line));
          expect([t.valid, t.termination]).toEqual([false, 'infrastructure_error']);
          expect(t.invalid_reason).toBe(`endpoint TTS vllm-omni:omni: refused the reply's audio: ${expected[kind]}`);
        }
        expect(JSON.parse(io.stdout).totals).toMatchObject({ valid: 0, invalid: 1, invalid_attempts: 3 });
      } finally {
        await bad.close();
      }
    }
  }, 60_000);

  it('rejects a malformed --tts spec with exit code 2', async () => {
    const io = capture();
    expect(await main(['run', '--domain', 'carrier', '--tts', 'festival'], io)).toBe(2);
    expect(io.stderr).toBe('switchboard: --tts "festival": expected <flavor>:<model>@<http(s) base URL>\n');
  });
});

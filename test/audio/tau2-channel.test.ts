/**
 * The phone channel end to end on a tau2-bench domain: audio stored with every caller turn.
 * Needs tau2-bench data (test/fixtures/data.ts); skipped without it.
 * @module-tag tau2-data
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { decodeWav } from '../../src/core/audio/wav.ts';
import { Trajectory } from '../../src/core/schema/trajectory.ts';
import { capture } from '../fixtures/cli-io.ts';
import { tau2DataDir } from '../domains/tau2-helpers.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('phone channel on tau2-airline', () => {
  it('runs with dropout and barge-in, stores clean and degraded WAV for every spoken caller turn, and replays byte-identically', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-tau2-ch-'));
    dirs.push(dir);
    const args = (out: string) => [
      'run',
      '--domain',
      'tau2-airline',
      '--data',
      tau2DataDir('airline'),
      '--task-ids',
      '11',
      '--preset',
      'regular',
      '--dropout',
      '0.3',
      '--barge-in',
      '0.3',
      '--seed',
      '4',
      '--out',
      out,
      '--json',
    ];
    const io = capture();
    expect(await main(args(join(dir, 'a')), io)).toBe(0);
    const summary = JSON.parse(io.stdout);
    expect(summary.settings.channel).toEqual({
      preset: 'regular',
      dropout: 0.3,
      barge_in: 0.3,
      mix: null,
      noise_dir: null,
      tts: { spec: 'espeak', id: expect.stringMatching(/^espeak-ng/) },
    });
    const text = await readFile(join(dir, 'a', 'trajectories.jsonl'), 'utf8');
    const t = Trajectory.parse(JSON.parse(text.trim()));
    expect(t.valid).toBe(true);
    const spoken = t.turns.filter((x) => x.role === 'user' && x.text);
    expect(spoken.length).toBeGreaterThan(0);
    for (const u of spoken) {
      if (u.role !== 'user') continue;
      expect(u.audio).toBeDefined();
      for (const f of [u.audio!.clean, u.audio!.degraded]) {
        const wav = decodeWav(new Uint8Array(await readFile(join(dir, 'a', f))));
        expect(wav.sampleRate).toBe(16000);
        expect(Math.abs((wav.samples.length / 16000) * 1000 - u.audio!.duration_ms)).toBeLessThan(1);
      }
      expect(u.audio!.timeline.some((e) => e.type === 'telephony')).toBe(true);
    }
    // Same seed, same preset → the same trajectories and the same audio bytes.
    expect(await main(args(join(dir, 'b')), capture())).toBe(0);
    expect(await readFile(join(dir, 'b', 'trajectories.jsonl'), 'utf8')).toBe(text);
    const first = spoken[0]!;
    if (first.role === 'user') {
      const [a, b] = await Promise.all([
        readFile(join(dir, 'a', first.audio!.degraded)),
        readFile(join(dir, 'b', first.audio!.degraded)),
      ]);
      expect(a.equals(b)).toBe(true);
      expect((await stat(join(dir, 'a', first.audio!.clean))).size).toBeGreaterThan(44);
    }
  });
});

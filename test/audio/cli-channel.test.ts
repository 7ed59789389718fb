import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.ts';
import { main } from '../../src/cli/main.ts';
import { Trajectory } from '../../src/core/schema/trajectory.ts';
import { decodeWav } from '../../src/core/audio/wav.ts';
import { NOISE_DIR } from './helpers.ts';

function capture(): CliIo & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    progress: false,
    out: (t: string) => void (io.stdout += `${t}\n`),
    err: (t: string) => void (io.stderr += `${t}\n`),
  };
  return io;
}

const dirs: string[] = [];
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe('switchboard run with the phone channel', () => {
  it('writes caller audio beside the trajectories (carrier, --preset regular --seed 7 --barge-in 0.3 --dropout 0.1)', {
    tags: ['noise-data'],
    timeout: 120_000,
  }, async () => {
    const out = await mkdtemp(join(tmpdir(), 'sb-channel-'));
    dirs.push(out);
    const args = [
      'run',
      '--domain',
      'carrier',
      '--preset',
      'regular',
      '--seed',
      '7',
      '--barge-in',
      '0.3',
      '--dropout',
      '0.1',
      '--barge-in-mix',
      'backchannel=1,correction=1',
      '--noise-dir',
      NOISE_DIR,
      '--task-ids',
      'carrier-pay-balance-1,carrier-pay-split-limit-1,carrier-change-plan-1',
      '--trials',
      '2',
      '--out',
      out,
      '--json',
    ];
    const io = capture();
    expect(await main(args, io)).toBeLessThanOrEqual(1);
    const lines = (await readFile(join(out, 'trajectories.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => Trajectory.parse(JSON.parse(l)));
    expect(lines.length).toBeGreaterThan(0);
    let files = 0;
    let events = 0;
    for (const t of lines) {
      for (const turn of t.turns) {
        if (turn.role === 'assistant' && turn.interrupted) {
          events++;
          expect(['backchannel', 'correction']).toContain(turn.interrupted.type);
        }
        if (turn.role !== 'user' || !turn.text) continue;
        if (turn.dropout) events++;
        expect(turn.audio).toBeDefined();
        for (const ref of [turn.audio!.clean, turn.audio!.degraded]) {
          expect((await stat(join(out, ref))).isFile()).toBe(true);
          files++;
        }
        const wav = decodeWav(new Uint8Array(await readFile(join(out, turn.audio!.degraded))));
        expect(wav.sampleRate).toBe(16000);
        expect(wav.samples.length / 16).toBeCloseTo(turn.audio!.duration_ms, 6);
      }
    }
    expect(files).toBeGreaterThan(10);
    expect(events).toBeGreaterThan(0);
    // The summary names the noise folder and the caller's speech synthesizer.
    const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8'));
    expect(summary.settings.channel).toMatchObject({
      preset: 'regular',
      dropout: 0.1,
      barge_in: 0.3,
      noise_dir: resolve(NOISE_DIR),
      tts: { spec: 'espeak' },
    });
    expect(summary.settings.channel.tts.id).toMatch(/^espeak-ng/);
    // Same command again: byte-identical trajectories.
    const first = await readFile(join(out, 'trajectories.jsonl'), 'utf8');
    expect(await main(args, capture())).toBeLessThanOrEqual(1);
    expect(await readFile(join(out, 'trajectories.jsonl'), 'utf8')).toBe(first);
  });

  it('refuses a bad barge-in mix', async () => {
    const io = capture();
    expect(await main(['run', '--domain', 'carrier', '--barge-in-mix', 'shouting=1', '--json'], io)).toBe(2);
    expect(io.stdout).toContain('unknown type');
  });
});

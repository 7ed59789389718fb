/**
 * The phone channel chain alone (issues 15 item 7 and 17): real time factor of {@link runChannel}
 * on 10 s of real espeak-ng speech, median over warm turns (a new seed each turn), as wall time
 * and this process's CPU time (user + system: what the chain costs on a machine that other work
 * also loads):
 *
 * - every effect forced on (noise with drift, a burst, wind, far field, muffled mic, packet loss,
 *   telephony band with headroom, mu-law, 16-bit quantization; target ≥ 1,000× real time);
 * - tau2-bench's set of effects only (no far field, no wind), the like-for-like comparison;
 * - the `clean` preset (target: about nothing): `runChannel` only quantizes the speech to 16 bits
 *   (straight into the WAV; nothing when it is already 16-bit), and a call's caller audio skips the chain.
 *
 * Beside it, tau2-bench's own chain (bench/tau2_channel.py: its muffling, background noise,
 * burst, telephony and frame drops on the same speech, numpy/scipy) measured in this run, when
 * `SWITCHBOARD_TAU2_SRC` names a tau2-bench checkout (or its `src` folder; see tau2-anchor.ts) and
 * the noise recordings are there; otherwise the line says it was not measured. Ours and tau2's runs alternate in blocks so
 * that both see the same load. Target: ours ≥ 1.5× faster than tau2's.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { espeakTts } from '../src/adapters/node/audio/espeak-tts.ts';
import { nodeGraphRenderer } from '../src/adapters/node/audio/renderer.ts';
import { encodeWav } from '../src/core/audio/wav.ts';
import { runChannel } from '../src/core/channel/chain.ts';
import { planChannel, type ChannelPlan } from '../src/core/channel/plan.ts';
import { findTestData } from '../test/fixtures/data.ts';
import { everyEffect, realSpeech, TURN_S } from './audio.ts';
import { median } from './harness.ts';
import { tau2Src } from './tau2-anchor.ts';

/** Turns per block of ours; blocks alternate with tau2's. */
const TURNS = 30;
/** Runs of tau2's chain per block. */
const TAU2_RUNS = 15;
/** Blocks of each. */
const BLOCKS = 2;

interface Sample {
  wall: number;
  cpu: number;
}

const med = (xs: readonly Sample[]): Sample => ({
  wall: median(xs.map((x) => x.wall)),
  cpu: median(xs.map((x) => x.cpu)),
});

/** Wall and CPU ms of `turns` runs of the chain on `speech`, a new plan (seed) each. */
async function ours(
  speech: Float32Array,
  plan: (seed: number) => ChannelPlan,
  turns: number,
  seed0: number,
): Promise<Sample[]> {
  const out: Sample[] = [];
  for (let i = 0; i < turns; i++) {
    const p = plan(seed0 + i);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await runChannel(nodeGraphRenderer, speech, p);
    const wall = performance.now() - t0;
    const c = process.cpuUsage(c0);
    out.push({ wall, cpu: (c.user + c.system) / 1000 });
  }
  return out;
}

interface Tau2Result {
  python: string;
  runs: number;
  wall_ms: number;
  cpu_ms: number;
  steps_ms: Record<string, number>;
}

/** The tau2-bench sources and the noise recordings, or why tau2's chain is not run. */
function tau2Source(): { src: string; noise: string } | string {
  const where = tau2Src('channel', 'python3 with numpy and scipy');
  if ('missing' in where) return where.missing;
  if (!existsSync(join(where.src, 'tau2/voice/synthesis/audio_effects/effects.py')))
    return `tau2-bench's chain not measured: ${where.src} has no tau2/voice/synthesis/audio_effects/effects.py`;
  const noise = findTestData('noise');
  if (!noise || !existsSync(join(noise, 'people_talking.wav')))
    return "tau2-bench's chain not measured: it mixes noise recordings (people_talking.wav, car_horn.wav), and none were found (npx switchboard data tau2)";
  return { src: where.src, noise };
}

async function tau2Block(where: { src: string; noise: string }, wav: string): Promise<Tau2Result> {
  const { stdout } = await promisify(execFile)(
    'python3',
    [
      resolve(import.meta.dirname, 'tau2_channel.py'),
      where.src,
      wav,
      join(where.noise, 'people_talking.wav'),
      join(where.noise, 'car_horn.wav'),
      String(TAU2_RUNS),
    ],
    { maxBuffer: 1024 * 1024, timeout: 10 * 60_000 },
  );
  return JSON.parse(stdout) as Tau2Result;
}

const ms = (x: number) => `${x.toFixed(2)} ms`;
const rt = (s: Sample) =>
  `${((TURN_S * 1000) / s.wall).toFixed(0)}× real time wall, ${((TURN_S * 1000) / s.cpu).toFixed(0)}× CPU`;
const faster = (ourMs: number, theirMs: number) => {
  const r = theirMs / ourMs;
  return r >= 1 ? `${r.toFixed(2)}× faster` : `${(1 / r).toFixed(2)}× slower`;
};

/** Printable lines of the channel benchmark. */
export async function channelBenchLines(): Promise<string[]> {
  const tts = espeakTts();
  try {
    await tts.synthesize('ok');
  } catch {
    return ['  espeak-ng not installed: channel benchmark skipped'];
  }
  const speech = await realSpeech(tts, TURN_S);
  const n = speech.length;
  const every = (seed: number) => everyEffect(seed, n);
  // tau2-bench's effects: muffling, noise with drift, a burst, telephony, frame drops.
  const tau2Set = (seed: number): ChannelPlan => ({ ...every(seed), farField: null, wind: null });
  const clean = (seed: number) => planChannel('clean', { seed, taskId: 'bench' }, n);
  // Warm-up (JIT, scratch buffers, the mu-law table).
  await ours(speech, every, 10, 1_000_000);
  const where = tau2Source();
  const started = new Date().toISOString().slice(0, 16).replace('T', ' ');
  let dir: string | null = null;
  const mine = { every: [] as Sample[], tau2Set: [] as Sample[], clean: [] as Sample[] };
  const theirs: Tau2Result[] = [];
  let failure: string | null = null;
  try {
    let wav = '';
    if (typeof where !== 'string') {
      dir = await mkdtemp(join(tmpdir(), 'sb-channel-bench-'));
      wav = join(dir, 'speech.wav');
      await writeFile(wav, encodeWav(speech, 16000));
    }
    for (let b = 0; b < BLOCKS; b++) {
      mine.every.push(...(await ours(speech, every, TURNS, b * TURNS)));
      mine.tau2Set.push(...(await ours(speech, tau2Set, TURNS, b * TURNS)));
      mine.clean.push(...(await ours(speech, clean, TURNS, b * TURNS)));
      if (typeof where !== 'string' && failure === null) {
        try {
          theirs.push(await tau2Block(where, wav));
        } catch (e) {
          failure = `tau2-bench's chain failed: ${(e as Error).message.split('\n')[0]}`;
        }
      }
    }
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
  const e = med(mine.every);
  const t = med(mine.tau2Set);
  const c = med(mine.clean);
  const lines = [
    `  ${TURN_S} s of espeak-ng speech, median of ${mine.every.length} turns each (a new seed per turn); load average ${loadavg()[0]!.toFixed(1)}`,
    `  ours, every effect on: ${ms(e.wall)} wall, ${ms(e.cpu)} CPU → ${rt(e)} (target ≥ 1,000×)`,
    `  ours, tau2-bench's effects only (no far field, no wind): ${ms(t.wall)} wall, ${ms(t.cpu)} CPU → ${rt(t)}`,
    `  ours, clean preset: ${ms(c.wall)} wall, ${ms(c.cpu)} CPU → ${rt(c)} (runChannel quantizes resampled TTS to 16 bits; a call's caller audio skips the chain and reuses the clean WAV)`,
  ];
  if (typeof where === 'string') lines.push(`  ${where}`);
  else if (failure !== null || theirs.length === 0) lines.push(`  ${failure ?? "tau2-bench's chain not measured"}`);
  else {
    const wall = median(theirs.map((r) => r.wall_ms));
    const cpu = median(theirs.map((r) => r.cpu_ms));
    const steps = Object.keys(theirs[0]!.steps_ms)
      .map((k) => `${k} ${ms(median(theirs.map((r) => r.steps_ms[k] as number)))}`)
      .join(', ');
    lines.push(
      `  tau2-bench's chain (Python ${theirs[0]!.python}, numpy/scipy; muffling, noise with drift, a burst, telephony, frame drops), measured in this run on ${hostname()} at ${started} UTC, ${theirs.length} blocks of ${TAU2_RUNS}: ${ms(wall)} wall, ${ms(cpu)} CPU → ${((TURN_S * 1000) / wall).toFixed(0)}× real time wall, ${((TURN_S * 1000) / cpu).toFixed(0)}× CPU`,
      `    its steps (median wall): ${steps}`,
      `  ours vs tau2's (target ≥ 1.5× faster): every effect ${faster(e.cpu, cpu)} by CPU (${faster(e.wall, wall)} wall); tau2's effects only ${faster(t.cpu, cpu)} by CPU (${faster(t.wall, wall)} wall)`,
    );
  }
  return lines;
}

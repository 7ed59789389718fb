/**
 * The microphone as the caller in a real browser: Chromium's fake capture device plays a WAV
 * made here (a warbling tone, 16-bit 48 kHz), the page records it, puts it through the preset's
 * channel before the agent hears it, and shows the caller turn with the degraded audio.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { encodeWav } from '../../src/core/audio/wav.ts';
import { chromiumSession } from './harness.ts';

let url = '';
let context: BrowserContext;
let shots = '';
const cleanup: (() => Promise<void>)[] = [];

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-e2e-mic-'));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  // 3 s of a tone gliding 300–900 Hz at 48 kHz: speech-band, clearly not silence.
  const rate = 48_000;
  const tone = new Float32Array(rate * 3);
  let phase = 0;
  for (let i = 0; i < tone.length; i++) {
    phase += (2 * Math.PI * (600 + 300 * Math.sin((2 * Math.PI * i) / rate))) / rate;
    tone[i] = 0.4 * Math.sin(phase);
  }
  const wav = join(dir, 'caller.wav');
  await writeFile(wav, encodeWav(tone, rate));
  const session = await chromiumSession({
    args: [
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      `--use-file-for-fake-audio-capture=${wav}`,
    ],
  });
  cleanup.push(session.close);
  ({ url, context } = session);
  shots = await mkdtemp(join(tmpdir(), 'switchboard-e2e-mic-shots-'));
  console.log(`e2e mic screenshots: ${shots}`);
}, 180_000);

afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
});

describe('microphone as the caller in chromium', () => {
  it('records, degrades through the preset and shows the caller turn with what the agent heard', async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(
      `${url}#/call?domain=carrier&task=carrier-pay-balance-1&seed=0&preset=regular&agent=reference&user=human&audio=1`,
    );
    await page.waitForSelector('#run');
    await page.click('#run');
    await page.waitForSelector('#record:not([disabled])');
    await page.click('#record');
    await page.waitForSelector('#record[aria-pressed="true"]');
    await page.waitForTimeout(1500);
    await page.click('#record');
    await page.waitForSelector('#take');
    const takeMs = Number(await page.textContent('#take-ms'));
    expect(takeMs).toBeGreaterThan(1000);
    expect(takeMs).toBeLessThan(4000);
    await page.fill('#say', '你好，我想用话费余额把二月份的账单交了。');
    await page.click('#send');
    const turn = page.locator('#transcript li[data-role="user"]').first();
    await turn.locator('.turn-audio audio[src^="blob:"]').waitFor();
    const meta = (await turn.locator('.audio-meta .muted').textContent()) ?? '';
    expect(meta).toContain('regular · microphone');
    // The channel keeps the length: what the agent heard lasts as long as the take.
    const heardMs = Number(/^(\d+) ms/.exec(meta)?.[1]);
    expect(Math.abs(heardMs - takeMs)).toBeLessThanOrEqual(2);
    const dur = await turn.locator('.turn-audio audio').evaluate(
      (a) =>
        new Promise<number>((r) => {
          const el = a as HTMLAudioElement;
          if (Number.isFinite(el.duration) && el.duration > 0) r(el.duration);
          else el.addEventListener('loadedmetadata', () => r(el.duration), { once: true });
        }),
    );
    expect(Math.abs(dur * 1000 - takeMs)).toBeLessThan(20);
    // The take is not silence after the channel: the waveform has height.
    const d = (await turn.locator('.turn-audio svg path.wave').getAttribute('d')) ?? '';
    const tops = [...d.matchAll(/M\d+ ([\d.]+)V/g)].map((m) => Number(m[1]));
    expect(tops).toHaveLength(600);
    expect(Math.min(...tops)).toBeLessThan(26); // peaks above 0.2 of full scale (the axis is at 32)
    await page.waitForSelector('#say:not([disabled])');
    await page.screenshot({ path: join(shots, 'mic-call.png'), fullPage: true });
    await page.click('#stop');
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { floatToInt16, int16ToFloat, quantize16Into } from '../../src/core/audio/pcm.ts';
import { decodeWav, encodeWav, encodeWavWithWavefile, resample } from '../../src/core/audio/wav.ts';
import {
  MULAW_MAX,
  muLawDecodeSample,
  muLawEncodeSample,
  muLawErrorBound,
  muLawRoundTrip,
} from '../../src/core/audio/mulaw.ts';
import {
  bandPassDecimate2MapInto,
  DENORMAL_FLUSH,
  decimate2,
  flushTinyStates,
  halfbandAllpassCoefficients,
  interpolate2,
  interpolate2IirQuantize16Into,
  type SplitBandPass,
} from '../../src/core/audio/resample.ts';
import { applyFrameDrops, dropSpans, gilbertElliottDrops } from '../../src/core/audio/packet-loss.ts';
import {
  brownNoise,
  kindPowerResponse,
  pinkNoise,
  poissonTimesMs,
  proceduralRaw,
  unitRms,
  whiteNoise,
  windNoise,
} from '../../src/core/audio/noise.ts';
import { meanPowerResponse } from '../../src/core/audio/band-power.ts';
import { biquadCascadeInPlace, biquadCascadeInto } from '../../src/core/audio/biquad.ts';
import { telephonyBandPass, telephonySplitBandPass } from '../../src/core/channel/chain.ts';
import { activeRms, activeRmsFullAndBand, bandEnergyDb, peak, rms, snrDb } from '../../src/core/audio/measure.ts';
import { seededRng } from '../../src/core/ports/rng.ts';
import { diff, NOISE_DIR, sine } from './helpers.ts';

describe('16-bit PCM and WAV', () => {
  it('rounds to the nearest step and clips (no truncation)', () => {
    const pcm = floatToInt16(Float32Array.from([0.6 / 32768, -0.6 / 32768, 1.5, -1.5, 1, -1, Number.NaN]));
    expect(Array.from(pcm)).toEqual([1, -1, 32767, -32768, 32767, -32768, 0]);
    expect(int16ToFloat(Int16Array.from([-32768]))[0]).toBe(-1);
  });

  it('quantizes in one pass: the 16-bit values, their floats in place, elsewhere or nowhere', () => {
    const x = Float32Array.from([0.6 / 32768, -0.6 / 32768, 1.5, -1.5, 1, -1, Number.NaN, 0.25]);
    const want = [1, -1, 32767, -32768, 32767, -32768, 0, 8192];
    const floats = want.map((v) => v / 32768);
    const pcm = new Int16Array(x.length);
    const back = new Float32Array(x.length);
    expect(quantize16Into(x, pcm, back)).toBe(back);
    expect([Array.from(pcm), Array.from(back)]).toEqual([want, floats]);
    const onlyPcm = new Int16Array(x.length);
    expect(quantize16Into(x, onlyPcm, null)).toBe(x);
    expect(Array.from(onlyPcm)).toEqual(want);
    expect(x[2]).toBe(1.5); // read only
    expect(Array.from(quantize16Into(x, new Int16Array(x.length)))).toEqual(floats);
    expect(() => quantize16Into(x, pcm, new Float32Array(3))).toThrow(/3 float slots for 8/);
  });

  it('encodes a 16 kHz mono 16-bit WAV that decodes to the same samples', () => {
    const x = int16ToFloat(Int16Array.from({ length: 1000 }, (_, i) => ((i * 7919) % 65536) - 32768));
    const wav = encodeWav(x, 16000);
    expect(wav.length).toBe(44 + 2 * x.length);
    const view = new DataView(wav.buffer, wav.byteOffset);
    expect(view.getUint16(22, true)).toBe(1); // channels
    expect(view.getUint32(24, true)).toBe(16000); // rate
    expect(view.getUint16(34, true)).toBe(16); // bits
    expect(Buffer.from(wav).equals(Buffer.from(encodeWavWithWavefile(x, 16000)))).toBe(true);
    const back = decodeWav(wav);
    expect(back.sampleRate).toBe(16000);
    expect(Array.from(back.samples)).toEqual(Array.from(x));
  });

  it('decodes the real noise recordings (people_talking.wav is 40.5 s at 16 kHz)', { tags: ['noise-data'] }, () => {
    const { samples, sampleRate } = decodeWav(new Uint8Array(readFileSync(`${NOISE_DIR}people_talking.wav`)));
    expect(sampleRate).toBe(16000);
    expect(samples.length / sampleRate).toBeCloseTo(40.5, 1);
    expect(rms(samples)).toBeGreaterThan(0.001);
  });

  it('resamples 22 050 Hz → 16 kHz accurately (≥ 60 dB SNR on a 1 kHz tone) and rejects what 16 kHz cannot hold (≥ 60 dB at 9 kHz)', () => {
    const x = sine(1000, 1, 0.5, 22050);
    const y = resample(x, 22050, 16000);
    const ref = sine(1000, 1, 0.5, 16000);
    const inner = (a: Float32Array) => a.subarray(400, 15600);
    expect(snrDb(inner(ref), diff(inner(y), inner(ref)))).toBeGreaterThan(60);
    const hi = resample(sine(9000, 1, 0.5, 22050), 22050, 16000);
    expect(20 * Math.log10(0.5 / Math.SQRT2 / rms(inner(hi)))).toBeGreaterThan(60);
  });

  it('resamples 22 050 Hz → 16 kHz keeping duration and pitch', () => {
    const x = sine(1000, 1, 0.5, 22050);
    const y = resample(x, 22050, 16000);
    expect(Math.abs(y.length - 16000)).toBeLessThanOrEqual(1);
    // The tone is still at 1 kHz: nearly all energy within ±100 Hz of it.
    expect(bandEnergyDb(y, 16000, 900, 1100) - bandEnergyDb(y, 16000, 0, 8000)).toBeGreaterThan(-0.1);
  });
});

describe('G.711 mu-law', () => {
  it('round-trips every 16-bit value within half a step, (|x| + 132) / 32', () => {
    let worst = 0;
    for (let x = -32768; x <= 32767; x++) {
      const y = muLawDecodeSample(muLawEncodeSample(x));
      if (Math.abs(x) <= MULAW_MAX) {
        const ratio = Math.abs(x - y) / muLawErrorBound(x);
        worst = Math.max(worst, ratio);
      } else {
        expect(Math.abs(y)).toBe(MULAW_MAX);
      }
    }
    expect(worst).toBeLessThanOrEqual(1);
    expect(worst).toBeGreaterThan(0.9); // the bound is tight
  });

  it('keeps a −6 dBFS sine at ≥ 35 dB SNR (G.711 peaks near 38 dB; measured 36.5 dB)', () => {
    const x = sine(440, 1, 0.5);
    const y = muLawRoundTrip(x);
    expect(snrDb(x, diff(y, x))).toBeGreaterThan(35);
  });
});

describe('2:1 rate changes (16 ↔ 8 kHz)', () => {
  it('keeps length and passes 1 kHz through a 16 → 8 → 16 kHz round trip (≥ 60 dB SNR)', () => {
    const x = sine(1000, 1);
    const down = decimate2(x);
    expect(down.length).toBe(8000);
    const up = interpolate2(down, x.length);
    expect(up.length).toBe(x.length);
    const inner = (a: Float32Array) => a.subarray(200, a.length - 200);
    expect(snrDb(inner(x), diff(inner(up), inner(x)))).toBeGreaterThan(60);
    expect(interpolate2(decimate2(sine(1000, 1.0001)), 16002).length).toBe(16002);
  });

  it('rejects content above 4.6 kHz before halving the rate (≥ 60 dB)', () => {
    const x = sine(6000, 1);
    const down = decimate2(x);
    expect(20 * Math.log10(rms(x) / rms(down.subarray(100, down.length - 100)))).toBeGreaterThan(60);
  });
});

describe("the telephony leg's IIR half-band rate changes (16 → 8 kHz with the band-pass, 8 → 16 kHz)", () => {
  // With pass-through sections and the identity 16-bit table the kernel is the half-band alone, quantized to 16 bits.
  const through = { b0: 1, b1: 0, b2: 0, a1: 0, a2: 0 };
  const none: SplitBandPass = { lowPass: [through, through], highPass: [through, through] };
  const identity = Float32Array.from({ length: 65536 }, (_, i) => (i - 32768) / 32768);
  const decimate = (x: Float32Array, sections: SplitBandPass = none) =>
    bandPassDecimate2MapInto(x, sections, new Float64Array((x.length + 1) >> 1), identity);
  const levelDb = (hz: number) => {
    const x = sine(hz, 1, 0.5);
    const y = decimate(x);
    return 20 * Math.log10(rms(Float32Array.from(y.subarray(400, y.length - 400))) / (0.5 / Math.SQRT2));
  };

  it('is flat to 3.4 kHz (within 0.01 dB) and attenuates ≥ 70 dB from 4.6 kHz up (aliases)', () => {
    for (const hz of [100, 300, 1000, 2000, 3000, 3400]) expect(Math.abs(levelDb(hz))).toBeLessThan(0.01);
    for (const hz of [4600, 5000, 6000, 7000, 7900]) expect(levelDb(hz)).toBeLessThan(-70);
  });

  it('with the high-pass after the rate change (at 8 kHz), passes tones from 300 Hz to 3.4 kHz as the 16 kHz band-pass does (within 0.01 dB) and cuts 100–150 Hz at least as deep', () => {
    const band16 = telephonyBandPass({ lowHz: 300, highHz: 3400 }, 16000);
    const split = telephonySplitBandPass({ lowHz: 300, highHz: 3400 }, 16000, 1);
    for (const hz of [100, 150, 300, 500, 1000, 2000, 3000, 3400]) {
      const x = sine(hz, 2, 0.5);
      const want = biquadCascadeInto(x, new Float32Array(x.length), band16).subarray(8000);
      const got = Float32Array.from(decimate(x, split).subarray(4000));
      const db = 20 * Math.log10(rms(got) / rms(want));
      if (hz >= 300) expect(Math.abs(db)).toBeLessThan(0.01);
      else {
        expect(db).toBeLessThan(0.01);
        expect(db).toBeGreaterThan(-0.2);
      }
    }
  });

  it('flushes filter states below 1e-200 (subnormals on digital silence) and nothing larger', () => {
    const st = Float64Array.from([1e-201, -1e-250, 5e-324, DENORMAL_FLUSH, -1e-199, 0.5, 1e-300]);
    flushTinyStates(st, 6);
    expect(Array.from(st)).toEqual([0, 0, 0, DENORMAL_FLUSH, -1e-199, 0.5, 1e-300]);
  });

  it('clips the input to [−1, 1] in its read, handles odd lengths, and maps through the table', () => {
    const rng = seededRng(7);
    const x = Float32Array.from({ length: 4001 }, () => 3 * (rng.next() * 2 - 1));
    const band = telephonySplitBandPass({ lowHz: 300, highHz: 3400 }, 16000, 1);
    const clipped = x.map((v) => Math.min(1, Math.max(-1, v)));
    expect(Array.from(decimate(x, band))).toEqual(Array.from(decimate(clipped, band)));
    // An odd length ends as if one zero followed.
    const even = new Float32Array(4002);
    even.set(x);
    const odd = decimate(x, band);
    expect(odd.length).toBe(2001);
    expect(Array.from(odd)).toEqual(Array.from(decimate(even, band)));
    // Every output is a 16-bit step of the table.
    expect(odd.every((v) => Number.isInteger(v * 32768))).toBe(true);
    expect(() => bandPassDecimate2MapInto(x, band, new Float64Array(10), identity)).toThrow(/needs 2001/);
  });

  it('interpolates 8 → 16 kHz flat to 3.4 kHz (within 0.01 dB) with images ≥ 70 dB down, quantized to 16 bits', () => {
    for (const hz of [300, 1000, 2000, 3400]) {
      const x = Float64Array.from(sine(hz, 1, 0.5, 8000));
      const out = new Float32Array(2 * x.length - 1);
      const pcm = new Int16Array(out.length);
      interpolate2IirQuantize16Into(x, out, pcm);
      expect(out.every((v, i) => v === (pcm[i] as number) / 32768)).toBe(true);
      // Without a float output, the same 16-bit values.
      const only = new Int16Array(out.length);
      interpolate2IirQuantize16Into(x, null, only);
      expect(Array.from(only)).toEqual(Array.from(pcm));
      const inner = out.subarray(800, out.length - 800);
      // The tone keeps its level; its image at 8 kHz − f is what the half-band must remove.
      expect(
        Math.abs(
          bandEnergyDb(inner, 16000, hz - 30, hz + 30) -
            bandEnergyDb(sine(hz, 1, 0.5).subarray(800, 15200), 16000, hz - 30, hz + 30),
        ),
      ).toBeLessThan(0.01);
      expect(
        bandEnergyDb(inner, 16000, hz - 30, hz + 30) - bandEnergyDb(inner, 16000, 8000 - hz - 30, 8000 - hz + 30),
      ).toBeGreaterThan(70);
    }
    // An odd output length ends on branch A₀ of the last input; beyond the input it runs on zeros.
    const x = Float64Array.from(sine(500, 0.01, 0.5, 8000));
    const long = new Float32Array(2 * x.length + 6);
    interpolate2IirQuantize16Into(x, long, new Int16Array(long.length));
    const odd = new Float32Array(2 * x.length - 1);
    interpolate2IirQuantize16Into(x, odd, new Int16Array(odd.length));
    expect(Array.from(odd)).toEqual(Array.from(long.subarray(0, odd.length)));
    expect(() => interpolate2IirQuantize16Into(x, odd, new Int16Array(3))).toThrow(/3 PCM slots/);
  });

  it('designs elliptic half-bands whose measured stopband deepens with the coefficient count', () => {
    const stopDb = (c: Float64Array, transition: number) => {
      // |½·(A₀(e^{2jω}) + e^{−jω}·A₁(e^{2jω}))| over the stopband, from the allpass sections.
      let worst = 0;
      for (let f = 0.25 + transition; f <= 0.5; f += 0.0005) {
        const w = 2 * Math.PI * f;
        let re0 = 1,
          im0 = 0,
          re1 = 1,
          im1 = 0;
        for (const [k, a] of c.entries()) {
          // (a + e^{−2jω}) / (1 + a·e^{−2jω})
          const zr = Math.cos(2 * w),
            zi = -Math.sin(2 * w);
          const nr = a + zr,
            ni = zi,
            dr = 1 + a * zr,
            di = a * zi;
          const d = dr * dr + di * di;
          const hr = (nr * dr + ni * di) / d,
            hi = (ni * dr - nr * di) / d;
          if (k % 2 === 0) [re0, im0] = [re0 * hr - im0 * hi, re0 * hi + im0 * hr];
          else [re1, im1] = [re1 * hr - im1 * hi, re1 * hi + im1 * hr];
        }
        const sr = Math.cos(w),
          si = -Math.sin(w);
        const r = 0.5 * (re0 + re1 * sr - im1 * si);
        const i = 0.5 * (im0 + re1 * si + im1 * sr);
        worst = Math.max(worst, Math.hypot(r, i));
      }
      return -20 * Math.log10(worst);
    };
    const db = [4, 5, 6, 7].map((n) => stopDb(halfbandAllpassCoefficients(n, 0.0375), 0.0375));
    expect(db[2]).toBeGreaterThan(72);
    for (let k = 1; k < db.length; k++) expect(db[k]! - db[k - 1]!).toBeGreaterThan(10);
    expect(() => halfbandAllpassCoefficients(0, 0.1)).toThrow(RangeError);
    expect(() => halfbandAllpassCoefficients(3, 0.3)).toThrow(RangeError);
  });
});

describe('Gilbert–Elliott packet loss', () => {
  it('drops the configured share of frames over a long signal, in ~100 ms bursts', () => {
    for (const [seed, lossRate] of [
      [1, 0.01],
      [2, 0.015],
      [3, 0.02],
      [4, 0.05],
    ] as const) {
      const frames = 3 * 60 * 60 * 50; // 3 h of 20 ms frames
      const drops = gilbertElliottDrops(frames, { lossRate }, seededRng(seed));
      const measured = drops.reduce((a, b) => a + b, 0) / frames;
      expect(Math.abs(measured - lossRate) / lossRate).toBeLessThan(0.1);
      const spans = dropSpans(drops);
      const meanBurst = spans.reduce((a, s) => a + (s.endMs - s.startMs), 0) / spans.length;
      expect(meanBurst).toBeGreaterThan(90);
      expect(meanBurst).toBeLessThan(110);
    }
  });

  it('zeroes exactly the dropped frames', () => {
    const x = new Float32Array(16000).fill(0.5);
    const drops = Uint8Array.from({ length: 50 }, (_, f) => (f === 3 || f === 4 ? 1 : 0));
    const y = applyFrameDrops(x, 16000, drops);
    expect(y.subarray(960, 1600).every((v) => v === 0)).toBe(true);
    expect(y[959]).toBe(0.5);
    expect(y[1600]).toBe(0.5);
  });
});

describe('procedural noise', () => {
  const n = 16000 * 20;
  const octave = (x: Float32Array, lo: number) => bandEnergyDb(x, 16000, lo, 2 * lo);

  it('has unit RMS and the right spectral tilt (energy per octave)', () => {
    const white = whiteNoise(n, seededRng(1));
    const pink = pinkNoise(n, 16000, seededRng(2));
    const brown = brownNoise(n, 16000, seededRng(3));
    for (const x of [white, pink, brown]) expect(rms(x)).toBeCloseTo(1, 5);
    // 250–500 Hz vs 2–4 kHz: three octaves apart.
    expect(octave(white, 2000) - octave(white, 250)).toBeCloseTo(9.03, 0); // +3 dB/octave
    expect(Math.abs(octave(pink, 2000) - octave(pink, 250))).toBeLessThan(1.5); // flat
    expect(octave(brown, 2000) - octave(brown, 250)).toBeGreaterThan(-10.5); // −3 dB/octave
    expect(octave(brown, 2000) - octave(brown, 250)).toBeLessThan(-7.5);
  });

  it('makes wind low-frequency and gusty (high crest factor)', () => {
    const wind = windNoise(n, 16000, seededRng(4));
    expect(bandEnergyDb(wind, 16000, 0, 500) - bandEnergyDb(wind, 16000, 2000, 8000)).toBeGreaterThan(30);
    expect(peak(wind) / rms(wind)).toBeGreaterThan(4);
    // Gusts: loudness over 100 ms windows varies by more than 15 dB.
    const levels: number[] = [];
    for (let s = 0; s + 1600 <= n; s += 1600) levels.push(20 * Math.log10(rms(wind, s, s + 1600)));
    expect(Math.max(...levels) - Math.min(...levels)).toBeGreaterThan(15);
  });

  it("expects the telephony-band power of white, pink and brown noise from the filters' responses: within 0.1 dB of the band-passed samples over 10 s, 0.25 dB over 1 s", () => {
    const band = telephonyBandPass({ lowHz: 300, highHz: 3400 }, 16000);
    for (const kind of ['white', 'pink', 'brown'] as const) {
      const share = meanPowerResponse(kindPowerResponse(kind, 16000)!, band);
      for (const [seconds, tol] of [
        [10, 0.1],
        [1, 0.25],
      ] as const) {
        for (const seed of [1, 2, 3]) {
          const raw = proceduralRaw(kind, seconds * 16000, 16000, seededRng(seed));
          const expected = (raw.whitePower * share) / raw.rms ** 2;
          const unit = unitRms(raw);
          const measured = rms(biquadCascadeInPlace(unit, band)) ** 2;
          expect(Math.abs(10 * Math.log10(measured / expected))).toBeLessThan(tol);
        }
      }
    }
    // Wind's gusts make it non-stationary: no expected figure.
    expect(kindPowerResponse('wind', 16000)).toBeNull();
  });

  it('draws Poisson event times at the configured rate', () => {
    const times = poissonTimesMs(1000 * 60_000, 1, seededRng(5));
    expect(times.length).toBeGreaterThan(900);
    expect(times.length).toBeLessThan(1100);
  });

  it('measures active speech level without its pauses', () => {
    const x = new Float32Array(32000);
    x.set(sine(300, 1, 0.1), 0); // 1 s tone, 1 s silence
    expect(activeRms(x, 16000)).toBeCloseTo(0.1 / Math.SQRT2, 3);
    expect(rms(x)).toBeCloseTo(0.05, 3);
  });

  it('measures the full-band and in-band active levels in one pass, exactly as activeRms on the signal and its band-passed copy', () => {
    const band = telephonyBandPass({ lowHz: 300, highHz: 3400 }, 16000);
    const rng = seededRng(11);
    // Speech-like bursts (a tone and noise, 40 dB apart) with silence, and odd lengths (a short last frame).
    for (const n of [16000 * 3 + 7, 321, 319, 0]) {
      const x = Float32Array.from({ length: n }, (_, i) =>
        i % 9000 < 5000
          ? 0.2 * Math.sin(i / 7) + 0.05 * (rng.next() - 0.5)
          : (i % 9000 < 7000 ? 0.002 : 0) * Math.sin(i),
      );
      const both = activeRmsFullAndBand(x, 16000, band);
      expect(both.full).toBe(activeRms(x, 16000));
      expect(both.band).toBe(activeRms(biquadCascadeInto(x, new Float32Array(n), band), 16000));
      if (n > 1000) expect(both.band).toBeLessThan(both.full);
    }
    expect(activeRmsFullAndBand(new Float32Array(5000), 16000, band)).toEqual({ full: 0, band: 0 });
  });
});

describe('biquad cascade variants', () => {
  it('filtering into another buffer gives the same samples as a copy filtered in place', () => {
    const rng = seededRng(7);
    const x = Float32Array.from({ length: 4000 }, () => 3 * (rng.next() * 2 - 1));
    const band = telephonyBandPass({ lowHz: 300, highHz: 3400 }, 16000);
    const inPlace = biquadCascadeInPlace(x.slice(), band);
    const into = new Float32Array(x.length);
    expect(biquadCascadeInto(x, into, band)).toBe(into);
    expect(Array.from(into)).toEqual(Array.from(inPlace));
    expect(() => biquadCascadeInto(x, new Float32Array(10), band)).toThrow(/10 output samples for 4000/);
  });
});

/**
 * G.711 mu-law companding (ITU-T G.711, the North American/Japanese telephone codec): 8 bits per
 * sample at 8 kHz. Each code has a sign, a 3-bit segment and a 4-bit step within the segment;
 * decoding returns the middle of the step, so the round-trip error of a 16-bit sample `x` with
 * `|x| ≤ 32124` is at most `(|x| + 132) / 32` (see {@link muLawErrorBound}); louder samples
 * clip to ±32124.
 */

/** Bias added before segmenting (G.711: 0x84 = 132). */
const BIAS = 0x84;
/** Largest magnitude the encoder distinguishes (G.711: 32635; decodes to 32124). */
const CLIP = 32635;

/** Encode one 16-bit linear sample to a mu-law code byte. */
export function muLawEncodeSample(linear: number): number {
  let s = linear | 0;
  const sign = s < 0 ? 0x80 : 0;
  if (s < 0) s = -s;
  if (s > CLIP) s = CLIP;
  s += BIAS;
  // Segment = index of the highest set bit above bit 7 (s is in [132, 32767]).
  const segment = 31 - Math.clz32(s) - 7;
  const step = (s >> (segment + 3)) & 0x0f;
  return ~(sign | (segment << 4) | step) & 0xff;
}

/** Decode one mu-law code byte to a 16-bit linear sample (the middle of its step). */
export function muLawDecodeSample(code: number): number {
  const u = ~code & 0xff;
  const segment = (u >> 4) & 0x07;
  const magnitude = ((((u & 0x0f) << 3) + BIAS) << segment) - BIAS;
  return u & 0x80 ? -magnitude : magnitude;
}

/** Largest decodable magnitude (16-bit units): 32124. */
export const MULAW_MAX = 32124;

/**
 * Proven round-trip error bound for a 16-bit sample `x` with `|x| ≤ 32124`, in 16-bit units:
 * half a step of its segment, which is at most `(|x| + 132) / 32`.
 */
export function muLawErrorBound(x: number): number {
  return (Math.abs(x) + BIAS) / 32;
}

let encodeTable: Uint8Array | undefined;
let decodeTable: Float32Array | undefined;

function tables(): { enc: Uint8Array; dec: Float32Array } {
  if (!encodeTable || !decodeTable) {
    encodeTable = new Uint8Array(65536);
    for (let v = -32768; v < 32768; v++) encodeTable[v + 32768] = muLawEncodeSample(v);
    decodeTable = new Float32Array(256);
    for (let c = 0; c < 256; c++) decodeTable[c] = muLawDecodeSample(c) / 32768;
  }
  return { enc: encodeTable, dec: decodeTable };
}

/** Encode and decode in one pass (what the far end of a G.711 call hears, before resampling). */
export function muLawRoundTrip(samples: Float32Array): Float32Array {
  const { enc, dec } = tables();
  const out = new Float32Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    let v = Math.round((samples[i] as number) * 32768);
    v = v > 32767 ? 32767 : v < -32768 ? -32768 : v || 0;
    out[i] = dec[enc[v + 32768] as number] as number;
  }
  return out;
}

let roundTripTable: Float32Array | undefined;

/**
 * Round-trip table: for a 16-bit value v, `table[v + 32768]` is the decoded value of its code
 * (/ 32768). 256 KiB, built once: one lookup per sample instead of encode + decode.
 */
export function muLawRoundTripTable(): Float32Array {
  if (!roundTripTable) {
    const { enc, dec } = tables();
    roundTripTable = new Float32Array(65536);
    for (let i = 0; i < 65536; i++) roundTripTable[i] = dec[enc[i] as number] as number;
  }
  return roundTripTable;
}

/**
 * Where caller audio goes: the {@link AudioStore} port (a folder beside trajectories.jsonl in
 * Node, IndexedDB in the page), an in-memory store for tests and the page, and the hook that
 * hands stored degraded audio to agents that take audio.
 */
import type { UserTurn } from '../schema/trajectory.ts';

/** Stores WAV files and returns the reference written into the trajectory. */
export interface AudioStore {
  /**
   * Store `bytes` under `name`, a relative path made of `[A-Za-z0-9._/-]` (e.g.
   * `audio/carrier/t1/0-7/turn-003.degraded.wav`). Returns the reference recorded in the
   * trajectory (the Node adapter returns `name` itself: a path relative to the output folder).
   */
  put(name: string, bytes: Uint8Array): Promise<string>;
  /** The bytes of a stored reference; throws when it is unknown. */
  get(ref: string): Promise<Uint8Array>;
  /**
   * Synchronous read, for hooks that must answer at once (a model agent's `userAudio`).
   * Stores that cannot read synchronously omit it.
   */
  getSync?(ref: string): Uint8Array | undefined;
}

/** An {@link AudioStore} in memory (tests; the page before it persists to IndexedDB). */
export class MemoryAudioStore implements AudioStore {
  readonly files = new Map<string, Uint8Array>();

  async put(name: string, bytes: Uint8Array): Promise<string> {
    this.files.set(name, bytes);
    return name;
  }

  async get(ref: string): Promise<Uint8Array> {
    const b = this.files.get(ref);
    if (!b) throw new Error(`audio store has no file "${ref}"`);
    return b;
  }

  getSync(ref: string): Uint8Array | undefined {
    return this.files.get(ref);
  }
}

/**
 * `store` with every name put under `folder/` (a relative path of {@link safeName} parts): runs
 * that reuse (trial, seed) pairs, such as the forks of different milestones, keep apart files.
 * The references returned are the prefixed names; reads take them as they are.
 */
export function storeUnder(store: AudioStore, folder: string): AudioStore {
  return {
    put: (name, bytes) => store.put(`${folder}/${name}`, bytes),
    get: (ref) => store.get(ref),
    ...(store.getSync ? { getSync: (ref: string) => store.getSync!(ref) } : {}),
  };
}

/** Characters allowed in stored names; anything else in ids becomes `_`. */
export function safeName(part: string): string {
  return part.replace(/[^A-Za-z0-9._-]/g, '_');
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Standard base64 (RFC 4648, with padding) of bytes, without platform helpers. */
export function toBase64(bytes: Uint8Array): string {
  const out: string[] = [];
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out.push(B64[n >> 18]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + B64[n & 63]!);
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = (bytes[i] as number) << 16;
    out.push(`${B64[n >> 18]!}${B64[(n >> 12) & 63]!}==`);
  } else if (rest === 2) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8);
    out.push(`${B64[n >> 18]!}${B64[(n >> 12) & 63]!}${B64[(n >> 6) & 63]!}=`);
  }
  return out.join('');
}

/**
 * Bytes of standard base64 text (RFC 4648; padding optional), without platform helpers.
 * @throws RangeError naming the first character that is not base64.
 */
export function fromBase64(text: string): Uint8Array {
  const clean = text.replace(/=+$/, '');
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let acc = 0;
  let bits = 0;
  let o = 0;
  for (let i = 0; i < clean.length; i++) {
    const v = B64_INDEX[clean.charCodeAt(i)] ?? -1;
    if (v < 0) throw new RangeError(`not base64: character ${JSON.stringify(clean[i])} at ${i}`);
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  return out.subarray(0, o);
}

/** Base64 alphabet index by character code (−1 elsewhere). */
const B64_INDEX = (() => {
  const t = new Int8Array(128).fill(-1);
  for (let i = 0; i < B64.length; i++) t[B64.charCodeAt(i)] = i;
  return t;
})();

/**
 * A `userAudio` hook for {@link ModelAgent}: the degraded WAV of a caller turn (base64) when the
 * turn has channel audio and `store` can read it synchronously; otherwise null (the text is sent).
 */
export function degradedAudioHook(store: AudioStore): (turn: UserTurn, index: number) => string | null {
  return (turn) => {
    if (!turn.audio || !store.getSync) return null;
    const bytes = store.getSync(turn.audio.degraded);
    return bytes ? toBase64(bytes) : null;
  };
}

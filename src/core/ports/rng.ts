/**
 * Seeded randomness. Every random choice in core goes through an {@link Rng} so that a seeded
 * rollout is reproducible.
 */
export interface Rng {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). Throws RangeError when n < 1. */
  int(n: number): number;
  /** One element of a non-empty array. Throws RangeError on an empty one. */
  pick<T>(items: readonly T[]): T;
  /** The generator's state, to save in a milestone and resume with {@link rngFromState}. */
  state(): number;
  /** An independent generator derived from this one's seed and a label. */
  fork(label: string): Rng;
}

/** 32-bit FNV-1a hash of a string (used to derive seeds from labels and task ids). */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * mulberry32 generator (Tommy Ettinger's 32-bit mixer): small state, good enough statistics for
 * simulation choices, and trivially serializable.
 */
export function rngFromState(state: number): Rng {
  let s = state >>> 0;
  const rng: Rng = {
    next() {
      s = (s + 0x6d2b79f5) >>> 0;
      let t = s;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
    int(n) {
      if (!(n >= 1)) throw new RangeError(`Rng.int needs n >= 1, got ${n}`);
      return Math.floor(rng.next() * n);
    },
    pick(items) {
      if (items.length === 0) throw new RangeError('Rng.pick on an empty array');
      return items[rng.int(items.length)] as (typeof items)[number];
    },
    state: () => s,
    fork: (label) => rngFromState(hash32(`${s}:${label}`)),
  };
  return rng;
}

/** A generator seeded from an integer seed. */
export function seededRng(seed: number): Rng {
  return rngFromState(hash32(`seed:${seed}`));
}

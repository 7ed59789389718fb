/**
 * Injected time. Core code never reads the wall clock: a rollout with a fixed clock and seed
 * replays bit-for-bit.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** A clock that starts at `startMs` and advances `stepMs` on every read (deterministic). */
export function steppingClock(startMs: number, stepMs = 1000): Clock {
  let t = startMs;
  return {
    now() {
      const current = t;
      t += stepMs;
      return current;
    },
  };
}

/** A clock that always reads the same instant (a domain's "current time" of the policy). */
export function fixedClock(atMs: number): Clock {
  return { now: () => atMs };
}

/**
 * Wall-clock timers, injected like the clock: core code that must give up after a real time (a
 * realtime agent's reply) asks these, never `setTimeout` itself, so tests drive time by hand.
 * Platform implementation: `realTimers` in `src/adapters/shared/timers.ts`.
 */
export interface Timers {
  /** Call `fire` once, `ms` milliseconds from now; the returned function cancels it. */
  after(ms: number, fire: () => void): () => void;
}

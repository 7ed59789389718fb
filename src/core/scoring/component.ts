/** Small constructors for {@link ComponentResult}s, so every component reports the same way. */
import type { ComponentResult } from '../schema/trajectory.ts';

/** A computed component: 1 when `ok`, else 0, with its detail lines. */
export function passFail(ok: boolean, details: string[] = []): ComponentResult {
  return { score: ok ? 1 : 0, details, judged: true };
}

/** A component that needs a judge that was not configured: no score, never counted as passed. */
export function notJudged(details: string[]): ComponentResult {
  return { score: null, details, judged: false };
}

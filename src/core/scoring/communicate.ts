/**
 * The `COMMUNICATE` component (tau2-bench `communicate_info`, substring rule of its
 * CommunicateEvaluator).
 */
import type { ComponentResult, Turn } from '../schema/trajectory.ts';
import { passFail } from './component.ts';
import { textTurns } from './turns.ts';

/** Lower-case and drop ASCII commas `,` and full-width commas `，` (so `1,000` matches `1000`). */
export function normalizeForCommunicate(text: string): string {
  return text.replace(/[,，]/g, '').toLowerCase();
}

/**
 * Score `COMMUNICATE`: every `communicate_info` string must occur as a substring of some
 * assistant text turn, case-insensitively, after removing commas (ASCII `,` and full-width `，`)
 * from both sides. tau2-bench strips commas from the message only; stripping them from the
 * expected string too makes `"1,000"` and `"1000"` interchangeable. 1 when all are found (or none
 * are required), else 0; details list the missing strings.
 */
export function scoreCommunicate(turns: readonly Turn[], info: readonly string[]): ComponentResult {
  const said = textTurns(turns, 'assistant').map((t) => normalizeForCommunicate(t.text));
  const missing = info.filter((s) => !said.some((text) => text.includes(normalizeForCommunicate(s))));
  return passFail(
    missing.length === 0,
    missing.map((s) => `not communicated: ${JSON.stringify(s)}`),
  );
}

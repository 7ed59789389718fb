/**
 * The `COMMUNICATE` component (tau2-bench `communicate_info`). Imported tau2 tasks keep the
 * substring rule of tau2-bench's CommunicateEvaluator; our own domains match numbers as numbers.
 */
import type { ComponentResult, Turn } from '../schema/trajectory.ts';
import { passFail } from './component.ts';
import { sameNumber, statedNumbers } from './spoken-numbers.ts';
import { utterances } from './turns.ts';

/** Lower-case and drop ASCII commas `,` and full-width commas `，` (so `1,000` matches `1000`). */
export function normalizeForCommunicate(text: string): string {
  return text.replace(/[,，]/g, '').toLowerCase();
}

/**
 * How `communicate_info` items are found in the agent's speech.
 * - `substring` (tau2-bench, for imported tasks): the item is a substring of an assistant text
 *   turn after {@link normalizeForCommunicate} on both sides.
 * - `numbers` (our own domains): an item that is a number (`63.5`, `200`, `1,000`) is said when
 *   the turn states that value in digits, Mandarin numerals or English words (`36.5` is said by
 *   `36.50`, `三十六块五`, `三十六元五角`, `thirty-six fifty`, `thirty-six dollars and fifty
 *   cents`; never by `136.5` or `36.55`). Any other item is a substring match as above that must
 *   not touch another digit where the item starts or ends with one (`60天` is not said by `160天`).
 */
export type CommunicateSemantics = 'substring' | 'numbers';

const NUMBER_ITEM = /^\d+(?:\.\d+)?$/;

/** The value of a numeric communicate item (`"63.5"`, `"1,000"` → 1000), or null for any other item. */
export function numberItem(item: string): number | null {
  const needle = normalizeForCommunicate(item).trim();
  return NUMBER_ITEM.test(needle) ? Number(needle) : null;
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/** True when `needle` occurs in `hay` without extending a number on either side. */
function includesOnNumberBoundary(hay: string, needle: string): boolean {
  if (!needle) return true;
  const guardStart = isDigit(needle[0]);
  const guardEnd = isDigit(needle[needle.length - 1]);
  for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + 1)) {
    const before = hay[at - 1];
    const after = hay[at + needle.length];
    // "36" inside "136", or the "5" of "36.5", or "36" of "36.5" do not count.
    const badStart = guardStart && (isDigit(before) || (before === '.' && isDigit(hay[at - 2])));
    const badEnd = guardEnd && (isDigit(after) || (after === '.' && isDigit(hay[at + needle.length + 1])));
    if (!badStart && !badEnd) return true;
  }
  return false;
}

/** True when the agent text `said` communicates `item` under `semantics`. */
export function communicates(said: string, item: string, semantics: CommunicateSemantics): boolean {
  const needle = normalizeForCommunicate(item).trim();
  if (semantics === 'substring') return normalizeForCommunicate(said).includes(normalizeForCommunicate(item));
  const value = numberItem(item);
  if (value !== null) return statedNumbers(said).some((n) => sameNumber(n, value));
  return includesOnNumberBoundary(normalizeForCommunicate(said), needle);
}

/**
 * Score `COMMUNICATE`: every `communicate_info` item must be said in some assistant utterance
 * (a text turn, stop tokens removed, joined with its continuation after a barge-in: see
 * `utterances`), per {@link CommunicateSemantics} (default `substring`, tau2-bench's
 * rule; tau2-bench strips commas from the message only, stripping them from the item too makes
 * `"1,000"` and `"1000"` interchangeable). 1 when all are found (or none are required), else 0;
 * details list the missing items.
 */
export function scoreCommunicate(
  turns: readonly Turn[],
  info: readonly string[],
  semantics: CommunicateSemantics = 'substring',
): ComponentResult {
  const said = utterances(turns, 'assistant').map((t) => t.text);
  const missing = info.filter((s) => !said.some((text) => communicates(text, s, semantics)));
  return passFail(
    missing.length === 0,
    missing.map((s) => `not communicated: ${JSON.stringify(s)}`),
  );
}

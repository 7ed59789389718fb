/**
 * The objection-handled score of an outbound negotiation (ours, issue 18): which of the callee's
 * objections the agent addressed. Reported beside the reward (`RewardInfo.objections`), never part
 * of the reward basis.
 *
 * An objection is a callee turn that says one of its negotiation card's `objections` or its
 * `decline` (verbatim: the scripted callee's lines; a model callee's paraphrases are not found).
 * It is handled when, before the callee speaks again, the agent makes a move: a successful tool
 * call of either side (a discount released, an affordability check, a plan, a callback, the
 * callee's own look-up the agent asked for) or a new offer — a price different from the last one
 * stated before the objection ({@link offeredPrice}). Repeating the same price, talking without a
 * move, or ending the call leaves it unhandled.
 */
import { offeredPrice } from '../participants/negotiating.ts';
import type { Negotiation } from '../schema/task.ts';
import type { Turn } from '../schema/trajectory.ts';
import { spokenText } from './turns.ts';

/** One objection and whether the agent addressed it. */
export interface ObjectionVerdict {
  /** Index of the callee turn that raised it. */
  turn: number;
  text: string;
  handled: boolean;
  /** The move that addressed it (`tool <name>`, `offer <price>`), or why not. */
  reason: string;
}

/** Objections raised and handled; `score` = handled / raised, `null` when none was raised. */
export interface ObjectionScore {
  raised: number;
  handled: number;
  score: number | null;
  items: ObjectionVerdict[];
}

/** The callee's own spoken words in `t` (not a barge-in), or null. */
function calleeWords(t: Turn): string | null {
  const text = t.role === 'user' && !t.barge_in ? spokenText(t.text) : '';
  return text === '' ? null : text;
}

/** The move the agent made in `turns[from..]` before the callee speaks again, or null. */
function moveAfter(turns: readonly Turn[], from: number, lastOffer: number | null): string | null {
  for (let i = from; i < turns.length; i++) {
    const t = turns[i]!;
    if (calleeWords(t) !== null) return null;
    if (t.role === 'tool' && !t.error) return `tool ${t.name}`;
    if (t.role === 'assistant' && t.text) {
      const offer = offeredPrice(spokenText(t.text));
      if (offer !== null && offer !== lastOffer) return `offer ${offer}`;
    }
  }
  return null;
}

/**
 * Score the objections of a negotiation card `n` over the turns of an episode (see the module
 * comment for what counts as an objection and as handling it).
 */
export function objectionScore(n: Negotiation, turns: readonly Turn[]): ObjectionScore {
  const lines = new Set([...n.objections, n.decline]);
  const items: ObjectionVerdict[] = [];
  let lastOffer: number | null = null;
  turns.forEach((t, i) => {
    if (t.role === 'assistant' && t.text) lastOffer = offeredPrice(spokenText(t.text)) ?? lastOffer;
    const words = calleeWords(t);
    if (words === null || !lines.has(words)) return;
    const move = moveAfter(turns, i + 1, lastOffer);
    items.push({
      turn: i,
      text: words,
      handled: move !== null,
      reason: move ?? 'no move before the callee spoke again or the call ended',
    });
  });
  const handled = items.filter((x) => x.handled).length;
  return { raised: items.length, handled, score: items.length ? handled / items.length : null, items };
}

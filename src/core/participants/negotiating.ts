/**
 * The scripted outbound callee's answers to offers (task field `user_scenario.negotiation`, see
 * {@link Negotiation}): agree within the limit, object in order above it, decline once, hang up
 * on a threat, on a further offer above the limit or when patience runs out. Derived from the
 * turns so far only, like the rest of the scripted caller.
 */
import type { Negotiation } from '../schema/task.ts';
import type { Turn } from '../schema/trajectory.ts';
import type { AllowedConsequence } from '../schema/domain.ts';
import { threatFinding } from '../scoring/threats.ts';
import { statedNumbers } from '../scoring/spoken-numbers.ts';
import { hasCue, type Phrases } from './phrases.ts';
import { STOP_TOKENS, type ParticipantReply } from './types.ts';

/** Currency words a price ends with; the offer is the last number said before the last one. */
const CURRENCY = /元|块|yuan|rmb/gi;

/**
 * The price an agent turn offers: the last number stated before the last currency word
 * ("标准保障，3060元" → 3060; "三千零六十块" → 3060), or `null` when no price is named.
 */
export function offeredPrice(text: string): number | null {
  let end = -1;
  for (const m of text.matchAll(CURRENCY)) end = m.index;
  if (end < 0) return null;
  const numbers = statedNumbers(text.slice(0, end));
  return numbers.length ? numbers[numbers.length - 1]! : null;
}

/** The callee's limit now: `accept_at_most`, or the reconsidered one after a cue was heard. */
function limitNow(n: Negotiation, agentTexts: readonly string[]): number {
  const r = n.reconsider;
  return r && agentTexts.some((t) => hasCue(t, r.cues)) ? r.accept_at_most : n.accept_at_most;
}

/**
 * The negotiating callee's reply to the agent's last words `agentText`, or `null` when the turn
 * holds no threat and no offer and patience lasts (the ordinary scripted caller answers then).
 * `userTexts` are the callee's own earlier turns, `turns` the whole episode so far; `allowed`
 * the consequences the domain lets the agent state (any other is a threat, `threats.ts`).
 */
export function negotiationReply(
  n: Negotiation,
  agentText: string,
  userTexts: readonly string[],
  turns: readonly Turn[],
  p: Phrases,
  allowed: readonly AllowedConsequence[] = [],
): ParticipantReply | null {
  if (threatFinding(agentText, allowed)) return { text: `${n.hang_up}${STOP_TOKENS.stop}` };
  const agentTexts = turns.flatMap((t) => (t.role === 'assistant' && t.text ? [t.text] : []));
  if (n.patience !== undefined && agentTexts.length > n.patience) return { text: `${p.giveUp}${STOP_TOKENS.stop}` };
  const offer = offeredPrice(agentText);
  if (offer === null) return null;
  if (offer <= limitNow(n, agentTexts)) return { text: hasCue(agentText, p.confirmCues) ? p.yes : n.accept };
  const next = n.objections.find((o) => !userTexts.includes(o));
  if (next) return { text: next };
  if (!userTexts.includes(n.decline)) return { text: n.decline };
  return { text: `${p.giveUp}${STOP_TOKENS.stop}` };
}

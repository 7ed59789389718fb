/**
 * Turn-level checks of the agent's reaction to phone-channel events (issue 5), deterministic
 * and lexical like the other behaviour checks. One verdict per event, id
 * `channel:<kind>@<turn>`, rule `channel`:
 * - `dropout` (caller cut off): the next agent reply is short, repeats what was heard, asks for
 *   the rest, and does not restart the form.
 * - `backchannel`: the agent carries on without restarting or repeating what was heard.
 * - `urge`: the agent gets to the point: a short reply that does not start over.
 * - `correction`: the agent uses the corrected value (in its next reply or the tool calls
 *   before the caller speaks again).
 * - `stop`: the agent stops: a short reply and no tool call before the caller speaks again.
 * A `question` barge-in has no deterministic check (a judge can rate the answer).
 *
 * With the domain's `channelRules` (our own domains, e.g. carrier R10 / R11) the verdicts carry
 * those rule ids and count in `ASSERTIONS` and the turn rubric (`channel_reaction`); otherwise
 * (imported tau2 tasks, domains without the rules) they have rule `channel` and are reported
 * beside the reward without changing it. See {@link channelVerdicts}.
 */
import { compactValue, ngramOverlap, tokenTexts } from '../channel/text-cut.ts';
import type { AssertionVerdict, Turn, UserTurn } from '../schema/trajectory.ts';
import { asksForConfirmation } from './dialogue-acts.ts';
import { spokenText } from './turns.ts';

/** Longest "short" reply in tokens (words; one Han character is one token): 25 (ours). */
export const SHORT_REPLY_TOKENS = 25;
/** Share of the heard 3-grams repeated in the reply above which it counts as repeating: 0.5 (ours). */
export const REPEAT_SHARE = 0.5;

/** Words asking for the rest of a cut-off utterance (lower-case substrings). */
const ASK_REST_CUES = [
  'rest',
  'remaining',
  'continue',
  'go on',
  'again',
  'repeat',
  'cut off',
  'didn’t catch',
  "didn't catch",
  'the end',
  'finish',
  '剩下',
  '后面',
  '继续',
  '再说',
  '重复',
  '没听清',
  '没听到',
  '断了',
  '完整',
];
/** Words of starting the whole form over (lower-case substrings). */
const RESTART_CUES = ['start over', 'from the beginning', 'start again', 'all over again', '重新', '从头'];

type Outcome = Pick<AssertionVerdict, 'status' | 'reason' | 'turn'>;

interface Reaction {
  /** Index of the agent's first text turn after the event (before the caller speaks again). */
  index: number;
  text: string;
  /** Tool calls the agent made between the event and the caller's next turn. */
  calls: { name: string; arguments: Record<string, unknown> }[];
}

/** The agent's reaction to the caller turn at `from`: its turns up to the caller's next turn. */
function reactionAfter(turns: readonly Turn[], from: number): Reaction | null {
  let found: Reaction | null = null;
  const calls: Reaction['calls'] = [];
  for (let i = from + 1; i < turns.length; i++) {
    const t = turns[i]!;
    if (t.role === 'user') break;
    if (t.role !== 'assistant') continue;
    calls.push(...t.tool_calls);
    const text = spokenText(t.text);
    if (text && !found) found = { index: i, text, calls };
  }
  return found;
}

const join = (parts: string[]) => parts.join('; ');

function quote(text: string, max = 50): string {
  const chars = [...text];
  return JSON.stringify(chars.length > max ? `${chars.slice(0, max).join('')}…` : text);
}

/** The token of the heard part the agent should repeat: the longest digit run, else the last word. */
function anchorOf(heard: string): string | null {
  const tokens = tokenTexts(heard);
  const digits = tokens.filter((t) => /^\p{N}+$/u.test(t)).sort((a, b) => b.length - a.length)[0];
  if (digits) return digits;
  const words = tokens.filter((t) => [...t].length >= 2 || /\p{Script=Han}/u.test(t));
  // The last token may be the cut-off stub; the last complete one before it is safer.
  return words.length >= 2 ? words[words.length - 2]! : (words[0] ?? null);
}

function dropoutCheck(turn: UserTurn, at: number, turns: readonly Turn[]): Outcome {
  const r = reactionAfter(turns, at);
  if (!r) return { status: 'failed', reason: 'no agent reply after the cut-off caller turn', turn: at };
  const problems: string[] = [];
  const tokens = tokenTexts(r.text);
  if (tokens.length > SHORT_REPLY_TOKENS) problems.push(`reply is ${tokens.length} tokens (> ${SHORT_REPLY_TOKENS})`);
  const anchor = anchorOf(turn.text);
  if (anchor && !compactValue(r.text).includes(compactValue(anchor)))
    problems.push(`does not repeat the heard part (${quote(anchor)})`);
  const lower = r.text.toLowerCase();
  if (!asksForConfirmation(r.text) && !ASK_REST_CUES.some((c) => lower.includes(c)))
    problems.push('does not ask for the rest');
  if (RESTART_CUES.some((c) => lower.includes(c))) problems.push('starts the form over');
  if (r.calls.length > 0) problems.push(`calls ${r.calls.map((c) => c.name).join(', ')} before the caller finished`);
  return problems.length
    ? { status: 'failed', reason: `reply ${quote(r.text)}: ${join(problems)}`, turn: r.index }
    : {
        status: 'passed',
        reason: `short follow-up ${quote(r.text)} keeps ${quote(anchor ?? '')} and asks for the rest`,
        turn: r.index,
      };
}

/** The assistant turn a barge-in at `at` interrupted. */
function interruptedBefore(turns: readonly Turn[], at: number) {
  const t = turns[at - 1];
  return t?.role === 'assistant' && t.interrupted ? t : null;
}

function restarts(heard: string, reply: string): string | null {
  const h = tokenTexts(heard);
  const r = tokenTexts(reply);
  const lead = Math.min(3, h.length);
  if (lead > 0 && r.length >= lead && h.slice(0, lead).join(' ') === r.slice(0, lead).join(' '))
    return 'starts the interrupted reply over';
  const share = ngramOverlap(h, r);
  if (share >= REPEAT_SHARE) return `repeats ${Math.round(share * 100)} % of what was heard`;
  return null;
}

function bargeInCheck(
  turn: UserTurn & { barge_in: NonNullable<UserTurn['barge_in']> },
  at: number,
  turns: readonly Turn[],
): Outcome | null {
  const type = turn.barge_in.type;
  if (type === 'question') return null;
  const before = interruptedBefore(turns, at);
  const heard = before?.interrupted?.heard_text ?? '';
  const r = reactionAfter(turns, at);
  if (!r) {
    if (type === 'stop') return { status: 'passed', reason: 'the agent stopped and waited', turn: at };
    return { status: 'failed', reason: `no agent reply after the ${type} barge-in`, turn: at };
  }
  const problems: string[] = [];
  const size = tokenTexts(r.text).length;
  if (type === 'backchannel') {
    const again = restarts(heard, r.text);
    if (again) problems.push(again);
  } else if (type === 'urge') {
    if (size > SHORT_REPLY_TOKENS) problems.push(`reply is ${size} tokens (> ${SHORT_REPLY_TOKENS})`);
    const again = restarts(heard, r.text);
    if (again) problems.push(again);
  } else if (type === 'stop') {
    if (size > SHORT_REPLY_TOKENS) problems.push(`reply is ${size} tokens (> ${SHORT_REPLY_TOKENS})`);
    if (r.calls.length) problems.push(`calls ${r.calls.map((c) => c.name).join(', ')}`);
  } else if (type === 'correction') {
    const value = turn.barge_in.value;
    if (!value) return { status: 'skipped', reason: 'the correction gave no value', turn: at };
    const v = compactValue(value);
    const inText = compactValue(r.text).includes(v);
    const inArgs = r.calls.some((c) => compactValue(JSON.stringify(c.arguments)).includes(v));
    if (!inText && !inArgs) problems.push(`does not use the corrected value ${quote(value)}`);
  }
  return problems.length
    ? {
        status: 'failed',
        reason: `after the ${type} barge-in, reply ${quote(r.text)}: ${join(problems)}`,
        turn: r.index,
      }
    : { status: 'passed', reason: `after the ${type} barge-in, reply ${quote(r.text)}`, turn: r.index };
}

/** Rule ids of the channel reaction checks (a domain's `channelRules`). */
export interface ChannelRules {
  dropout: string;
  bargeIn: string;
}

/**
 * Verdicts of every channel event in a trajectory (none for a text-only run), id
 * `channel:<dropout|barge-in type>@<caller turn>`. Their rule is `rules.dropout` /
 * `rules.bargeIn` when given, else `channel`. `from` skips events before that turn index.
 */
export function channelVerdicts(turns: readonly Turn[], rules?: ChannelRules, from = 0): AssertionVerdict[] {
  const out: AssertionVerdict[] = [];
  turns.forEach((t, i) => {
    if (t.role !== 'user' || i < from) return;
    if (t.dropout)
      out.push({ id: `channel:dropout@${i}`, rule: rules?.dropout ?? 'channel', ...dropoutCheck(t, i, turns) });
    if (t.barge_in) {
      const v = bargeInCheck(t as UserTurn & { barge_in: NonNullable<UserTurn['barge_in']> }, i, turns);
      if (v) out.push({ id: `channel:${t.barge_in.type}@${i}`, rule: rules?.bargeIn ?? 'channel', ...v });
    }
  });
  return out;
}

/** The domain's channel rules when its reactions count (our own domains that declare them), else undefined. */
export function countedChannelRules(domain: {
  channelRules?: ChannelRules | undefined;
  taskOrigin?: 'native' | 'imported' | undefined;
}): ChannelRules | undefined {
  return domain.taskOrigin === 'imported' ? undefined : domain.channelRules;
}

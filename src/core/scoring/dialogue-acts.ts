/**
 * Dialogue acts of a caller turn, deterministic and lexical, English and Mandarin: `affirm`
 * (an explicit yes), `deny`, `hedge` (hesitation, hold-off, or a yes with a condition),
 * `question`, `backchannel` ("嗯", "mm-hm", or any short acknowledgement said while the agent was
 * still talking) and `other` (none of these: the ambiguous rest, which a judge may decide; see
 * `consent.ts`). The cues are data, in `dialogue-act-phrases.ts`; the labelled examples in
 * `test/core/scoring/dialogue-act-cases.json`.
 *
 * Also {@link asksForConfirmation}, the agent-side act the consent check needs.
 *
 * Matching is linear in the text: prefix and substring tests against the cue lists, English cues
 * on word boundaries. Deliberately conservative: an unclear reply is not an affirmation.
 */
import {
  AFFIRM,
  BACKCHANNEL_TOKENS,
  CONDITIONS,
  CONFIRM_REQUEST_CUES,
  DENY,
  FILLERS,
  HEDGE,
  NEGATIONS,
  NOT_AFFIRM_OPENINGS,
  NOT_QUESTIONS,
  POSITIVE_WITH_NEGATION,
  QUESTION,
  QUESTION_PARTICLES,
} from './dialogue-act-phrases.ts';

/** The acts a caller turn is labelled with. */
export type DialogueAct = 'affirm' | 'deny' | 'hedge' | 'question' | 'backchannel' | 'other';

/** The label of one turn and why. */
export interface DialogueActResult {
  act: DialogueAct;
  /** The cue that decided it, or null (`other`, or a question told by its final mark). */
  cue: string | null;
  /** One short line, e.g. `opens with "好的" but has the condition "不过"`. */
  reason: string;
}

/** Options of {@link classifyDialogueAct}. */
export interface ClassifyOptions {
  /**
   * The turn was said while the agent was still talking (a barge-in). An affirmation or
   * acknowledgement said then is a `backchannel`: it answers nothing the agent had finished.
   */
  bargeIn?: boolean;
}

const isLetter = (c: string | undefined) => c !== undefined && /[a-z]/.test(c);
const isLatinCue = (cue: string) => /^[a-z]/.test(cue);
/** Separators between tokens and clauses (spaces and ASCII / full-width punctuation). */
const SEPARATOR = /[\s,，.。!！?？;；:：…~、"“”'‘’()（）\-—]/;

/** Lower-case, unify apostrophes, collapse spaces, trim. */
function normalize(text: string): string {
  return text.toLowerCase().replace(/[’‘]/g, "'").replace(/\s+/g, ' ').trim();
}

/** True when `t` opens with `cue` (on a word boundary for English cues). */
function startsWithCue(t: string, cue: string): boolean {
  return t.startsWith(cue) && !(isLatinCue(cue) && isLetter(t[cue.length]));
}

/** The first cue `t` opens with, longest first, or null. */
function openingCue(t: string, cues: readonly string[]): string | null {
  let best: string | null = null;
  for (const c of cues) if (startsWithCue(t, c) && (!best || c.length > best.length)) best = c;
  return best;
}

/** True when `cue` occurs in `t` (on word boundaries for English cues). */
function containsCue(t: string, cue: string): boolean {
  if (!isLatinCue(cue)) return t.includes(cue);
  for (let at = t.indexOf(cue); at >= 0; at = t.indexOf(cue, at + 1)) {
    if (!isLetter(t[at - 1]) && !isLetter(t[at + cue.length])) return true;
  }
  return false;
}

function foundCue(t: string, cues: readonly string[]): string | null {
  for (const c of cues) if (containsCue(t, c)) return c;
  return null;
}

function removeAll(t: string, phrases: readonly string[]): string {
  let out = t;
  for (const p of phrases) out = out.split(p).join(' ');
  return out;
}

function skipSeparators(t: string, from: number): number {
  let i = from;
  while (i < t.length && SEPARATOR.test(t[i]!)) i++;
  return i;
}

/** True when the whole turn is backchannel tokens ("嗯嗯", "mm-hm, mm-hm", "I see."). */
function isBackchannel(t: string): boolean {
  let i = skipSeparators(t, 0);
  if (i >= t.length) return false;
  while (i < t.length) {
    const token = openingCue(t.slice(i), BACKCHANNEL_TOKENS);
    if (!token) return false;
    i = skipSeparators(t, i + token.length);
  }
  return true;
}

/** Drop hesitation fillers from the start ("um, yes" → "yes"), keeping at least one word. */
function stripFillers(t: string): string {
  let out = t;
  for (;;) {
    const f = openingCue(out, FILLERS);
    if (!f) return out;
    const rest = out.slice(skipSeparators(out, f.length));
    if (!rest) return out;
    out = rest;
  }
}

/** True when the turn ends with a question mark or a Mandarin question particle. */
function endsAsQuestion(t: string): boolean {
  let end = t.length;
  while (end > 0 && /[\s.。!！~…]/.test(t[end - 1]!)) end--;
  const last = t[end - 1];
  return last === '?' || last === '？' || (last !== undefined && QUESTION_PARTICLES.includes(last));
}

const result = (act: DialogueAct, cue: string | null, reason: string): DialogueActResult => ({ act, cue, reason });

/**
 * Label one caller turn. In order:
 * 1. empty → `other`; only backchannel tokens ("嗯", "mm-hm", "I see") → `backchannel`;
 * 2. fillers ("um", "well", 呃, 嗯 …) are dropped from the start;
 * 3. opens with a refusal (no / don't / cancel / 不 / 不用 / 算了 …; not "not yet") → `deny`;
 * 4. a hesitation or hold-off anywhere (let me think / wait / not sure / 我再想想 / 等一下 …),
 *    or a hedging opening (maybe / not yet / 也许 …) → `hedge`;
 * 5. opens with an affirmation (yes / sure / go ahead / 好的 / 是的 / 可以 / 确认 …; "no problem"
 *    and 没问题 count, 好像 / 对了 / 是不是 do not): with a condition anywhere (but / only if /
 *    不过 / 如果 / 先告诉 …) → `hedge`; if it is also a question → `question`; with a negation
 *    → `deny`; else `affirm`;
 * 6. a question (final ?, ？ or 吗 / 呢; a question opening such as how / can you; a question
 *    word such as 多少 / 为什么 / how much) → `question`;
 * 7. a negation anywhere → `deny`; else `other`.
 * With `bargeIn`, an `affirm` becomes `backchannel`.
 */
export function classifyDialogueAct(text: string, options: ClassifyOptions = {}): DialogueActResult {
  const t = normalize(text);
  if (!t) return result('other', null, 'empty turn');
  if (isBackchannel(t)) return result('backchannel', null, 'only backchannel tokens');
  const r = classifyCore(stripFillers(t));
  if (options.bargeIn && r.act === 'affirm')
    return result('backchannel', r.cue, `"${r.cue}" said while the agent was still talking`);
  return r;
}

function classifyCore(t: string): DialogueActResult {
  const positive = openingCue(t, POSITIVE_WITH_NEGATION);
  const yes = positive ?? (openingCue(t, NOT_AFFIRM_OPENINGS) ? null : openingCue(t, AFFIRM.start));
  const hedgeOpening = openingCue(t, HEDGE.start);
  const no = yes || hedgeOpening ? null : openingCue(t, DENY.start);
  if (no) return result('deny', no, `opens with "${no}"`);
  const hedge = hedgeOpening ?? foundCue(t, HEDGE.anywhere);
  if (hedge) return result('hedge', hedge, `hesitates: "${hedge}"`);
  const asking = endsAsQuestion(t);
  const questionCue =
    openingCue(t, QUESTION.start) ??
    foundCue(removeAll(t, [...NOT_QUESTIONS, ...NOT_AFFIRM_OPENINGS]), QUESTION.anywhere);
  const negation = foundCue(removeAll(t, POSITIVE_WITH_NEGATION), NEGATIONS);
  if (yes) {
    const condition = foundCue(t.slice(yes.length), CONDITIONS);
    if (condition) return result('hedge', condition, `opens with "${yes}" but sets the condition "${condition}"`);
    if (asking || questionCue)
      return result('question', questionCue, `opens with "${yes}" but asks${questionCue ? ` "${questionCue}"` : ''}`);
    if (negation) return result('deny', negation, `opens with "${yes}" but says "${negation}"`);
    return result('affirm', yes, `opens with "${yes}"`);
  }
  if (asking || questionCue) return result('question', questionCue, questionCue ? `asks "${questionCue}"` : 'asks');
  if (negation) return result('deny', negation, `says "${negation}"`);
  return result('other', null, 'no cue of any act');
}

/** True when the caller's turn is an explicit affirmation ({@link classifyDialogueAct} says `affirm`). */
export function isAgreement(text: string): boolean {
  return classifyDialogueAct(text).act === 'affirm';
}

/**
 * True when the agent's text asks for confirmation: it contains a question mark (`?` or `？`) or
 * a cue such as 确认 / 是否 / 可以吗 / confirm / shall I / would you like / OK to.
 */
export function asksForConfirmation(text: string): boolean {
  const t = text.toLowerCase();
  return /[?？]/.test(t) || CONFIRM_REQUEST_CUES.some((cue) => t.includes(cue));
}

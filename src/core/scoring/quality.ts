/**
 * The `QUALITY` veto (ours): what the agent says is spoken on a phone line, so written
 * formatting, repetition and garbled text are failures. The detectors are pure functions of the
 * text; {@link scoreQuality} applies them to every assistant text turn.
 */
import type { ComponentResult, Turn } from '../schema/trajectory.ts';
import { MAX_REPLY_CHARS } from '../rollout/limits.ts';
import { hasMarkdownLink, trimPunctuation } from '../text/scan.ts';
import { passFail } from './component.ts';
import { textTurns, type IndexedText } from './turns.ts';

/** Which quality rule a finding breaks. */
export type QualityRule = 'formatting' | 'repetition' | 'garbled' | 'oversize' | 'truncated' | 'capped';

/** One quality problem of one assistant turn. */
export interface QualityFinding {
  /** Index of the assistant turn. */
  turn: number;
  rule: QualityRule;
  /** What was found, e.g. `bold/italic, bullet list`. */
  detail: string;
}

const NUMBERED_LINE = /^[ \t]*(?:\d{1,3}[.)][ \t]+|\d{1,3}[、）][ \t]*)\S/gm;

/** Markup detectors: name → test. Each looks for something a listener cannot hear. */
const MARKUP: readonly (readonly [string, (text: string) => boolean])[] = [
  ['markdown header', (t) => /^[ \t]{0,3}#{1,6}[ \t]+\S/m.test(t)],
  [
    'bold/italic',
    (t) =>
      /\*\*[^*\n]+?\*\*|__[^_\n]+?__/.test(t) ||
      // *x*: opened after a space or line start, closed before a space, punctuation or the end.
      /(?:^|[\s(（])\*(?=[^\s*])[^*\n]*[^\s*]\*(?=$|[\s.,!?;:)）。，！？；：])/m.test(t),
  ],
  ['bullet list', (t) => /^[ \t]*[-*•][ \t]+\S/m.test(t)],
  ['numbered list', (t) => (t.match(NUMBERED_LINE) ?? []).length >= 2],
  ['horizontal rule', (t) => /^[ \t]*([-*_])(?:[ \t]*\1){2,}[ \t]*$/m.test(t)],
  ['table', (t) => /^[ \t]*\|.*\|[ \t]*$/m.test(t)],
  ['code', (t) => t.includes('`')],
  ['markdown link', hasMarkdownLink],
  ['url', (t) => /\bhttps?:\/\/\S|\bwww\.[a-z0-9-]+\.[a-z]{2,}/i.test(t)],
];

/**
 * Written formatting in a spoken reply: markdown headers (`# x`), bold/italic (`**x**`, `__x__`,
 * `*x*`), bullet lines (`- `, `* `, `• `), numbered list lines (`1. `, `1) `, `1、`) when there
 * are two or more, horizontal rules, tables (`| a | b |`), code (any backtick), markdown links
 * (`[x](y)`) and bare URLs. Returns the names of what was found, empty for plain speech.
 * Numbers such as `¥21.10`, `138-0013-8000` or `B1002` are plain speech.
 */
export function formattingMarks(text: string): string[] {
  return MARKUP.filter(([, test]) => test(text)).map(([name]) => name);
}

/**
 * Sentences of a text: split on `。！？!?`, on `.` not followed by a digit (so `21.10` stays whole)
 * and on line breaks; lower-cased, inner whitespace collapsed, surrounding punctuation trimmed;
 * sentences without a letter are dropped.
 */
export function sentences(text: string): string[] {
  return text
    .split(/[。！？!?\n]+|\.(?!\d)/)
    .map((s) => trimPunctuation(s.toLowerCase().replace(/\s+/g, ' ')))
    .filter((s) => /\p{L}/u.test(s));
}

/** Sentences that occur `min` (default 3) or more times in one text, each once, in order. */
export function repeatedSentences(text: string, min = 3): string[] {
  const count = new Map<string, number>();
  for (const s of sentences(text)) count.set(s, (count.get(s) ?? 0) + 1);
  return [...count].filter(([, n]) => n >= min).map(([s]) => s);
}

/** Punctuation and symbols that ordinary English or Chinese speech text may contain. */
const ORDINARY =
  /[\p{L}\p{M}\p{N}\s!-/:-@[-`{-~。，、；：？！“”‘’（）《》〈〉【】「」『』…—–·～￥¥€£％＋－＝／＆＠＃]/u;

/** Share of odd characters above which a text counts as garbled (with at least {@link MIN_ODD} of them). */
export const ODD_SHARE = 0.25;
/** Fewest odd characters that can make a text garbled (one stray emoji is not). */
export const MIN_ODD = 3;
/** Length of a run of one character (not a digit or whitespace) that counts as garbled. */
export const RUN_LENGTH = 8;

const RUN = new RegExp(`([^\\s\\d])\\1{${RUN_LENGTH - 1},}`, 'u');
/**
 * Printable ASCII and ASCII whitespace only: every such character is whitespace or in
 * {@link ORDINARY}, and none is U+FFFD, so only a run can make the text garbled.
 */
const PLAIN_ASCII = /^[\x20-\x7e\t\n\v\f\r]*$/;

/**
 * Signs of garbled output: the replacement character U+FFFD; a run of {@link RUN_LENGTH} or more
 * of the same character (digits and whitespace excepted: `13800000000` is a phone number); a
 * share above {@link ODD_SHARE} of non-space characters that are neither letters, CJK, digits
 * nor ordinary punctuation (emoji, box drawing, control characters, private use). Returns
 * descriptions, empty for clean text.
 */
export function garbledSigns(text: string): string[] {
  const out: string[] = [];
  if (text.includes('\uFFFD')) out.push('replacement character U+FFFD');
  const run = RUN.exec(text);
  if (run) out.push(`run of ${JSON.stringify(run[1])} ×${[...run[0]].length}`);
  if (PLAIN_ASCII.test(text)) return out;
  const chars = [...text].filter((c) => !/\s/u.test(c));
  const odd = chars.filter((c) => !ORDINARY.test(c)).length;
  if (odd >= MIN_ODD && odd / chars.length > ODD_SHARE) out.push(`${odd} of ${chars.length} characters are not speech`);
  return out;
}

/** Shortest reply (in characters, after normalization) whose verbatim repetition is a failure. */
export const MIN_REPEATED_TURN = 12;

/** Whether `s` has at least `n` code points (without spreading it: a code point is 1 or 2 UTF-16 units). */
function hasCodePoints(s: string, n: number): boolean {
  if (s.length < n) return false;
  if (s.length >= 2 * n) return true;
  let count = 0;
  for (const _ of s) if (++count >= n) return true;
  return false;
}

/**
 * Replies repeated verbatim across an episode: for each turn that is the `min`-th (default 3)
 * or later occurrence of the same normalized text (lower-cased, whitespace collapsed) of at
 * least {@link MIN_REPEATED_TURN} characters, that turn and the turns that said it before.
 */
export function repeatedTurns(texts: readonly IndexedText[], min = 3): { turn: number; earlier: number[] }[] {
  const seen = new Map<string, number[]>();
  const out: { turn: number; earlier: number[] }[] = [];
  for (const { index, text } of texts) {
    const norm = text.toLowerCase().replace(/\s+/g, ' ').trim();
    if (!hasCodePoints(norm, MIN_REPEATED_TURN)) continue;
    const earlier = seen.get(norm) ?? [];
    if (earlier.length + 1 >= min) out.push({ turn: index, earlier: [...earlier] });
    seen.set(norm, [...earlier, index]);
  }
  return out;
}

/**
 * Every quality finding of the assistant's turns, by turn: formatting, repetition and garbled
 * text in the spoken text (reasoning and stop tokens removed); `oversize` for a reply over the
 * cap ({@link MAX_REPLY_CHARS}; its turn is marked `oversize` and holds the first part only);
 * `capped` for a streamed reply stopped at a response limit (the turn's `capped`: a realtime
 * agent's runaway response, cut and cancelled);
 * `truncated` for a turn whose generation ended at the token limit (`finish_reason` `length`).
 */
export function qualityFindings(turns: readonly Turn[]): QualityFinding[] {
  const texts = textTurns(turns, 'assistant');
  const out: QualityFinding[] = [];
  turns.forEach((t, index) => {
    if (t.role === 'assistant' && t.oversize) {
      out.push({ turn: index, rule: 'oversize', detail: `reply of ${t.oversize} characters, over ${MAX_REPLY_CHARS}` });
    }
    if (t.role === 'assistant' && t.capped)
      out.push({
        turn: index,
        rule: 'capped',
        detail: `response stopped at the ${t.capped.limit} limit of ${t.capped.max} (response.cancel sent; ended: ${t.capped.ended})`,
      });
  });
  for (const { index, text } of texts) {
    const marks = formattingMarks(text);
    if (marks.length) out.push({ turn: index, rule: 'formatting', detail: marks.join(', ') });
    const repeated = repeatedSentences(text);
    if (repeated.length) {
      out.push({
        turn: index,
        rule: 'repetition',
        detail: repeated.map((s) => `${JSON.stringify(s)} said 3+ times`).join(', '),
      });
    }
    const garbled = garbledSigns(text);
    if (garbled.length) out.push({ turn: index, rule: 'garbled', detail: garbled.join(', ') });
  }
  // A reply the model could not finish (cut at the token limit): half a sentence, bare JSON or
  // half a tool call, whatever its text looks like.
  turns.forEach((t, index) => {
    if (t.role === 'assistant' && t.generation?.finish_reason === 'length')
      out.push({ turn: index, rule: 'truncated', detail: 'cut at the token limit (finish_reason "length")' });
  });
  for (const r of repeatedTurns(texts)) {
    out.push({ turn: r.turn, rule: 'repetition', detail: `same reply as turns ${r.earlier.join(', ')}` });
  }
  return out.sort((a, b) => a.turn - b.turn);
}

/**
 * Score `QUALITY`: 1 when no assistant text turn breaks a rule, else 0 with one detail per
 * finding: `turn 5: formatting (bold/italic, bullet list)`.
 */
export function scoreQuality(turns: readonly Turn[]): ComponentResult {
  const findings = qualityFindings(turns);
  return passFail(
    findings.length === 0,
    findings.map((f) => `turn ${f.turn}: ${f.rule} (${f.detail})`),
  );
}

/**
 * What of a participant's raw text is speech. Two things are taken out before anything is
 * delivered, spoken (TTS), scored or checked for quality:
 * - reasoning: `<think>…</think>` blocks (an unterminated `<think>` runs to the end: a reply cut
 *   at the token limit; a `</think>` without an opening tag ends reasoning that started with the
 *   reply, as chat templates that open the block in the prompt produce);
 * - the simulator's stop tokens (`###STOP###`, `###TRANSFER###`, `###OUT-OF-SCOPE###`, from
 *   tau2-bench's user simulator), matched case-insensitively, with spaces inside (`### stop
 *   ###`, `###OUT OF SCOPE###`) and with markdown wrapped around them (`**###STOP###**`,
 *   `` `###STOP###` ``). A token inside reasoning is not a token: it never ends an episode.
 *
 * Everything here is a linear scan (`indexOf` loops and one regular expression without nested
 * quantifiers).
 */
import type { STOP_TOKENS } from './types.ts';

/** The kind of stop token, a key of {@link STOP_TOKENS}. */
export type StopTokenKind = keyof typeof STOP_TOKENS;

const OPEN = '<think>';
const CLOSE = '</think>';

/**
 * Split reasoning off a text: `text` without `<think>…</think>` blocks (trimmed), and the
 * reasoning (the blocks' insides joined by a blank line; null when there was none).
 */
export function splitReasoning(raw: string): { text: string; reasoning: string | null } {
  if (!raw.includes('<think') && !raw.includes(CLOSE)) return { text: raw, reasoning: null };
  const thoughts: string[] = [];
  let rest = raw;
  const firstClose = rest.indexOf(CLOSE);
  const firstOpen = rest.indexOf(OPEN);
  if (firstClose >= 0 && (firstOpen < 0 || firstClose < firstOpen)) {
    thoughts.push(rest.slice(0, firstClose));
    rest = rest.slice(firstClose + CLOSE.length);
  }
  let out = '';
  for (;;) {
    const open = rest.indexOf(OPEN);
    if (open < 0) {
      out += rest;
      break;
    }
    out += rest.slice(0, open);
    const close = rest.indexOf(CLOSE, open + OPEN.length);
    if (close < 0) {
      thoughts.push(rest.slice(open + OPEN.length));
      break;
    }
    thoughts.push(rest.slice(open + OPEN.length, close));
    rest = rest.slice(close + CLOSE.length);
  }
  const reasoning = thoughts
    .map((t) => t.trim())
    .filter(Boolean)
    .join('\n\n');
  return { text: out.trim(), reasoning: reasoning || null };
}

/** The core of a stop token: three `#`, the word(s), three `#`; spaces allowed inside. */
const TOKEN = /###[ \t]*(stop|transfer|out[ \t_-]{0,3}of[ \t_-]{0,3}scope)[ \t]*###/i;
const MARKDOWN = '*_`~';

/** One stop token found in a text: where it starts and ends (markdown around it included). */
export interface StopTokenMatch {
  kind: StopTokenKind;
  start: number;
  end: number;
}

const KIND: Record<string, StopTokenKind> = { stop: 'stop', transfer: 'transfer' };

/** The first stop token in `text` (not looking inside reasoning: split that off first), or null. */
export function findStopToken(text: string): StopTokenMatch | null {
  const m = TOKEN.exec(text);
  if (!m) return null;
  let start = m.index;
  let end = m.index + m[0].length;
  while (start > 0 && MARKDOWN.includes(text[start - 1]!)) start--;
  while (end < text.length && MARKDOWN.includes(text[end]!)) end++;
  return { kind: KIND[m[1]!.toLowerCase()] ?? 'outOfScope', start, end };
}

/**
 * Split a stop token off a participant's text: the text before it (trimmed) is still delivered;
 * anything after it is dropped. Reasoning is not looked at: split it off first
 * ({@link splitReasoning}, or {@link visibleReply}).
 */
export function splitStopToken(text: string): { text: string; token: StopTokenKind | null } {
  const m = findStopToken(text);
  return m ? { text: text.slice(0, m.start).trim(), token: m.kind } : { text, token: null };
}

/** Remove every stop token (with the markdown around it) from a text, trimmed. */
export function stripStopTokens(text: string): string {
  let out = '';
  let rest = text;
  for (let m = findStopToken(rest); m; m = findStopToken(rest)) {
    out += rest.slice(0, m.start);
    rest = rest.slice(m.end);
  }
  return (out + rest).trim();
}

/**
 * What a participant's raw reply text delivers: reasoning split off, then the stop token (a
 * token inside reasoning does not count).
 */
export function visibleReply(raw: string): { text: string; token: StopTokenKind | null; reasoning: string | null } {
  const { text, reasoning } = splitReasoning(raw);
  return { ...splitStopToken(text), reasoning };
}

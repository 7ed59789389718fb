/**
 * Cutting an utterance's text: tokens (words, digit runs, single Han characters), seeded cut
 * points at word boundaries or inside a word, and the token helpers the reaction checks share.
 */
import type { Rng } from '../ports/rng.ts';
import { trimPunctuation } from '../text/scan.ts';

/** One token of an utterance: its text and its span in code units `[start, end)`. */
export interface TextToken {
  text: string;
  start: number;
  end: number;
}

/**
 * Tokens of `text`: runs of Latin letters (with inner apostrophes and hyphens), runs of digits,
 * and single Han characters (Mandarin has no spaces; one character is one syllable).
 */
export function tokenize(text: string): TextToken[] {
  const out: TextToken[] = [];
  for (const m of text.matchAll(/\p{Script=Han}|\p{N}+|[\p{L}\p{M}]+(?:['’-][\p{L}\p{M}]+)*/gu)) {
    out.push({ text: m[0], start: m.index, end: m.index + m[0].length });
  }
  return out;
}

/** Lower-case token texts (for comparisons). */
export function tokenTexts(text: string): string[] {
  return tokenize(text).map((t) => t.text.toLowerCase());
}

/** A cut in a text. */
export interface TextCut {
  /** Cut position in code units: the heard part is `text.slice(0, char)`. */
  char: number;
  mode: 'word' | 'mid_word';
  /** The heard part, trailing spaces and punctuation removed. */
  heard: string;
}

/** Settings of {@link pickDropoutCut}. */
export interface DropoutCutOptions {
  /**
   * Share of the tokens heard, drawn uniformly from this range (ours: 0.25–0.85, so the caller
   * has said something and something is missing).
   */
  heardShare?: readonly [number, number];
  /** Probability of cutting inside a word when a word of ≥ 2 letters or digits is at the cut (ours: 0.3). */
  midWordProbability?: number;
}

/** Heard part of `text` up to `char`, without trailing spaces or punctuation. */
export function heardPart(text: string, char: number): string {
  return trimPunctuation(text.slice(0, char), 'end');
}

/**
 * A seeded dropout cut: after token k (word boundary) or inside token k+1 (mid-word), with k
 * drawn so that the heard share of tokens is in `heardShare`. Null when the text has fewer than
 * two tokens (nothing to cut).
 */
export function pickDropoutCut(text: string, rng: Rng, opts: DropoutCutOptions = {}): TextCut | null {
  const tokens = tokenize(text);
  if (tokens.length < 2) return null;
  const [lo, hi] = opts.heardShare ?? [0.25, 0.85];
  const share = lo + (hi - lo) * rng.next();
  // k tokens heard in full, 1 ≤ k ≤ n−1.
  const k = Math.min(tokens.length - 1, Math.max(1, Math.round(share * tokens.length)));
  const nextToken = tokens[k]!;
  const midWord =
    rng.next() < (opts.midWordProbability ?? 0.3) &&
    [...nextToken.text].length >= 2 &&
    !/\p{Script=Han}/u.test(nextToken.text);
  if (midWord) {
    const chars = [...nextToken.text];
    const inside = 1 + rng.int(chars.length - 1);
    const char = nextToken.start + chars.slice(0, inside).join('').length;
    return { char, mode: 'mid_word', heard: text.slice(0, char) };
  }
  const char = tokens[k - 1]!.end;
  return { char, mode: 'word', heard: heardPart(text, char) };
}

/** Word-boundary cut after token `k` (1-based count of heard tokens). */
export function cutAfterToken(text: string, k: number): TextCut {
  const tokens = tokenize(text);
  const t = tokens[Math.min(tokens.length, Math.max(1, k)) - 1];
  const char = t ? t.end : 0;
  return { char, mode: 'word', heard: heardPart(text, char) };
}

/** Share (0–1) of the n-grams of `a` that also occur in `b` (n shrinks for short `a`). */
export function ngramOverlap(a: readonly string[], b: readonly string[], n = 3): number {
  const size = Math.max(1, Math.min(n, a.length));
  if (a.length === 0) return 0;
  const grams = (x: readonly string[]) => {
    const out: string[] = [];
    for (let i = 0; i + size <= x.length; i++) out.push(x.slice(i, i + size).join('\u0001'));
    return out;
  };
  const inB = new Set(grams(b));
  const ga = grams(a);
  return ga.filter((g) => inB.has(g)).length / (ga.length || 1);
}

/** Digits-and-letters form of a value for matching (`138-0001` ~ `138 0001` ~ `1380001`). */
export function compactValue(text: string): string {
  return text.toLowerCase().replace(/[\s,，.。:：'’_-]/g, '');
}

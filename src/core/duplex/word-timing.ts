/**
 * Word end times of synthesized speech, for cutting what the caller heard when the agent yields
 * (issue 17). espeak-ng's program (Debian's, and the WebAssembly build the page uses) reports no
 * word timings, so the end of word k is measured on the synthesis itself: the text up to and
 * including word k, spoken alone, trimmed to its end of speech. Spoken alone, a clause ends
 * later than the same words mid-sentence (final lengthening: measured ~170 ms, up to 465 ms, in
 * English), so this end is an upper bound of the word's end inside the whole reply, and every
 * word counted as said was said whole.
 */
import type { TextToken } from '../channel/text-cut.ts';

/**
 * Length in samples of the speech of `prefix` spoken alone (trimmed to its end of speech).
 * Callers pass their own TTS and voice.
 */
export type PrefixSpeech = (prefix: string) => Promise<number>;

/** The words said by a cut: how many, and the end (samples) of each word measured on the way. */
export interface WordsSaid {
  /** Tokens said whole: the largest k (0 ≤ k ≤ n) whose end is at or before the cut. */
  k: number;
  /** End of speech (samples) of tokens 1..k spoken alone, for each k measured (k ≥ 1). */
  ends: ReadonlyMap<number, number>;
}

/**
 * The tokens of `text` said whole within its first `cut` samples of speech: the largest k with
 * end(k) ≤ `cut`, end(k) = `speech(text.slice(0, tokens[k − 1].end))` (0 for k = 0). Binary search
 * over k, so ⌈log2(n + 1)⌉ syntheses for n tokens; it takes end(k) to grow with k (a longer
 * prefix is longer speech), which holds for any TTS that speaks every word it is given.
 * @param tokens `tokenize(text)` (see `../channel/text-cut.ts`).
 */
export async function wordsSaidWithin(
  text: string,
  tokens: readonly TextToken[],
  cut: number,
  speech: PrefixSpeech,
): Promise<WordsSaid> {
  const ends = new Map<number, number>();
  let lo = 0;
  let hi = tokens.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const end = await speech(text.slice(0, tokens[mid - 1]!.end));
    ends.set(mid, end);
    if (end <= cut) lo = mid;
    else hi = mid - 1;
  }
  return { k: lo, ends };
}

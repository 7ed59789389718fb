/**
 * Text checks on adversarial input (issue 11): every check that runs on model or caller text is
 * fed each string of the adversarial corpus (test/fixtures/attacks/strings/) at 1 MB, once, and
 * the slowest input is printed with its time. Linear checks take well under a second per MB; the
 * quadratic patterns they replaced took minutes. In an episode a reply is first cut to
 * `MAX_REPLY_CHARS` (16,000 characters), so these sizes are far beyond what a check sees there.
 */
import { ADVERSARIAL_STRINGS } from '../test/fixtures/attacks/strings/adversarial.ts';
import { heardPart, tokenize, compactValue } from '../src/core/channel/text-cut.ts';
import { parseTextToolCalls, replyToolCalls } from '../src/core/participants/model-tool-calls.ts';
import { statedValues } from '../src/core/participants/model-user.ts';
import { normalizeReply } from '../src/core/rollout/normalize.ts';
import { normalizeForCommunicate } from '../src/core/scoring/communicate.ts';
import { asksForConfirmation, classifyDialogueAct, isAgreement } from '../src/core/scoring/dialogue-acts.ts';
import { statedNumbers } from '../src/core/scoring/spoken-numbers.ts';
import { formattingMarks, garbledSigns, repeatedSentences } from '../src/core/scoring/quality.ts';
import { spokenText } from '../src/core/scoring/turns.ts';
import { splitStopToken } from '../src/core/rollout/episode.ts';
import { splitReasoning } from '../src/core/participants/reply-text.ts';

/** Every text check that sees model or caller text, by name. */
export const TEXT_CHECKS: readonly (readonly [string, (text: string) => unknown])[] = [
  ['quality: formatting marks', formattingMarks],
  ['quality: repeated sentences', repeatedSentences],
  ['quality: garbled signs', garbledSigns],
  ['caller fact check: stated values', statedValues],
  ['dialogue acts: agreement', isAgreement],
  ['dialogue acts: classify', (t) => classifyDialogueAct(t)],
  ['spoken numbers (consent, communicate)', statedNumbers],
  ['dialogue acts: asks for confirmation', asksForConfirmation],
  ['channel: tokenize', tokenize],
  ['channel: heard part', (t) => heardPart(t, t.length)],
  ['channel: compact value', compactValue],
  ['tool calls in text', (t) => replyToolCalls(parseTextToolCalls(t).calls)],
  ['communicate: normalize', normalizeForCommunicate],
  ['stop tokens', (t) => splitStopToken(spokenText(t))],
  ['episode: normalize reply (cap)', (t) => normalizeReply({ text: t }, 0)],
  ['model reply: reasoning split', splitReasoning],
];

/** Size fed to every check, in UTF-16 code units. */
export const ADVERSARIAL_SIZE = 1 << 20;

/** Slowest time (ms) of one check over the corpus, and the string that took it. */
export function measureTextChecks(size = ADVERSARIAL_SIZE): { check: string; worstMs: number; input: string }[] {
  const inputs = ADVERSARIAL_STRINGS.map((a) => [a.name, a.build(size)] as const);
  return TEXT_CHECKS.map(([check, fn]) => {
    let worstMs = 0;
    let input = '';
    for (const [name, text] of inputs) {
      const t0 = performance.now();
      fn(text);
      const ms = performance.now() - t0;
      if (ms > worstMs) [worstMs, input] = [ms, name];
    }
    return { check, worstMs, input };
  });
}

/** Target for one 1 MB input (ms): linear checks are far below it, quadratic ones far above. */
export const TEXT_CHECK_TARGET_MS = 5000;

/** The table `npm run bench` prints. */
export function formatTextChecks(rows: ReturnType<typeof measureTextChecks>): string {
  return rows
    .map(
      (r) =>
        `  ${r.check.padEnd(40)} worst ${r.worstMs.toFixed(1).padStart(8)} ms  (${r.input.padEnd(20)})  target ≤ ${TEXT_CHECK_TARGET_MS} ms  ratio ${(r.worstMs / TEXT_CHECK_TARGET_MS).toFixed(3)}`,
    )
    .join('\n');
}

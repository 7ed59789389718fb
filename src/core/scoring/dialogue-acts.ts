/**
 * Lexical recognizers of two dialogue acts the `confirm_before_write` check needs: the agent
 * asking for confirmation, and the caller agreeing. English and Mandarin. Pure functions of the
 * text; deliberately conservative (an unclear reply is not an agreement).
 */

/** Cues of a confirmation request besides a question mark (lower-case). */
const CONFIRM_CUES = [
  '确认',
  '是否',
  '可以吗',
  '好吗',
  '行吗',
  '对吗',
  '要不要',
  '需要我',
  'confirm',
  'shall i',
  'should i',
  'would you like',
  'do you want',
  'ok to',
  'okay to',
  'go ahead',
  'proceed',
];

/**
 * True when the agent's text asks for confirmation: it contains a question mark (`?` or `？`) or
 * a cue such as 确认 / 是否 / 可以吗 / confirm / shall I / would you like / OK to.
 */
export function asksForConfirmation(text: string): boolean {
  const t = text.toLowerCase();
  return /[?？]/.test(t) || CONFIRM_CUES.some((cue) => t.includes(cue));
}

/** Hesitation fillers dropped from the start of a reply ("um, yeah" agrees). */
const FILLERS = /^(?:(?:um+|uh+|er+|well|oh|ah|so|呃|啊)(?![a-z])[\s,，.。…]*)+/;
/** Agreement at the start of the first clause. */
const AGREE_EN =
  /^(?:yes|yeah|yep|yup|sure|ok|okay|alright|all right|right|correct|exactly|absolutely|definitely|of course|please do|please go ahead|go ahead|do it|sounds good|that'?s (?:right|correct|fine|good)|i (?:confirm|agree)|confirmed|fine)\b/;
// 好像 (seems), 是这样 (here's the thing), 对了 (by the way) … start a clause without agreeing.
const AGREE_ZH =
  /^(?:好(?!像|久|多)|行|可以|是(?!这样|那样|谁|什么|哪)|对(?!了)|嗯|确认|确定|同意|没问题|没错|ok|麻烦)/;

/** Positive phrases that contain a negation word; removed before looking for negations. */
const POSITIVE_WITH_NEGATION = /no problem|not a problem|no worries|why not|没问题|没错|不错|不客气/g;
const NEGATION_EN = /\b(?:no|nope|nah|not|don'?t|do not|never|wait|hold on|cancel|stop)\b/;
const NEGATION_ZH = /[不别没]|等一下|等等|取消|算了/;

/** Sentence-final particles or marks that make the caller's clause a question. */
const QUESTION_END = /(?:[?？]|[吗呢么]\s*[。.!！]?)$/;

/**
 * True when the caller's text agrees: its first clause (up to the first `,，.。!！?？;；`) starts
 * (after fillers such as "um", "well", 呃) with an agreement (yes / sure / OK / go ahead / 好的 / 是的 / 确认 / 可以 / 对 / 行 …), is not
 * itself a question ("可以帮我交一下吗？"), and the text has no negation or hold-off ("no",
 * "don't", "wait", "cancel", 不, 别, 等一下, 取消, 算了; "no problem" and 没问题 are positive).
 */
export function isAgreement(text: string): boolean {
  const t = text.toLowerCase().trim().replace(FILLERS, '');
  const clauseEnd = t.search(/[,，.。!！?？;；]/);
  const first = (clauseEnd < 0 ? t : t.slice(0, clauseEnd + 1)).trim();
  const firstBare = first.replace(/[,，.。!！;；]$/, '').trim();
  if (!AGREE_EN.test(firstBare) && !AGREE_ZH.test(firstBare)) return false;
  if (QUESTION_END.test(first)) return false;
  const rest = t.replace(POSITIVE_WITH_NEGATION, ' ');
  return !NEGATION_EN.test(rest) && !NEGATION_ZH.test(rest);
}

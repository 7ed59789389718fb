/**
 * Checks that the token data an endpoint returned for one completion lines up before a trainer
 * gets it (issue 14). vLLM's `return_token_ids` gives `prompt_token_ids` and the choice's
 * `token_ids`, and `logprobs: true` gives one `logprobs.content[]` entry per generated token
 * (vLLM's OpenAI server, `ChatCompletionResponse`); a trainer computes its importance ratio and
 * loss mask from exactly these arrays, so arrays that do not line up are never passed on: the
 * turn's tokens become unavailable and the reason is kept.
 */

/** Token data of one completion as the endpoint returned it. */
export interface TokenData {
  /** Generated token ids, or null. */
  token_ids: number[] | null;
  /** Prompt token ids, or null. */
  prompt_token_ids: number[] | null;
  /** Natural-log probability per generated token, or null. */
  logprobs: number[] | null;
}

/**
 * Why token data cannot be used as it is, or null when it lines up (or there is none at all).
 * Refused: an empty prompt or generation (a prompt always has tokens, and a completion has at
 * least its stop token); a negative or non-integer id; logprobs whose count differs from the
 * generated ids; a logprob above 0 or not finite (a probability above 1). With `pair`, also prompt
 * ids without generated ids or the reverse (a loss mask needs both). Logprobs alone (no ids, as
 * OpenAI gives them) are no token data.
 */
export function tokenDataIssue(d: TokenData, opts: { pair?: boolean } = {}): string | null {
  const { token_ids: ids, prompt_token_ids: prompt, logprobs } = d;
  if (opts.pair && !ids && prompt) return `prompt_token_ids (${prompt.length}) came without token_ids`;
  if (opts.pair && ids && !prompt) return `token_ids (${ids.length}) came without prompt_token_ids`;
  if (prompt?.length === 0) return 'prompt_token_ids is empty';
  if (ids?.length === 0) return 'token_ids is empty';
  const badId = [...(prompt ?? []), ...(ids ?? [])].find((n) => !Number.isSafeInteger(n) || n < 0);
  if (badId !== undefined) return `token id ${badId} is not a non-negative integer`;
  if (ids && logprobs) {
    if (logprobs.length !== ids.length)
      return `${ids.length} token_ids but ${logprobs.length} logprobs (one per generated token expected)`;
    const badLp = logprobs.find((x) => !Number.isFinite(x) || x > 0);
    if (badLp !== undefined) return `logprob ${badLp} is not a log-probability (finite, at most 0)`;
  }
  return null;
}

/**
 * Token data a trainer may use: as returned when it lines up ({@link tokenDataIssue}); otherwise
 * ids and logprobs all null and `token_warning` saying why (with the lengths received).
 */
export function checkedTokenData(
  d: TokenData,
  opts: { pair?: boolean } = {},
): TokenData & { token_warning: string | null } {
  const issue = tokenDataIssue(d, opts);
  if (!issue)
    return { token_ids: d.token_ids, prompt_token_ids: d.prompt_token_ids, logprobs: d.logprobs, token_warning: null };
  return {
    token_ids: null,
    prompt_token_ids: null,
    logprobs: null,
    token_warning: `token data does not line up, dropped: ${issue}`,
  };
}

import { describe, expect, it } from 'vitest';
import { checkedTokenData, tokenDataIssue } from '../../src/core/participants/token-check.ts';
import { responseFromBody, StreamAssembler } from '../../src/adapters/shared/openai-wire.ts';
import { chunk, completion } from '../fixtures/openai-server.ts';

const ok = { prompt_token_ids: [1, 2, 3], token_ids: [4, 5], logprobs: [-0.1, -0.2] };

describe('token data that does not line up', () => {
  it('names each inconsistency, and passes data that lines up (or none) as it is', () => {
    const cases: [Record<string, unknown>, string | null][] = [
      [{}, null],
      [
        { prompt_token_ids: [1, 2, 3], token_ids: [4, 5, 6], logprobs: [-0.1] },
        '3 token_ids but 1 logprobs (one per generated token expected)',
      ],
      [{ logprobs: null }, null],
      [{ token_ids: null }, null],
      [{ prompt_token_ids: null }, null],
      [{ prompt_token_ids: [] }, 'prompt_token_ids is empty'],
      [{ token_ids: [], logprobs: [] }, 'token_ids is empty'],
      [{ token_ids: [4, -5] }, 'token id -5 is not a non-negative integer'],
      [{ logprobs: [-0.1, 0.3] }, 'logprob 0.3 is not a log-probability (finite, at most 0)'],
    ];
    for (const [change, issue] of cases) {
      const d = { ...ok, ...change } as Parameters<typeof tokenDataIssue>[0];
      expect(tokenDataIssue(d), JSON.stringify(change)).toBe(issue);
    }
    expect(tokenDataIssue({ prompt_token_ids: null, token_ids: null, logprobs: null }, { pair: true })).toBeNull();
    // In pairs (a loss mask needs both): one without the other is refused.
    expect(tokenDataIssue({ ...ok, token_ids: null, logprobs: null }, { pair: true })).toBe(
      'prompt_token_ids (3) came without token_ids',
    );
    expect(tokenDataIssue({ ...ok, prompt_token_ids: null }, { pair: true })).toBe(
      'token_ids (2) came without prompt_token_ids',
    );
    expect(checkedTokenData(ok)).toEqual({ ...ok, token_warning: null });
    expect(checkedTokenData({ ...ok, logprobs: [-0.1] })).toEqual({
      prompt_token_ids: null,
      token_ids: null,
      logprobs: null,
      token_warning:
        'token data does not line up, dropped: 2 token_ids but 1 logprobs (one per generated token expected)',
    });
  });

  it('a completion whose arrays do not line up reaches the agent with no token data and the reason', () => {
    const body = completion({
      model: 'm',
      content: 'hi',
      prompt_token_ids: [1, 2, 3],
      token_ids: [4, 5, 6],
      logprobs: [-0.1],
    });
    const res = responseFromBody(body, 'vllm', 1);
    expect([res.prompt_token_ids, res.token_ids, res.logprobs, res.token_warning]).toEqual([
      null,
      null,
      null,
      'token data does not line up, dropped: 3 token_ids but 1 logprobs (one per generated token expected)',
    ]);
    // A logprob entry without a number is one logprob short, not skipped quietly.
    const holes = completion({
      model: 'm',
      content: 'hi',
      prompt_token_ids: [1],
      token_ids: [4, 5],
      logprobs: [-0.1, -0.2],
    });
    (holes.choices[0]!.logprobs!.content[1] as { logprob: unknown }).logprob = null;
    expect(responseFromBody(holes, 'vllm', 1).token_warning).toBe(
      'token data does not line up, dropped: 2 token_ids but 1 logprobs (one per generated token expected)',
    );
    const fine = responseFromBody(
      completion({ model: 'm', content: 'hi', prompt_token_ids: [1], token_ids: [4, 5], logprobs: [-0.1, -0.2] }),
      'vllm',
      1,
    );
    expect([fine.prompt_token_ids, fine.token_ids, fine.logprobs, 'token_warning' in fine]).toEqual([
      [1],
      [4, 5],
      [-0.1, -0.2],
      false,
    ]);
    // Streamed: ids and logprobs joined over the chunks, then checked.
    const s = new StreamAssembler('vllm');
    s.add(chunk('m', { content: 'h' }, { token_ids: [7], logprobs: [-1] }));
    s.add(chunk('m', { content: 'i' }, { token_ids: [8, 9], logprobs: [-0.5], finish_reason: 'stop' }));
    expect(s.result(1).token_warning).toBe(
      'token data does not line up, dropped: 3 token_ids but 2 logprobs (one per generated token expected)',
    );
  });
});

/**
 * Rollout threads against a misbehaving chat endpoint (issue 15 QA): whatever the endpoint does to
 * a request (server errors, a body cut mid-object, 429 with Retry-After 0, an unknown tool with
 * arguments that are not JSON, 200 tool calls in one reply, a 1 MB reply) depends only on the
 * request and how often that same request was sent before, never on arrival order. Trials all in
 * the CLI's thread one at a time, and at `--concurrency 4` in two threads (the worker started
 * first), then give the same lines byte for byte, the same summary, and the same invalid attempts:
 * only the endpoint's faults make a rollout invalid.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scheduleTrials, trialSetup, type TrialFlags } from '../../src/cli/run-trials.ts';
import { runBatch, trialOrder } from '../../src/core/rollout/batch.ts';
import { mergeJsonlParts, removeJsonlParts } from '../../src/adapters/node/jsonl-parts.ts';
import {
  completion,
  httpError,
  startOpenAiServer,
  wireToolCall,
  type Reply,
  type TestServer,
} from '../fixtures/openai-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'sb-threads-endpoint-'));
let server: TestServer | undefined;
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const TASKS =
  'carrier-pay-balance-1,carrier-bill-inquiry-1,carrier-change-plan-1,carrier-dispute-recent-1,carrier-wallet-pay-1';

/**
 * The reply to a request, by the sha1 of its body only, so that it does not depend on which
 * rollout sent it first (inbound calls with the same seed open with the same request): every 11th
 * body always gets a 500 (with one retry, its rollout is invalid and resampled with another seed);
 * 3 in 8 get a fault the first time they are sent (a 500, a body cut mid-object, a 429 with
 * Retry-After 0), then the body's reply; the others get their reply at once. A reply is words, an
 * unknown tool with arguments that are not JSON, 200 calls of the first tool, or 1 MB of text.
 */
function misbehaving(faults: Record<string, number>): (body: unknown) => Reply {
  const seen = new Set<string>();
  const fault = (kind: string, reply: Reply) => {
    faults[kind] = (faults[kind] ?? 0) + 1;
    return reply;
  };
  return (body) => {
    const key = createHash('sha1').update(JSON.stringify(body)).digest('hex');
    const h = Number.parseInt(key.slice(0, 8), 16);
    const first = !seen.has(key);
    seen.add(key);
    if (h % 11 === 0) return fault('always 500', httpError(500, 'boom'));
    if (first && h % 8 === 0) return fault('500', httpError(500, 'boom'));
    if (first && h % 8 === 1)
      return fault('cut', { raw: '{"id":"x","choices":[{"message":{"role":"assistant"}}]}', cutAt: 20 });
    if (first && h % 8 === 2) return fault('429', httpError(429, 'slow down', { 'retry-after': '0' }));
    const model = 'm';
    const tool = (body as { tools: { function: { name: string } }[] }).tools[0]!.function.name;
    switch ((h >>> 3) % 5) {
      case 0:
        return {
          json: completion({ model, content: null, tool_calls: [wireToolCall(`u${h}`, 'no_such_tool', '{not json')] }),
        };
      case 1:
        return {
          json: completion({
            model,
            content: null,
            tool_calls: Array.from({ length: 200 }, (_, i) => wireToolCall(`b${h}_${i}`, tool, {})),
          }),
        };
      case 2:
        return { json: completion({ model, content: 'x'.repeat(1 << 20) }) };
      default:
        return { json: completion({ model, content: 'Sure, I can help. Anything else?' }) };
    }
  };
}

describe('rollout threads against a misbehaving endpoint', () => {
  it('one thread at --concurrency 1 and two at 4 give the same lines, summary and invalid attempts', async () => {
    const runs: { text: string; summary: unknown; threads: number; faults: Record<string, number> }[] = [];
    for (const [threads, concurrency] of [
      [1, 1],
      [2, 4],
    ] as const) {
      // A fresh endpoint each time: it remembers the requests it saw.
      await server?.close();
      const faults: Record<string, number> = {};
      const handler = misbehaving(faults);
      server = await startOpenAiServer((body) => handler(body));
      const flags: TrialFlags = {
        domain: 'carrier',
        taskIds: TASKS,
        agent: `openai:m@${server.url}`,
        user: 'scripted',
        seed: 7,
        modelRetries: 1,
      };
      const setup = await trialSetup(flags);
      const byKey = trialOrder(setup.tasks);
      const lines = join(dir, `t${threads}.jsonl`);
      const runner = scheduleTrials(setup.trial, flags, {
        threads,
        concurrency,
        trials: setup.tasks.length * 2,
        auto: false,
        lines,
      });
      try {
        await runner.started();
        const out = await runBatch({
          ...setup.trial,
          tasks: setup.tasks,
          trials: 2,
          concurrency: runner.slots,
          trialRunner: runner.runTrial,
        });
        await runner.close();
        const records = out.trajectories.sort(byKey);
        mergeJsonlParts(
          lines,
          records.map((r) => r.line!),
        );
        removeJsonlParts(lines);
        // The endpoint's address (a new port each time) is on every trajectory's agent card.
        const text = readFileSync(lines, 'utf8').replaceAll(server.url, 'ENDPOINT');
        runs.push({
          text,
          summary: JSON.parse(JSON.stringify(out.summary).replaceAll(server.url, 'ENDPOINT')),
          threads: runner.threads(),
          faults,
        });
        if (threads === 2) expect(new Set(records.map((r) => r.line!.part)).size).toBe(2);
      } finally {
        await setup.trial.runtime.close();
      }
    }
    const [one, two] = runs as [(typeof runs)[0], (typeof runs)[0]];
    expect([one.threads, two.threads]).toEqual([1, 2]);
    expect(two.text).toBe(one.text);
    expect(two.summary).toEqual(one.summary);
    const trajectories = one.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const tally: Record<string, number> = {};
    for (const t of trajectories) {
      const k = t.valid ? t.termination : `invalid: ${t.invalid_reason}`;
      tally[k] = (tally[k] ?? 0) + 1;
    }
    expect(tally).toEqual({
      too_many_errors: 8,
      user_stop: 2,
      'invalid: openai:m at ENDPOINT: HTTP 500: 500 boom (2 attempts)': 1,
    });
    // The endpoint's faults, the same in both runs; the replies the agent got.
    expect(two.faults).toEqual(one.faults);
    expect(one.faults).toEqual({ '429': 2, '500': 3, cut: 4, 'always 500': 2 });
    const replies: Record<string, number> = {};
    for (const t of trajectories)
      for (const x of t.turns) {
        if (x.role !== 'assistant') continue;
        const k = x.oversize
          ? `oversize ${x.oversize}`
          : x.tool_calls.length
            ? `${x.tool_calls.length} × ${x.tool_calls[0].name}`
            : x.text;
        replies[k] = (replies[k] ?? 0) + 1;
      }
    expect(replies).toEqual({
      'Sure, I can help. Anything else?': 9,
      '1 × no_such_tool': 6,
      '200 × find_customer_by_phone': 8,
      'oversize 1048576': 8,
    });
  }, 180_000);
});

/**
 * Issue 11: what a model can send does not stall, crash or void an episode. Replies over the
 * cap are cut and vetoed (agent) or a simulator failure (caller); tool arguments over the depth
 * or size limit become an error tool message and the episode goes on; a constraint the agent's
 * arguments break is the agent's tool error.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { startEnvServer, type EnvServer } from '../../src/adapters/node/env-server.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import type { Agent, ParticipantReply, UserSimulator } from '../../src/core/participants/types.ts';
import { steppingClock } from '../../src/core/ports/clock.ts';
import { runEpisode } from '../../src/core/rollout/episode.ts';
import {
  MAX_ARGUMENT_CHARS,
  MAX_ARGUMENT_DEPTH,
  MAX_REPLY_CHARS,
  argumentsProblem,
  cutAtCodePoint,
} from '../../src/core/rollout/limits.ts';
import { clip, normalizeReply } from '../../src/core/rollout/normalize.ts';
import { parseTextToolCalls, replyToolCalls } from '../../src/core/participants/model-tool-calls.ts';
import { evaluate } from '../../src/core/scoring/evaluate.ts';
import { Trajectory } from '../../src/core/schema/trajectory.ts';
import { ADVERSARIAL_STRINGS } from '../fixtures/attacks/strings/adversarial.ts';

let runtime: DomainRuntime;
beforeAll(async () => {
  runtime = await DomainRuntime.create(await loadBuiltinDomain('carrier'), await sqlJsFactory());
});

/** `{"a": {"a": … 1}}` nested `levels` deep (the outer object is level 1). */
function nested(levels: number): Record<string, unknown> {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v as Record<string, unknown>;
}

/** The same as JSON text, built without JSON.stringify (which overflows the stack at this depth). */
function nestedText(levels: number): string {
  return `${'{"a":'.repeat(levels - 1)}{"a":1}${'}'.repeat(levels - 1)}`;
}

/** An agent that plays `replies` in order, then says goodbye with the stop token. */
function playing(replies: ParticipantReply[]): Agent {
  let i = 0;
  return { id: 'attacker', respond: async () => replies[i++] ?? { text: 'Goodbye. ###STOP###' } };
}

const task = () => runtime.domain.tasks.find((t) => t.id === 'carrier-pay-balance-1')!;

async function episode(agent: Agent, user: UserSimulator = new ScriptedUser()) {
  return runEpisode({ runtime, task: task(), agent, user, seed: 1, clock: steppingClock(runtime.domain.now, 1000) });
}

describe('argument limits', () => {
  it('measures depth and size without recursion and names the limit', () => {
    expect(argumentsProblem(nested(MAX_ARGUMENT_DEPTH))).toBeNull();
    expect(argumentsProblem({ list: [nested(MAX_ARGUMENT_DEPTH - 2)] })).toBeNull();
    expect(argumentsProblem({ list: [nested(MAX_ARGUMENT_DEPTH - 1)] })).toBe(
      `arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels`,
    );
    expect(argumentsProblem(nested(MAX_ARGUMENT_DEPTH + 1))).toBe(
      `arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels`,
    );
    expect(argumentsProblem(nested(5000))).toBe(`arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels`);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(argumentsProblem(cyclic)).toBe(`arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels`);
    // {"s":"…"}: braces 2, key with quotes, colon and separator 5, string quotes 2.
    expect(argumentsProblem({ s: 'x'.repeat(MAX_ARGUMENT_CHARS - 9) })).toBeNull();
    expect(argumentsProblem({ s: 'x'.repeat(MAX_ARGUMENT_CHARS - 8) })).toBe(
      `arguments over ${MAX_ARGUMENT_CHARS} characters of JSON`,
    );
    expect(argumentsProblem(new Array(MAX_ARGUMENT_CHARS).fill(0))).toBe(
      `arguments over ${MAX_ARGUMENT_CHARS} characters of JSON`,
    );
    expect(argumentsProblem('y'.repeat(MAX_ARGUMENT_CHARS + 1))).toBe(
      `arguments of ${MAX_ARGUMENT_CHARS + 1} characters are over the limit of ${MAX_ARGUMENT_CHARS}`,
    );
  });

  it('keeps a model text call with over-deep arguments as JSON text (written without recursion) the episode refuses and records', () => {
    const block = `<tool_call>{"name": "get_bills", "arguments": ${nestedText(5000)}}</tool_call>`;
    const { calls } = parseTextToolCalls(block);
    // The block's arguments as JSON text (JSON.stringify would throw at this depth).
    expect(calls[0]!.arguments).toBe(nestedText(5000));
    const reply = normalizeReply({ text: '', tool_calls: replyToolCalls(calls) }, 0);
    expect(reply.problems).toEqual([
      `invalid arguments for get_bills: arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels`,
    ]);
    expect(reply.calls[0]!.raw_arguments).toBe(calls[0]!.arguments);
    expect(reply.calls[0]!.arguments).toEqual({});
  });

  it('keeps over-limit arguments on the record: text verbatim, cut with a marker past the limit; values as bounded JSON', () => {
    const huge = `{"customer_id": "${'9'.repeat(40_000)}"}`;
    const r = normalizeReply(
      {
        text: '',
        tool_calls: [
          { id: 'a', name: 'get_bills', arguments: huge },
          { id: 'b', name: 'get_bills', arguments: { customer_id: 'x'.repeat(40_000) } },
          { id: 'c', name: 'get_bills', arguments: nested(5000) },
          { id: 'd', name: 'get_bills', arguments: '[1, 2]' },
        ],
      },
      0,
    );
    expect(r.problems).toEqual([
      `invalid arguments for get_bills: arguments of ${huge.length} characters are over the limit of ${MAX_ARGUMENT_CHARS}`,
      `invalid arguments for get_bills: arguments over ${MAX_ARGUMENT_CHARS} characters of JSON`,
      `invalid arguments for get_bills: arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels`,
      'invalid arguments for get_bills: expected an object, got an array: [1, 2]',
    ]);
    expect(r.calls.map((c) => c.arguments)).toEqual([{}, {}, {}, {}]);
    expect(r.calls[0]!.raw_arguments).toBe(
      `${huge.slice(0, MAX_ARGUMENT_CHARS)}…[cut: ${huge.length} characters in all]`,
    );
    expect(r.calls[1]!.raw_arguments).toBe(
      `${`{"customer_id":"${'x'.repeat(40_000)}"}`.slice(0, MAX_ARGUMENT_CHARS)}…[cut at ${MAX_ARGUMENT_CHARS} characters]`,
    );
    expect(r.calls[2]!.raw_arguments).toBe(nestedText(5000));
    expect(r.calls[3]!.raw_arguments).toBe('[1, 2]');
  });

  it('turns 5,000-level arguments (object or 10 KB JSON text) into error tool messages; the episode goes on and serializes', async () => {
    const text = nestedText(5000);
    expect(text.length).toBeGreaterThan(10_000);
    const t = await episode(
      playing([
        { text: '', tool_calls: [{ id: 'deep', name: 'get_bills', arguments: nested(5000) }] },
        { text: '', tool_calls: replyToolCalls([{ id: 'text', name: 'get_bills', arguments: text }]) as never },
        { text: '', tool_calls: [{ id: 'ok', name: 'get_bills', arguments: { customer_id: 'C1002' } }] },
      ]),
    );
    expect(t.valid).toBe(true);
    expect(t.termination).toBe('agent_stop');
    const tools = t.turns.flatMap((x) => (x.role === 'tool' ? [[x.tool_call_id, x.arguments, x.content]] : []));
    expect(tools.slice(0, 2)).toEqual([
      ['deep', {}, `Error: invalid arguments for get_bills: arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels`],
      ['text', {}, `Error: invalid arguments for get_bills: arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels`],
    ]);
    expect(tools[2]![2]).toMatch(/^\{"customer_id":"C1002","bills":\[\{"bill_id":"B10005"/);
    // The trajectory round-trips through JSON (what run --out and serve do with it).
    expect(Trajectory.parse(JSON.parse(JSON.stringify(t))).turns).toHaveLength(t.turns.length);
  });
});

describe('reply cap', () => {
  it('cuts a reply over the cap and reports its length', () => {
    const big = 'a'.repeat(1 << 20);
    const r = normalizeReply({ text: big }, 0);
    expect(r.text.length).toBe(MAX_REPLY_CHARS);
    expect(r.oversize).toBe(1 << 20);
    expect(normalizeReply({ text: 'a'.repeat(MAX_REPLY_CHARS) }, 0).oversize).toBeNull();
  });

  it('cuts on a code point boundary: a character beyond the BMP (emoji, CJK Extension B) across the cap is left out whole, never half a surrogate pair', () => {
    // 'a' then pairs: unit 16,000 is the first half of a pair.
    const text = `a${'😀𠀀'.repeat(MAX_REPLY_CHARS)}`;
    const r = normalizeReply({ text }, 0);
    expect([r.text.length, r.oversize]).toEqual([MAX_REPLY_CHARS - 1, 1 + 4 * MAX_REPLY_CHARS]);
    expect(r.text).toBe(text.slice(0, MAX_REPLY_CHARS - 1));
    expect([...r.text.slice(-2)]).toEqual(['😀']);
    expect(r.text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    // Pairs that end exactly at the cap are kept whole: 16,000 units.
    expect(normalizeReply({ text: '😀𠀀'.repeat(MAX_REPLY_CHARS) }, 0).text).toBe('😀𠀀'.repeat(MAX_REPLY_CHARS / 4));
    expect([cutAtCodePoint('a😀b', 2), cutAtCodePoint('a😀b', 3), cutAtCodePoint('a😀b', 9)]).toEqual([
      'a',
      'a😀',
      'a😀b',
    ]);
    expect(clip('xx𠀀yy', 3)).toBe('xx… (6 characters)');
  });

  it('a 1 MB agent reply of every adversarial kind is cut, recorded as oversize and vetoed by QUALITY', async () => {
    for (const kind of ADVERSARIAL_STRINGS.slice(0, 4)) {
      const text = kind.build(1 << 20);
      const t = await episode(playing([{ text }]));
      expect(t.valid, kind.name).toBe(true);
      const turn = t.turns[0]!;
      expect(turn.role === 'assistant' && [turn.text.length, turn.oversize], kind.name).toEqual([
        MAX_REPLY_CHARS,
        text.length,
      ]);
      const info = await evaluate(runtime, task(), t.turns, { termination: t.termination });
      expect(info.components.QUALITY?.score, kind.name).toBe(0);
      expect(info.components.QUALITY?.details?.[0], kind.name).toBe(
        `turn 0: oversize (reply of ${text.length} characters, over ${MAX_REPLY_CHARS})`,
      );
      expect(info.reward).toBe(0);
    }
  });

  it('a caller reply over the cap makes the episode invalid (simulator failure), not a score', async () => {
    const user: UserSimulator = { id: 'long-caller', respond: async () => ({ text: 'x'.repeat(MAX_REPLY_CHARS + 1) }) };
    const t = await episode(playing([{ text: 'Hello, how can I help?' }]), user);
    expect(t.valid).toBe(false);
    expect(t.invalid_reason).toBe(
      `simulator error: caller reply of ${MAX_REPLY_CHARS + 1} characters is over the limit of ${MAX_REPLY_CHARS}`,
    );
  });
});

describe('constraint violations caused by the agent', () => {
  it('an amount of 1e-9 that rounds to 0 and breaks a CHECK is the agent tool error, not an invalid rollout', async () => {
    const t = await episode(
      playing([
        {
          text: '',
          tool_calls: [
            {
              id: 'p',
              name: 'pay_bill_from_balance',
              arguments: { customer_id: 'C1002', bill_id: 'B10008', amount: 1e-9 },
            },
          ],
        },
      ]),
    );
    expect(t.valid).toBe(true);
    const tool = t.turns[1]!;
    expect(tool.role === 'tool' && [tool.content, tool.error, tool.writes]).toEqual([
      'Error: pay_bill_from_balance was refused by the database: CHECK constraint failed: amount_fen > 0',
      true,
      [],
    ]);
  });

  it('a missing foreign-key target is refused in every episode database, including restored snapshots', async () => {
    const env = await runtime.open(task());
    try {
      await expect(
        env.query(
          "INSERT INTO payments (payment_id, customer_id, bill_id, amount_fen, method, paid_at) VALUES ('PX', 'C1002', 'NOPE', 1, 'wallet', 'x')",
        ),
      ).rejects.toThrow('FOREIGN KEY constraint failed');
      const snap = await env.snapshot();
      await env.restore(snap);
      expect(await env.query('PRAGMA foreign_keys')).toEqual([{ foreign_keys: 1 }]);
    } finally {
      await env.close();
    }
  });
});

describe('serve after an attack', () => {
  let server: EnvServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('answers a 5,000-level tool call with an error tool message and keeps serving that episode', async () => {
    server = await startEnvServer({ runtime, user: () => new ScriptedUser() });
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${server!.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, doc: (await res.json()) as any };
    };
    const reset = await post('/reset', { task_id: task().id, seed: 1 });
    const id = reset.doc.episode_id as string;
    const step = await post('/step', {
      episode_id: id,
      message: {
        content: null,
        tool_calls: [{ id: 'deep', type: 'function', function: { name: 'get_bills', arguments: nestedText(5000) } }],
      },
    });
    expect(step.status).toBe(200);
    expect(step.doc.observation.turns.at(-1)).toMatchObject({
      role: 'tool',
      error: true,
      content: `Error: invalid arguments for get_bills: arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels`,
    });
    const state = await fetch(`${server.url}/state?episode_id=${id}`);
    expect(state.status).toBe(200);
    const next = await post('/step', { episode_id: id, message: { content: 'Could you give me your phone number?' } });
    expect(next.status).toBe(200);
  });
});

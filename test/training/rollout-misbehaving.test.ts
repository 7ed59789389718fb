/**
 * `switchboard rollout` and `export grpo` against a policy endpoint that misbehaves on purpose:
 * token arrays that do not line up, tool-call arguments that are JSON but not an object.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { STOP_TOKENS } from '../../src/core/participants/types.ts';
import { capture } from '../fixtures/cli-io.ts';
import {
  completion,
  startOpenAiServer,
  wireToolCall,
  type Handler,
  type TestServer,
} from '../fixtures/openai-server.ts';
import { fakePolicy } from '../fixtures/fake-policy.ts';
import { startOpenEnvServer } from '../../src/adapters/node/openenv-server.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';

const TASK = 'carrier-pay-balance-1';
let runtime: DomainRuntime;
const servers: TestServer[] = [];

beforeAll(async () => {
  runtime = await DomainRuntime.create(await loadBuiltinDomain('carrier'), await sqlJsFactory());
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function serve(handler: Handler): Promise<TestServer> {
  const s = await startOpenAiServer(handler);
  servers.push(s);
  return s;
}

/* eslint-disable @typescript-eslint/no-explicit-any */
const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

async function rollout(url: string, extra: string[] = [], at?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'sb-misbehave-'));
  const out = at ?? join(dir, 'groups.jsonl');
  const io = capture();
  const code = await main(
    [
      'rollout',
      '--domain',
      'carrier',
      '--endpoint',
      url,
      '--model',
      'carrier-lora',
      '--k',
      '2',
      '--task-ids',
      TASK,
      '--policy-version',
      'v1',
      '--out',
      out,
      ...extra,
    ],
    io,
  );
  return { code, io, out, dir };
}

const WARNING = 'token data does not line up, dropped: 3 token_ids but 1 logprobs (one per generated token expected)';

describe('rollout against an endpoint whose token arrays do not line up', () => {
  it('makes that turn’s tokens unavailable (all null) with the reason, keeps the others, says so, and exports nulls', async () => {
    const good = fakePolicy(runtime.domain, 'carrier-lora');
    const policy = await serve(async (body, i, req) => {
      const reply: any = await good(body, i, req);
      const k = body.messages.filter((m: any) => m.role === 'assistant').length;
      const choice = reply.json.choices[0];
      // First agent turn: three prompt ids, three generated ids, one logprob.
      if (k === 0) {
        reply.json.prompt_token_ids = [1, 2, 3];
        choice.token_ids = [4, 5, 6];
        choice.logprobs.content = [{ ...choice.logprobs.content[0], logprob: -0.1 }];
      }
      // Second: prompt ids and logprobs but no generated ids.
      if (k === 1) delete choice.token_ids;
      return reply;
    });
    const { code, io, out, dir } = await rollout(policy.url, ['--json']);
    expect(code).toBe(0);
    const [g] = lines(out);
    expect(g.samples.map((s: any) => [s.final_reward, s.turns.length > 2])).toEqual([
      [1, true],
      [0, false],
    ]);
    const unavailable = (warning: string) => ({
      tokens: 'unavailable',
      token_warning: warning,
      prompt_token_ids: null,
      completion_token_ids: null,
      logprobs: null,
      loss_mask: null,
    });
    const [s0, s1] = g.samples;
    // The hang-up sample: a greeting and a goodbye.
    expect(s1.turns).toHaveLength(2);
    for (const s of [s0, s1]) {
      expect(s.turns[0]).toMatchObject(unavailable(WARNING));
      expect(s.turns[1]).toMatchObject(
        unavailable(
          `token data does not line up, dropped: prompt_token_ids (${s.turns[1].request.messages.length}) came without token_ids`,
        ),
      );
    }
    s0.turns.slice(2).forEach((t: any, i: number) => {
      const k = i + 2;
      expect([t.tokens, t.token_warning, t.completion_token_ids, t.logprobs]).toEqual([
        'endpoint',
        null,
        [500 + k, 600 + k],
        [-0.25, -0.5],
      ]);
      expect(t.loss_mask).toEqual([...t.request.messages.map(() => 0), 1, 1]);
    });
    const summary = JSON.parse(io.stdout);
    expect([summary.token_ids, summary.token_warnings]).toEqual(['partial', 4]);
    expect(io.stderr).toContain(
      "warning: 4 agent turns came with token data that does not line up (e.g. fewer logprobs than token ids): their tokens are unavailable; each such turn's token_warning says why",
    );

    // Export: a turn without ids is null (not []), and the rows say how complete they are.
    const ex = capture();
    expect(await main(['export', 'grpo', out, '--out', join(dir, 'rows.jsonl')], ex)).toBe(0);
    expect(ex.stdout).toBe(
      `wrote 2 GRPO rows to ${join(dir, 'rows.jsonl')}; token ids partial: 0 of 2 samples have every turn's ids, 1 some (the others null), 1 none\n`,
    );
    const rows = lines(join(dir, 'rows.jsonl'));
    const later = s0.turns.slice(2).map((_: unknown, i: number) => [502 + i, 602 + i]);
    expect(rows.map((r: any) => [r.tokens, r.token_ids, r.logprobs])).toEqual([
      ['partial', [null, null, ...later], [null, null, ...later.map(() => [-0.25, -0.5])]],
      ['none', null, null],
    ]);
    // Parquet holds the same (JSON text per cell), TRL and verl report the same coverage.
    for (const [format, file] of [
      ['switchboard', 'rows.parquet'],
      ['trl', 'trl.jsonl'],
      ['verl', 'verl.parquet'],
    ]) {
      const e = capture();
      expect(await main(['export', 'grpo', out, '--format', format!, '--out', join(dir, file!), '--json'], e)).toBe(0);
      expect(JSON.parse(e.stdout).tokens).toEqual({ all: 0, partial: 1, none: 1 });
    }
    const back = await parquetReadObjects({ file: new Uint8Array(readFileSync(join(dir, 'rows.parquet'))).buffer });
    expect(back.map((r: any) => [r.tokens, JSON.parse(r.token_ids ?? 'null')])).toEqual([
      ['partial', [null, null, ...later]],
      ['none', null],
    ]);
  }, 60_000);
});

describe('tool-call arguments that are JSON but not an object', () => {
  it('stay verbatim in messages and later requests, answered by an error tool message', async () => {
    for (const args of ['null', '[1]', '3', '"x"']) {
      const policy = await serve((body) => {
        const k = body.messages.filter((m: any) => m.role === 'assistant').length;
        if (k === 0) return { json: completion({ model: 'carrier-lora', content: runtime.domain.greeting }) };
        if (k === 1)
          return {
            json: completion({
              model: 'carrier-lora',
              content: null,
              tool_calls: [wireToolCall('call_a', 'find_customer_by_phone', args)],
            }),
          };
        return { json: completion({ model: 'carrier-lora', content: `再见。${STOP_TOKENS.stop}` }) };
      });
      const { code, out, dir } = await rollout(policy.url, ['--flavor', 'openai']);
      expect(code, args).toBe(0); // both samples score 0: a flat group, written
      const [g] = lines(out);
      const s = g.samples[0];
      const call = s.messages.find((m: any) => m.role === 'assistant' && m.tool_calls);
      expect(call.tool_calls).toEqual([
        { id: 'call_a', type: 'function', function: { name: 'find_customer_by_phone', arguments: args } },
      ]);
      const answer = s.messages[s.messages.indexOf(call) + 1];
      expect(answer.role).toBe('tool');
      expect(answer.content).toMatch(/^Error: invalid arguments for find_customer_by_phone: expected an object, got /);
      // The next request sent the call as the model wrote it.
      const later = s.turns[2].request.messages.find((m: any) => m.tool_calls);
      expect(later.tool_calls[0].function.arguments).toBe(args);
      const sent = policy.requests.at(-1)!.body.messages.find((m: any) => m.tool_calls);
      expect(sent.tool_calls[0].function.arguments).toBe(args);
      // And the export keeps it.
      expect(await main(['export', 'grpo', out, '--out', join(dir, 'rows.jsonl')], capture())).toBe(0);
      const [row] = lines(join(dir, 'rows.jsonl'));
      expect(row.messages.find((m: any) => m.tool_calls).tool_calls[0].function.arguments).toBe(args);
    }
  }, 60_000);
});

describe('rollout and an --out file that already holds lines', () => {
  it('refuses it without --resume or --force, naming both; --force starts it over; an empty file is fine', async () => {
    const policy = await serve(fakePolicy(runtime.domain, 'carrier-lora'));
    const dir = mkdtempSync(join(tmpdir(), 'sb-out-'));
    const out = join(dir, 'groups.jsonl');
    writeFileSync(out, '{"group_id": "conversation:other"}\n\n{"group_id": "conversation:more"}\n');
    const before = policy.requests.length;
    const refused = await rollout(policy.url, [], out);
    expect(refused.code).toBe(2);
    expect(refused.io.stderr).toBe(
      `switchboard: rollout: --out ${out} already holds 2 lines: add --resume to keep its groups and run only the others, or --force to start it over (its lines are deleted)\n`,
    );
    const both = await rollout(policy.url, ['--resume', '--force'], out);
    expect([both.code, both.io.stderr]).toEqual([
      2,
      'switchboard: rollout: --resume and --force exclude each other (keep the groups in --out, or start it over)\n',
    ]);
    // Nothing ran and the file is as it was.
    expect(policy.requests.length).toBe(before);
    expect(readFileSync(out, 'utf8')).toBe('{"group_id": "conversation:other"}\n\n{"group_id": "conversation:more"}\n');
    const forced = await rollout(policy.url, ['--force'], out);
    expect(forced.code).toBe(0);
    expect(lines(out).map((g: any) => g.group_id)).toEqual([`conversation:${TASK}`]);
    writeFileSync(out, '\n');
    expect((await rollout(policy.url, [], out)).code).toBe(0);
    expect(lines(out).map((g: any) => g.group_id)).toEqual([`conversation:${TASK}`]);
  }, 60_000);
});

describe('rollout against an endpoint that answers with another model', () => {
  it('records the model each reply named and warns once per model with its count', async () => {
    const good = fakePolicy(runtime.domain, 'carrier-lora');
    const policy = await serve(async (body, i, req) => {
      const reply: any = await good(body, i, req);
      // The first agent turn of every sample is answered by the base model (adapter not loaded).
      if (!body.messages.some((m: any) => m.role === 'assistant')) reply.json.model = 'base-model';
      return reply;
    });
    const { code, io, out } = await rollout(policy.url);
    expect(code).toBe(0);
    const models = lines(out)[0].samples.map((s: any) => s.turns.map((t: any) => t.model));
    expect(models.map((m: string[]) => m[0])).toEqual(['base-model', 'base-model']);
    expect(
      models
        .flat()
        .filter((m: string) => m !== 'base-model')
        .every((m: string) => m === 'carrier-lora'),
    ).toBe(true);
    expect(io.stderr).toContain(
      "warning: 2 agent turns were answered by model base-model, not carrier-lora as requested: their tokens and logprobs are that model's (each turn's model says which)\n",
    );
    expect(io.stderr.match(/answered by model/g)).toHaveLength(1);
  }, 60_000);
});

describe('export grpo of two rollout runs of the same task joined into one file', () => {
  it('refuses it in every format, naming the file and the repeated sample, instead of merging the groups', async () => {
    const policy = await serve(fakePolicy(runtime.domain, 'carrier-lora'));
    const a = await rollout(policy.url);
    const b = await rollout(policy.url);
    const joined = join(a.dir, 'joined.jsonl');
    writeFileSync(joined, readFileSync(a.out, 'utf8') + readFileSync(b.out, 'utf8'));
    for (const [format, file] of [
      ['switchboard', 'rows.jsonl'],
      ['switchboard', 'rows.parquet'],
      ['trl', 'trl.jsonl'],
      ['verl', 'verl.parquet'],
    ]) {
      const e = capture();
      expect(await main(['export', 'grpo', joined, '--format', format!, '--out', join(a.dir, file!)], e)).toBe(2);
      expect(e.stderr).toBe(
        `switchboard: ${joined}: group conversation:${TASK} sample 0 appears twice (two runs of the same task joined?): a group's advantages are computed over its own samples, so export each run's file on its own\n`,
      );
      expect(readdirSync(a.dir)).not.toContain(file);
    }
    const one = capture();
    expect(
      await main(['export', 'grpo', b.out, '--format', 'verl', '--out', join(b.dir, 'verl.parquet'), '--json'], one),
    ).toBe(0);
    expect(JSON.parse(one.stdout).rows).toBe(1);
  }, 60_000);
});

describe('a 1 MB reply', () => {
  it('is cut to the reply cap, marked oversize on the rollout turn, and fails QUALITY', async () => {
    const policy = await serve((body) => {
      const k = body.messages.filter((m: any) => m.role === 'assistant').length;
      const content = k === 0 ? '好'.repeat(1_000_000) : `再见。${STOP_TOKENS.stop}`;
      return { json: completion({ model: 'carrier-lora', content }) };
    });
    const { code, out } = await rollout(policy.url, ['--flavor', 'openai']);
    expect(code).toBe(0);
    const [g] = lines(out);
    for (const s of g.samples) {
      expect(s.turns.map((t: any) => [t.oversize, t.text.length])).toEqual([
        [1_000_000, 16_000],
        [null, 3],
      ]);
      expect([s.final_reward, s.components.QUALITY]).toEqual([0, 0]);
    }
  }, 60_000);
});

describe('POST /rollout and a policy endpoint that redirects', () => {
  it('does not follow a redirect out of the allow-list (a transport fault: invalid, resampled); follows one to an allowed endpoint', async () => {
    const good = await serve(fakePolicy(runtime.domain, 'carrier-lora'));
    const target = 'http://gpu9.invalid:8000/v1/chat/completions';
    const away = await serve(() => ({ status: 302, json: {}, headers: { location: target } }));
    const home = await serve(() => ({ status: 307, json: {}, headers: { location: `${good.url}/chat/completions` } }));
    const server = await startOpenEnvServer({ runtime, user: () => new ScriptedUser() });
    const post = async (url: string) => {
      const res = await fetch(`${server.url}/rollout`, {
        method: 'POST',
        body: JSON.stringify({
          base_urls: [url],
          model: 'carrier-lora',
          k: 2,
          task_ids: [TASK],
          policy_version: 'v',
          retries: 2,
        }),
      });
      expect(res.status).toBe(200);
      return (await res.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
    };
    try {
      const refused = await post(away.url);
      expect(refused.map((l) => l.type)).toEqual(['failed', 'summary']);
      expect(refused[0]).toMatchObject({ group_id: `conversation:${TASK}`, valid: 0 });
      expect(refused[0].reasons).toEqual([
        `vllm:carrier-lora at ${away.url}: redirected (HTTP 302) from ${away.url}/chat/completions to ${target}, which is not followed: endpoint ${target} is not allowed: this server calls loopback endpoints and those given when it started (serve --allow-endpoint <base-url>, or the endpoints of its --user, --judge, --tts, --barge-in-model) (1 attempt)`,
      ]);
      // Not retried (retries: 2): one request per attempt, 2 samples × 3 attempts (2 resamples).
      expect(away.requests).toHaveLength(6);
      expect(refused[1].endpoints).toEqual([{ endpoint: away.url, requests: 6, failures: 6, with_token_ids: 0 }]);
      // A redirect to an allowed (loopback) endpoint is followed, method and body kept (307).
      const before = good.requests.length;
      const followed = await post(home.url);
      expect(followed.map((l) => l.type)).toEqual(['group', 'summary']);
      expect(followed[0].samples.map((s: any) => s.final_reward)).toEqual([1, 0]);
      expect(good.requests.length - before).toBe(home.requests.length);
      expect(good.requests.at(-1)!.body.model).toBe('carrier-lora');
      // The answer saved as it came (group, summary lines) exports as it is; an error line is refused.
      const dir = mkdtempSync(join(tmpdir(), 'sb-post-'));
      const saved = join(dir, 'answer.ndjson');
      writeFileSync(saved, [...refused, ...followed].map((l) => `${JSON.stringify(l)}\n`).join(''));
      const ex = capture();
      expect(await main(['export', 'grpo', saved, '--out', join(dir, 'rows.jsonl'), '--json'], ex)).toBe(0);
      expect(JSON.parse(ex.stdout)).toMatchObject({ rows: 2, tokens: { all: 2, partial: 0, none: 0 } });
      writeFileSync(saved, `${JSON.stringify(followed[0])}\n{"type": "error", "message": "worker crashed"}\n`);
      const bad = capture();
      expect(await main(['export', 'grpo', saved, '--out', join(dir, 'rows.jsonl')], bad)).toBe(2);
      expect(bad.stderr).toBe(
        `switchboard: ${saved}:2: (line): a POST /rollout answer that ended in an error (worker crashed): its groups before it are complete, run the rest again\n`,
      );
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe('rollout with a channel and --caller-input transcript', () => {
  it('sends a text policy the heard words only (no audio part), while the channel still speaks and stores the calls', async () => {
    const policy = await serve(fakePolicy(runtime.domain, 'carrier-lora'));
    const { code, out, dir } = await rollout(policy.url, ['--preset', 'clean', '--caller-input', 'transcript']);
    expect(code).toBe(0);
    const [g] = lines(out);
    // The text policy found its task from the words it got, so the rewards are the usual ones.
    expect(g.samples.map((s: any) => s.final_reward)).toEqual([1, 0]);
    const users = policy.requests.flatMap((r) => r.body.messages.filter((m: any) => m.role === 'user'));
    expect(users.length).toBeGreaterThan(0);
    expect(users.every((m: any) => typeof m.content === 'string')).toBe(true);
    const opening = runtime.domain.tasks.find((t) => t.id === TASK)!.user_scenario.requests![0];
    expect(users[0].content.split('\n')[0]).toBe(opening);
    for (const s of g.samples)
      for (const t of s.turns)
        for (const m of t.request.messages.filter((m: any) => m.role === 'user'))
          expect(typeof m.content).toBe('string');
    // The channel ran: the caller's degraded audio is stored beside the output.
    expect(readdirSync(join(dir, 'audio', 'carrier', TASK)).length).toBe(2);
  }, 60_000);
});

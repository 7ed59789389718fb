import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { startOpenEnvServer } from '../../src/adapters/node/openenv-server.ts';
import { capture } from '../fixtures/cli-io.ts';
import { startOpenAiServer, type TestServer } from '../fixtures/openai-server.ts';
import { fakePolicy } from '../fixtures/fake-policy.ts';

const TASKS = ['carrier-pay-balance-1', 'carrier-bill-inquiry-1'];
const DEAD = 'http://127.0.0.1:9/v1'; // discard port: connection refused
let runtime: DomainRuntime;
let policy: TestServer;

beforeAll(async () => {
  runtime = await DomainRuntime.create(await loadBuiltinDomain('carrier'), await sqlJsFactory());
  policy = await startOpenAiServer(fakePolicy(runtime.domain, 'carrier-lora'));
});
afterAll(async () => {
  await policy.close();
});

/** Â for rewards [1, 0, 1, 0]: ±0.5 / (sample std √(1/3) + 1e-6). */
const A = 0.5 / (Math.sqrt(1 / 3) + 1e-6);

function checkGroup(g: any, taskId: string) {
  expect(g).toMatchObject({
    group_id: `conversation:${taskId}`,
    task_id: taskId,
    domain: 'carrier',
    policy_version: 'step-7',
    k: 4,
    reward: 'final',
    informative: true,
    mean_reward: 0.5,
  });
  expect(g.samples.map((s: any) => [s.sample_index, s.final_reward, s.outcome])).toEqual([
    [0, 1, 1],
    [1, 0, 0],
    [2, 1, 1],
    [3, 0, 0],
  ]);
  const adv = g.samples.map((s: any) => s.advantage);
  [A, -A, A, -A].forEach((a, i) => expect(adv[i]).toBeCloseTo(a, 12));
  expect(g.samples[0].components.DB).toBe(1);
  for (const s of g.samples) {
    expect(s.step_rewards).toHaveLength(s.turns.length);
    s.turns.forEach((t: any, k: number) => {
      expect(t.step).toBe(k);
      expect(t.policy_version).toBe('step-7');
      expect(t.model).toBe('carrier-lora');
      expect(t.tokens).toBe('endpoint');
      // What the endpoint returned, untouched: one prompt id per request message, two generated ids.
      expect(t.prompt_token_ids).toEqual(t.request.messages.map((_: unknown, i: number) => 1000 + i));
      expect(t.completion_token_ids).toEqual([500 + k, 600 + k]);
      expect(t.logprobs).toEqual([-0.25, -0.5]);
      expect(t.loss_mask).toEqual([...t.prompt_token_ids.map(() => 0), 1, 1]);
      expect(t.request.sampling.seed).toBe(s.seed);
      expect(t.step_reward).toBe(s.step_rewards[k]);
      expect(t.return).toBe(s.returns[k]);
    });
    expect(s.turns[0].request.messages.map((m: any) => m.role)).toEqual(['system']);
  }
}

describe('switchboard rollout', () => {
  it('runs K samples per task on the policy endpoints and streams token-faithful groups', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-rollout-'));
    const out = join(dir, 'groups.jsonl');
    const io = capture();
    const before = policy.requests.length;
    const args = [
      'rollout',
      '--domain',
      'carrier',
      '--endpoint',
      policy.url,
      '--endpoint',
      DEAD,
      '--model',
      'Qwen/Qwen3-8B',
      '--lora',
      'carrier-lora',
      '--k',
      '4',
      '--task-ids',
      TASKS.join(','),
      '--policy-version',
      'step-7',
      '--model-retries',
      '0',
      '--out',
      out,
    ];
    expect(await main(args, io)).toBe(0);
    const groups = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(groups.map((g) => g.task_id)).toEqual(TASKS);
    groups.forEach((g, i) => checkGroup(g, TASKS[i]!));
    // The dead endpoint broke samples: they were resampled (never scored 0), and said so.
    expect(groups[0].resampled).toBeGreaterThan(0);
    expect(io.stderr).toMatch(
      /sample \d \(seed \d+\) invalid: vllm:carrier-lora at http:\/\/127\.0\.0\.1:9\/v1: network error/,
    );
    expect(io.stderr).toContain('[2/2] conversation:carrier-bill-inquiry-1: mean 0.50');
    // The adapter name is the model of every request.
    expect(new Set(policy.requests.slice(before).map((r) => r.body.model))).toEqual(new Set(['carrier-lora']));
    expect(io.stdout).toContain('2 groups written');
    expect(io.stdout).toMatch(/127\.0\.0\.1:9\/v1: \d+ requests, \d+ failed/);

    // --resume: drop the last group and run again; only that group runs.
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    writeFileSync(out, `${lines[0]}\n{"group_id": "conversation:carr`);
    const again = capture();
    const n = policy.requests.length;
    expect(await main([...args, '--resume'], again)).toBe(0);
    expect(again.stderr).toContain('resuming: 1 of 2 groups already in');
    const resumed = readFileSync(out, 'utf8').trim().split('\n');
    expect(resumed[0]).toBe(lines[0]);
    checkGroup(JSON.parse(resumed.at(-1)!), TASKS[1]!);
    // Only the missing group's task was played again.
    const opening = (id: string) => runtime.domain.tasks.find((t) => t.id === id)!.user_scenario.requests![0];
    const firstUser = policy.requests
      .slice(n)
      .map((r) => r.body.messages.find((m: any) => m.role === 'user')?.content)
      .filter(Boolean);
    expect(firstUser.length).toBeGreaterThan(0);
    expect(new Set(firstUser.map((c: string) => c.split('\n')[0]))).toEqual(new Set([opening(TASKS[1]!)]));
  }, 120_000);

  it('says clearly when the endpoint returns no token ids', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-rollout-'));
    const io = capture();
    const code = await main(
      [
        'rollout',
        '--domain',
        'carrier',
        '--endpoint',
        policy.url,
        '--model',
        'carrier-lora',
        '--flavor',
        'openai',
        '--k',
        '2',
        '--task-ids',
        TASKS[0]!,
        '--policy-version',
        'v0',
        '--out',
        join(dir, 'g.jsonl'),
      ],
      io,
    );
    expect(code).toBe(0);
    const g = JSON.parse(readFileSync(join(dir, 'g.jsonl'), 'utf8'));
    const t = g.samples[0].turns[0];
    expect([t.tokens, t.prompt_token_ids, t.completion_token_ids, t.loss_mask]).toEqual([
      'unavailable',
      null,
      null,
      null,
    ]);
    expect(io.stderr).toContain('note: the endpoints returned no token ids');
    expect(io.stdout).toContain('token ids: none');
  }, 60_000);

  it('answers POST /rollout on the OpenEnv server with NDJSON groups, and 422 for a bad request', async () => {
    const server = await startOpenEnvServer({ runtime, user: () => new ScriptedUser() });
    try {
      const bad = await fetch(`${server.url}/rollout`, {
        method: 'POST',
        body: JSON.stringify({ base_urls: [policy.url], model: 'm', policy_version: 'v', k: 1 }),
      });
      expect(bad.status).toBe(422);
      expect(((await bad.json()) as any).detail[0].loc).toEqual(['body', 'k']);
      const res = await fetch(`${server.url}/rollout`, {
        method: 'POST',
        body: JSON.stringify({
          base_urls: [policy.url],
          model: 'Qwen/Qwen3-8B',
          lora: 'carrier-lora',
          k: 4,
          task_ids: TASKS,
          policy_version: 'step-7',
        }),
      });
      expect(res.headers.get('content-type')).toBe('application/x-ndjson');
      const lines = (await res.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines.map((l) => l.type)).toEqual(['group', 'group', 'summary']);
      lines.slice(0, 2).forEach((g, i) => checkGroup(g, TASKS[i]!));
      expect(lines[2]).toMatchObject({ type: 'summary', groups: 2, failed: [], token_ids: 'all' });
    } finally {
      await server.close();
    }
  }, 120_000);
});

describe('rollout and run share one definition of the sampling flags', () => {
  /** Each option's entry of a help text, continuation lines joined and spaces collapsed. */
  const flagLines = (help: string) =>
    help
      .replace(/\n {20,}/g, ' ')
      .split('\n')
      .map((l) => l.trim().replace(/\s+/g, ' '))
      .filter((l) => /^--(temperature|top-p|top-k|max-tokens|model-timeout|model-retries)\b/.test(l));
  it('lists the same six flags with the same help, and refuses the same bad values', async () => {
    const run = capture();
    const roll = capture();
    await main(['run', '--help'], run);
    await main(['rollout', '--help'], roll);
    expect(flagLines(run.stdout)).toHaveLength(6);
    expect(flagLines(roll.stdout)).toEqual(flagLines(run.stdout));
    for (const [flag, value] of [
      ['--top-p', '1.5'],
      ['--temperature', '-1'],
      ['--model-retries', '21'],
    ] as const) {
      const a = capture();
      const b = capture();
      expect(await main(['run', '--domain', 'carrier', flag, value], a)).toBe(2);
      expect(
        await main(
          [
            'rollout',
            '--domain',
            'carrier',
            '--endpoint',
            DEAD,
            '--model',
            'm',
            '--policy-version',
            'v',
            '--out',
            '/tmp/x.jsonl',
            flag,
            value,
          ],
          b,
        ),
      ).toBe(2);
      expect(b.stderr).toBe(a.stderr);
    }
  });
});

describe('export reads rollout output', () => {
  it('export grpo turns rollout groups into GRPO rows (one per sample); export sft names the right command', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-rollout-export-'));
    const out = join(dir, 'groups.jsonl');
    const base = ['--domain', 'carrier', '--endpoint', policy.url, '--model', 'carrier-lora', '--k', '4'];
    expect(
      await main(['rollout', ...base, '--task-ids', TASKS[0]!, '--policy-version', 'step-7', '--out', out], capture()),
    ).toBe(0);
    const group = JSON.parse(readFileSync(out, 'utf8'));
    for (const s of group.samples) {
      // Every request is a prefix of the sample's messages, and every reply is in them.
      for (const t of s.turns) expect(s.messages.slice(0, t.request.messages.length)).toEqual(t.request.messages);
      expect(s.messages.filter((m: any) => m.role === 'assistant')).toHaveLength(s.turns.length);
    }
    const io = capture();
    expect(await main(['export', 'grpo', out, '--out', join(dir, 'rows.jsonl'), '--json'], io)).toBe(0);
    expect(JSON.parse(io.stdout).rows).toBe(4);
    const rows = readFileSync(join(dir, 'rows.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => [r.group_id, r.sample_index, r.group_size, r.final_reward, r.outcome, r.policy])).toEqual(
      [0, 1, 2, 3].map((i) => [`conversation:${TASKS[0]}`, i, 4, i % 2 ? 0 : 1, i % 2 ? 0 : 1, 'step-7']),
    );
    rows.forEach((r, i) => {
      const s = group.samples[i];
      expect(r.advantage).toBe(s.advantage);
      expect([r.granularity, r.prefix_ref, r.prefix_messages, r.reward_choice]).toEqual([
        'conversation',
        TASKS[0],
        1,
        'final',
      ]);
      expect(r.messages).toEqual(s.messages);
      expect(r.tools).toEqual(s.turns[0].request.tools);
      expect(r.sampling).toEqual(s.turns[0].request.sampling);
      expect(r.sampling_seed).toBe(s.seed);
      expect(r.token_ids).toEqual(s.turns.map((_: unknown, k: number) => [500 + k, 600 + k]));
      expect(r.logprobs).toEqual(s.turns.map(() => [-0.25, -0.5]));
      expect([r.step_rewards, r.returns]).toEqual([s.step_rewards, s.returns]);
    });
    // TRL: prompt is the system prompt the first turn was sampled from, completion the rest.
    expect(await main(['export', 'grpo', out, '--format', 'trl', '--out', join(dir, 'trl.jsonl')], capture())).toBe(0);
    const trl = JSON.parse(readFileSync(join(dir, 'trl.jsonl'), 'utf8').split('\n')[0]!);
    expect(trl.prompt.map((m: any) => m.role)).toEqual(['system']);
    expect(trl.completion.length).toBe(group.samples[0].messages.length - 1);
    expect(trl.advantage).toBe(group.samples[0].advantage);

    const sft = capture();
    expect(await main(['export', 'sft', out, '--domain', 'carrier', '--out', join(dir, 's.jsonl')], sft)).toBe(2);
    expect(sft.stderr).toBe(
      `switchboard: ${out}:1: (line): this is a rollout group (from \`switchboard rollout\`), not a trajectory: export sft reads trajectories.jsonl from \`switchboard run --out\`; use \`switchboard export grpo\` for this file\n`,
    );
    // A line of neither shape names both.
    writeFileSync(join(dir, 'odd.jsonl'), '{"hello": 1}\n');
    const odd = capture();
    expect(await main(['export', 'grpo', join(dir, 'odd.jsonl'), '--out', join(dir, 'o.jsonl')], odd)).toBe(2);
    expect(odd.stderr).toContain(
      'export grpo reads GRPO rows from `switchboard groups` or rollout groups from `switchboard rollout`, one per line',
    );
  }, 60_000);
});

describe('POST /rollout calls only allowed endpoints', () => {
  it('refuses a non-loopback base URL with a 422 naming base_urls[i]; --allow-endpoint admits one by scheme, host, port and path prefix', async () => {
    const body = (base_urls: string[]) =>
      JSON.stringify({ base_urls, model: 'carrier-lora', k: 2, task_ids: [TASKS[0]], policy_version: 'v', retries: 0 });
    const server = await startOpenEnvServer({
      runtime,
      user: () => new ScriptedUser(),
      allowEndpoints: ['http://gpu1.invalid:8000/v1'],
    });
    try {
      const before = policy.requests.length;
      const res = await fetch(`${server.url}/rollout`, {
        method: 'POST',
        body: body([
          policy.url,
          'http://10.0.0.7:8000/v1',
          'http://gpu1.invalid:8000/v2',
          'https://gpu1.invalid:8000/v1',
        ]),
      });
      expect(res.status).toBe(422);
      const doc = (await res.json()) as any;
      expect(doc.detail.map((d: any) => [d.type, d.loc, d.input])).toEqual([
        ['value_error', ['body', 'base_urls', 1], 'http://10.0.0.7:8000/v1'],
        ['value_error', ['body', 'base_urls', 2], 'http://gpu1.invalid:8000/v2'],
        ['value_error', ['body', 'base_urls', 3], 'https://gpu1.invalid:8000/v1'],
      ]);
      expect(doc.detail[0].msg).toBe(
        'endpoint http://10.0.0.7:8000/v1 is not allowed: this server calls loopback endpoints and those given when it started (serve --allow-endpoint <base-url>, or the endpoints of its --user, --judge, --tts, --barge-in-model)',
      );
      // Nothing ran: the allowed (loopback) endpoint of the refused request got no request.
      expect(policy.requests.length).toBe(before);
      // An allowed non-loopback endpoint (a sub-path of the entry) is called: it does not resolve,
      // so its samples are invalid and the group fails; loopback policy endpoints run as usual.
      const ok = await fetch(`${server.url}/rollout`, {
        method: 'POST',
        body: body(['http://gpu1.invalid:8000/v1/']),
      });
      expect(ok.status).toBe(200);
      const lines = (await ok.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines.map((l) => l.type)).toEqual(['failed', 'summary']);
      expect(lines[0].reasons[0]).toMatch(/gpu1\.invalid:8000\/v1\/?: network error/);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('serve refuses a malformed --allow-endpoint before starting', async () => {
    const io = capture();
    expect(await main(['serve', '--domain', 'carrier', '--allow-endpoint', 'gpu1:8000'], io)).toBe(2);
    expect(io.stderr).toBe(
      'switchboard: serve: --allow-endpoint gpu1:8000: expected an http(s) base URL such as http://gpu1:8000/v1, or *\n',
    );
  });
});

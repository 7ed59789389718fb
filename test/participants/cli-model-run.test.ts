import { readFileSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_MODELS_DIR } from '../../src/adapters/node/local-model.ts';
import { builtinDomainDir, loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';
import type { Domain } from '../../src/core/schema/domain.ts';
import { Trajectory } from '../../src/core/schema/trajectory.ts';
import { completion, httpError, startOpenAiServer, type TestServer } from '../fixtures/openai-server.ts';
import { modelBrain } from './brain.ts';

const SECRET = 'sk-e2e-never-recorded';
let domain: Domain;
let server: TestServer | undefined;
const dirs: string[] = [];
const savedKey = process.env.SWITCHBOARD_API_KEY;

beforeAll(async () => {
  domain = await loadBuiltinDomain('carrier');
  process.env.SWITCHBOARD_API_KEY = SECRET;
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(async () => {
  if (savedKey === undefined) delete process.env.SWITCHBOARD_API_KEY;
  else process.env.SWITCHBOARD_API_KEY = savedKey;
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function tmp(prefix: string) {
  const d = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

describe('switchboard run with model-backed agent, caller and judge (local test server)', () => {
  it('runs the carrier domain end to end and scores like the reference', async () => {
    server = await startOpenAiServer(modelBrain(domain));
    const url = server.url;
    const out = await tmp('sb-model-run-');
    const io = capture();
    const code = await main(
      [
        'run',
        '--domain',
        'carrier',
        '--agent',
        `vllm:agent-model@${url}`,
        '--user',
        `openai:caller-model@${url}`,
        '--judge',
        `vllm-omni:judge-model@${url}`,
        '--task-ids',
        'carrier-pay-balance-1,carrier-wallet-pay-1',
        '--seed',
        '7',
        '--temperature',
        '0.6',
        '--top-p',
        '0.95',
        '--top-k',
        '40',
        '--max-tokens',
        '300',
        '--out',
        out,
        '--json',
      ],
      io,
    );
    expect(io.stderr).toBe('');
    expect(code).toBe(0);
    const summary = JSON.parse(io.stdout);
    expect(summary.agent).toBe('vllm:agent-model');
    expect(summary.user).toBe('openai:caller-model');
    expect(summary.totals).toEqual({
      episodes: 2,
      valid: 2,
      invalid: 0,
      invalid_attempts: 0,
      invalid_share: 0,
      mean_reward: 1,
      pass_hat: { 1: 1 },
      rule_breaking: 0,
      rule_breaking_passes: 0,
    });
    expect(summary.tasks.map((t: { task_id: string; rewards: number[] }) => [t.task_id, t.rewards])).toEqual([
      ['carrier-pay-balance-1', [1]],
      ['carrier-wallet-pay-1', [1]],
    ]);

    const text = await readFile(join(out, 'trajectories.jsonl'), 'utf8');
    expect(text).not.toContain(SECRET);
    const [t1, t2] = text
      .trim()
      .split('\n')
      .map((l) => Trajectory.parse(JSON.parse(l)));
    expect(t1!.termination).toBe('user_stop');
    expect(t1!.participants.agent_card).toEqual({
      kind: 'remote',
      flavor: 'vllm',
      model: 'agent-model',
      base_url: url,
      sampling: { temperature: 0.6, top_p: 0.95, top_k: 40, max_tokens: 300 },
      prompt_version: 'agent-v1',
      teacher_guidance: null,
    });
    expect(t1!.participants.user_card).toMatchObject({
      flavor: 'openai',
      model: 'caller-model',
      prompt_version: 'caller-v2',
    });
    expect(t1!.teacher_guidance).toBeUndefined();
    // The agent's turns keep the token ids the server returned (the brain returns the step number).
    const agentTurns = t1!.turns.filter((t) => t.role === 'assistant');
    expect(agentTurns.map((t) => (t.role === 'assistant' ? t.generation?.token_ids : null))).toEqual(
      agentTurns.map((_, k) => [k]),
    );
    // The wallet task has the caller use its own tools (dual control).
    expect(
      t2!.turns
        .filter((t) => t.role === 'tool' && t.requestor === 'user')
        .map((t) => (t.role === 'tool' ? t.name : '')),
    ).toEqual(['check_wallet_balance', 'pay_bill_with_wallet']);

    const reqs = server.requests.map((r) => r.body);
    const agentReqs = reqs.filter((b) => b.model === 'agent-model');
    const callerReqs = reqs.filter((b) => b.model === 'caller-model');
    // Sampling is explicit on every request; the seed is the rollout seed (7 for trial 0).
    expect(
      new Set(agentReqs.map((b) => JSON.stringify([b.temperature, b.top_p, b.top_k, b.max_tokens, b.seed]))),
    ).toEqual(new Set(['[0.6,0.95,40,300,7]']));
    expect(
      new Set(
        callerReqs.map((b) => JSON.stringify([b.temperature, b.top_p, b.top_k, b.max_completion_tokens, b.seed])),
      ),
    ).toEqual(new Set(['[0.6,0.95,null,300,7]']));
    expect(agentReqs.length).toBe(
      t1!.turns.filter((t) => t.role === 'assistant').length + t2!.turns.filter((t) => t.role === 'assistant').length,
    );
    // No judge items in these tasks: the judge is never asked.
    expect(reqs.filter((b) => b.model === 'judge-model')).toHaveLength(0);
    expect(server.requests.every((r) => r.headers.authorization === `Bearer ${SECRET}`)).toBe(true);
  });

  it('parses hermes <tool_call> text from the agent model the same way', async () => {
    server = await startOpenAiServer(modelBrain(domain, { toolFormat: 'text' }));
    const io = capture();
    const code = await main(
      [
        'run',
        '--domain',
        'carrier',
        '--agent',
        `vllm:agent-model@${server.url}`,
        '--user',
        `vllm:caller-model@${server.url}`,
        '--task-ids',
        'carrier-change-plan-1',
        '--json',
      ],
      io,
    );
    expect(code).toBe(0);
    expect(JSON.parse(io.stdout).totals.mean_reward).toBe(1);
  });

  async function judgedDomain(): Promise<string> {
    const dir = await tmp('sb-judged-');
    const src = builtinDomainDir('carrier');
    await writeFile(
      join(dir, 'domain.ts'),
      `export { carrier } from ${JSON.stringify(pathToFileURL(join(src, 'domain.ts')).href)};\n`,
    );
    for (const f of ['policy.md', 'schema.sql', 'seed.json']) await copyFile(join(src, f), join(dir, f));
    const tasks = JSON.parse(await readFile(join(src, 'tasks.json'), 'utf8'));
    const t = tasks.find((x: { id: string }) => x.id === 'carrier-bill-inquiry-1');
    t.evaluation_criteria.reward_basis = ['DB', 'COMMUNICATE', 'ASSERTIONS', 'NL_ASSERTION'];
    t.evaluation_criteria.nl_assertions = ['客服告诉了客户账单的金额'];
    t.evaluation_criteria.assertions.push({ id: 'spoken-style', rule: 'R9', text: '客服说话简短、口语化' });
    await writeFile(join(dir, 'tasks.json'), JSON.stringify(tasks));
    return dir;
  }

  it('a judge verdict decides NL_ASSERTION and judged assertions, one judge call per episode', async () => {
    const dir = await judgedDomain();
    server = await startOpenAiServer(modelBrain(domain));
    const args = (u: string) => [
      'run',
      '--domain',
      dir,
      '--agent',
      `vllm:agent-model@${u}`,
      '--user',
      `vllm:caller-model@${u}`,
      '--judge',
      `openai:judge-model@${u}`,
      '--task-ids',
      'carrier-bill-inquiry-1',
      '--seed',
      '3',
    ];
    let io = capture();
    const out = await tmp('sb-judged-out-');
    expect(await main([...args(server.url), '--out', out, '--json'], io)).toBe(0);
    expect(JSON.parse(io.stdout).totals.mean_reward).toBe(1);
    const judgeReqs = server.requests.filter((r) => r.body.model === 'judge-model');
    expect(judgeReqs).toHaveLength(1);
    expect(judgeReqs[0]!.body.response_format).toEqual({ type: 'json_object' });
    expect(judgeReqs[0]!.body.temperature).toBe(0);
    const traj = Trajectory.parse(JSON.parse((await readFile(join(out, 'trajectories.jsonl'), 'utf8')).trim()));
    expect(traj.reward_info!.components.NL_ASSERTION).toEqual({ score: 1, details: [], judged: true });
    expect(traj.reward_info!.assertions.find((a) => a.id === 'spoken-style')).toEqual({
      id: 'spoken-style',
      rule: 'R9',
      status: 'passed',
      reason: 'spoken-style ok',
      turn: 0,
    });
    await server.close();

    server = await startOpenAiServer(modelBrain(domain, { unmet: ['nl:0'] }));
    io = capture();
    expect(await main([...args(server.url), '--json'], io)).toBe(0);
    const summary = JSON.parse(io.stdout);
    expect(summary.tasks[0].rewards).toEqual([0]);
    expect(summary.totals).toMatchObject({ valid: 1, invalid: 0, mean_reward: 0 });
  });

  it('--judge-n n asks the judge n times (seeds 0…n-1) and takes the majority', async () => {
    const dir = await judgedDomain();
    server = await startOpenAiServer(modelBrain(domain));
    const io = capture();
    const args = [
      'run',
      '--domain',
      dir,
      '--agent',
      `vllm:agent-model@${server.url}`,
      '--user',
      `vllm:caller-model@${server.url}`,
      '--judge',
      `openai:judge-model@${server.url}`,
      '--judge-n',
      '3',
      '--task-ids',
      'carrier-bill-inquiry-1',
      '--seed',
      '3',
      '--json',
    ];
    expect(await main(args, io)).toBe(0);
    expect(JSON.parse(io.stdout).totals.mean_reward).toBe(1);
    const judgeReqs = server.requests.filter((r) => r.body.model === 'judge-model');
    expect(judgeReqs.map((r) => r.body.seed)).toEqual([0, 1, 2]);
    let bad = capture();
    expect(await main([...args.slice(0, -1), '--judge-n', '0'], bad)).toBe(2);
    expect(bad.stderr).toContain('--judge-n must be a whole number from 1 to 99');
    bad = capture();
    expect(await main(['run', '--domain', 'carrier', '--judge-n', '2'], bad)).toBe(2);
    expect(bad.stderr).toBe('switchboard: --judge-n needs --judge\n');
  });

  /**
   * `run` one carrier task against `server` as the agent with one retry per call; checks the
   * verdict every broken endpoint must give (one trial, resampled twice: three invalid
   * rollouts, no reward, exit 1) and returns the trajectories and the summary.
   */
  async function runBroken(spec: string) {
    const io = capture();
    const out = await tmp('sb-broken-');
    const args = ['run', '--domain', 'carrier', '--agent', spec, '--task-ids', 'carrier-pay-balance-1'];
    const code = await main([...args, '--model-retries', '1', '--out', out, '--json'], io);
    expect(code).toBe(1);
    const summary = JSON.parse(io.stdout);
    expect(summary.totals).toEqual({
      episodes: 3,
      valid: 0,
      invalid: 1,
      invalid_attempts: 3,
      invalid_share: 1,
      mean_reward: null,
      pass_hat: { 1: null },
      rule_breaking: 0,
      rule_breaking_passes: 0,
    });
    expect(summary.tasks[0]).toMatchObject({ rewards: [], invalid: 1, mean: null });
    const trajs = (await readFile(join(out, 'trajectories.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => Trajectory.parse(JSON.parse(l)));
    expect(trajs.map((t) => [t.valid, t.termination, t.reward_info])).toEqual(
      Array.from({ length: 3 }, () => [false, 'infrastructure_error', null]),
    );
    return trajs;
  }

  it('an endpoint that stays down makes every rollout invalid, not 0', async () => {
    server = await startOpenAiServer(() => httpError(503, 'down'));
    const trajs = await runBroken(`vllm-omni:agent-model@${server.url}`);
    expect(trajs[0]!.invalid_reason).toBe(`vllm-omni:agent-model at ${server.url}: HTTP 503: 503 down (2 attempts)`);
    expect(server.requests).toHaveLength(6);
  }, 20_000);

  it('an endpoint that keeps cutting its replies short makes the rollout invalid, not 0', async () => {
    const full = JSON.stringify(completion({ model: 'agent-model', content: 'hello' }));
    // Alternate the two cut-off kinds: dropped mid-body, and complete transfer of half a JSON.
    server = await startOpenAiServer((_b, i) => (i % 2 ? { raw: full.slice(0, 30) } : { raw: full, cutAt: 30 }));
    const trajs = await runBroken(`vllm:agent-model@${server.url}`);
    // Each rollout: a cut body, retried once, then cut-off JSON: two attempts, the last one's reason.
    expect(trajs[0]!.invalid_reason).toMatch(/^vllm:agent-model at .*: malformed reply: .*\(2 attempts\)$/);
    expect(server.requests).toHaveLength(6);
  }, 20_000);

  it('never writes or prints credentials of a base URL (user info, api_key query)', async () => {
    server = await startOpenAiServer(() => httpError(503, 'down'));
    const base = `${server.url.replace('http://', 'http://user:PW-SECRET@')}?api_key=Q-SECRET`;
    const redacted = `${server.url.replace('http://', 'http://REDACTED@')}?api_key=REDACTED`;
    const out = await tmp('sb-redact-');
    const io = capture();
    const args = ['--domain', 'carrier', '--task-ids', 'carrier-pay-balance-1', '--model-retries', '0'];
    expect(await main(['run', ...args, '--agent', `vllm:m@${base}`, '--out', out], io)).toBe(1);
    expect(await main(['run', ...args, '--agent', `bogus:m@${base}`, '--json'], io)).toBe(2);
    const files = ['trajectories.jsonl', 'summary.json'].map((f) => readFileSync(join(out, f), 'utf8'));
    for (const text of [io.stdout, io.stderr, ...files]) expect(text).not.toMatch(/SECRET/);
    expect(io.stderr).toContain(`switchboard: unknown agent "bogus:m@${redacted}"`);
    const first = Trajectory.parse(JSON.parse(files[0]!.split('\n')[0]!));
    expect(first.invalid_reason).toMatch(
      new RegExp(`^vllm:m at ${redacted.replace(/[?.]/g, '\\$&')}: network error: `),
    );
    expect(server.requests).toHaveLength(0); // fetch refuses URLs with credentials before sending
  });

  it('rejects malformed model specs and local: models with exit code 2', async () => {
    let io = capture();
    expect(await main(['run', '--domain', 'carrier', '--agent', 'openai:gpt-4o'], io)).toBe(2);
    expect(io.stderr).toBe(
      'switchboard: model spec "openai:gpt-4o" needs the form openai:<model>@<http(s) base URL>\n',
    );
    io = capture();
    expect(await main(['run', '--domain', 'carrier', '--agent', 'local:qwen3-0.6b'], io)).toBe(2);
    // Resolved through models/manifest.json; the weights are not in the repository.
    expect(io.stderr).toBe(
      `switchboard: on-device agent "qwen3-0.6b" needs files that are not in ${REPO_MODELS_DIR}: qwen3-0.6b/config.json, qwen3-0.6b/generation_config.json, qwen3-0.6b/tokenizer.json, qwen3-0.6b/tokenizer_config.json, qwen3-0.6b/onnx/model_q4f16.onnx. On a machine with internet run: npm run models:fetch -- --pin qwen3-0.6b (the manifest does not pin them yet: --pin records their commit and sha256)\n`,
    );
    io = capture();
    expect(await main(['run', '--domain', 'carrier', '--user', 'local:qwen3-0.6b'], io)).toBe(2);
    expect(io.stderr).toBe('switchboard: "local:qwen3-0.6b": on-device models (local:) can be the agent only\n');
    io = capture();
    expect(await main(['run', '--domain', 'carrier', '--judge', 'reference'], io)).toBe(2);
    io = capture();
    expect(await main(['run', '--domain', 'carrier', '--temperature', '3'], io)).toBe(2);
  });
});

import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { ScriptedUser } from '../../src/core/participants/scripted.ts';
import { referencePlan } from '../../src/core/participants/reference-plan.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { startOpenEnvServer, type OpenEnvServer } from '../../src/adapters/node/openenv-server.ts';
import { startOpenAiServer, type TestServer } from '../fixtures/openai-server.ts';
import { fakePolicy } from '../fixtures/fake-policy.ts';

const run = promisify(execFile);
let runtime: DomainRuntime;
let server: OpenEnvServer;
let policy: TestServer;

beforeAll(async () => {
  runtime = await DomainRuntime.create(await loadBuiltinDomain('carrier'), await sqlJsFactory());
  server = await startOpenEnvServer({ runtime, user: () => new ScriptedUser() });
  policy = await startOpenAiServer(fakePolicy(runtime.domain, 'carrier-lora'));
});
afterAll(async () => {
  await server.close();
  await policy.close();
});

describe('docs/examples', () => {
  it('grpo_client.py streams groups from POST /rollout against a vLLM-like endpoint and prints advantages', async () => {
    const { stdout } = await run(
      'python3',
      [
        'docs/examples/grpo_client.py',
        '--server',
        server.url,
        '--endpoint',
        policy.url,
        '--model',
        'Qwen/Qwen3-8B',
        '--lora',
        'carrier-lora',
        '--k',
        '4',
        '--tasks',
        'carrier-pay-balance-1,carrier-bill-inquiry-1',
        '--policy-version',
        'step-1',
      ],
      { timeout: 120_000 },
    );
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    for (const [i, id] of ['carrier-pay-balance-1', 'carrier-bill-inquiry-1'].entries()) {
      expect(lines[i]).toMatch(
        new RegExp(
          `^conversation:${id} mean=0\\.50 advantages: \\+0\\.866 -0\\.866 \\+0\\.866 -0\\.866 turns=\\d+ trainable_tokens=\\d+$`,
        ),
      );
      // Two generated tokens per agent turn (the fake endpoint's completion ids).
      const [, turns, trainable] = /turns=(\d+) trainable_tokens=(\d+)/.exec(lines[i]!)!;
      expect(Number(trainable)).toBe(2 * Number(turns));
    }
    expect(lines[2]).toBe('done: 2 groups, 0 failed, token ids: all');
  }, 150_000);

  it('trl_environment.py exposes the domain tools as typed methods and plays a call to reward 1', async () => {
    const task = runtime.domain.tasks.find((t) => t.id === 'carrier-pay-balance-1')!;
    const steps = referencePlan(runtime.domain, task)
      .slice(1)
      .map((s) => ('say' in s ? { say: s.say } : { call: s.call.name, arguments: s.call.arguments }));
    const dir = mkdtempSync(join(tmpdir(), 'sb-trl-'));
    writeFileSync(join(dir, 'plan.json'), JSON.stringify({ task_id: task.id, steps }));
    const { stdout } = await run('python3', ['test/fixtures/trl_env_drive.py', server.url, join(dir, 'plan.json')], {
      timeout: 60_000,
    });
    const out = JSON.parse(stdout);
    expect(out.tools).toEqual([...runtime.domain.tools.map((t) => t.name), 'speak'].sort());
    expect(out.first_tool).toBe('find_customer_by_phone');
    expect(out.first_tool_params).toEqual({ phone: 'str' });
    expect(out.first_tool_doc_has_args).toBe(true);
    expect(out.opening).toBe(task.user_scenario.requests![0]);
    const calls = steps.filter((s) => 'call' in s).length;
    expect(out).toMatchObject({ done: true, reward: 1, reward_fn: [1], after_end: 'The call has ended.' });
    expect(out.process_reward).toBeCloseTo(0.1 * calls, 6);
    expect(out.components.DB).toBe(1);
  }, 60_000);
});

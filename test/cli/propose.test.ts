import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import type { BankManifest, ProposalOutcome } from '../../src/core/evolution/index.ts';
import type { Task } from '../../src/core/schema/task.ts';
import { capture } from '../fixtures/cli-io.ts';
import { scriptedModels, startOpenAiServer, type TestServer } from '../fixtures/openai-server.ts';

const TASK = 'carrier-pay-balance-1';
const reply = (reason: string, patch: unknown[]) => JSON.stringify({ reason, patch });
/** One scripted task editor per model name. */
const EDITORS = {
  // A repair that adds an R5 assertion the reference keeps.
  good: [
    reply('不该变更套餐：补一条 R5 断言', [
      {
        op: 'add',
        path: '/evaluation_criteria/assertions/-',
        value: {
          id: 'no-plan-change',
          rule: 'R5',
          text: '不变更套餐',
          check: { kind: 'tool_not_called', tool: 'change_plan' },
        },
      },
    ]),
  ],
  // A variant, in a Markdown fence: the caller holds the phone back.
  variant: [
    `\`\`\`json\n${reply('来电者第一次不报手机号', [
      { op: 'add', path: '/user_scenario/withholds', value: [{ fact: 'phone', deflect: '这个一定要说吗？' }] },
    ])}\n\`\`\``,
  ],
  schema: [reply('换一个奖励', [{ op: 'replace', path: '/evaluation_criteria/reward_basis', value: ['SPEED'] }])],
  gate: [reply('多缴一点', [{ op: 'replace', path: '/evaluation_criteria/actions/2/arguments/amount', value: 500 }])],
  badpath: [reply('删掉不存在的字段', [{ op: 'remove', path: '/evaluation_criteria/nothing' }])],
  rename: [reply('改个名字', [{ op: 'replace', path: '/id', value: 'other' }])],
  garbage: ['Sure! Here is the patch you asked for.'],
};

let server: TestServer;
const dirs: string[] = [];
beforeAll(async () => {
  server = await startOpenAiServer(scriptedModels(EDITORS));
});
afterAll(async () => {
  await server.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function propose(model: string, extra: string[]) {
  const out = await mkdtemp(join(tmpdir(), 'sb-propose-'));
  dirs.push(out);
  const io = capture();
  const args = ['propose', '--domain', 'carrier', '--model', `openai:${model}@${server.url}`, '--task', TASK];
  const code = await main([...args, ...extra, '--out', out, '--json'], io);
  return { code, out, outcome: (io.stdout ? JSON.parse(io.stdout) : null) as ProposalOutcome | null, io };
}
const repair = ['--repair', '没有核对套餐'];

describe('switchboard propose: model-proposed repairs and variants go through the schema and the gate', () => {
  it('a good repair is admitted as version 2 with the reason, the model and the prompt version', async () => {
    const { code, out, outcome } = await propose('good', repair);
    expect(code).toBe(0);
    expect(outcome!.status).toBe('admitted');
    const task = (outcome as { task: Task }).task;
    expect(task.id).toBe(TASK);
    expect(task.lineage).toEqual({
      version: 2,
      parent: null,
      generation: 0,
      changes: [
        {
          version: 2,
          reason: '不该变更套餐：补一条 R5 断言',
          by: 'model:openai:good',
          prompt: 'task-editor-v1',
          seed: 0,
        },
      ],
    });
    expect(task.evaluation_criteria!.assertions!.map((a) => a.id)).toEqual([
      'identify-first',
      'confirm-first',
      'pay-full',
      'no-plan-change',
    ]);
    const manifest = JSON.parse(await readFile(join(out, 'manifest.json'), 'utf8')) as BankManifest;
    expect(manifest.tasks.filter((t) => t.origin === 'bank').map((t) => [t.task_id, t.version])).toEqual([[TASK, 2]]);
    // What the model was sent: the versioned prompt, the task, the finding, JSON mode.
    const body = server.requests.at(-1)!.body;
    expect(body.response_format).toEqual({ type: 'json_object' });
    expect(body.messages[1].content).toContain('Repair the task. The finding against it: 没有核对套餐');
    expect(body.messages[1].content).toContain(`"id": "${TASK}"`);
  });

  it('a variant from a pattern is admitted as a new task one generation down', async () => {
    const { code, outcome } = await propose('variant', ['--pattern', 'withhold_until_asked_twice']);
    expect(code).toBe(0);
    const task = (outcome as { task: Task }).task;
    expect(task.id).toBe(`${TASK}~model_withhold_until_asked_twice.0`);
    expect(task.lineage!.parent).toEqual({ task_id: TASK, version: 1 });
    expect(task.lineage!.generation).toBe(1);
    expect(task.user_scenario.withholds).toEqual([{ fact: 'phone', deflect: '这个一定要说吗？' }]);
  });

  it('a schema-breaking patch, a gate-failing patch, a bad path, an id change and garbage are each refused', async () => {
    const schema = await propose('schema', repair);
    expect([schema.code, schema.outcome]).toEqual([
      1,
      { status: 'schema_invalid', field: 'evaluation_criteria.reward_basis[0]', detail: SCHEMA_DETAIL },
    ]);
    const gate = await propose('gate', repair);
    expect([gate.code, gate.outcome]).toEqual([1, { status: 'gate_rejected', task_id: TASK, reasons: GATE_REASONS }]);
    const badpath = await propose('badpath', repair);
    expect([badpath.code, badpath.outcome]).toEqual([
      1,
      {
        status: 'patch_failed',
        detail:
          'OPERATION_PATH_UNRESOLVABLE at operation 0 (remove /evaluation_criteria/nothing): Cannot perform the operation at a path that does not exist',
      },
    ]);
    const rename = await propose('rename', repair);
    expect(rename.outcome).toEqual({ status: 'patch_failed', detail: 'operation replace /id changes id or lineage' });
    const garbage = await propose('garbage', repair);
    expect([garbage.code, garbage.outcome]).toEqual([
      1,
      { status: 'unparseable', detail: 'not JSON: "Sure! Here is the patch you asked for."' },
    ]);
    // Nothing refused reaches a bank.
    for (const r of [schema, gate, badpath, rename, garbage])
      await expect(readFile(join(r.out, 'tasks.json'), 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('bad usage exits 2', async () => {
    const both = await propose('good', [...repair, '--pattern', 'withhold_until_asked_twice']);
    expect([both.code, both.io.stderr]).toEqual([
      2,
      'switchboard: give exactly one of --repair <finding> and --pattern <id>\n',
    ]);
    const io = capture();
    expect(
      await main(
        ['propose', '--domain', 'carrier', '--model', 'noisy:0.1', '--task', TASK, ...repair, '--out', '/tmp/x'],
        io,
      ),
    ).toBe(2);
    expect(io.stderr).toBe(
      'switchboard: --model "noisy:0.1": expected <flavor>:<model>@<url> with flavor vllm-omni, openai, vllm\n',
    );
  });
});

const SCHEMA_DETAIL =
  'Invalid option: expected one of "DB"|"COMMUNICATE"|"ENV_ASSERTION"|"NL_ASSERTION"|"ACTION"|"WRITE_WHITELIST"|"QUALITY"|"ASSERTIONS"';
const GATE_REASONS = [
  'reference action #2 pay_bill_from_balance({"customer_id":"C1002","bill_id":"B10008","amount":500}) fails: Error: amount 500 yuan exceeds the outstanding 63.5 yuan of bill B10008',
  'reference solution has writes but leaves the database unchanged',
  'reference agent with scripted caller scores 0, not 1',
];

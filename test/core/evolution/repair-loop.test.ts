import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiModelClient } from '../../../src/adapters/shared/openai-client.ts';
import { evolve } from '../../../src/core/evolution/index.ts';
import { NoisyAgent } from '../../../src/core/participants/noisy.ts';
import { ScriptedUser } from '../../../src/core/participants/scripted.ts';
import { steppingClock } from '../../../src/core/ports/clock.ts';
import { scriptedModels, startOpenAiServer, type TestServer } from '../../fixtures/openai-server.ts';
import { plantedCarrier } from '../../fixtures/planted-carrier.ts';

const ID = 'planted-gold-breaks-r5';
const reply = (reason: string, patch: unknown[]) => JSON.stringify({ reason, patch });
/** One scripted code agent per model name. */
const EDITORS = {
  // Drops the plan change the policy forbids (R5) and the whitelist entry that allowed it.
  good: [
    reply('逾期账单时不能变更套餐：删掉 change_plan', [
      { op: 'remove', path: '/evaluation_criteria/actions/2' },
      { op: 'replace', path: '/evaluation_criteria/write_whitelist', value: [] },
    ]),
  ],
  garbage: ['I fixed it, trust me.'],
  // Touches only what the agent must say: the gold still breaks R5.
  gate: [reply('多说一句', [{ op: 'add', path: '/evaluation_criteria/communicate_info/-', value: '月底' }])],
};

let server: TestServer;
beforeAll(async () => {
  server = await startOpenAiServer(scriptedModels(EDITORS));
});
afterAll(async () => {
  await server.close();
});

async function run(model: keyof typeof EDITORS) {
  const { domain, runtime } = await plantedCarrier();
  return evolve({
    runtime,
    tasks: domain.tasks.filter((t) => t.id === ID),
    agent: () => new NoisyAgent({ p: 0, tasks: { [ID]: 1 } }),
    user: () => new ScriptedUser(),
    k: 2,
    rounds: 2,
    seed: 0,
    concurrency: 1,
    clock: () => steppingClock(domain.now, 1000),
    repair: { client: new OpenAiModelClient({ flavor: 'openai', model, baseURL: server.url, maxRetries: 0 }) },
  });
}

describe('model repairs inside the evolve loop (a fake OpenAI-compatible code agent)', () => {
  it('a good patch is admitted through the gate: the next round runs version 2, which passes', async () => {
    const { report, variants } = await run('good');
    const [r0, r1] = report.rounds;
    expect(r0!.attribution.map((a) => [a.verdict, a.findings.map((f) => f.kind)])).toEqual([
      ['broken', ['gold_breaks_rule', 'unsuppliable_value']],
    ]);
    expect(r0!.repairs!.map((x) => [x.task_id, x.status, x.version, x.detail])).toEqual([
      [ID, 'admitted', 2, '逾期账单时不能变更套餐：删掉 change_plan'],
    ]);
    expect(r0!.repairs![0]!.finding).toBe(
      r0!.attribution[0]!.findings.map((f) => `${f.kind} (${f.field}): ${f.detail}`).join('\n'),
    );
    // Round 1 runs the repaired task (no write left for the agent to skip): it passes.
    expect(r0!.labels.tasks.map((t) => [t.task_id, t.label])).toEqual([[ID, 'always_fail']]);
    expect(r1!.labels.tasks.map((t) => [t.task_id, t.label])).toEqual([[ID, 'always_pass']]);
    expect(r1!.attribution).toEqual([]);
    expect(r1!.repairs).toEqual([]);
    expect(report.summary.repaired).toEqual([
      { round: 0, task_id: ID, version: 2, reason: '逾期账单时不能变更套餐：删掉 change_plan' },
    ]);
    expect(variants.map((v) => [v.id, v.lineage?.version, v.evaluation_criteria?.actions?.map((a) => a.name)])).toEqual(
      [[ID, 2, ['find_customer_by_phone', 'get_bills']]],
    );
    expect(variants[0]!.lineage!.changes.map((c) => [c.version, c.by, c.prompt])).toEqual([
      [2, 'model:openai:good', 'task-editor-v1'],
    ]);
  });

  it('a garbage reply and a gate-failing patch are refused with the reason; the task stays as it was', async () => {
    const garbage = await run('garbage');
    expect(garbage.report.rounds.map((r) => r.repairs!.map((x) => [x.status, x.detail]))).toEqual([
      [['unparseable', 'not JSON: "I fixed it, trust me."']],
      [['unparseable', 'not JSON: "I fixed it, trust me."']],
    ]);
    expect(garbage.report.summary.repaired).toEqual([]);
    expect(garbage.variants).toEqual([]);
    const gate = await run('gate');
    const attempt = gate.report.rounds[0]!.repairs![0]!;
    expect([attempt.status, attempt.version]).toEqual(['gate_rejected', undefined]);
    expect(attempt.detail).toBe(
      'reference action #2 change_plan breaks R5: plan change scheduled for customer C1009 while bills B10035 are overdue; reference agent with scripted caller scores 0, not 1',
    );
    expect(gate.report.rounds[1]!.attribution[0]!.verdict).toBe('broken');
    expect(gate.variants).toEqual([]);
  });
});

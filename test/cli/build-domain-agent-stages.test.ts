/**
 * `build-domain --agent`, the domain stages (#19 item 3): a fake OpenAI-compatible endpoint that
 * misbehaves on purpose (invalid JSON, a 1 MB reply, one 500 that the client retries) refines
 * rule texts, proposes business rules (a good one, one with string-concatenated SQL, one naming a
 * missing column, one the gate refuses, one on a read tool) and harder tasks (a multi-step walk
 * that respects the new rule, one the gate refuses, one off the schema, a one-call one). Exactly
 * the valid proposals are admitted, the rest listed with their reasons; `--replies` reproduces the
 * run byte for byte without the endpoint.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDomainFolder } from '../../src/adapters/node/load-domain.ts';
import { sqlJsFactory } from '../../src/adapters/shared/sqljs-db.ts';
import { main } from '../../src/cli/main.ts';
import { DomainRuntime } from '../../src/core/env/environment.ts';
import { capture } from '../fixtures/cli-io.ts';
import { act, quantityRule, WALK, walkTask } from '../fixtures/petstore-proposals.ts';
import { completion, httpError, startOpenAiServer, type TestServer } from '../fixtures/openai-server.ts';

const SPEC = new URL('../fixtures/specs/swagger-petstore/openapi.yaml', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'sb-agent-stages-'));

const RULES = {
  rules: [
    { id: 'R3', text: 'To update a pet, give its id and name; its status is available, pending or sold.' },
    { id: 'R9', text: 'A rule that was never there.' },
    { id: 'R4', text: "Use change_pet_status to change a pet's status." },
    { id: 'R5', text: '  ' },
  ],
};

const BUSINESS = {
  rules: [
    quantityRule,
    {
      ...quantityRule,
      id: 'R8',
      text: 'A pet named by the caller must exist.',
      tool: 'update_pet',
      guard: { fail_if: "SELECT 1 FROM pets WHERE name = '' || ? || ''", args: ['name'], error: 'no pet {name}' },
    },
    {
      ...quantityRule,
      id: 'R9',
      text: 'Heavy pets are not updated by phone.',
      tool: 'update_pet',
      guard: {
        fail_if: 'SELECT 1 FROM pets WHERE id = ? AND weight > 10',
        args: ['id'],
        error: 'pet {id} is too heavy',
      },
      check: { when: 'before', violation_if: 'SELECT 1 WHERE ? IS NULL', args: ['id'], message: 'no id' },
    },
    {
      id: 'R10',
      text: 'A pet is never marked sold over the phone.',
      tool: 'update_pet',
      guard: { fail_if: "SELECT 1 WHERE ? = 'sold'", args: ['status'], error: 'pets are not marked sold by phone' },
      check: { when: 'before', violation_if: "SELECT 1 WHERE ? = 'sold'", args: ['status'], message: 'marked sold' },
    },
    { ...quantityRule, id: 'R11', tool: 'get_pet_by_id' },
    { ...quantityRule, id: 'R12', text: 'Refunds go through refund_order only.' },
  ],
};

const HARDER = {
  tasks: [
    walkTask('pets-hold-and-order', WALK, [
      { table: 'pets', ops: ['update'], columns: ['status'], where: { id: 1003 } },
      { table: 'orders', ops: ['insert'], where: { pet_id: 1003 } },
    ]),
    walkTask(
      'pets-ghost-pet',
      [act(1, 'get_pet_by_id', { pet_id: 99999 }), act(2, 'update_pet_with_form', { pet_id: 99999, status: 'sold' })],
      [{ table: 'pets', ops: ['update'] }],
    ),
    { id: 'pets-shapeless', user_scenario: 5 },
    walkTask('pets-one-call', [WALK[2]], [{ table: 'orders', ops: ['insert'] }]),
  ],
};

const caller = (persona: string) =>
  JSON.stringify({
    reason: 'Natural caller text',
    patch: [{ op: 'replace', path: '/user_scenario/persona', value: persona }],
  });

let server: TestServer;
let failedOnce = false;
beforeAll(async () => {
  server = await startOpenAiServer((body) => {
    const prompt = String(body.messages[1].content);
    const reply = (content: string) => ({ json: completion({ model: body.model, content }) });
    if (prompt.includes('Rewrite each rule')) return reply(JSON.stringify(RULES));
    if (prompt.includes('Propose up to three business rules')) return reply(JSON.stringify(BUSINESS));
    if (prompt.includes('harder than these')) return reply(`\`\`\`json\n${JSON.stringify(HARDER)}\n\`\`\``);
    if (prompt.includes('"id": "pets-update_pet-1"')) return reply(caller('Dana, who runs a small pet shop.'));
    if (prompt.includes('"id": "pets-update_pet_with_form-2"')) return reply('{"reason": "cut off", "patch": [');
    if (prompt.includes('"id": "pets-delete_pet-3"')) return reply(`{"reason": "${'x'.repeat(1_048_576)}"}`);
    if (!failedOnce) {
      failedOnce = true;
      return httpError(500, 'upstream exploded');
    }
    return reply(caller('Sam, who orders for a kennel.'));
  });
});
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

const read = (dir: string, f: string) => readFileSync(join(dir, f), 'utf8');
const ARGS = ['build-domain', '--from', SPEC, '--tasks', '4', '--seed', '0', '--name', 'pets'];

describe('switchboard build-domain --agent: rule texts, business rules, harder tasks', () => {
  it('admits exactly the valid proposals, lists the rest with reasons, and replays byte for byte', async () => {
    const out = join(work, 'built');
    const io = capture();
    const code = await main([...ARGS, '--out', out, '--agent', `openai:builder@${server.url}`], io);
    expect(io.stderr).toBe('');
    expect(code).toBe(0);
    // 4 caller-text requests (one retried after the 500) and 3 stage requests.
    expect(server.requests.length).toBe(8);
    const agent = JSON.parse(read(out, 'build-report.json')).agent;
    expect(agent.prompt_version).toBe('domain-builder-v2');
    expect(agent.admitted.map((a: { task_id: string }) => a.task_id)).toEqual([
      'pets-update_pet-1',
      'pets-place_order-4',
    ]);
    expect(agent.rejected).toEqual([
      {
        task_id: 'pets-update_pet_with_form-2',
        status: 'unparseable',
        detail: 'not JSON: "{\\"reason\\": \\"cut off\\", \\"patch\\": ["',
      },
      { task_id: 'pets-delete_pet-3', status: 'unparseable', detail: 'the reply has 1048590 characters, over 100000' },
    ]);
    expect(agent.rules).toEqual({
      admitted: [{ id: 'R3', detail: RULES.rules[0]!.text }],
      rejected: [
        {
          id: 'R9',
          status: 'unknown_rule',
          detail: 'no rule R9 in the policy (ids: R1, R2, R3, R4, R5, R6); ids are kept, none added',
        },
        {
          id: 'R4',
          status: 'invented_name',
          detail: 'names change_pet_status, which no tool, table or column of the domain is',
        },
        { id: 'R5', status: 'empty_text', detail: 'the new text is empty' },
      ],
    });
    expect(agent.business_rules.admitted).toEqual([
      { id: 'R7', detail: 'One order is for at most 5 pets. (guard on place_order, before check)' },
    ]);
    expect(agent.business_rules.rejected).toEqual([
      {
        id: 'R8',
        status: 'sql_not_parameterized',
        detail: 'guard.fail_if: builds text with || (string concatenation); bind each value with ? and args',
      },
      { id: 'R9', status: 'sql_invalid', detail: 'guard.fail_if: no such column: weight' },
      {
        id: 'R10',
        status: 'gate_rejected',
        detail:
          'the gate refuses the domain with it: pets-update_pet-1: reference action #1 update_pet({"id":1099,"status":"sold","name":"willow garden"}) fails: Error: pets are not marked sold by phone; ' +
          'pets-update_pet-1: reference solution has writes but leaves the database unchanged; ' +
          'pets-update_pet-1: reference action #1 update_pet breaks R10 (refused by the tool): marked sold; ' +
          'pets-update_pet-1: reference agent with scripted caller scores 0, not 1',
      },
      { id: 'R11', status: 'unknown_tool', detail: 'get_pet_by_id is not a write tool of the domain' },
      {
        id: 'R12',
        status: 'invented_name',
        detail: 'names refund_order, which no tool, table or column of the domain is',
      },
    ]);
    expect(agent.harder_tasks.admitted).toEqual([
      { id: 'pets-hold-and-order', detail: 'get_pet_by_id → update_pet_with_form → place_order' },
    ]);
    expect(agent.harder_tasks.rejected).toEqual([
      {
        id: 'pets-ghost-pet',
        status: 'gate_rejected',
        detail:
          'the gate refuses it: reference action #1 update_pet_with_form({"pet_id":99999,"status":"sold"}) fails: Error: pet 99999 not found; ' +
          'reference solution has writes but leaves the database unchanged; reference agent with scripted caller scores 0, not 1',
      },
      {
        id: 'pets-shapeless',
        status: 'schema_invalid',
        detail: 'user_scenario: Invalid input: expected object, received number',
      },
      { id: 'pets-one-call', status: 'not_harder', detail: 'a reference of fewer than two calls' },
    ]);

    // The files carry what was admitted: the refined rule, the new rule with its guard and check, the task.
    const policy = read(out, 'policy.md');
    expect(policy).toContain(`- **R3** ${RULES.rules[0]!.text}\n`);
    expect(policy).toContain(
      '- **R6** place_order: Place an order for a pet. status must be one of placed, approved, delivered.\n- **R7** One order is for at most 5 pets.\n',
    );
    const tools = JSON.parse(read(out, 'tools.json'));
    const place = tools.tools.find((t: { name: string }) => t.name === 'place_order');
    expect(place.steps.map((s: Record<string, unknown>) => Object.keys(s)[0])).toEqual([
      'fail_if',
      'fail_if',
      'fail_if',
      'write',
    ]);
    expect(place.steps[2]).toEqual({
      fail_if: 'SELECT 1 WHERE ? > 5',
      args: ['quantity'],
      error: 'at most 5 pets per order, not {quantity}',
    });
    expect(tools.rule_checks).toEqual([
      {
        rule: 'R7',
        description: 'One order is for at most 5 pets.',
        policy: 'One order is for at most 5 pets.',
        tools: ['place_order'],
        ...quantityRule.check,
      },
    ]);
    const tasks = JSON.parse(read(out, 'tasks.json'));
    expect(tasks.map((t: { id: string }) => t.id)).toEqual([
      'pets-update_pet-1',
      'pets-update_pet_with_form-2',
      'pets-delete_pet-3',
      'pets-place_order-4',
      'pets-hold-and-order',
    ]);
    expect(tasks[4].lineage.changes).toEqual([
      {
        version: 1,
        reason: 'proposed as a harder task',
        by: 'model:openai:builder',
        prompt: 'domain-builder-v2',
        seed: 6,
      },
    ]);

    // The built domain runs: the new task scores 1 with the reference and 0 doing nothing; an
    // order above the limit is refused by the guard and counted against R7.
    for (const [agentName, mean] of [
      ['reference', 1],
      ['noop', 0],
    ] as const) {
      const run = capture();
      expect(
        await main(['run', '--domain', out, '--agent', agentName, '--task-ids', 'pets-hold-and-order', '--json'], run),
      ).toBe(0);
      expect(JSON.parse(run.stdout).tasks.map((t: { mean: number }) => t.mean)).toEqual([mean]);
    }

    const runtime = await DomainRuntime.create(await loadDomainFolder(out), await sqlJsFactory());
    const env = await runtime.open();
    const over = await env.call({ id: 'c1', name: 'place_order', arguments: { pet_id: 1003, quantity: 6 } });
    expect([over.content, over.violations]).toEqual([
      'Error: at most 5 pets per order, not 6',
      [
        {
          rule: 'R7',
          message: 'an order for 6 pets, above 5',
          policy: 'One order is for at most 5 pets.',
          refused: true,
        },
      ],
    ]);
    await env.close();

    // No endpoint: the recorded replies give the same files.
    const again = join(work, 'replayed');
    const replay = capture();
    expect(await main([...ARGS, '--out', again, '--replies', join(out, 'agent-replies.json')], replay)).toBe(0);
    expect(server.requests.length).toBe(8);
    for (const f of ['tasks.json', 'tools.json', 'seed.json', 'policy.md', 'agent-replies.json', 'build-report.json'])
      expect(read(again, f), f).toBe(read(out, f));
  });
});

/**
 * `build-domain --agent` against a fake endpoint whose proposals are hostile or malformed (QA of
 * #19): ids that could climb out of a folder, and the hand-written loader reading such an id; the
 * same id proposed twice in one reply.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDomainFolder } from '../../src/adapters/node/load-domain.ts';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';
import { completion, startOpenAiServer, type TestServer } from '../fixtures/openai-server.ts';
import { quantityRule, WALK, walkTask } from '../fixtures/petstore-proposals.ts';

const SPEC = new URL('../fixtures/specs/swagger-petstore/openapi.yaml', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'sb-agent-proposals-'));
const HOLD = [
  { table: 'pets', ops: ['update'], columns: ['status'], where: { id: 1003 } },
  { table: 'orders', ops: ['insert'], where: { pet_id: 1003 } },
];

const R3 = 'To update a pet, give its id and name; its status is available, pending or sold.';
/** Each stage's reply with one id proposed twice. */
const TWICE = {
  rules: {
    rules: [
      { id: 'R3', text: R3 },
      { id: 'R3', text: 'Another text for the same rule.' },
    ],
  },
  business: { rules: [quantityRule, { ...quantityRule, text: 'One order is for at most 4 pets.' }] },
  harder: {
    tasks: [
      walkTask('pets-one-call', [WALK[2]], [{ table: 'orders', ops: ['insert'] }]),
      walkTask('pets-one-call', WALK, HOLD),
      walkTask('pets-hold-and-order', WALK, HOLD),
      walkTask('pets-hold-and-order', WALK.slice(1), HOLD),
    ],
  },
};

let server: TestServer;
let scenario: 'unsafe' | 'twice' | 'silent' = 'unsafe';
const THOUGHT = 'The user wants rules. Let me think about which rules apply to pets and orders first';
beforeAll(async () => {
  server = await startOpenAiServer((body) => {
    const prompt = String(body.messages[1].content);
    const reply = (content: string) => ({ json: completion({ model: body.model, content }) });
    if (scenario === 'silent') {
      // A reasoning model that spends its tokens thinking, and one that says nothing.
      const thinking =
        !prompt.includes('Propose up to three business rules') &&
        !prompt.includes('harder than these') &&
        (prompt.includes('Rewrite each rule') || prompt.includes('"id": "pets-update_pet-1"'));
      return {
        json: completion({
          model: body.model,
          content: thinking ? null : prompt.includes('harder than these') ? '  \n ' : '',
          ...(thinking ? { reasoning_content: THOUGHT } : {}),
          finish_reason: 'length',
        }),
      };
    }
    if (scenario === 'twice') {
      if (prompt.includes('Rewrite each rule')) return reply(JSON.stringify(TWICE.rules));
      if (prompt.includes('Propose up to three business rules')) return reply(JSON.stringify(TWICE.business));
      if (prompt.includes('harder than these')) return reply(JSON.stringify(TWICE.harder));
      return reply('{}');
    }
    if (prompt.includes('Rewrite each rule'))
      return reply(JSON.stringify({ rules: [{ id: 'R1/../../x', text: 'Look the record up first.' }] }));
    if (prompt.includes('Propose up to three business rules'))
      return reply(
        JSON.stringify({
          rules: [
            { ...quantityRule, id: 'R8', tool: '../place_order' },
            { ...quantityRule, id: `R${'9'.repeat(70)}` },
          ],
        }),
      );
    if (prompt.includes('harder than these'))
      return reply(JSON.stringify({ tasks: [walkTask('../../etc/passwd', WALK, HOLD)] }));
    return reply('{}');
  });
});
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

const read = (dir: string, f: string) => readFileSync(join(dir, f), 'utf8');
const ARGS = ['build-domain', '--from', SPEC, '--tasks', '1', '--seed', '0', '--name', 'pets'];

describe('build-domain --agent: ids a model proposes', () => {
  it('refuses task ids, rule ids and tool names outside the safe pattern as unsafe_id', async () => {
    const out = join(work, 'unsafe');
    const io = capture();
    expect(await main([...ARGS, '--out', out, '--agent', `openai:builder@${server.url}`], io)).toBe(0);
    const agent = JSON.parse(read(out, 'build-report.json')).agent;
    expect(agent.rules).toEqual({
      admitted: [],
      rejected: [
        {
          id: 'R1/../../x',
          status: 'unsafe_id',
          detail:
            'id: "R1/../../x" is not a safe id (1-64 characters: a letter or digit, then letters, digits, _ . : -)',
        },
      ],
    });
    expect(agent.business_rules.rejected).toEqual([
      {
        id: 'R8',
        status: 'unsafe_id',
        detail:
          'tool: "../place_order" is not a safe id (1-64 characters: a letter or digit, then letters, digits, _ . : -)',
      },
      {
        id: `R${'9'.repeat(70)}`,
        status: 'unsafe_id',
        detail: `id: "R${'9'.repeat(70)}" is not a safe id (1-64 characters: a letter or digit, then letters, digits, _ . : -)`,
      },
    ]);
    expect(agent.harder_tasks).toEqual({
      admitted: [],
      rejected: [
        {
          id: '../../etc/passwd',
          status: 'unsafe_id',
          detail:
            'id: "../../etc/passwd" is not a safe id (1-64 characters: a letter or digit, then letters, digits, _ . : -)',
        },
      ],
    });
    expect(JSON.parse(read(out, 'tasks.json')).map((t: { id: string }) => t.id)).toEqual(['pets-update_pet-1']);
  });

  it('the loader refuses a tasks.json task id with a path separator or "..", naming file and field', async () => {
    const out = join(work, 'unsafe');
    const tasks = JSON.parse(read(out, 'tasks.json'));
    for (const [id, why] of [
      ['../../etc/passwd', 'contains a path separator (/ or \\)'],
      ['a..b', 'contains ".."'],
      ['a\u0007b', 'contains a control character'],
    ]) {
      writeFileSync(join(out, 'tasks.json'), JSON.stringify([{ ...tasks[0], id }]));
      await expect(loadDomainFolder(out)).rejects.toThrow(
        `${join(out, 'tasks.json')}: [0].id: unsafe task id ${JSON.stringify(id)}: ${why}`,
      );
    }
    // tau2's telecom ids, brackets and colons included, still load.
    writeFileSync(
      join(out, 'tasks.json'),
      JSON.stringify([{ ...tasks[0], id: '[mobile_data_issue]user_abroad_roaming_enabled_off[PERSONA:None]' }]),
    );
    expect((await loadDomainFolder(out)).tasks.map((t) => t.id)).toEqual([
      '[mobile_data_issue]user_abroad_roaming_enabled_off[PERSONA:None]',
    ]);
  });

  it('rejects the second proposal of one id in a reply as duplicate_id, whatever became of the first', async () => {
    scenario = 'twice';
    const out = join(work, 'twice');
    const io = capture();
    expect(
      await main(
        [...ARGS.map((a) => (a === '1' ? '4' : a)), '--out', out, '--agent', `openai:builder@${server.url}`],
        io,
      ),
    ).toBe(0);
    const agent = JSON.parse(read(out, 'build-report.json')).agent;
    expect(agent.rules).toEqual({
      admitted: [{ id: 'R3', detail: R3 }],
      rejected: [
        {
          id: 'R3',
          status: 'duplicate_id',
          detail: 'R3 is proposed twice in one reply (first at rules[0]); only the first is considered',
        },
      ],
    });
    expect(agent.business_rules).toEqual({
      admitted: [{ id: 'R7', detail: 'One order is for at most 5 pets. (guard on place_order, before check)' }],
      rejected: [
        {
          id: 'R7',
          status: 'duplicate_id',
          detail: 'R7 is proposed twice in one reply (first at rules[0]); only the first is considered',
        },
      ],
    });
    expect(agent.harder_tasks).toEqual({
      admitted: [{ id: 'pets-hold-and-order', detail: 'get_pet_by_id → update_pet_with_form → place_order' }],
      rejected: [
        { id: 'pets-one-call', status: 'not_harder', detail: 'a reference of fewer than two calls' },
        {
          id: 'pets-one-call',
          status: 'duplicate_id',
          detail: 'pets-one-call is proposed twice in one reply (first at tasks[0]); only the first is considered',
        },
        {
          id: 'pets-hold-and-order',
          status: 'duplicate_id',
          detail:
            'pets-hold-and-order is proposed twice in one reply (first at tasks[2]); only the first is considered',
        },
      ],
    });
    expect(JSON.parse(read(out, 'tasks.json')).map((t: { id: string }) => t.id)).toEqual([
      'pets-update_pet-1',
      'pets-update_pet_with_form-2',
      'pets-delete_pet-3',
      'pets-place_order-4',
      'pets-hold-and-order',
    ]);
    expect(read(out, 'policy.md')).toContain(`- **R3** ${R3}\n`);
  });

  it('says "empty reply" or "reasoning only, no content", also when replayed', async () => {
    scenario = 'silent';
    const out = join(work, 'silent');
    expect(await main([...ARGS, '--out', out, '--agent', `openai:builder@${server.url}`], capture())).toBe(0);
    const agent = JSON.parse(read(out, 'build-report.json')).agent;
    const only = `reasoning only, no content (${THOUGHT.length} characters of reasoning)`;
    expect(agent.rejected).toEqual([{ task_id: 'pets-update_pet-1', status: 'unparseable', detail: only }]);
    expect([agent.rules.rejected, agent.business_rules.rejected, agent.harder_tasks.rejected]).toEqual([
      [{ id: '(reply)', status: 'unparseable', detail: only }],
      [{ id: '(reply)', status: 'unparseable', detail: 'empty reply' }],
      [{ id: '(reply)', status: 'unparseable', detail: 'empty reply' }],
    ]);
    const again = join(work, 'silent-replayed');
    expect(await main([...ARGS, '--out', again, '--replies', join(out, 'agent-replies.json')], capture())).toBe(0);
    expect(read(again, 'build-report.json')).toBe(read(out, 'build-report.json'));
  });
});

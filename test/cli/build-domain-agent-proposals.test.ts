/**
 * `build-domain --agent` against a fake endpoint whose proposals are hostile or malformed (QA of
 * #19): ids that could climb out of a folder, and the hand-written loader reading such an id.
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

let server: TestServer;
beforeAll(async () => {
  server = await startOpenAiServer((body) => {
    const prompt = String(body.messages[1].content);
    const reply = (content: string) => ({ json: completion({ model: body.model, content }) });
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
});

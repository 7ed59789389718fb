/**
 * `build-domain --agent`: a fake OpenAI-compatible endpoint gives a good refinement, garbage, a
 * patch the gate refuses and one that strays into the evaluation criteria; only the good one is
 * admitted, the others are listed with the reason; `--replies` reproduces the run without the
 * endpoint, byte for byte.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';
import { scriptedModels, startOpenAiServer, type TestServer } from '../fixtures/openai-server.ts';

const SPEC = new URL('../fixtures/specs/swagger-petstore/openapi.yaml', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'sb-agent-build-'));
const reply = (reason: string, patch: unknown[]) => JSON.stringify({ reason, patch });

// One reply per task, in task order (the first four tasks of the petstore at seed 0); the three
// domain stages after them get the last reply again, not their shape, so they admit nothing.
const REPLIES = [
  reply('Natural caller text', [
    { op: 'replace', path: '/user_scenario/persona', value: 'Dana, who runs a small pet shop and is in a hurry.' },
    { op: 'replace', path: '/user_scenario/requests/0', value: 'Hello! Could you update my pet record for me?' },
  ]),
  'Sure! I would rewrite the persona to sound friendlier.',
  reply('A different pet', [{ op: 'replace', path: '/evaluation_criteria/actions/1/arguments/pet_id', value: 99 }]),
  reply('Fewer checks', [{ op: 'replace', path: '/evaluation_criteria/reward_basis', value: ['DB'] }]),
];

let server: TestServer;
beforeAll(async () => {
  server = await startOpenAiServer(scriptedModels({ editor: REPLIES }));
});
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

const read = (dir: string, f: string) => readFileSync(join(dir, f), 'utf8');

describe('switchboard build-domain --agent', () => {
  it('admits only proposals that pass the checks and the gate, lists the rest, and replays exactly', async () => {
    const out = join(work, 'refined');
    const io = capture();
    const args = ['build-domain', '--from', SPEC, '--tasks', '4', '--seed', '0', '--name', 'pets'];
    expect(await main([...args, '--out', out, '--agent', `openai:editor@${server.url}`], io)).toBe(0);
    expect(server.requests.length).toBe(7);
    const report = JSON.parse(read(out, 'build-report.json'));
    expect(report.agent.admitted).toEqual([{ task_id: 'pets-update_pet-1', reason: 'Natural caller text' }]);
    expect(report.agent.rejected.map((r: { task_id: string; status: string }) => [r.task_id, r.status])).toEqual([
      ['pets-update_pet_with_form-2', 'unparseable'],
      ['pets-delete_pet-3', 'gate_rejected'],
      ['pets-place_order-4', 'out_of_scope'],
    ]);
    expect(report.agent.rejected[1].detail).toContain(
      'reference action #1 delete_pet({"pet_id":99}) fails: Error: pet 99 not found',
    );
    expect(report.agent.prompt_version).toBe('domain-builder-v2');
    const tasks = JSON.parse(read(out, 'tasks.json'));
    expect(tasks[0].user_scenario.persona).toBe('Dana, who runs a small pet shop and is in a hurry.');
    expect(tasks[0].lineage.changes).toMatchObject([
      {
        version: 2,
        by: 'model:openai:editor',
        prompt: 'task-editor-v1',
        seed: 0,
      },
    ]);
    expect(tasks[1].lineage).toBeUndefined();
    expect(io.stdout).toContain('agent: caller text 1 admitted, 3 rejected');
    expect(io.stdout).toContain(
      '  rejected pets-place_order-4 (out_of_scope): a refinement of the caller text may not change evaluation_criteria',
    );

    // The same seed and the recorded replies, no endpoint: the same files.
    const again = join(work, 'replayed');
    const replay = capture();
    expect(await main([...args, '--out', again, '--replies', join(out, 'agent-replies.json')], replay)).toBe(0);
    expect(server.requests.length).toBe(7);
    for (const f of ['tasks.json', 'tools.json', 'seed.json', 'policy.md', 'agent-replies.json', 'build-report.json'])
      expect(read(again, f), f).toBe(read(out, f));
  });

  it('fails with exit 1 and writes nothing when the endpoint is down', async () => {
    const down = await startOpenAiServer(() => ({ json: {} }));
    const url = down.url;
    await down.close();
    const out = join(work, 'down');
    const io = capture();
    const args = ['build-domain', '--from', SPEC, '--out', out, '--tasks', '2', '--name', 'pets'];
    expect(await main([...args, '--agent', `openai:editor@${url}`, '--model-retries', '0'], io)).toBe(1);
    expect(io.stderr).toBe(
      `switchboard: build-domain: the code agent's endpoint failed on task pets-update_pet-1: openai:editor at ${url}: network error: Connection error. (1 attempt); nothing was written\n`,
    );
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(work).filter((n) => n.startsWith('.down'))).toEqual([]);
  });

  it('caps --tasks with a clear error', async () => {
    const io = capture();
    expect(await main(['build-domain', '--from', SPEC, '--out', join(work, 'y'), '--tasks', '5000'], io)).toBe(2);
    expect(io.stderr).toContain(
      "option '--tasks <n>' argument '5000' is invalid. --tasks must be a whole number from 1 to 200",
    );
  });

  it('refuses --agent with --replies, and a replies file that is not one', async () => {
    const io = capture();
    const base = ['build-domain', '--from', SPEC, '--out', join(work, 'x')];
    expect(await main([...base, '--agent', `openai:editor@${server.url}`, '--replies', SPEC], io)).toBe(2);
    expect(io.stderr).toBe('switchboard: give --agent <model spec> or --replies <agent-replies.json>, not both\n');
    const bad = capture();
    expect(await main([...base, '--replies', SPEC], bad)).toBe(2);
    expect(bad.stderr).toMatch(/^switchboard: .*openapi\.yaml: not an agent-replies\.json record/);
  });
});

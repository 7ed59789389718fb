/**
 * A model that writes tool-call arguments that are not a JSON object (`{not json`, a JSON string,
 * a JSON array): our own files keep the text as sent, and the trainer formats (TRL SFT, TRL GRPO,
 * verl) carry it as `{"_raw": <text>}`, so that a trainer's `json.loads(arguments)` gives an object
 * whose items a chat template can render. Python readers check each file as the trainers read it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';
import { completion, startOpenAiServer, wireToolCall, type TestServer } from '../fixtures/openai-server.ts';

const run = promisify(execFile);
const TASK = 'carrier-pay-balance-1';
/** Argument texts as the model wrote them: not JSON, JSON of a string, JSON of an array; then a good call. */
const BAD = ['{not json', '"13800000001"', '[1]'];
let dir: string;
let server: TestServer;

async function cli(args: string[]) {
  const io = capture();
  const code = await main(args, io);
  if (code !== 0) throw new Error(`${args.join(' ')} → ${code}\n${io.stderr}${io.stdout}`);
  return io;
}

/** `export sft` of the run's trajectories to `out`, with `flags`. */
const exportSft = (out: string, ...flags: string[]) =>
  cli(['export', 'sft', join(dir, 'run', 'trajectories.jsonl'), '--domain', 'carrier', '--out', out, ...flags]);

async function py(script: string, ...args: string[]) {
  const { stdout } = await run('python3', [`test/fixtures/${script}`, ...args]);
  return JSON.parse(stdout);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sb-raw-args-'));
  // Every agent request: on the first one the three bad calls and a good one, then words, then goodbye.
  server = await startOpenAiServer((body) => {
    const said = body.messages.filter((m: { role: string }) => m.role === 'assistant').length;
    const model = String(body.model);
    if (said === 0)
      return {
        json: completion({
          model,
          content: null,
          tool_calls: [
            ...BAD.map((a, i) => wireToolCall(`bad_${i}`, 'find_customer_by_phone', a)),
            wireToolCall('good', 'find_customer_by_phone', { phone: '13800000001' }),
          ],
        }),
      };
    if (said === 1) return { json: completion({ model, content: 'I found your account. Anything else?' }) };
    return { json: completion({ model, content: 'Goodbye. ###STOP###' }) };
  });
  const agent = `openai:raw@${server.url}`;
  await cli(['run', '--domain', 'carrier', '--task-ids', TASK, '--agent', agent, '--out', join(dir, 'run')]);
  await cli([
    'groups',
    '--domain',
    'carrier',
    '--task-ids',
    TASK,
    '--agent',
    agent,
    '--granularity',
    'turn',
    '--k',
    '2',
    '--filter',
    'none',
    '--out',
    join(dir, 'rows.jsonl'),
  ]);
}, 120_000);
afterAll(() => server?.close());

describe('argument text that is not a JSON object', () => {
  it('stays as sent in the trajectory and in our SFT records', async () => {
    const t = JSON.parse(readFileSync(join(dir, 'run', 'trajectories.jsonl'), 'utf8'));
    expect(t.turns[0].tool_calls.map((c: { raw_arguments?: string }) => c.raw_arguments ?? null)).toEqual([
      ...BAD,
      null,
    ]);
    const out = join(dir, 'sft.jsonl');
    const io = await exportSft(out);
    expect(io.stdout).toBe(`wrote 1 SFT records to ${out}; left out 0\n`);
    const rec = JSON.parse(readFileSync(out, 'utf8'));
    const calls = rec.messages.flatMap((m: any) => m.tool_calls ?? []);
    expect(calls.map((c: any) => c.function.arguments)).toEqual([...BAD, '{"phone":"13800000001"}']);
  });

  it('TRL SFT: wrapped as {"_raw": text}, counted, every arguments an object for json.loads', async () => {
    const out = join(dir, 'sft-trl.jsonl');
    const io = await exportSft(out, '--format', 'trl');
    expect(io.stdout).toBe(
      `wrote 1 SFT records to ${out}; left out 0; 3 tool call(s) whose argument text the model wrote was not a JSON object carry it as {"_raw": <text>}\n`,
    );
    expect(await py('check_trainer_files.py', 'trl-sft', out)).toMatchObject({
      rows: 1,
      tool_calls: 4,
      raw_arguments: BAD,
    });
    const row = JSON.parse(readFileSync(out, 'utf8'));
    const calls = row.messages.flatMap((m: any) => m.tool_calls ?? []);
    expect(calls.map((c: any) => c.function.arguments)).toEqual([
      '{"_raw":"{not json"}',
      '{"_raw":"\\"13800000001\\""}',
      '{"_raw":"[1]"}',
      '{"phone":"13800000001"}',
    ]);
    // The failed calls' answers say why, as the model heard them.
    const answers = row.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content);
    expect(answers.slice(0, 3)).toEqual([
      'Error: invalid arguments for find_customer_by_phone: not valid JSON: {not json',
      'Error: invalid arguments for find_customer_by_phone: expected an object, got a string: "13800000001"',
      'Error: invalid arguments for find_customer_by_phone: expected an object, got an array: [1]',
    ]);
    expect(await py('check_tool_answers.py', 'messages', out)).toEqual({
      sequences: 1,
      calls: 4,
      answers: 4,
      not_run: 0,
    });
    const json = await exportSft(out, '--format', 'trl', '--json');
    expect(JSON.parse(json.stdout).wrapped_arguments).toBe(3);
  });

  it('TRL GRPO and verl from turn-level groups: wrapped in prompts and completions alike', async () => {
    const rows = join(dir, 'rows.jsonl');
    const trl = join(dir, 'grpo-trl.jsonl');
    const io = await cli(['export', 'grpo', rows, '--format', 'trl', '--out', trl]);
    // 3 groups (the agent turns at 0, 5 and 7) of 2 samples: the first reply's calls are in the
    // completion of the samples at turn 0, in the prompt of the others; 4 calls, 3 bad, per row.
    const doc = await py('check_trainer_files.py', 'trl-grpo', trl);
    expect(doc).toMatchObject({ rows: 6, tool_calls: 24 });
    expect(doc.groups.map((g: string) => g.split('@')[1])).toEqual(['0', '5', '7']);
    expect(doc.raw_arguments).toEqual(Array.from({ length: 6 }, () => BAD).flat());
    expect(io.stdout).toContain(
      '; 18 tool call(s) whose argument text the model wrote was not a JSON object carry it as {"_raw": <text>}',
    );
    const verl = join(dir, 'grpo.parquet');
    const vio = await cli(['export', 'grpo', rows, '--format', 'verl', '--out', verl]);
    const buf = readFileSync(verl);
    const read = await parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) });
    const dump = join(dir, 'verl.json');
    writeFileSync(
      dump,
      JSON.stringify(read, (_k, v) => (typeof v === 'bigint' ? Number(v) : v)),
    );
    const built = await py('verl_read.py', dump, dir);
    const args = built
      .flatMap((r: any) => r.messages.flatMap((m: any) => m.tool_calls ?? []))
      .map((c: any) => c.arguments);
    // One prompt per group: none at turn 0, the four calls in those at 5 and 7.
    const good = { phone: '13800000001' };
    expect(args).toEqual([...BAD.map((b) => ({ _raw: b })), good, ...BAD.map((b) => ({ _raw: b })), good]);
    expect(vio.stdout).toContain('; 6 tool call(s) whose argument text');
    expect(await py('check_tool_answers.py', 'verl', dump)).toEqual({ sequences: 3, calls: 8, answers: 8, not_run: 0 });
  });
});

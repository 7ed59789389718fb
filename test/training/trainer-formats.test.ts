import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parquetMetadata, parquetReadObjects, parquetSchema } from 'hyparquet';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';

const run = promisify(execFile);
const TASKS = 'carrier-pay-balance-1,carrier-bill-inquiry-1';
let dir: string;

async function cli(args: string[]) {
  const io = capture();
  const code = await main(args, io);
  if (code !== 0) throw new Error(`${args.join(' ')} → ${code}\n${io.stderr}${io.stdout}`);
  return io;
}

async function py(kind: string, file: string) {
  const { stdout } = await run('python3', ['test/fixtures/check_trainer_files.py', kind, file]);
  return JSON.parse(stdout);
}

/** `export sft --format trl`, then the stdlib reader's verdict. */
async function trlSft(trajectories: string, out: string) {
  await cli(['export', 'sft', trajectories, '--domain', 'carrier', '--format', 'trl', '--out', out]);
  return py('trl-sft', out);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sb-formats-'));
  await cli(['groups', '--domain', 'carrier', '--task-ids', TASKS, '--k', '2', '--out', join(dir, 'rows.jsonl')]);
  await cli(['run', '--domain', 'carrier', '--task-ids', TASKS, '--out', join(dir, 'run')]);
}, 120_000);

describe('exports trainers read as they are', () => {
  it('TRL SFT: messages and tools, string content throughout, arguments as JSON text', async () => {
    const out = join(dir, 'sft-trl.jsonl');
    const doc = await trlSft(join(dir, 'run', 'trajectories.jsonl'), out);
    expect(doc).toMatchObject({
      rows: 2,
      columns: ['messages', 'reward', 'task_id', 'tools'],
      messages_content: 'string',
      roles: 'system',
    });
    expect(doc.tool_calls).toBeGreaterThan(0);
    const first = JSON.parse(readFileSync(out, 'utf8').split('\n')[0]!);
    const toolOnly = first.messages.find((m: any) => m.role === 'assistant' && m.tool_calls);
    expect(toolOnly.content).toBe('');
  });

  it('TRL GRPO: prompt is the shared prefix, completion the sample, one row per sample', async () => {
    const out = join(dir, 'grpo-trl.jsonl');
    await cli(['export', 'grpo', join(dir, 'rows.jsonl'), '--format', 'trl', '--out', out]);
    const doc = await py('trl-grpo', out);
    expect(doc).toMatchObject({
      rows: 4,
      columns: [
        'advantage',
        'completion',
        'completion_mask',
        'final_reward',
        'group_id',
        'prompt',
        'sample_index',
        'task_id',
        'tools',
      ],
      prompt_content: 'string',
      completion_content: 'string',
      groups: ['conversation:carrier-bill-inquiry-1', 'conversation:carrier-pay-balance-1'],
      advantages: [0, 0, 0, 0],
    });
    const rows = readFileSync(join(dir, 'rows.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const trl = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    rows.forEach((r, i) => {
      expect(trl[i].prompt).toHaveLength(r.prefix_messages);
      expect(trl[i].prompt.length + trl[i].completion.length).toBe(r.messages.length);
      expect(trl[i].prompt[0]).toEqual({ role: 'system', content: r.messages[0].content });
      // One mask entry per completion message: 1 for the policy's own (assistant) messages.
      expect(trl[i].completion_mask).toEqual(
        r.messages.slice(r.prefix_messages).map((m: any) => (m.role === 'assistant' ? 1 : 0)),
      );
      expect(trl[i].completion_mask).toContain(0);
      expect(trl[i].completion_mask).toContain(1);
    });
  });

  it('verl: one Parquet row per group, nested columns typed (LIST<STRUCT>, STRUCT), not JSON text', async () => {
    const out = join(dir, 'verl.parquet');
    const io = await cli(['export', 'grpo', join(dir, 'rows.jsonl'), '--format', 'verl', '--out', out]);
    expect(io.stdout).toContain('wrote 2 verl prompts (one per group)');
    const buf = readFileSync(out);
    const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    const meta = parquetMetadata(file);
    const tree = parquetSchema(meta);
    const names = (n: any): any => (n.children.length ? { [n.element.name]: n.children.map(names) } : n.element.name);
    expect(tree.children.map(names)).toEqual([
      'data_source',
      { prompt: [{ list: [{ element: ['role', 'content'] }] }] },
      'ability',
      { reward_model: ['style', 'ground_truth'] },
      { extra_info: ['index', 'split', 'group_id', 'task_id', 'prefix_ref', 'group_size', 'mean_reward'] },
    ]);
    const leaves = meta.schema.filter((e: any) => e.type).map((e: any) => [e.name, e.type]);
    expect(leaves).toContainEqual(['group_size', 'INT32']);
    expect(leaves).toContainEqual(['mean_reward', 'DOUBLE']);
    const rows = (await parquetReadObjects({ file })) as any[];
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      data_source: 'switchboard/carrier',
      ability: 'voice-agent-tool-use',
      reward_model: { style: 'rule', ground_truth: 'carrier-pay-balance-1' },
      extra_info: {
        index: 0n,
        split: 'train',
        group_id: 'conversation:carrier-pay-balance-1',
        group_size: 2,
        mean_reward: 1,
      },
    });
    // A conversation group's shared prefix: the agent's system prompt (the agent speaks first).
    const grpo = JSON.parse(readFileSync(join(dir, 'rows.jsonl'), 'utf8').split('\n')[0]!);
    expect(rows[0].prompt).toEqual([{ role: 'system', content: grpo.messages[0].content }]);
  });

  it('TRL SFT with channel audio: every content is a list of typed parts, never mixed with strings', async () => {
    const runDir = join(dir, 'voice');
    await cli([
      'run',
      '--domain',
      'carrier',
      '--task-ids',
      'carrier-bill-inquiry-1',
      '--preset',
      'clean',
      '--out',
      runDir,
    ]);
    const out = join(runDir, 'sft-trl.jsonl');
    const doc = await trlSft(join(runDir, 'trajectories.jsonl'), out);
    expect(doc.messages_content).toBe("('list', ('struct',))");
    const row = JSON.parse(readFileSync(out, 'utf8'));
    expect(row.messages[0].content).toEqual([{ type: 'text', text: row.messages[0].content[0].text, audio: null }]);
    const audio = row.messages.find((m: any) => m.role === 'user').content[0];
    expect(audio).toMatchObject({ type: 'audio', text: null });
    expect(readFileSync(join(runDir, audio.audio)).subarray(0, 4).toString('latin1')).toBe('RIFF');
  }, 60_000);

  it('refuses a wrong extension for the format', async () => {
    const io = capture();
    expect(
      await main(['export', 'grpo', join(dir, 'rows.jsonl'), '--format', 'verl', '--out', join(dir, 'x.jsonl')], io),
    ).toBe(2);
    expect(io.stderr).toContain('name it .parquet for --format verl');
  });
});

/** The rows of a Parquet file as hyparquet reads them, BigInts as numbers (for JSON). */
async function parquetRows(path: string): Promise<any[]> {
  const buf = readFileSync(path);
  const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const rows = (await parquetReadObjects({ file })) as any[];
  return JSON.parse(JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? Number(v) : v)));
}

/** verl's prompt building redone in Python (stdlib + numpy) on rows dumped as JSON. */
async function verlRead(rows: any[], parquetDir: string, name: string) {
  const json = join(dir, `${name}.rows.json`);
  writeFileSync(json, JSON.stringify(rows));
  const { stdout } = await run('python3', ['test/fixtures/verl_read.py', json, parquetDir]);
  return JSON.parse(stdout);
}

describe('verl rows with tool calls and caller audio', () => {
  it('milestone prompts keep their tool calls and results (typed Parquet), read as verl builds them', async () => {
    const rowsFile = join(dir, 'milestone.jsonl');
    await cli([
      'groups',
      '--domain',
      'carrier',
      '--task-ids',
      'carrier-pay-balance-1',
      '--granularity',
      'milestone',
      '--k',
      '2',
      '--out',
      rowsFile,
    ]);
    const grpo = readFileSync(rowsFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((r) => r.sample_index === 0);
    const out = join(dir, 'verl-tools.parquet');
    const io = await cli(['export', 'grpo', rowsFile, '--format', 'verl', '--out', out]);
    expect(io.stdout).toContain(`wrote ${grpo.length} verl prompts`);
    const buf = readFileSync(out);
    const meta = parquetMetadata(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    const names = (n: any): any => (n.children.length ? { [n.element.name]: n.children.map(names) } : n.element.name);
    expect(parquetSchema(meta).children.map(names)[1]).toEqual({
      prompt: [
        {
          list: [
            {
              element: [
                'role',
                'content',
                { tool_calls: [{ list: [{ element: ['id', 'type', { function: ['name', 'arguments'] }] }] }] },
                'tool_call_id',
              ],
            },
          ],
        },
      ],
    });
    const rows = await parquetRows(out);
    // Each prompt is the group's shared prefix: same roles, contents, calls and results.
    rows.forEach((row, i) => {
      const prefix = grpo[i].messages.slice(0, grpo[i].prefix_messages);
      expect(row.prompt.map((m: any) => [m.role, m.content, m.tool_calls ?? null, m.tool_call_id ?? null])).toEqual(
        prefix.map((m: any) => [
          m.role,
          m.content ?? '',
          m.role === 'assistant' && m.tool_calls?.length ? m.tool_calls : null,
          m.role === 'tool' ? m.tool_call_id : null,
        ]),
      );
    });
    const read = await verlRead(rows, dir, 'tools');
    // The last milestone's prompt holds every matched reference call, arguments decoded.
    const calls = read.at(-1).messages.flatMap((m: any) => m.tool_calls ?? []);
    const expected = grpo
      .at(-1)
      .messages.slice(0, grpo.at(-1).prefix_messages)
      .flatMap((m: any) => (m.tool_calls ?? []).map((c: any) => [c.function.name, JSON.parse(c.function.arguments)]));
    expect(calls.map((c: any) => [c.name, c.arguments])).toEqual(expected);
    expect(expected.length).toBeGreaterThan(1);
    expect(read.every((r: any) => r.audios === 0)).toBe(true);
  }, 120_000);

  it('caller audio becomes <audio> placeholders and an audios column of paths from the parquet file; verl reads 16 kHz clips', async () => {
    const runDir = join(dir, 'voice-verl');
    await cli([
      'run',
      '--domain',
      'carrier',
      '--task-ids',
      'carrier-bill-inquiry-1',
      '--preset',
      'clean',
      '--out',
      runDir,
    ]);
    await cli([
      'export',
      'sft',
      join(runDir, 'trajectories.jsonl'),
      '--domain',
      'carrier',
      '--out',
      join(runDir, 'sft.jsonl'),
    ]);
    const sft = JSON.parse(readFileSync(join(runDir, 'sft.jsonl'), 'utf8'));
    // A group whose shared prefix runs to the caller's second turn (audio), as a milestone's does.
    const users = sft.messages.flatMap((m: any, i: number) => (m.role === 'user' ? [i] : []));
    const prefix = users[1] + 1;
    const row = (i: number) => ({
      group_id: 'milestone:voice#m1',
      sample_index: i,
      group_size: 2,
      granularity: 'milestone',
      prefix_ref: 'voice#m1',
      prefix_messages: prefix,
      domain: 'carrier',
      task_id: sft.task_id,
      messages: sft.messages,
      tools: sft.tools,
      step_rewards: [0],
      returns: [0],
      final_reward: i,
      outcome: i,
      partial: false,
      reward_choice: 'final',
      advantage: i ? 0.7 : -0.7,
      policy: 'p',
      sampling_seed: i,
      sampling: null,
      token_ids: null,
      logprobs: null,
    });
    writeFileSync(join(runDir, 'rows.jsonl'), `${JSON.stringify(row(0))}\n${JSON.stringify(row(1))}\n`);
    const out = join(runDir, 'verl', 'train.parquet');
    await cli(['export', 'grpo', join(runDir, 'rows.jsonl'), '--format', 'verl', '--out', out]);
    const [got] = await parquetRows(out);
    const clips = sft.messages
      .slice(0, prefix)
      .flatMap((m: any) => (m.role === 'user' ? m.content.map((p: any) => p.audio) : []));
    expect(clips.length).toBeGreaterThan(1);
    // Paths are rewritten to resolve from the Parquet file's folder.
    expect(got.audios).toEqual(clips.map((c: string) => `../${c}`));
    expect(got.prompt.filter((m: any) => m.role === 'user').map((m: any) => m.content)).toEqual(
      sft.messages
        .slice(0, prefix)
        .filter((m: any) => m.role === 'user')
        .map((m: any) => m.content.map(() => '<audio>').join('')),
    );
    const [read] = await verlRead([got], join(runDir, 'verl'), 'audio');
    const heard = read.messages.flatMap((m: any) => m.parts.filter((p: any) => p.type === 'audio'));
    expect(heard.map((p: any) => p.audio)).toEqual(got.audios);
    for (const p of heard) {
      const wav = readFileSync(join(runDir, 'verl', p.audio));
      // 16-bit mono: the data chunk after the 44-byte header holds two bytes per sample.
      expect([p.rate, p.channels, p.samples]).toEqual([16_000, 1, (wav.length - 44) / 2]);
      expect(p.peak).toBeGreaterThan(0.01);
    }
  }, 120_000);
});

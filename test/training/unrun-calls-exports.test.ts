/**
 * A model that sends 200 tool calls in one reply ends its episode `too_many_errors` after 10 tool
 * results. Every file a trainer reads of it — trajectories.jsonl, SFT records (ours and TRL), GRPO
 * rows (ours, TRL, verl) and `rollout` groups — must still be a well-formed OpenAI message
 * sequence: each call id answered by a tool message, in call order, before the next message.
 * A Python reader checks each file as a trainer would meet it.
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
let dir: string;
let server: TestServer;

/** 200 calls: lookups with arguments the tool refuses (all fail), every third an unknown tool. */
const CALLS = Array.from({ length: 200 }, (_, i) =>
  i % 3 === 2
    ? wireToolCall(`call_${i}`, 'no_such_tool', {})
    : wireToolCall(`call_${i}`, 'find_customer_by_phone', { bogus: i }),
);

async function cli(args: string[]) {
  const io = capture();
  const code = await main(args, io);
  if (code !== 0) throw new Error(`${args.join(' ')} → ${code}\n${io.stderr}${io.stdout}`);
  return io;
}

/** `export sft` of the carrier trajectories in `from` to `out`, in `format`. */
const exportSft = (from: string, format: string, out: string) =>
  cli(['export', 'sft', from, '--domain', 'carrier', '--format', format, '--out', out]);

async function answers(kind: string, file: string) {
  const { stdout } = await run('python3', ['test/fixtures/check_tool_answers.py', kind, file]);
  return JSON.parse(stdout);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sb-unrun-'));
  server = await startOpenAiServer((body) => ({
    json: completion({ model: String(body.model), content: null, tool_calls: CALLS }),
  }));
  const agent = `openai:burst@${server.url}`;
  await cli(['run', '--domain', 'carrier', '--task-ids', TASK, '--agent', agent, '--out', join(dir, 'run')]);
  await cli([
    'groups',
    '--domain',
    'carrier',
    '--task-ids',
    TASK,
    '--agent',
    agent,
    '--k',
    '2',
    '--out',
    join(dir, 'rows.jsonl'),
  ]);
  await cli([
    'rollout',
    '--domain',
    'carrier',
    '--endpoint',
    server.url,
    '--model',
    'burst',
    '--k',
    '2',
    '--task-ids',
    TASK,
    '--policy-version',
    'v1',
    '--out',
    join(dir, 'groups.jsonl'),
  ]);
}, 120_000);
afterAll(() => server?.close());

/** One sequence per episode (`n`), each with 200 calls, 200 answers, 190 of them `not run`. */
const each = (n: number) => ({ sequences: n, calls: 200 * n, answers: 200 * n, not_run: 190 * n });

describe('200 calls in one reply: every export answers every call', () => {
  it('trajectories.jsonl: the reply as sent, 10 results, 190 answered not_run', async () => {
    const file = join(dir, 'run', 'trajectories.jsonl');
    const t = JSON.parse(readFileSync(file, 'utf8'));
    expect(t.termination).toBe('too_many_errors');
    expect(t.turns[0].tool_calls.map((c: { id: string }) => c.id)).toEqual(CALLS.map((c) => c.id));
    expect(t.turns.filter((x: { not_run?: string }) => x.not_run === 'too_many_errors')).toHaveLength(190);
    expect(await answers('trajectories', file)).toEqual(each(1));
  });

  it('SFT records, ours and TRL', async () => {
    for (const format of ['switchboard', 'trl']) {
      const out = join(dir, `sft-${format}.jsonl`);
      await exportSft(join(dir, 'run', 'trajectories.jsonl'), format, out);
      expect(await answers('messages', out)).toEqual(each(1));
    }
  });

  it('GRPO rows from groups: ours, TRL prompt + completion, verl prompts', async () => {
    const rows = join(dir, 'rows.jsonl');
    expect(await answers('messages', rows)).toEqual(each(2));
    const trl = join(dir, 'grpo-trl.jsonl');
    await cli(['export', 'grpo', rows, '--format', 'trl', '--out', trl]);
    expect(await answers('prompt-completion', trl)).toEqual(each(2));
    const verl = join(dir, 'grpo.parquet');
    await cli(['export', 'grpo', rows, '--format', 'verl', '--out', verl]);
    const buf = readFileSync(verl);
    const read = await parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) });
    writeFileSync(
      join(dir, 'verl.json'),
      JSON.stringify(read, (_k, v) => (typeof v === 'bigint' ? Number(v) : v)),
    );
    // One prompt per group: the conversation's first prompt, before any call.
    expect(await answers('verl', join(dir, 'verl.json'))).toEqual({ sequences: 1, calls: 0, answers: 0, not_run: 0 });
  });

  it('rollout groups against a policy endpoint, and their TRL export', async () => {
    const groups = join(dir, 'groups.jsonl');
    expect(await answers('messages', groups)).toEqual(each(2));
    const trl = join(dir, 'rollout-trl.jsonl');
    await cli(['export', 'grpo', groups, '--format', 'trl', '--out', trl]);
    expect(await answers('prompt-completion', trl)).toEqual(each(2));
  });
});

describe('trajectories written before unrun calls were answered (before 8a2af74)', () => {
  /** The run's trajectory as an older version wrote it: no `not_run` answers, the reply as sent. */
  function oldLine(): any {
    const t = JSON.parse(readFileSync(join(dir, 'run', 'trajectories.jsonl'), 'utf8'));
    return { ...t, turns: t.turns.filter((x: { not_run?: string }) => x.not_run === undefined) };
  }

  it('export sft answers the calls left as a run answers them now, ours and TRL', async () => {
    const old = oldLine();
    expect(old.turns).toHaveLength(11);
    const file = join(dir, 'old.jsonl');
    writeFileSync(file, `${JSON.stringify(old)}\n`);
    for (const format of ['switchboard', 'trl']) {
      const fresh = join(dir, `sft-new-${format}.jsonl`);
      const repaired = join(dir, `sft-old-${format}.jsonl`);
      await exportSft(join(dir, 'run', 'trajectories.jsonl'), format, fresh);
      await exportSft(file, format, repaired);
      expect(await answers('messages', repaired)).toEqual(each(1));
      // Byte for byte the record of the same episode written by today's run.
      expect(readFileSync(repaired, 'utf8')).toBe(readFileSync(fresh, 'utf8'));
    }
    const rec = JSON.parse(readFileSync(join(dir, 'sft-old-switchboard.jsonl'), 'utf8'));
    expect(rec.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_199',
      content:
        "Error: not run: the episode ended (too_many_errors: 10 of the agent's tool calls failed) before this call ran",
    });
  });

  it('a file whose calls go unanswered before its end is refused, naming file and line', async () => {
    const good = JSON.parse(readFileSync(join(dir, 'run', 'trajectories.jsonl'), 'utf8'));
    const old = oldLine();
    // An answer cut from the middle of the reply's results, the episode going on after it.
    const edited = { ...old, turns: [...old.turns.slice(0, 5), { ...old.turns[0], tool_calls: [] }] };
    const file = join(dir, 'edited.jsonl');
    writeFileSync(file, `${JSON.stringify(good)}\n${JSON.stringify(edited)}\n`);
    const io = capture();
    expect(await main(['export', 'sft', file, '--domain', 'carrier', '--out', join(dir, 'x.jsonl')], io)).toBe(2);
    expect(io.stderr).toBe(
      `switchboard: ${file}:2: turns: turn 0 (assistant): 196 of its 200 tool calls have no tool turn, and the episode went on after them: every tool call needs its tool turn before the conversation goes on (was this file edited?)\n`,
    );
  });

  it('export grpo refuses rows whose calls were left unanswered, naming file, line, group and message', async () => {
    const rows = readFileSync(join(dir, 'rows.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    // The rows as an older version wrote them: the reply's calls past the 10th without answers.
    const old = rows.map((r) => ({
      ...r,
      messages: r.messages.filter((m: { content?: string }) => !m.content?.startsWith('Error: not run:')),
    }));
    expect(old.map((r) => r.messages.length)).toEqual([12, 12]);
    const file = join(dir, 'old-rows.jsonl');
    writeFileSync(file, old.map((r) => `${JSON.stringify(r)}\n`).join(''));
    for (const format of ['switchboard', 'trl', 'verl']) {
      const io = capture();
      const out = join(dir, format === 'verl' ? 'old.parquet' : 'old-out.jsonl');
      expect(await main(['export', 'grpo', file, '--format', format, '--out', out], io)).toBe(2);
      expect(io.stderr).toBe(
        `switchboard: ${file}:1: messages: message 1 (assistant) of group ${rows[0].group_id} sample 0: 190 of its 200 tool calls have no tool message (written before calls that never ran were answered): make the rows again (\`switchboard groups\` or \`rollout\`)\n`,
      );
    }
  });
});

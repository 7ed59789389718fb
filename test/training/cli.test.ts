import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parquetMetadata } from 'hyparquet';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';
import { testData } from '../fixtures/data.ts';
import { readJsonl } from '../../src/adapters/node/training-files.ts';
import { GrpoRow, SftRecord } from '../../src/core/training/export.ts';
import { Trajectory } from '../../src/core/schema/trajectory.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** `run --out <dir>/run` of one carrier task; returns that folder. */
async function carrierRun(dir: string): Promise<string> {
  const run = join(dir, 'run');
  const code = await main(
    ['run', '--domain', 'carrier', '--task-ids', 'carrier-change-plan-1', '--out', run, '--json'],
    capture(),
  );
  expect(code).toBe(0);
  return run;
}

describe('switchboard groups / export', () => {
  it('groups at each granularity write validated GRPO rows; scripted rewards give zero supply', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-groups-'));
    dirs.push(dir);
    const expected = { conversation: 2, milestone: 6, turn: 14 };
    for (const granularity of ['conversation', 'milestone', 'turn'] as const) {
      const io = capture();
      const out = join(dir, `${granularity}.jsonl`);
      const code = await main(
        [
          'groups',
          '--domain',
          'carrier',
          '--task-ids',
          'carrier-pay-balance-1',
          '--granularity',
          granularity,
          '--k',
          '2',
          '--seed',
          '3',
          '--out',
          out,
          '--json',
        ],
        io,
      );
      expect(code, io.stderr).toBe(0);
      const report = JSON.parse(io.stdout);
      expect([report.granularity, report.rows, report.supply.outcome]).toEqual([granularity, expected[granularity], 0]);
      const rows = await readJsonl(out, GrpoRow);
      expect(rows.every((r) => r.granularity === granularity && r.advantage === 0)).toBe(true);
    }
    // milestone: 3 reference calls, so 3 milestones, 2 forks each.
    const io = capture();
    expect(await main(['export', 'grpo', join(dir, 'milestone.jsonl'), '--out', join(dir, 'm.parquet')], io)).toBe(0);
    expect(Number(parquetMetadata((await readFile(join(dir, 'm.parquet'))).buffer as ArrayBuffer).num_rows)).toBe(6);
  });

  it('export sft filters scored trajectories from run --out', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-sft-'));
    dirs.push(dir);
    const run = capture();
    expect(
      await main(
        [
          'run',
          '--domain',
          'carrier',
          '--task-ids',
          'carrier-pay-balance-1',
          '--agent',
          'noop',
          '--trials',
          '2',
          '--out',
          dir,
          '--json',
        ],
        run,
      ),
    ).toBe(0);
    const io = capture();
    const out = join(dir, 'sft.jsonl');
    expect(
      await main(
        [
          'export',
          'sft',
          join(dir, 'trajectories.jsonl'),
          '--domain',
          'carrier',
          '--out',
          out,
          '--min-reward',
          '1',
          '--json',
        ],
        io,
      ),
    ).toBe(1);
    expect(JSON.parse(io.stdout).rejected.map((r: { reason: string }) => r.reason)).toEqual([
      'reward 0 < 1',
      'reward 0 < 1',
    ]);
    const all = capture();
    expect(
      await main(
        ['export', 'sft', join(dir, 'trajectories.jsonl'), '--domain', 'carrier', '--out', out, '--json'],
        all,
      ),
    ).toBe(0);
    expect((await readJsonl(out, SftRecord)).map((r) => r.reward)).toEqual([0, 0]);
    const bad = capture();
    expect(await main(['export', 'grpo', join(dir, 'trajectories.jsonl'), '--out', join(dir, 'x.parquet')], bad)).toBe(
      2,
    );
    expect(bad.stderr).toMatch(/trajectories\.jsonl:1: /);
  });

  it('refuses bad outputs and foreign trajectories before doing any work', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-bad-'));
    dirs.push(dir);
    let io = capture();
    expect(await main(['groups', '--domain', 'carrier', '--task-ids', 'carrier-pay-balance-1', '--out', dir], io)).toBe(
      2,
    );
    expect(io.stderr).toBe(`switchboard: --out ${dir}: is a folder, not a file\n`);
    io = capture();
    expect(await main(['groups', '--domain', 'carrier', '--k', '1', '--out', join(dir, 'g.jsonl')], io)).toBe(2);
    expect(io.stderr).toContain('--k must be a whole number from 2');
    io = capture();
    expect(
      await main(
        ['export', 'sft', join(dir, 'missing.jsonl'), '--domain', 'carrier', '--out', join(dir, 's.jsonl')],
        io,
      ),
    ).toBe(2);
    expect(io.stderr).toBe(`switchboard: ${join(dir, 'missing.jsonl')}: cannot read (ENOENT)\n`);
  });

  it('export sft refuses trajectories recorded in another domain', { tags: ['tau2-data'] }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-foreign-'));
    dirs.push(dir);
    const run = await carrierRun(dir);
    const io = capture();
    const code = await main(
      [
        'export',
        'sft',
        join(run, 'trajectories.jsonl'),
        '--domain',
        'tau2-airline',
        '--data',
        testData('airline'),
        '--out',
        join(dir, 's.jsonl'),
      ],
      io,
    );
    expect(code).toBe(2);
    expect(io.stderr).toBe(
      `switchboard: ${join(run, 'trajectories.jsonl')}: trajectory 1 was recorded in domain "carrier", not tau2-airline\n`,
    );
  });

  it('export sft writes audio paths that resolve from the exported file (or under --audio-root)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-sft-audio-'));
    dirs.push(dir);
    const runDir = join(dir, 'run');
    const run = capture();
    const args = ['run', '--domain', 'carrier', '--task-ids', 'carrier-pay-balance-1', '--out', runDir, '--json'];
    expect(await main(args, run)).toBe(0);
    const file = join(runDir, 'trajectories.jsonl');
    const [t] = await readJsonl(file, Trajectory);
    const wav = 'audio/carrier/t/turn-001.degraded.wav';
    const turn = t!.turns[1]!;
    if (turn.role !== 'user') throw new Error('turn 1 is the caller');
    turn.audio = { clean: wav, degraded: wav, duration_ms: 1000, preset: 'regular', tts: 'espeak-ng', timeline: [] };
    await writeFile(file, `${JSON.stringify(t)}\n`);
    await mkdir(join(runDir, 'audio/carrier/t'), { recursive: true });
    await writeFile(join(runDir, wav), 'RIFF');
    const out = join(dir, 'export', 'sft.jsonl');
    for (const [extra, want] of [
      [[], '../run/audio/carrier/t/turn-001.degraded.wav'],
      [['--audio-root', join(dir, 'copy')], '../copy/audio/carrier/t/turn-001.degraded.wav'],
    ] as const) {
      const io = capture();
      expect(await main(['export', 'sft', file, '--domain', 'carrier', '--out', out, ...extra], io)).toBe(0);
      const [record] = await readJsonl(out, SftRecord);
      expect(record!.messages[2]).toEqual({ role: 'user', content: [{ type: 'audio', audio: want }] });
      expect(record!.caller_transcripts).toEqual([{ message: 2, text: turn.text }]);
      if (extra.length === 0) expect(existsSync(join(dirname(out), want))).toBe(true);
    }
  });
});

describe('groups when every attempt breaks', () => {
  it('counts broken attempts and incomplete tasks the same way at every granularity and says why', async () => {
    const { startOpenAiServer, errorBody } = await import('../fixtures/openai-server.ts');
    // Every request is answered 404 (the model is not served): an infrastructure failure, not retried.
    const server = await startOpenAiServer(() => ({
      status: 404,
      json: errorBody('The model `gone` does not exist.', 'NotFoundError'),
    }));
    const dir = await mkdtemp(join(tmpdir(), 'sb-groups-broken-'));
    dirs.push(dir);
    try {
      const reports: Record<string, any> = {};
      for (const granularity of ['conversation', 'milestone', 'turn'] as const) {
        const io = capture();
        const args = [
          'groups',
          '--domain',
          'carrier',
          '--task-ids',
          'carrier-pay-balance-1',
          '--granularity',
          granularity,
          '--agent',
          `vllm:gone@${server.url}`,
          '--k',
          '2',
          '--out',
          join(dir, `${granularity}.jsonl`),
        ];
        expect(await main([...args, '--json'], io)).toBe(1);
        reports[granularity] = JSON.parse(io.stdout);
        const text = capture();
        expect(await main(args, text)).toBe(1);
        expect(text.stderr).toContain(
          `switchboard: no GRPO rows: 1 of 1 prefixes got no group of K valid samples (carrier-pay-balance-1); broken attempts: ${reports[granularity].invalid_attempts} × `,
        );
      }
      const reason = Object.keys(reports.conversation.invalid_reasons)[0];
      expect(reason).toMatch(/404/);
      // Conversation: 2 samples × 3 attempts; milestone and turn: the source episode, 3 attempts.
      expect(
        Object.values(reports).map((r) => [r.groups, r.rows, r.incomplete, r.invalid_attempts, r.invalid_reasons]),
      ).toEqual([
        [0, 0, ['carrier-pay-balance-1'], 6, { [reason!]: 6 }],
        [0, 0, ['carrier-pay-balance-1'], 3, { [reason!]: 3 }],
        [0, 0, ['carrier-pay-balance-1'], 3, { [reason!]: 3 }],
      ]);
    } finally {
      await server.close();
    }
  }, 60_000);
});

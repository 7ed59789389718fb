import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { builtinDomainDir } from '../../src/adapters/node/load-domain.ts';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { capture } from '../fixtures/cli-io.ts';
import { testData } from '../fixtures/data.ts';
import { Trajectory } from '../../src/core/schema/trajectory.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('switchboard CLI', () => {
  it('gate --json prints one document with per-task verdicts', async () => {
    const io = capture();
    expect(await main(['gate', 'carrier', '--json'], io)).toBe(0);
    const report = JSON.parse(io.stdout);
    expect(report).toMatchObject({ domain: 'carrier', accepted: true, domain_problems: [] });
    expect(report.tasks).toHaveLength(15);
    expect(report.tasks[0]).toEqual({
      task_id: 'carrier-pay-balance-1',
      accepted: true,
      reasons: [],
      info: [],
      reference_reward: 1,
      noop_reward: 0,
      reference_partial: false,
      policy: { status: 'clean', violations: [], unchecked: [] },
    });
    expect(report.task_origin).toBe('native');
  });

  it('run writes one trajectory per line and a summary with pass^k', async () => {
    const out = await mkdtemp(join(tmpdir(), 'sb-run-'));
    dirs.push(out);
    const io = capture();
    const ids = 'carrier-pay-balance-1,carrier-claimed-payment-1';
    const code = await main(
      [
        'run',
        '--domain',
        'carrier',
        '--agent',
        'reference',
        '--trials',
        '2',
        '--concurrency',
        '3',
        '--seed',
        '5',
        '--task-ids',
        ids,
        '--out',
        out,
        '--json',
      ],
      io,
    );
    expect(code).toBe(0);
    const summary = JSON.parse(io.stdout);
    expect(summary.totals).toEqual({
      episodes: 4,
      valid: 4,
      invalid: 0,
      invalid_attempts: 0,
      invalid_share: 0,
      mean_reward: 1,
      pass_hat: { 1: 1, 2: 1 },
      rule_breaking: 0,
      rule_breaking_passes: 0,
    });
    expect(summary.tasks.map((t: { task_id: string; rule_breaks: number[] }) => t.rule_breaks)).toEqual([
      [0, 0],
      [0, 0],
    ]);
    expect(summary.tasks.map((t: { task_id: string; rewards: number[] }) => [t.task_id, t.rewards])).toEqual([
      ['carrier-pay-balance-1', [1, 1]],
      ['carrier-claimed-payment-1', [1, 1]],
    ]);
    expect(JSON.parse(await readFile(join(out, 'summary.json'), 'utf8'))).toEqual(summary);
    const lines = (await readFile(join(out, 'trajectories.jsonl'), 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(4);
    const trajectories = lines.map((l) => Trajectory.parse(JSON.parse(l)));
    // Task order of the domain, then trial: independent of --concurrency.
    expect(trajectories.map((t) => `${t.task_id}#${t.trial}@${t.seed}`)).toEqual([
      'carrier-pay-balance-1#0@5',
      'carrier-pay-balance-1#1@6',
      'carrier-claimed-payment-1#0@5',
      'carrier-claimed-payment-1#1@6',
    ]);
    expect(summary.settings).toEqual({
      split: null,
      task_ids: ['carrier-pay-balance-1', 'carrier-claimed-payment-1'],
      concurrency: 3,
      threads: 1,
      max_steps: 100,
      teacher_guidance: false,
      channel: null,
      duplex: null,
      max_invalid_share: 0.1,
      max_same_fault: 6,
    });
    expect([summary.failure, summary.stopped]).toEqual([null, null]);
    expect(trajectories.every((t) => t.reward_info?.reward === 1 && t.termination === 'user_stop')).toBe(true);
  });

  it('prints a readable score table without --json', async () => {
    const io = capture();
    expect(
      await main(['run', '--domain', 'carrier', '--agent', 'noop', '--task-ids', 'carrier-change-plan-1'], io),
    ).toBe(0);
    expect(io.stdout).toContain('Run: carrier · agent noop · user scripted · 1 trial · seed 0');
    expect(io.stdout).toMatch(/carrier-change-plan-1\s+0\.00\s+0\.000\s+0\.000\s+0/);
    expect(io.stdout).toContain(
      '\ninvalid share: 0.000 (0 of 1 trials without a valid rollout after resampling; limit 0.1)\n',
    );
  });

  it('rejects bad input with exit code 2 and a clear message', async () => {
    let io = capture();
    expect(await main(['gate', 'atlantis'], io)).toBe(2);
    expect(io.stderr).toBe(
      'switchboard: unknown domain "atlantis"; known domains: carrier, debt-negotiation, insurance-renewal; tau2-bench domains: tau2-airline, tau2-retail, tau2-telecom\n',
    );
    io = capture();
    expect(await main(['run', '--domain', 'carrier', '--agent', 'gpt-9'], io)).toBe(2);
    expect(io.stderr).toBe(
      'switchboard: unknown agent "gpt-9" (known: reference, noop, noisy:<p>, <flavor>:<model>@<url>, local:<id>, realtime:<ws-url>)\n',
    );
    io = capture();
    expect(await main(['run', '--domain', 'carrier', '--task-ids', 'nope'], io)).toBe(2);
    expect(io.stderr).toBe('switchboard: unknown task id(s) in carrier: nope\n');
    io = capture();
    expect(await main(['run', '--domain', 'carrier', '--trials', '0'], io)).toBe(2);
    expect(io.stderr).toContain('--trials must be a whole number from 1 to 100000');
    for (const bad of [
      ['--seed', '1e21'],
      ['--trials', '0x2'],
      ['--seed', '9007199254740993'],
    ]) {
      io = capture();
      expect(await main(['run', '--domain', 'carrier', ...bad], io)).toBe(2);
    }
    io = capture();
    expect(await main(['run', '--domain', 'carrier', '--agent', 'toString'], io)).toBe(2);
    expect(io.stderr).toBe(
      'switchboard: unknown agent "toString" (known: reference, noop, noisy:<p>, <flavor>:<model>@<url>, local:<id>, realtime:<ws-url>)\n',
    );
    io = capture();
    expect(await main(['run', '--domain', 'carrier', '--user', '__proto__'], io)).toBe(2);
    io = capture();
    expect(await main(['gate', 'carrier', '--task-ids', ',,,'], io)).toBe(2);
    expect(io.stderr).toBe('switchboard: --task-ids names no task\n');
    io = capture();
    const emptyCache = await mkdtemp(join(tmpdir(), 'sb-nocache-'));
    const before = { data: process.env.SWITCHBOARD_DATA, tau2: process.env.SWITCHBOARD_TAU2_DATA };
    process.env.SWITCHBOARD_DATA = emptyCache;
    delete process.env.SWITCHBOARD_TAU2_DATA;
    const io2 = capture();
    try {
      expect(await main(['run', '--domain', 'tau2-airline'], io)).toBe(2);
      // SWITCHBOARD_TAU2_DATA is read first; one without the domain's folder is named.
      process.env.SWITCHBOARD_TAU2_DATA = emptyCache;
      expect(await main(['run', '--domain', 'tau2-airline'], io2)).toBe(2);
    } finally {
      for (const [k, v] of [
        ['SWITCHBOARD_DATA', before.data],
        ['SWITCHBOARD_TAU2_DATA', before.tau2],
      ] as const)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      await rm(emptyCache, { recursive: true });
    }
    expect(io.stderr).toBe(
      `switchboard: tau2-airline needs tau2-bench's airline data, which is not in the cache (${emptyCache}/tau2/a2c024725189473d2d7cea3a5cfdbcc67478e41f/airline): run \`npx switchboard data tau2\` to download it, or pass --data <dir> (data/tau2/domains/airline/ of a tau2-bench checkout), or set SWITCHBOARD_TAU2_DATA to a folder holding airline/\n`,
    );
    expect(io2.stderr).toBe(
      `switchboard: tau2-airline: SWITCHBOARD_TAU2_DATA=${emptyCache} has no airline/ folder (it should hold airline/, retail/, telecom/); unset it to use the cache, or pass --data <dir>\n`,
    );
    io = capture();
    expect(await main(['run', '--domain', 'carrier', '--split', 'train'], io)).toBe(2);
    expect(io.stderr).toBe(
      'switchboard: --split needs a domain with task splits (tau2-airline, tau2-retail, tau2-telecom), not carrier\n',
    );
  });

  it('a tau2 domain without --data reads $SWITCHBOARD_TAU2_DATA before the cache', {
    tags: ['tau2-data'],
  }, async () => {
    const emptyCache = await mkdtemp(join(tmpdir(), 'sb-nocache-'));
    const before = { data: process.env.SWITCHBOARD_DATA, tau2: process.env.SWITCHBOARD_TAU2_DATA };
    process.env.SWITCHBOARD_DATA = emptyCache;
    process.env.SWITCHBOARD_TAU2_DATA = dirname(testData('airline'));
    const io = capture();
    try {
      expect(await main(['run', '--domain', 'tau2-airline', '--task-ids', '0', '--agent', 'noop', '--json'], io)).toBe(
        0,
      );
    } finally {
      for (const [k, v] of [
        ['SWITCHBOARD_DATA', before.data],
        ['SWITCHBOARD_TAU2_DATA', before.tau2],
      ] as const)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      await rm(emptyCache, { recursive: true });
    }
    const doc = JSON.parse(io.stdout);
    // The do-nothing agent scores 1 on airline task 0 (as with --data).
    expect([doc.domain, doc.tasks.map((t: { task_id: string; rewards: number[] }) => [t.task_id, t.rewards])]).toEqual([
      'tau2-airline',
      [['0', [1]]],
    ]);
  });

  it('--json failures print one JSON error document on stdout', async () => {
    const io = capture();
    expect(await main(['run', '--domain', 'atlantis', '--json'], io)).toBe(2);
    expect(JSON.parse(io.stdout)).toEqual({
      error:
        'unknown domain "atlantis"; known domains: carrier, debt-negotiation, insurance-renewal; tau2-bench domains: tau2-airline, tau2-retail, tau2-telecom',
    });
  });

  it('refuses an --out that is not a folder before running anything', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-out-'));
    dirs.push(dir);
    const file = join(dir, 'a-file');
    await writeFile(file, 'x');
    let io = capture();
    expect(await main(['run', '--domain', 'carrier', '--out', file], io)).toBe(2);
    expect(io.stderr).toBe(`switchboard: --out ${file}: exists and is not a folder\n`);
    io = capture();
    expect(await main(['run', '--domain', 'carrier', '--out', join(file, 'sub')], io)).toBe(2);
    expect(io.stderr).toMatch(/^switchboard: --out .*a-file\/sub: cannot write there \(/);
  });

  it('prints the version', async () => {
    const io = capture();
    expect(await main(['--version'], io)).toBe(0);
    expect(io.stdout).toBe(
      `${JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')).version}\n`,
    );
  });

  it('demo gates carrier and checks reference 1.0 / do-nothing 0.0 on every task', async () => {
    const io = capture();
    expect(await main(['demo', '--json'], io)).toBe(0);
    const doc = JSON.parse(io.stdout);
    expect(doc.ok).toBe(true);
    expect(doc.reference.totals.mean_reward).toBe(1);
    expect(doc.noop.totals.mean_reward).toBe(0);
  });

  it('loads a domain from a folder and names the file and field of a malformed one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sb-domain-'));
    dirs.push(dir);
    const src = builtinDomainDir('carrier');
    await writeFile(
      join(dir, 'domain.ts'),
      `export { carrier } from ${JSON.stringify(pathToFileURL(join(src, 'domain.ts')).href)};\n`,
    );
    for (const f of ['policy.md', 'schema.sql', 'seed.json', 'tasks.json']) await copyFile(join(src, f), join(dir, f));
    let io = capture();
    expect(await main(['gate', dir, '--task-ids', 'carrier-change-plan-1', '--json'], io)).toBe(0);
    expect(
      JSON.parse(io.stdout).tasks.map((t: { task_id: string; accepted: boolean }) => [t.task_id, t.accepted]),
    ).toEqual([['carrier-change-plan-1', true]]);

    const tasks = JSON.parse(await readFile(join(src, 'tasks.json'), 'utf8'));
    tasks[4].evaluation_criteria.reward_basis = ['DB', 'VIBES'];
    await writeFile(join(dir, 'tasks.json'), JSON.stringify(tasks));
    io = capture();
    expect(await main(['run', '--domain', dir], io)).toBe(2);
    expect(io.stderr).toMatch(
      new RegExp(
        `^switchboard: ${join(dir, 'tasks.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: \\[4\\]\\.evaluation_criteria\\.reward_basis\\[1\\]: `,
      ),
    );
    expect(io.stdout).toBe('');
  });
});

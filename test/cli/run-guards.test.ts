/**
 * Issue 17 item 4 (the QA pass's leftovers): a Realtime server that ends rollouts invalid on
 * purpose (an `error` event on the tasks it would fail) must not escape bad scores, and a dead
 * server must not cost minutes per rollout. `switchboard run` reports the invalid share after
 * resampling and fails above `--max-invalid-share`; it stops after `--max-same-fault` rollouts in
 * a row invalid for one reason. Every file is still written. Against our fake server
 * (test/fixtures/realtime-server.ts) and a port nobody listens on.
 */
import { createServer, type AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadBuiltinDomain } from '../../src/adapters/node/load-domain.ts';
import { main } from '../../src/cli/main.ts';
import { FaultStreak, invalidShare, invalidShareFailure } from '../../src/core/rollout/run-guards.ts';
import type { Domain } from '../../src/core/schema/domain.ts';
import { Trajectory } from '../../src/core/schema/trajectory.ts';
import { capture } from '../fixtures/cli-io.ts';
import { planReplies, startRealtimeServer, type RealtimeTestServer } from '../fixtures/realtime-server.ts';

const GOOD = 'carrier-pay-balance-1';
const HARD = 'carrier-claimed-payment-1';
/** The scripted caller's first words on HARD: the hostile server refuses to answer them. */
const HARD_OPENING = '你们怎么回事？我一月份的话费昨天已经交过了，怎么还给我发欠费短信？';

let domain: Domain;
let server: RealtimeTestServer | undefined;
let base: string;
let runs = 0;

beforeAll(async () => {
  [domain, base] = await Promise.all([loadBuiltinDomain('carrier'), mkdtemp(join(tmpdir(), 'sb-guards-'))]);
});
afterEach(() => server?.close().finally(() => (server = undefined)));
afterAll(() => rm(base, { recursive: true, force: true }));

/** A server that plays GOOD's reference plan, and answers an `error` event once HARD's caller has spoken. */
async function hostileServer(): Promise<RealtimeTestServer> {
  const plan = planReplies(domain, GOOD);
  return startRealtimeServer((ctx) =>
    ctx.items.some((i) => i.role === 'user' && i.text === HARD_OPENING) ? { error: 'overloaded' } : plan(ctx),
  );
}

/** Both tasks twice, one at a time, against `s` (the fault streak off: the share alone is tested). */
const hostileRun = (s: RealtimeTestServer) =>
  ['--agent', `realtime:${s.url}`, '--task-ids', `${GOOD},${HARD}`, '--trials', '2', '--concurrency', '1'].concat([
    '--max-same-fault',
    '0',
  ]);

/** `run` with `args`; the exit code, stdout, stderr, the summary file and the trajectories file's lines. */
async function run(args: string[]) {
  const out = join(base, `run-${++runs}`);
  const io = capture();
  const code = await main(['run', '--domain', 'carrier', '--out', out, ...args], io);
  const summary = JSON.parse(await readFile(join(out, 'summary.json'), 'utf8'));
  const lines = (await readFile(join(out, 'trajectories.jsonl'), 'utf8')).trim().split('\n');
  return { code, io, out, summary, trajectories: lines.map((l) => Trajectory.parse(JSON.parse(l))) };
}

describe('the invalid share after resampling (--max-invalid-share)', () => {
  it('a server that errors on the task it would fail: half the trials lost, the run exits 1 as not comparable, every file written', async () => {
    server = await hostileServer();
    const { code, io, out, summary, trajectories } = await run([...hostileRun(server), '--json']);
    expect(code).toBe(1);
    const failure =
      '2 of 4 trials (share 0.500) have no valid rollout after resampling, above --max-invalid-share 0.1: the scores are not comparable (they leave out the trials lost to invalid rollouts)';
    expect(io.stderr).toBe(`switchboard: ${failure}\n`);
    expect(JSON.parse(io.stdout)).toEqual(summary);
    expect(summary.failure).toBe(failure);
    expect(summary.stopped).toBeNull();
    expect(summary.settings).toMatchObject({ max_invalid_share: 0.1, max_same_fault: 0 });
    expect(summary.totals).toMatchObject({
      episodes: 8,
      valid: 2,
      invalid: 2,
      invalid_attempts: 6,
      invalid_share: 0.5,
      mean_reward: 1,
    });
    // The good task's two trials scored, the hard task's six attempts kept, each with its reason.
    expect(trajectories.map((t) => [t.task_id, t.trial, t.valid, t.reward_info?.reward ?? null])).toEqual([
      [GOOD, 0, true, 1],
      [GOOD, 1, true, 1],
      ...[0, 0, 0, 1, 1, 1].map((trial) => [HARD, trial, false, null]),
    ]);
    expect(new Set(trajectories.filter((t) => !t.valid).map((t) => t.invalid_reason))).toEqual(
      new Set([`realtime agent at ${server.url}: server error: overloaded (code fake) (3 attempts)`]),
    );
    // A trainer never gets the lost rollouts: the SFT export leaves each out as invalid.
    const sft = capture();
    const file = join(out, 'trajectories.jsonl');
    expect(
      await main(['export', 'sft', file, '--domain', 'carrier', '--out', join(out, 'sft.jsonl'), '--json'], sft),
    ).toBe(0);
    const exported = JSON.parse(sft.stdout);
    expect([exported.records, exported.rejected.map((r: { reason: string }) => r.reason)]).toEqual([
      2,
      Array.from({ length: 6 }, () => 'invalid rollout'),
    ]);
  });

  it('the same run within a looser limit (0.5, equal to the share): exit 0; the printed summary names the share and the limit', async () => {
    server = await hostileServer();
    const { code, io, summary } = await run([...hostileRun(server), '--max-invalid-share', '0.5']);
    expect(code).toBe(0);
    expect(summary.failure).toBeNull();
    expect(summary.totals.invalid_share).toBe(0.5);
    expect(io.stdout).toContain(
      '\ninvalid share: 0.500 (2 of 4 trials without a valid rollout after resampling; limit 0.5)\n',
    );
    expect(io.stderr).not.toContain('not comparable');
  });

  it('--max-invalid-share outside 0…1 is refused (exit 2)', async () => {
    const io = capture();
    expect(await main(['run', '--domain', 'carrier', '--max-invalid-share', '1.5'], io)).toBe(2);
    expect(io.stderr).toContain('--max-invalid-share must be a number from 0 to 1');
  });

  it('the share and its message, exactly (a share equal to the limit passes)', () => {
    expect([invalidShare({ valid: 0, invalid: 0 }), invalidShare({ valid: 9, invalid: 1 })]).toEqual([null, 0.1]);
    expect(invalidShareFailure({ valid: 9, invalid: 1 }, 0.1)).toBeNull();
    expect(invalidShareFailure({ valid: 0, invalid: 0 }, 0)).toBeNull();
    expect(invalidShareFailure({ valid: 7, invalid: 1 }, 0.1)).toBe(
      '1 of 8 trials (share 0.125) has no valid rollout after resampling, above --max-invalid-share 0.1: the scores are not comparable (they leave out the trials lost to invalid rollouts)',
    );
  });
});

/** A port on 127.0.0.1 that refuses connections (listened on once, then closed). */
async function refusingPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('rollouts in a row invalid for one reason (--max-same-fault)', () => {
  const tasks = ['carrier-pay-balance-1', 'carrier-claimed-payment-1', 'carrier-change-plan-1'];

  it('a server that refuses connections: stopped after 6 rollouts (two trials), 4 trials never started, exit 1 with the reason; the files hold all 6', async () => {
    const url = `ws://127.0.0.1:${await refusingPort()}/v1/realtime?model=dead`;
    const { code, io, summary, trajectories } = await run([
      '--agent',
      `realtime:${url}`,
      '--task-ids',
      tasks.join(','),
      '--trials',
      '2',
      '--concurrency',
      '1',
    ]);
    expect(code).toBe(1);
    const port = new URL(url).port;
    const reason = `realtime agent at ${url}: cannot connect: socket error: connect ECONNREFUSED 127.0.0.1:${port} (3 attempts)`;
    expect(summary.stopped).toEqual({ reason, rollouts: 6, trials_not_started: 4 });
    const failure = `stopped after 6 rollouts in a row were invalid for the same reason (--max-same-fault 6); 4 trials not started: ${reason}`;
    expect(summary.failure).toBe(failure);
    expect(io.stderr.split('\n')).toContain(`switchboard: ${failure}`);
    expect(io.stdout).toContain('\nstopped: 6 rollouts in a row invalid for the same reason; 4 trials not started\n');
    expect(summary.totals).toMatchObject({ episodes: 6, valid: 0, invalid: 2, invalid_attempts: 6, invalid_share: 1 });
    expect(trajectories.map((t) => [t.task_id, t.trial, t.valid, t.invalid_reason])).toEqual(
      [0, 0, 0, 1, 1, 1].map((trial) => [tasks[0], trial, false, reason]),
    );
  });

  it('over a pool of 2 threads: the same stop, whatever finished first; the file holds every rollout the summary counts', async () => {
    const url = `ws://127.0.0.1:${await refusingPort()}/v1/realtime?model=dead`;
    const { code, summary, trajectories } = await run([
      '--agent',
      `realtime:${url}`,
      '--task-ids',
      tasks.join(','),
      '--trials',
      '4',
      '--concurrency',
      '2',
      '--threads',
      '2',
    ]);
    expect(code).toBe(1);
    expect(summary.stopped).toMatchObject({ rollouts: 6 });
    expect(summary.stopped.trials_not_started).toBeGreaterThan(0);
    expect(trajectories).toHaveLength(summary.totals.episodes);
    expect(summary.totals.episodes).toBeLessThan(12 * 3);
  });

  it('a valid rollout, or another reason, starts the count again; 0 never stops', () => {
    const bad = (invalid_reason: string) => ({ valid: false, invalid_reason, termination: 'infrastructure_error' });
    const ok = { valid: true, invalid_reason: null, termination: 'user_stop' };
    const s = new FaultStreak(3);
    expect([bad('a'), bad('a'), ok, bad('a'), bad('b'), bad('a'), bad('a')].map((t) => s.add(t))).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect([s.add(bad('a')), s.add(ok), s.tripped]).toEqual([true, true, 'a']);
    const never = new FaultStreak(0);
    expect(Array.from({ length: 50 }, () => never.add(bad('a'))).some(Boolean)).toBe(false);
  });
});

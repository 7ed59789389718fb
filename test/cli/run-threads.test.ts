/**
 * `run`'s rollout threads (issue 15, item 5): trials run partly in the CLI's thread and partly in
 * a worker thread beside it (started at once, mid-run, or never) give the same trajectories, byte
 * for byte and in the same order, and the same summary as all in the CLI's thread; the pool keeps
 * to its concurrency (each thread its share), reports a thread's set-up failure and a job's error
 * by message, and leaves no thread's part file open once it is closed.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startThreadPool } from '../../src/adapters/node/thread-pool.ts';
import { main } from '../../src/cli/main.ts';
import {
  POOL_PAYBACK_MS,
  poolAhead,
  poolPaysOff,
  scheduleTrials,
  startTrialPool,
  TrialPace,
  trialSetup,
  type TrialFlags,
  type TrialScheduler,
} from '../../src/cli/run-trials.ts';
import { digestAttempt, runBatch, runTrial, trialOrder } from '../../src/core/rollout/batch.ts';
import { mergeJsonlParts, removeJsonlParts } from '../../src/adapters/node/jsonl-parts.ts';
import { capture } from '../fixtures/cli-io.ts';

const dir = mkdtempSync(join(tmpdir(), 'sb-threads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `run` with `extra` flags into a fresh folder: the trajectories file and the summary. */
async function run(name: string, domain: string, extra: string[]) {
  const out = join(dir, name);
  const io = capture();
  const code = await main(
    ['run', '--domain', domain, '--trials', '2', '--seed', '7', '--out', out, '--json', ...extra],
    io,
  );
  expect(code, io.stderr).toBe(0);
  // The threads' parts are merged and gone.
  expect(readdirSync(out).sort()).toEqual(['summary.json', 'trajectories.jsonl']);
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
  return { lines: readFileSync(join(out, 'trajectories.jsonl'), 'utf8'), summary };
}

/** Parts of `file` this process (any of its threads) still has open (Linux: /proc/self/fd). */
function openParts(file: string): string[] {
  if (!existsSync('/proc/self/fd')) return [];
  return readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((target) => target.startsWith(`${file}.part-`));
}

describe('rollout threads', () => {
  // Exact figures of these runs (seed 7, 2 trials a task, reference agent, scripted caller).
  const expected = {
    carrier: { episodes: 30, turns: 434, objections: undefined, first: 'carrier/carrier-pay-balance-1/0/7' },
    'insurance-renewal': {
      episodes: 28,
      turns: 680,
      objections: { raised: 52, handled: 52, score: 1 },
      first: 'insurance-renewal/ir-easy-accept-list/0/7',
    },
  };
  for (const domain of ['carrier', 'insurance-renewal'] as const) {
    it(`${domain}: --concurrency 1, 2 and 4 in 2 threads give the same trajectories in the same order, byte for byte`, async () => {
      const one = await run(`${domain}-1`, domain, ['--concurrency', '1']);
      const two = await run(`${domain}-2`, domain, ['--concurrency', '2', '--threads', '2']);
      const four = await run(`${domain}-4`, domain, ['--concurrency', '4', '--threads', '2']);
      expect(one.summary.settings.threads).toBe(1);
      // A run this short may end before its worker thread is up (the CLI's thread does not wait
      // for it): the test below starts it first, so that it certainly runs trials.
      expect([1, 2]).toContain(two.summary.settings.threads);
      expect([1, 2]).toContain(four.summary.settings.threads);
      expect(two.lines).toBe(one.lines);
      expect(four.lines).toBe(one.lines);
      const trajectories = one.lines
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const want = expected[domain];
      expect(trajectories.length).toBe(want.episodes);
      expect(trajectories[0].id).toBe(want.first);
      // Task order of the domain, trial order within a task.
      expect(trajectories.map((t) => `${t.task_id}/${t.trial}`)).toEqual(
        one.summary.settings.task_ids.flatMap((id: string) => [`${id}/0`, `${id}/1`]),
      );
      expect(trajectories.reduce((n, t) => n + t.turns.length, 0)).toBe(want.turns);
      expect(trajectories.map((t) => t.reward_info.reward)).toEqual(Array(want.episodes).fill(1));
      expect(one.summary.totals.objections).toEqual(want.objections);
      for (const other of [two, four]) {
        const { settings: s1, ...rest1 } = one.summary;
        const { settings: s2, ...rest2 } = other.summary;
        expect(rest2).toEqual(rest1);
        expect({ ...s2, concurrency: 1, threads: 1 }).toEqual(s1);
      }
      expect(one.summary.totals).toMatchObject({ episodes: want.episodes, valid: want.episodes, mean_reward: 1 });
    }, 180_000);
  }

  for (const domain of ['carrier', 'insurance-renewal'] as const)
    it(`${domain}: trials here and in a worker started at once, mid-way or never give the same lines, digests and summary`, async () => {
      const flags: TrialFlags = { domain, agent: 'reference', user: 'scripted', seed: 7 };
      const setup = await trialSetup(flags);
      const byKey = trialOrder(setup.tasks);
      const n = setup.tasks.length * 4;
      /**
       * The batch through `runner`, its parts merged into `lines` in task, trial, attempt order;
       * from trial `holdFrom` on (in the order the batch hands them out), each waits for the
       * runner's worker to be up before it is handed over.
       */
      const batch = async (lines: string, runner: TrialScheduler, holdFrom = Infinity) => {
        let calls = 0;
        const out = await runBatch({
          ...setup.trial,
          tasks: setup.tasks,
          trials: 4,
          concurrency: runner.slots,
          trialRunner: async (task, t) => {
            if (calls++ >= holdFrom) await runner.started();
            return runner.runTrial(task, t);
          },
        });
        await runner.close();
        // No file of this process (any thread) is still open on a part once the threads stopped.
        expect(openParts(lines)).toEqual([]);
        const records = out.trajectories.sort(byKey);
        mergeJsonlParts(
          lines,
          records.map((r) => r.line!),
        );
        removeJsonlParts(lines);
        return { summary: out.summary, text: readFileSync(lines, 'utf8'), records };
      };
      try {
        // Every trial here, in order, without threads: the lines and digests to match.
        const base = await runBatch({ ...setup.trial, tasks: setup.tasks, trials: 4, concurrency: 1 });
        const want = base.trajectories.map((t) => `${JSON.stringify(t)}\n`).join('');
        const lines = (name: string) => join(dir, `${name}.jsonl`);
        // Never pays off: all trials here, no thread started.
        const never = scheduleTrials(setup.trial, flags, {
          threads: 2,
          concurrency: 2,
          trials: n,
          auto: true,
          paybackMs: Infinity,
          lines: lines('never'),
        });
        const a = await batch(lines('never'), never);
        expect([never.threads(), never.ranHere()]).toEqual([1, n]);
        // Always pays off: the worker starts after 20 trials and 0.5 s here (the least the
        // estimate needs; a clock that moves 100 ms at each reading); this thread keeps running
        // trials beside it (from the 30th trial on, each waits for the worker to be up, so that
        // it surely runs some).
        let clock = 0;
        const soon = scheduleTrials(setup.trial, flags, {
          threads: 2,
          concurrency: 2,
          trials: n,
          auto: true,
          paybackMs: 0,
          lines: lines('soon'),
          now: () => (clock += 100),
          cpu: () => clock,
          others: () => 0,
          cores: 2,
        });
        const b = await batch(lines('soon'), soon, 30);
        expect(soon.threads()).toBe(2);
        expect(soon.ranHere()).toBeGreaterThanOrEqual(20);
        expect(soon.ranHere()).toBeLessThan(n);
        // Lines from this thread's part, and from the worker's part for the trials it ran.
        expect(new Set(b.records.map((r) => r.line!.part)).size).toBe(2);
        // Started at once and waited for: this thread and the worker both run trials from the first.
        const pooled = scheduleTrials(setup.trial, flags, {
          threads: 2,
          concurrency: 2,
          trials: n,
          auto: false,
          lines: lines('pooled'),
        });
        await pooled.started();
        const c = await batch(lines('pooled'), pooled);
        expect(pooled.threads()).toBe(2);
        expect(pooled.ranHere()).toBeGreaterThan(0);
        expect(pooled.ranHere()).toBeLessThan(n);
        expect(new Set(c.records.map((r) => r.line!.part)).size).toBe(2);
        for (const other of [a, b, c]) {
          expect(other.text).toBe(want);
          expect(other.records.map(({ line, ...digest }) => digest)).toEqual(base.trajectories.map(digestAttempt));
          expect(other.summary).toEqual(base.summary);
        }
        expect(base.summary.totals.episodes).toBe(n);
        // Only the merged files are left.
        expect(readdirSync(dir).filter((f) => f.includes('.part-'))).toEqual([]);
      } finally {
        await setup.trial.runtime.close();
      }
    }, 180_000);

  it('the auto start estimates the work left from recent trials: slow cold first trials do not start workers for a fast rest', async () => {
    const flags: TrialFlags = { domain: 'carrier', agent: 'reference', user: 'scripted', seed: 7 };
    const setup = await trialSetup(flags);
    const n = setup.tasks.length * 4;
    /** A run whose clock says trial k (1-based) ended at 1 s per cold trial (the first 5), then `warmMs` per trial. */
    const clocked = async (warmMs: number, otherCores = 0) => {
      let sched: TrialScheduler | undefined;
      const now = () => {
        const k = sched!.ranHere();
        return Math.min(k, 5) * 1000 + Math.max(0, k - 5) * warmMs;
      };
      sched = scheduleTrials(setup.trial, flags, {
        threads: 2,
        concurrency: 2,
        trials: n,
        auto: true,
        now,
        cpu: now,
        // Other processes keep `otherCores` of the machine's 2 cores busy.
        others: () => otherCores * now(),
        cores: 2,
      });
      let calls = 0;
      await runBatch({
        ...setup.trial,
        tasks: setup.tasks,
        trials: 4,
        concurrency: sched.slots,
        keepTrajectories: false,
        // From the 30th trial on each waits until the workers are up, if they were started.
        trialRunner: async (task, t) => {
          if (calls++ >= 30) await sched.started();
          return sched.runTrial(task, t);
        },
      });
      await sched.close();
      return sched.threads();
    };
    try {
      // 1 ms a warm trial: the first estimate (32 trials here, the pace of the 16th to the 32nd)
      // says the 28 left are 28 ms, × 0.85 (the other core free, less the contention) under
      // the 6 s payback (the cold trials averaged in would say 28 × 157 ms = 4.4 s).
      expect(await clocked(1)).toBe(1);
      // 150 ms a warm trial: the first estimate at 20 trials, ≤ 6 s left, × 0.85 = 5.1 s, under
      // it: no worker (the 4 s payback until session 21 started one here).
      expect(await clocked(150)).toBe(1);
      // 200 ms: ~8 s left × 0.85 ≈ 6.8 s, over it: the worker starts.
      expect(await clocked(200)).toBe(2);
      // The same with other processes keeping 0.5 of the other core busy: ~8 s × (0.5 − 0.15)
      // ≈ 2.8 s, under it: no worker.
      expect(await clocked(200, 0.5)).toBe(1);
    } finally {
      await setup.trial.runtime.close();
    }
  }, 60_000);

  it('TrialPace: ms per trial over the later half of the finished trials, from 20 trials and 0.5 s on, at most every 50 ms of wall time and at powers of two, the lesser of wall and CPU time', () => {
    let t = 0;
    let cpuReads = 0;
    const pace = new TrialPace(
      () => t,
      () => {
        cpuReads++;
        return t;
      },
      () => 0,
    );
    pace.started();
    // Trial k ends at 100 ms each for the first 10, then 10 ms each.
    const end = (k: number) => Math.min(k, 10) * 100 + Math.max(0, k - 10) * 10;
    const per: (number | undefined)[] = [];
    for (let k = 1; k <= 40; k++) {
      t = end(k);
      per.push(pace.finished(k));
    }
    // From 20 trials on, once 50 ms have passed since the clocks were read (the 16th, 1,060 ms):
    // the 21st from the 8th (800 ms) to 1,110 ms over 13 trials; the 26th and 31st from the 8th
    // too; the 32nd (a power of two) and the 37th from the 16th on, all warm.
    expect(per.map((p, i) => (p === undefined ? null : [i + 1, p]))).toEqual([
      ...Array(20).fill(null),
      [21, 310 / 13],
      ...Array(4).fill(null),
      [26, 20],
      ...Array(4).fill(null),
      [31, 410 / 23],
      [32, 10],
      ...Array(4).fill(null),
      [37, 10],
      ...Array(3).fill(null),
    ]);
    // The CPU clock (a /proc read) is read at the start, at every power of two and 50 ms after
    // the last reading only: 2,000 trials of 0.1 ms read it 14 times (the start; the 1st, 2nd,
    // 4th … 1,024th; the 1,012th and 1,524th, 50 ms after the 512th and the 1,024th), where a
    // reading at every 8th trial read it 251 times.
    cpuReads = 0;
    const quick = new TrialPace(
      () => t,
      () => {
        cpuReads++;
        return t;
      },
      () => 0,
    );
    t = 0;
    quick.started();
    for (let k = 1; k <= 2000; k++) {
      t = k / 10;
      quick.finished(k);
    }
    expect(cpuReads).toBe(14);
    // A machine busy with other work: wall time runs 3× the CPU time; the pace is the CPU's.
    const busy = new TrialPace(
      () => 3 * t,
      () => t,
    );
    t = 0;
    busy.started();
    for (let k = 1; k <= 24; k++) {
      t = 50 * k;
      per[k - 1] = busy.finished(k);
    }
    expect(per[23]).toBe(50);
    // Other processes' cores over the span of the last estimate: their CPU ms ÷ wall ms.
    let others = 0;
    const shared = new TrialPace(
      () => t,
      () => t,
      () => others,
    );
    t = 0;
    shared.started();
    expect(shared.otherCores()).toBeUndefined();
    for (let k = 1; k <= 32; k++) {
      t = 50 * k;
      // 0.25 of a core until the 16th trial ends, then 1.5 cores.
      others = 0.25 * Math.min(t, 800) + 1.5 * Math.max(0, t - 800);
      per[k - 1] = shared.finished(k);
    }
    // The 32nd estimate spans the 16th to the 32nd trial: 800 ms of wall, 1,200 ms of others.
    expect([per[23], per[31], shared.otherCores()]).toEqual([50, 50, 1.5]);
    // Under 0.5 s since the first trial started: no estimate yet, whatever the count.
    const early = new TrialPace(
      () => t,
      () => t,
    );
    t = 0;
    early.started();
    t = 499;
    expect(early.finished(96)).toBeUndefined();
  });

  it('pool with a concurrency: each thread runs at most its share, one more waits in it, the rest in order in the parent', async () => {
    const entry = new URL('../fixtures/threads/wait-thread.ts', import.meta.url);
    type Job = { n: number; ms: number };
    type Done = { n: number; thread: number; atStart: number };
    await expect(startThreadPool(entry, {}, 2, { concurrency: 1 })).rejects.toThrow(
      'thread pool: concurrency 1 is below its 2 threads',
    );
    const pool = await startThreadPool<Job, Done>(entry, {}, 2, { concurrency: 3 });
    try {
      // Shares 2 and 1, and one job ahead in each thread.
      expect(pool.slots).toBe(5);
      const jobs = Array.from({ length: 12 }, (_, n) => pool.run({ n, ms: 40 }));
      expect(pool.running()).toBe(3);
      const done = await Promise.all(jobs);
      expect(done.map((d) => d.n)).toEqual([...Array(12).keys()]);
      const most = new Map<number, number>();
      for (const d of done) most.set(d.thread, Math.max(most.get(d.thread) ?? 0, d.atStart));
      expect([...most.values()].sort()).toEqual([1, 2]);
      // The first three start at once (2 in one thread, 1 in the other), the next two wait in the threads.
      expect(
        done
          .slice(0, 3)
          .map((d) => d.atStart)
          .sort(),
      ).toEqual([1, 1, 2]);
      expect(pool.running()).toBe(0);
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('a stopped batch: trials handed to the scheduler and waiting in it are not started, and count as not started', async () => {
    const flags: TrialFlags = { domain: 'carrier', agent: 'reference', user: 'scripted', seed: 7 };
    const setup = await trialSetup(flags);
    try {
      // No worker (never pays off): 2 trials run here at once, 4 more (the workers' share of the
      // slots, were they up) wait in the scheduler.
      const sched = scheduleTrials(setup.trial, flags, {
        threads: 2,
        concurrency: 2,
        trials: 60,
        auto: true,
        paybackMs: Infinity,
      });
      expect(sched.slots).toBe(6);
      const stop = new AbortController();
      const { summary } = await runBatch({
        ...setup.trial,
        tasks: setup.tasks,
        trials: 4,
        concurrency: sched.slots,
        keepTrajectories: false,
        signal: stop.signal,
        trialRunner: sched.runTrial,
        // Ctrl-C as the first trial's result reaches the batch: the other one running and the one
        // this thread had already started in its place finish; the 3 still waiting never start
        // (before, every trial handed to the scheduler ran: 6).
        onTrajectory: () => stop.abort(),
      });
      await sched.close();
      expect([summary.totals.episodes, sched.ranHere()]).toEqual([3, 3]);
    } finally {
      await setup.trial.runtime.close();
    }
  }, 60_000);

  it('poolPaysOff: work left × (cores free for the workers − 0.15 each) over the payback of each worker', () => {
    const pays = (workMs: number, workers: number, cores: number, otherCores: number) =>
      poolPaysOff(workMs, { workers, cores, otherCores, paybackMs: 4000 });
    // 2 idle cores: 4,000 / 0.85 = 4,705.9 ms of work left.
    expect([pays(4705, 1, 2, 0), pays(4706, 1, 2, 0)]).toEqual([false, true]);
    // Half the other core busy elsewhere: 4,000 / 0.35 = 11,428.6 ms.
    expect([pays(11428, 1, 2, 0.5), pays(11429, 1, 2, 0.5)]).toEqual([false, true]);
    // 0.85 of it or more busy: never, however long the run.
    expect([pays(1e12, 1, 2, 0.85), pays(1e12, 1, 2, 1.7)]).toEqual([false, false]);
    // 4 cores, 3 workers: 12,000 / (3 − 0.45) = 4,705.9 ms idle; with 1.5 cores busy elsewhere
    // only 1.5 are free for the 3: 12,000 / 1.05 = 11,428.6 ms.
    expect([pays(4705, 3, 4, 0), pays(4706, 3, 4, 0)]).toEqual([false, true]);
    expect([pays(11428, 3, 4, 1.5), pays(11429, 3, 4, 1.5)]).toEqual([false, true]);
    expect(POOL_PAYBACK_MS).toBe(6000);
  });

  it("trials kept waiting in a worker beyond its share: as many as take 4 ms of this thread's trials, 1 to 4", () => {
    expect([undefined, Number.NaN, 0, 0.5, 0.8, 1, 1.5, 2, 2.5, 4, 5000].map(poolAhead)).toEqual([
      1, 1, 1, 4, 4, 4, 2, 2, 1, 1, 1,
    ]);
  });

  it('pool ahead: a thread gets at most its share plus aheadNow() jobs, read each time a job is handed out', async () => {
    const entry = new URL('../fixtures/threads/wait-thread.ts', import.meta.url);
    let now = 1;
    const pool = await startThreadPool<{ n: number; ms: number }, { n: number }>(entry, {}, 2, {
      concurrency: 2,
      ahead: 4,
      aheadNow: () => now,
    });
    try {
      // Shares 1 and 1, up to 4 ahead in each.
      expect(pool.slots).toBe(10);
      const jobs = [0, 1, 2, 3].map((n) => pool.run({ n, ms: 300 }));
      // Each thread has its share running and 1 waiting: the next job would wait in the parent.
      expect(pool.room()).toBe(false);
      now = 3;
      expect(pool.room()).toBe(true);
      jobs.push(...[4, 5, 6, 7].map((n) => pool.run({ n, ms: 300 })));
      expect(pool.room()).toBe(false);
      // More than the most (4) is never sent.
      now = 9;
      jobs.push(...[8, 9].map((n) => pool.run({ n, ms: 300 })));
      expect(pool.room()).toBe(false);
      expect((await Promise.all(jobs)).map((d) => d.n)).toEqual([...Array(10).keys()]);
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('pool budget: jobs run only while the caller leaves room, queued ones reject on close', async () => {
    const entry = new URL('../fixtures/threads/wait-thread.ts', import.meta.url);
    let budget = 0;
    const pool = await startThreadPool<{ n: number; ms: number }, { n: number; atStart: number }>(entry, {}, 2, {
      concurrency: 2,
      budget: () => budget,
    });
    const jobs = Array.from({ length: 6 }, (_, n) => pool.run({ n, ms: 10 }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(pool.running()).toBe(0);
    budget = 1;
    pool.pump();
    expect(pool.running()).toBe(1);
    const done = await Promise.all(jobs);
    expect(done.map((d) => [d.n, d.atStart])).toEqual([0, 1, 2, 3, 4, 5].map((n) => [n, 1]));
    budget = 0;
    const late = pool.run({ n: 6, ms: 10 });
    await pool.close();
    await expect(late).rejects.toThrow(/^rollout thread exited with code \d+$/);
  }, 60_000);

  it('pool: jobs spread over the threads, job errors and set-up failures by message', async () => {
    const entry = new URL('../fixtures/threads/double-thread.ts', import.meta.url);
    const pool = await startThreadPool<number, { value: number; thread: number }>(entry, {}, 2);
    try {
      expect(pool.size).toBe(2);
      const results = await Promise.all([1, 2, 3, 4, 5].map((n) => pool.run(n)));
      expect(results.map((r) => r.value)).toEqual([2, 4, 6, 8, 10]);
      expect(new Set(results.map((r) => r.thread)).size).toBe(2);
      await expect(pool.run(-3)).rejects.toThrow('negative: -3');
      expect((await pool.run(21)).value).toBe(42);
    } finally {
      await pool.close();
    }
    // Every thread gone: a job rejects with why instead of waiting for a reply that never comes.
    await expect(pool.run(1)).rejects.toThrow(/^rollout thread exited with code \d+$/);
    await expect(startThreadPool(entry, { failSetup: 'no data in /nowhere' }, 2)).rejects.toThrow(
      'no data in /nowhere',
    );
  }, 60_000);

  it("workers open their databases on the CLI thread's built database: a worker handed another schema's refuses to start", async () => {
    const flags: TrialFlags = { domain: 'carrier', agent: 'reference', user: 'scripted', seed: 7 };
    const setup = await trialSetup(flags);
    const runtime = setup.trial.runtime;
    // scheduleTrials hands the workers its runtime's built() (here one of another schema).
    const other = Object.assign(Object.create(runtime) as typeof runtime, {
      built: () => ({ ...runtime.built(), schema: 'CREATE TABLE other (id TEXT PRIMARY KEY);' }),
    });
    const scheduler = scheduleTrials({ ...setup.trial, runtime: other }, flags, {
      threads: 2,
      concurrency: 2,
      trials: 30,
      auto: false,
    });
    await expect(scheduler.started()).rejects.toThrow('domain carrier: the built database is of another schema');
    await scheduler.close();
    // Its own built database: the worker comes up and runs a trial as this thread does.
    const pool = await startTrialPool(flags, 1, { concurrency: 1 }, undefined, runtime.built());
    try {
      const task = setup.tasks[3]!;
      const [there] = await pool.runTrial(task, 1);
      const here: ReturnType<typeof digestAttempt>[] = [];
      await runTrial(setup.trial, task, 1, (t) => here.push(digestAttempt(t)));
      expect(there).toEqual(here[0]);
      expect(there!.reward_info!.reward).toBe(1);
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('pool start stopped part-way: it rejects with the reason (its threads are stopped)', async () => {
    const entry = new URL('../fixtures/threads/double-thread.ts', import.meta.url);
    const stop = new AbortController();
    const starting = startThreadPool(entry, {}, 2, { signal: stop.signal });
    stop.abort(new Error('the run ended first'));
    await expect(starting).rejects.toThrow('the run ended first');
  }, 60_000);
});

/** `switchboard run`: K rollouts of each task, scored; the summary and trajectories.jsonl. */
import { writeFileSync } from 'node:fs';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { Trajectory } from '../../core/schema/trajectory.ts';
import { BatchTally, runBatch, trialOrder, type BatchSummary } from '../../core/rollout/batch.ts';
import {
  DEFAULT_MAX_INVALID_SHARE,
  DEFAULT_MAX_SAME_FAULT,
  invalidShareFailure,
  stoppedFailure,
} from '../../core/rollout/run-guards.ts';
import { degradedAudioHook } from '../../core/channel/audio-store.ts';
import type { InteractionBlock } from '../../core/duplex/interaction-metrics.ts';
import { SUBSETS } from '../../core/duplex/turn-taking.ts';
import { mergeJsonlParts, removeJsonlParts, type LinePlace } from '../../adapters/node/jsonl-parts.ts';
import { redactText } from '../../adapters/shared/endpoint-secrets.ts';
import { numberOption, UsageError, withJudgeOptions } from '../participants.ts';
import { EXIT } from '../exit-codes.ts';
import { DEFAULT_MAX_STEPS, scheduleTrials, threadCount, trialSetup, type TrialFlags } from '../run-trials.ts';
import { renderSummary } from '../reports.ts';
import {
  AGENT_VOICE_HELP,
  addDuplexOptions,
  duplexChannel,
  duplexFromFlags,
  RunMetrics,
  type DuplexFlags,
} from '../duplex.ts';
import {
  DATA_HELP,
  DOMAIN_HELP,
  intOption,
  modelSettingsFromFlags,
  SPLIT_HELP,
  withSamplingOptions,
  type SamplingFlags,
} from '../options.ts';
import { addChannelOptions, channelFromFlags, type ChannelFlags } from '../channel.ts';
import type { CliIo } from '../io.ts';
import { bar } from '../progress.ts';
import { renderPanels } from './metrics.ts';

/**
 * Most `--trials` a run takes: its summary keeps every trial's result and pass^k for every k up
 * to it (a loop of trials × tasks at the end), so 2^31 − 1, the limit until issue 15's review, ran
 * out of memory (the jobs were then a list made up front) and could never have finished anyway.
 */
export const MAX_TRIALS = 100_000;

export interface RunOpts extends ChannelFlags, SamplingFlags, DuplexFlags, TrialFlags {
  trials: number;
  concurrency: number;
  /**
   * Threads for the rollouts, the CLI's own included (issue 15, item 5), at most `concurrency`;
   * default one per core, the workers started only when the run's work left pays for them (see
   * `scheduleTrials`).
   */
  threads?: number;
  out?: string;
  json?: boolean;
  /** Largest share of trials without a valid rollout for comparable scores (`--max-invalid-share`). */
  maxInvalidShare: number;
  /** Rollouts in a row invalid for one reason that stop the run (`--max-same-fault`; 0 never). */
  maxSameFault: number;
}

/** The summary as written: the batch summary plus the settings that produced it. */
export type RunReport = BatchSummary & {
  /**
   * True when the run was stopped by Ctrl-C (SIGINT): the summary and trajectories.jsonl hold the
   * rollouts that finished, and the command exits with code 130.
   */
  interrupted: boolean;
  settings: {
    split: string | null;
    task_ids: string[];
    concurrency: number;
    /** Threads the rollouts ran in, the CLI's own included (1: no worker thread was up, all ran in the CLI's). */
    threads: number;
    max_steps: number;
    /** True when the agent had the reference solution: demonstrations (SFT), not an evaluation. */
    teacher_guidance: boolean;
    /** The phone channel, or null for a text-only run. */
    channel: {
      preset: string;
      dropout: number;
      barge_in: number;
      mix: Record<string, number> | null;
      /** `--noise-dir` as given (resolved to an absolute path), or null for the preset's procedural noise. */
      noise_dir: string | null;
      /** `--tts` as given (URL credentials redacted; `espeak` when not given) and the engine's id. */
      tts: { spec: string; id: string };
    } | null;
    /** Issue 17: the full-duplex timeline (`--duplex`, `--subset`), or null for a turn-based run. */
    duplex: { subset: string | null } | null;
    /** `--max-invalid-share`: above it `failure` says the scores are not comparable. */
    max_invalid_share: number;
    /** `--max-same-fault`: rollouts in a row invalid for one reason that stop the run (0: never). */
    max_same_fault: number;
  };
  /**
   * Why the run failed (exit 1) though its files are complete: it stopped on its fault streak
   * (`stopped`), or its `totals.invalid_share` is above `settings.max_invalid_share`; null when
   * it did not (`src/core/rollout/run-guards.ts`).
   */
  failure: string | null;
  /** Issue 17: interaction metrics of the valid duplex calls (docs/duplex.md), or null. */
  interaction_metrics: InteractionBlock | null;
};

/** Make `dir` an output folder up front, so a bad --out fails before the batch runs. */
async function prepareOut(dir: string): Promise<void> {
  const info = await stat(dir).catch(() => null);
  if (info && !info.isDirectory()) throw new UsageError(`--out ${dir}: exists and is not a folder`);
  try {
    await mkdir(dir, { recursive: true });
    for (const f of ['trajectories.jsonl', 'summary.json']) {
      const st = await stat(join(dir, f)).catch(() => null);
      if (st && !st.isFile()) throw new UsageError(`--out ${dir}: ${f} exists and is not a file`);
    }
    await writeFile(join(dir, 'trajectories.jsonl'), '');
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`--out ${dir}: cannot write there (${(e as Error).message})`);
  }
}

/**
 * `run`: the batch, its report, and one line per invalid rollout (every trajectory goes to
 * `--out` as it finishes; none is kept in memory, so a run of any size fits).
 */
export async function runCommand(
  io: CliIo,
  opts: RunOpts,
  onStopNow?: (done: { report: RunReport; invalid: string[] }) => void,
): Promise<{ report: RunReport; invalid: string[] }> {
  const models = modelSettingsFromFlags(opts);
  const outDir = opts.out ? resolve(opts.out) : undefined;
  // Issue 5: the phone channel; a model agent hears each caller turn's degraded WAV.
  const duplex = duplexFromFlags(opts);
  const flagged = await channelFromFlags(opts, outDir);
  // Issue 17: the duplex timeline needs speech on both sides, so it always has a channel.
  const channel = duplex ? duplexChannel(flagged, duplex, outDir) : flagged;
  const metrics = new RunMetrics();
  if (channel?.store) models.userAudio = degradedAudioHook(channel.store);
  const { domain, tasks, trial } = await trialSetup(opts, models);
  const lines = outDir ? join(outDir, 'trajectories.jsonl') : undefined;
  if (outDir) await prepareOut(outDir);
  // Issue 15 (item 5): trials in this thread and, once they are up and worth starting, in worker
  // threads beside it, one thread per core (not with a channel, whose speech and audio files
  // stay in this thread). Trials run here get the channel and the timeline too (the workers run
  // none: see above).
  // Every thread writes its trajectories to its own part of trajectories.jsonl; merged at the end.
  const local = { ...trial, ...(channel ? { channel } : {}), ...(duplex ? { duplex } : {}) };
  const trials = scheduleTrials(local, opts, {
    threads: channel ? 1 : threadCount(opts, tasks.length * opts.trials),
    concurrency: opts.concurrency,
    trials: tasks.length * opts.trials,
    auto: opts.threads === undefined,
    ...(lines ? { lines } : {}),
  });
  const progress = bar(opts.json ? { ...io, progress: false } : io, tasks.length * opts.trials, `run ${domain.name}`);
  const maxSteps = opts.maxSteps ?? DEFAULT_MAX_STEPS;
  const invalid: (Pick<Trajectory, 'task_id' | 'trial' | 'seed'> & { line: string })[] = [];
  const placed: (Pick<Trajectory, 'task_id' | 'trial' | 'seed'> & { line: LinePlace })[] = [];
  // Task, trial, attempt order: the file does not depend on --concurrency.
  const byKey = trialOrder(tasks);
  const tally = new BatchTally();
  const summaryOf = { ...local, tasks, trials: opts.trials };
  /** The finished rollouts' lines into trajectories.jsonl, in order; the parts removed. */
  const mergeLines = () => {
    if (!lines) return;
    mergeJsonlParts(
      lines,
      placed.sort(byKey).map((p) => p.line),
    );
    removeJsonlParts(lines);
  };
  // Ctrl-C: no new rollout starts, those in flight finish, and what finished is written (the
  // summary says it was interrupted); a second Ctrl-C writes what finished so far, prints its
  // summary (onStopNow) and exits. Once the batch has ended, while the worker threads close, a
  // Ctrl-C stops the same way; once they are closed, the files are being written and a Ctrl-C
  // only says so (Node's own handler would kill the process mid-merge: issue 15's review).
  const stop = new AbortController();
  const interrupt = () => {
    if (!stop.signal.aborted) {
      stop.abort();
      io.err('switchboard: interrupted: finishing the rollouts in flight (Ctrl-C again to stop now)');
      return;
    }
    progress.stop();
    trials.flush();
    mergeLines();
    const report = finalReport(tally.summary(summaryOf));
    if (outDir) writeFileSync(join(outDir, 'summary.json'), `${JSON.stringify(report, null, 2)}\n`);
    onStopNow?.({ report, invalid: invalid.sort(byKey).map((t) => t.line) });
    io.err('switchboard: stopped; the finished rollouts are written');
    process.exit(EXIT.interrupted);
  };
  const writing = () => io.err('switchboard: writing the finished rollouts; a moment');
  process.on('SIGINT', interrupt);
  const batch = runBatch({
    ...local,
    keepTrajectories: false,
    tasks,
    trials: opts.trials,
    concurrency: trials.slots,
    maxSteps,
    maxSameFault: opts.maxSameFault,
    trialRunner: trials.runTrial,
    signal: stop.signal,
    onTrajectory: (t) => {
      tally.add(t);
      metrics.add(t);
      if (t.valid) progress.tick();
      else invalid.push({ task_id: t.task_id, trial: t.trial, seed: t.seed, line: invalidLine(t) });
      if (t.line) placed.push({ task_id: t.task_id, trial: t.trial, seed: t.seed, line: t.line });
    },
  });
  const { summary } = await batch.finally(() => trials.close());
  process.removeListener('SIGINT', interrupt);
  process.on('SIGINT', writing);
  try {
    progress.stop();
    invalid.sort(byKey);
    const report = finalReport(summary);
    if (outDir) {
      mergeLines();
      await writeFile(join(outDir, 'summary.json'), `${JSON.stringify(report, null, 2)}\n`);
    }
    return { report, invalid: invalid.map((t) => t.line) };
  } finally {
    process.removeListener('SIGINT', writing);
  }

  /** The report of `summary` with the run's settings. */
  function finalReport(summary: BatchSummary): RunReport {
    return {
      ...summary,
      interrupted: stop.signal.aborted,
      settings: {
        split: opts.split ?? null,
        task_ids: tasks.map((t) => t.id),
        concurrency: opts.concurrency,
        threads: trials.threads(),
        max_steps: maxSteps,
        teacher_guidance: opts.teacherGuidance ?? false,
        channel: channel
          ? {
              preset: typeof channel.preset === 'string' ? channel.preset : 'custom',
              dropout: channel.dropout ?? 0,
              barge_in: channel.bargeIn ?? 0,
              mix: (channel.mix as Record<string, number> | undefined) ?? null,
              noise_dir: opts.noiseDir ? resolve(opts.noiseDir) : null,
              tts: { spec: redactText(opts.tts ?? 'espeak'), id: channel.tts.id },
            }
          : null,
        duplex: duplex ? { subset: duplex.subset ?? null } : null,
        max_invalid_share: opts.maxInvalidShare,
        max_same_fault: opts.maxSameFault,
      },
      interaction_metrics: metrics.block(),
      failure: summary.stopped
        ? stoppedFailure(summary.stopped)
        : invalidShareFailure(summary.totals, opts.maxInvalidShare),
    };
  }
}

/** The line for an invalid rollout: why it was not scored. */
function invalidLine(t: Pick<Trajectory, 'id' | 'invalid_reason' | 'termination'>): string {
  return `invalid ${t.id}: ${t.invalid_reason ?? t.termination}`;
}

/** Register `run` on `program`. */
export function registerRun(program: Command, io: CliIo, setCode: (c: number) => void): Command {
  return withSamplingOptions(withJudgeOptions(addDuplexOptions(addChannelOptions(program.command('run')))))
    .requiredOption('--domain <name>', DOMAIN_HELP)
    .option('--data <dir>', DATA_HELP)
    .option('--split <name>', SPLIT_HELP)
    .option(
      '--agent <spec>',
      'agent: reference | noop | noisy:<p>[,tell=<q>] (the reference policy erring on writes, seeded) | <flavor>:<model>@<base-url> (flavor openai, vllm-omni, vllm; key from SWITCHBOARD_API_KEY or OPENAI_API_KEY) | local:<model-id> (models/manifest.json) | realtime:<ws(s)-url> (docs/realtime-agent.md)',
      'reference',
    )
    .option('--user <spec>', 'simulated caller: scripted | <flavor>:<model>@<base-url>', 'scripted')
    .option('--agent-voice <voice>', AGENT_VOICE_HELP)
    .option(
      '--teacher-guidance',
      'give a model agent the reference solution (SFT demonstrations only; trajectories are marked)',
    )
    .option('--trials <k>', `rollouts per task (at most ${MAX_TRIALS})`, intOption('--trials', 1, MAX_TRIALS), 1)
    .option('--concurrency <n>', 'rollouts in flight', intOption('--concurrency', 1), 4)
    .option(
      '--threads <n>',
      'threads running the rollouts, this one included, at most --concurrency (default: one per core, the others started once the work left pays for them on the cores other processes leave free; 1 = all in this thread; a run with a phone channel uses 1)',
      intOption('--threads', 1),
    )
    .option('--seed <n>', 'base seed; trial t uses seed + t', intOption('--seed', 0), 0)
    .option(
      '--max-steps <n>',
      `participant turns per episode, tool calls not counted (default ${DEFAULT_MAX_STEPS})`,
      intOption('--max-steps', 1),
    )
    .option('--task-ids <ids>', 'comma-separated task ids')
    .option(
      '--out <dir>',
      'write trajectories.jsonl and summary.json here (and caller audio under audio/ with a channel)',
    )
    .option(
      '--max-invalid-share <x>',
      `largest share of trials left without a valid rollout after resampling (endpoint down, server errors) for the scores to count as comparable; above it the run exits 1, files still written; the default is the sampling noise of 25 pass/fail trials, the most the mean over all trials could move`,
      numberOption('--max-invalid-share', 0, 1),
      DEFAULT_MAX_INVALID_SHARE,
    )
    .option(
      '--max-same-fault <n>',
      `stop starting rollouts after n in a row were invalid for the same reason (a dead or refusing server) and exit 1, files still written (0: never; the default is two trials' attempts)`,
      intOption('--max-same-fault', 0),
      DEFAULT_MAX_SAME_FAULT,
    )
    .option('--json', 'print the summary as one JSON document')
    .action(async (opts: RunOpts) => {
      const { report, invalid } = await runCommand(io, opts, (done) => printRun(done.report, done.invalid));
      printRun(report, invalid);
      if (report.interrupted) {
        io.err(`switchboard: interrupted; ${report.totals.episodes} rollouts finished and are counted`);
        setCode(EXIT.interrupted);
      } else if (report.failure !== null) {
        io.err(`switchboard: ${report.failure}`);
        setCode(1);
      } else if (report.totals.valid === 0) {
        io.err('switchboard: no rollout produced a valid, scored episode');
        setCode(1);
      }

      /** The summary on stdout: one JSON document with --json, else the score table and the first invalid rollouts. */
      function printRun(report: RunReport, invalid: string[]): void {
        if (opts.json) io.out(JSON.stringify(report, null, 2));
        else {
          const im = report.interaction_metrics;
          const subset = report.settings.duplex?.subset as keyof typeof SUBSETS | null | undefined;
          io.out(
            [
              renderSummary(report),
              ...(im
                ? [
                    '',
                    `Interaction metrics${subset ? ` · subset ${subset}` : ''} (tau2-bench τ-voice panel; n=<events> where fewer than 10 back a value)`,
                    renderPanels(im, subset ? SUBSETS[subset].fields : undefined),
                  ]
                : []),
              ...invalid.slice(0, 10),
              ...(invalid.length > 10 ? [`… and ${invalid.length - 10} more`] : []),
            ].join('\n'),
          );
          if (opts.out) io.err(`wrote ${join(resolve(opts.out), 'trajectories.jsonl')} and summary.json`);
        }
      }
    });
}

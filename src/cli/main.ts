/**
 * `switchboard` command line: gate a domain, run batches of rollouts, and the demo.
 * Every command takes `--json` and then prints one machine-readable JSON document on stdout
 * (on failure: `{"error": "…"}`).
 */
import { mkdir, writeFile, appendFile, stat, readFile } from 'node:fs/promises';
import { sortJsonlFile } from '../adapters/node/jsonl.ts';
import { join, resolve } from 'node:path';
import { Command, CommanderError } from 'commander';
import cliProgress from 'cli-progress';
import type { Trajectory } from '../core/schema/trajectory.ts';
import { gateDomain, type GateReport } from '../core/gate/gate.ts';
import { runBatch, type BatchSummary } from '../core/rollout/batch.ts';
import { steppingClock } from '../core/ports/clock.ts';
import { agentFactory, judgeFromFlags, userFactory, UsageError, withJudgeOptions } from './participants.ts';
import { openTasks } from './domains.ts';
import { renderGate, renderSummary } from './reports.ts';
import { registerReplay } from './commands/replay.ts';
import { registerGroups } from './commands/groups.ts';
import { registerExport } from './commands/export.ts';
import { registerServe } from './commands/serve.ts';
import { registerRollout } from './commands/rollout.ts';
import { registerData } from './commands/data.ts';
import { registerEvolve } from './commands/evolve.ts';
import { registerPropose } from './commands/propose.ts';
import { registerMetrics, renderPanels } from './commands/metrics.ts';
import { addDuplexOptions, duplexChannel, duplexFromFlags, RunMetrics, type DuplexFlags } from './duplex.ts';
import type { InteractionBlock } from '../core/duplex/interaction-metrics.ts';
import { SUBSETS } from '../core/duplex/turn-taking.ts';
import { intOption, modelSettingsFromFlags, withSamplingOptions, type SamplingFlags } from './options.ts';
import { addChannelOptions, channelFromFlags, type ChannelFlags } from './channel.ts';
import { degradedAudioHook } from '../core/channel/audio-store.ts';
import { redactText } from '../adapters/shared/endpoint-secrets.ts';
import { type CliIo, defaultIo } from './io.ts';
import { EXIT, exitCodeFor } from './exit-codes.ts';

export type { CliIo };

function bar(io: CliIo, total: number, label: string): { tick(): void; stop(): void } {
  if (!io.progress) return { tick() {}, stop() {} };
  const b = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {value}/{total} · {duration_formatted}`, stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  b.start(total, 0);
  return { tick: () => b.increment(), stop: () => b.stop() };
}

interface GateOpts {
  data?: string;
  split?: string;
  taskIds?: string;
  json?: boolean;
}

async function gateCommand(io: CliIo, name: string, opts: GateOpts): Promise<{ report: GateReport; code: number }> {
  // A task the gate's static checks cannot read as written is bad input (exit 2, file and field),
  // as for `run`; the gate's refusals are for well-formed tasks that fail a check.
  const { domain, runtime, tasks } = await openTasks({ domain: name, ...(opts.data ? { data: opts.data } : {}) }, opts);
  const progress = bar(opts.json ? { ...io, progress: false } : io, tasks.length, `gate ${domain.name}`);
  const report = await gateDomain(runtime, {
    ...(tasks.length < domain.tasks.length ? { taskIds: tasks.map((t) => t.id) } : {}),
    onTask: () => progress.tick(),
  });
  progress.stop();
  return { report, code: report.accepted ? 0 : 1 };
}

interface RunOpts extends ChannelFlags, SamplingFlags, DuplexFlags {
  domain: string;
  data?: string;
  split?: string;
  agent: string;
  user: string;
  trials: number;
  concurrency: number;
  seed: number;
  out?: string;
  taskIds?: string;
  json?: boolean;
  maxSteps?: number;
  /** Model participants (issue 4). */
  judge?: string;
  /** Judgements per item for the judge's majority (ModelJudge `n`). */
  judgeN?: number;
  teacherGuidance?: boolean;
}

/** The summary as written: the batch summary plus the settings that produced it. */
export type RunReport = BatchSummary & {
  settings: {
    split: string | null;
    task_ids: string[];
    concurrency: number;
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
  };
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

const DEFAULT_MAX_STEPS = 100;

/**
 * `run`: the batch, its report, and one line per invalid rollout (every trajectory goes to
 * `--out` as it finishes; none is kept in memory, so a run of any size fits).
 */
async function runCommand(io: CliIo, opts: RunOpts): Promise<{ report: RunReport; invalid: string[] }> {
  const models = modelSettingsFromFlags(opts);
  const outDir = opts.out ? resolve(opts.out) : undefined;
  // Issue 5: the phone channel; a model agent hears each caller turn's degraded WAV.
  const duplex = duplexFromFlags(opts);
  const flagged = await channelFromFlags(opts, outDir);
  // Issue 17: the duplex timeline needs speech on both sides, so it always has a channel.
  const channel = duplex ? duplexChannel(flagged, duplex, outDir) : flagged;
  const metrics = new RunMetrics();
  if (channel?.store) models.userAudio = degradedAudioHook(channel.store);
  const agent = agentFactory(opts.agent, models);
  const user = userFactory(opts.user, models);
  const judge = judgeFromFlags(opts, models);
  const { domain, runtime, tasks } = await openTasks(
    { domain: opts.domain, ...(opts.data ? { data: opts.data } : {}) },
    opts,
  );
  const lines = outDir ? join(outDir, 'trajectories.jsonl') : undefined;
  if (outDir) await prepareOut(outDir);
  const progress = bar(opts.json ? { ...io, progress: false } : io, tasks.length * opts.trials, `run ${domain.name}`);
  let writing = Promise.resolve();
  const maxSteps = opts.maxSteps ?? DEFAULT_MAX_STEPS;
  const invalid: (Pick<Trajectory, 'task_id' | 'trial' | 'seed'> & { line: string })[] = [];
  const { summary } = await runBatch({
    keepTrajectories: false,
    runtime,
    tasks,
    agent,
    user,
    trials: opts.trials,
    seed: opts.seed,
    concurrency: opts.concurrency,
    clock: () => steppingClock(domain.now, 1000),
    maxSteps,
    ...(judge ? { judge } : {}),
    ...(channel ? { channel } : {}),
    ...(duplex ? { duplex } : {}),
    onTrajectory: (t) => {
      metrics.add(t);
      if (t.valid) progress.tick();
      else invalid.push({ task_id: t.task_id, trial: t.trial, seed: t.seed, line: invalidLine(t) });
      // Streamed as they finish, so an interrupted run keeps what it did.
      if (lines) writing = writing.then(() => appendFile(lines, `${JSON.stringify(t)}\n`));
    },
  });
  await writing;
  progress.stop();
  // Task, trial, attempt order: the file does not depend on --concurrency.
  const order = new Map(tasks.map((t, i) => [t.id, i]));
  const key = (t: Pick<Trajectory, 'task_id' | 'trial' | 'seed'>) => [order.get(t.task_id)!, t.trial, t.seed];
  invalid.sort((a, b) => key(a)[0]! - key(b)[0]! || a.trial - b.trial || a.seed - b.seed);
  const report: RunReport = {
    ...summary,
    settings: {
      split: opts.split ?? null,
      task_ids: tasks.map((t) => t.id),
      concurrency: opts.concurrency,
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
    },
    interaction_metrics: metrics.block(),
  };
  if (outDir && lines) {
    // Sorted on disk, line by line: a large run's file is more than memory should hold.
    await sortJsonlFile(lines, (t) => key(t as Trajectory));
    await writeFile(join(outDir, 'summary.json'), `${JSON.stringify(report, null, 2)}\n`);
  }
  return { report, invalid: invalid.map((t) => t.line) };
}

/** The line for an invalid rollout: why it was not scored. */
function invalidLine(t: Trajectory): string {
  return `invalid ${t.id}: ${t.invalid_reason ?? t.termination}`;
}

async function packageVersion(): Promise<string> {
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

const DOMAIN_HELP =
  'carrier, a path to a domain folder, or tau2-airline / tau2-retail (data from --data or `switchboard data tau2`)';

function program(io: CliIo, setCode: (c: number) => void, version: string): Command {
  const cmd = new Command('switchboard')
    .description('Voice-agent sandbox: executable domains, simulated calls, automatic scoring.')
    .version(version, '-V, --version')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) });

  cmd
    .command('gate')
    .description(
      'Admission check of a domain: reference solutions replay, rules bind, do-nothing fails, reference passes.',
    )
    .argument('<domain>', DOMAIN_HELP)
    .option('--data <dir>', 'tau2-bench data folder (tau2 domains; default the `switchboard data tau2` cache)')
    .option('--split <name>', 'tau2 task split: base, train or test')
    .option('--task-ids <ids>', 'comma-separated task ids')
    .option('--json', 'print one JSON document')
    .action(async (name: string, opts: GateOpts) => {
      const { report, code } = await gateCommand(io, name, opts);
      io.out(opts.json ? JSON.stringify(report, null, 2) : renderGate(report));
      setCode(code);
    });

  withSamplingOptions(withJudgeOptions(addDuplexOptions(addChannelOptions(cmd.command('run')))))
    .description('Run K rollouts of each task and score them.')
    .requiredOption('--domain <name>', DOMAIN_HELP)
    .option('--data <dir>', 'tau2-bench data folder (tau2 domains; default the `switchboard data tau2` cache)')
    .option('--split <name>', 'tau2 task split: base, train or test')
    .option(
      '--agent <spec>',
      'agent: reference | noop | <flavor>:<model>@<base-url> (flavor openai, vllm-omni, vllm; key from SWITCHBOARD_API_KEY or OPENAI_API_KEY) | local:<model-id> (models/manifest.json)',
      'reference',
    )
    .option('--user <spec>', 'simulated caller: scripted | <flavor>:<model>@<base-url>', 'scripted')
    .option(
      '--teacher-guidance',
      'give a model agent the reference solution (SFT demonstrations only; trajectories are marked)',
    )
    .option('--trials <k>', 'rollouts per task', intOption('--trials', 1), 1)
    .option('--concurrency <n>', 'rollouts in flight', intOption('--concurrency', 1), 4)
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
    .option('--json', 'print the summary as one JSON document')
    .action(async (opts: RunOpts) => {
      const { report, invalid } = await runCommand(io, opts);
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
                  renderPanels(im, 'domain', subset ? SUBSETS[subset].fields : undefined),
                ]
              : []),
            ...invalid.slice(0, 10),
            ...(invalid.length > 10 ? [`… and ${invalid.length - 10} more`] : []),
          ].join('\n'),
        );
        if (opts.out) io.err(`wrote ${join(resolve(opts.out), 'trajectories.jsonl')} and summary.json`);
      }
      if (report.totals.valid === 0) {
        io.err('switchboard: no rollout produced a valid, scored episode');
        setCode(1);
      }
    });

  cmd
    .command('demo')
    .description('Gate the built-in carrier domain, then run it with the reference and the do-nothing agent.')
    .option('--json', 'print one JSON document')
    .action(async (opts: { json?: boolean }) => {
      const quiet = { ...io, progress: opts.json ? false : io.progress };
      const { report } = await gateCommand(quiet, 'carrier', { json: opts.json ?? false });
      const base = { domain: 'carrier', user: 'scripted', trials: 1, concurrency: 4, seed: 0, json: true };
      const reference = (await runCommand(quiet, { ...base, agent: 'reference' })).report;
      const noop = (await runCommand(quiet, { ...base, agent: 'noop' })).report;
      const referenceOk = reference.tasks.every((t) => t.mean === 1);
      const noopOk = noop.tasks.every((t) => t.mean === 0);
      const ok = report.accepted && referenceOk && noopOk;
      if (opts.json) io.out(JSON.stringify({ gate: report, reference, noop, ok }, null, 2));
      else {
        const verdict = ok
          ? 'DEMO OK: carrier admitted; reference agent 1.0 and do-nothing agent 0.0 on every task.'
          : `DEMO FAILED:${report.accepted ? '' : ' gate refused carrier;'}${referenceOk ? '' : ' reference agent below 1.0;'}${noopOk ? '' : ' do-nothing agent above 0.0;'}`;
        io.out([renderGate(report), '', renderSummary(reference), '', renderSummary(noop), '', verdict].join('\n'));
      }
      setCode(ok ? 0 : 1);
    });
  registerReplay(cmd, io, setCode);
  registerGroups(cmd, io, setCode);
  registerExport(cmd, io, setCode);
  registerServe(cmd, io);
  registerRollout(cmd, io, setCode);
  registerData(cmd, io, setCode);
  registerEvolve(cmd, io, setCode);
  registerPropose(cmd, io, setCode);
  registerMetrics(cmd, io);
  return cmd;
}

/**
 * Run the CLI with `argv` (without node and script). Returns the exit code: 0 success, 1 a
 * refusal or failed check, 2 a usage or input error, 3 an internal error (a bug: the message
 * says so; set SWITCHBOARD_DEBUG=1 for the stack).
 */
export async function main(argv: readonly string[], given: CliIo = defaultIo): Promise<number> {
  let code: number = EXIT.ok;
  const json = argv.includes('--json');
  // Error lines may quote a model spec or an endpoint: its credentials never reach the terminal.
  const io: CliIo = { ...given, out: (t) => given.out(t), err: (t) => given.err(redactText(t)) };
  const fail = (message: string, exit: number) => {
    io.err(`switchboard: ${message}`);
    if (json) io.out(JSON.stringify({ error: redactText(message) }));
    return exit;
  };
  try {
    await program(io, (c) => (code = c), await packageVersion()).parseAsync([...argv], { from: 'user' });
    return code;
  } catch (e) {
    const exit = exitCodeFor(e);
    if (e instanceof CommanderError) {
      // commander has printed its message on stderr already.
      if (exit !== EXIT.ok && json) io.out(JSON.stringify({ error: redactText(e.message.replace(/^error: /, '')) }));
      return exit;
    }
    if (exit !== EXIT.internal) return fail((e as Error).message, exit);
    if (process.env.SWITCHBOARD_DEBUG) io.err(String((e as Error)?.stack ?? e));
    return fail(
      `internal error (a bug; please report it): ${e instanceof Error ? e.message : String(e)}`,
      EXIT.internal,
    );
  }
}

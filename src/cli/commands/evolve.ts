/**
 * `switchboard evolve --domain <d> --agent <spec> --k 8 [--rounds N] --out <dir>`: run the
 * self-evolving task bank's loop ({@link evolve}): K rollouts of every task per round, labels
 * (always_pass / boundary / always_fail / flaky-infra), pass^k, gradient supply and the
 * curriculum's sampling weights. Prints a per-round table (or the JSON report with `--json`) and
 * writes `report.json`, `weights.json` (the last round's) and `trajectories.jsonl` to `--out`.
 */
import { writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import {
  admitToBank,
  evolve,
  TASK_LABELS,
  taskPatternIds,
  type EvolveReport,
  type SamplingWeights,
} from '../../core/evolution/index.ts';
import { writeBank } from '../../adapters/node/task-bank.ts';
import { readTaskIssues, writeTaskIssues } from '../../adapters/node/task-issues.ts';
import { readWeightsFile, weightsFilePath } from '../../adapters/node/curriculum.ts';
import { steppingClock } from '../../core/ports/clock.ts';
import { trialOrder } from '../../core/rollout/batch.ts';
import { writeJsonlStream } from '../../adapters/node/jsonl.ts';
import { openDomain, selectTasks, withBankTasks } from '../domains.ts';
import { addChannelOptions, channelFromFlags, type ChannelFlags } from '../channel.ts';
import { degradedAudioHook } from '../../core/channel/audio-store.ts';
import { baseLevel } from '../../core/evolution/channel-axis.ts';
import { harsherChannel } from '../../core/evolution/patterns.ts';
import { num, table } from '../format.ts';
import type { CliIo } from '../io.ts';
import {
  intOption,
  modelSettingsFromFlags,
  prepareOutFile,
  withDomainOptions,
  withSamplingOptions,
  type SamplingFlags,
} from '../options.ts';
import {
  agentFactory,
  judgeFromFlags,
  modelClientFor,
  userFactory,
  UsageError,
  withJudgeOptions,
} from '../participants.ts';

/** Options of the command. */
export interface EvolveOpts extends SamplingFlags, ChannelFlags {
  domain: string;
  data?: string;
  split?: string;
  taskIds?: string;
  agent: string;
  user: string;
  judge?: string;
  judgeN?: number;
  /** Other policies run on each round's always-failed tasks (cross-policy agreement). */
  crossPolicy: string[];
  k: number;
  rounds: number;
  seed: number;
  concurrency: number;
  maxSteps?: number;
  /** A `weights.json` of an earlier run: the bandit continues from its Q values. */
  previous?: string;
  /** Harden each round's always-passed tasks with the hard-pattern library. */
  harden?: boolean;
  /** Also harden on the channel axis (needs the channel flags: a named `--preset`). */
  hardenChannel?: boolean;
  /** Comma-separated task-axis pattern ids (default all). */
  patterns?: string;
  /** Variants admitted per always-passed task. */
  perTask?: number;
  /** A task-bank folder of an earlier run: its tasks join (or replace) the domain's. */
  bank?: string;
  /** A code-agent model (`<flavor>:<model>@<url>`) that proposes repairs of broken tasks in the loop. */
  repairAgent?: string;
  out: string;
  json?: boolean;
}

/**
 * Run the loop and write its files. Returns the report.
 * @throws UsageError for an unusable `--out` or a `--previous` file that is not a weights file
 */
export async function runEvolve(opts: EvolveOpts): Promise<EvolveReport> {
  const outDir = resolve(opts.out);
  await prepareOutFile(join(outDir, 'report.json'));
  const earlier = opts.previous ? await previousRun(opts.previous) : undefined;
  const previous = earlier?.weights;
  const models = modelSettingsFromFlags(opts);
  const channel = await channelFromFlags(opts, outDir);
  if (opts.hardenChannel && !channel) throw new UsageError('--harden-channel needs the phone channel: give --preset');
  if (opts.hardenChannel && channel)
    try {
      harsherChannel(baseLevel(channel));
    } catch (e) {
      throw new UsageError(`--harden-channel: ${(e as Error).message} (--barge-in must be one of its steps)`);
    }
  // A model agent hears each caller turn's degraded audio (as in groups).
  const agent = agentFactory(opts.agent, {
    ...models,
    ...(channel?.store ? { userAudio: degradedAudioHook(channel.store) } : {}),
  });
  const user = userFactory(opts.user, models);
  const judge = judgeFromFlags(opts, models);
  const crossPolicies = (opts.crossPolicy ?? []).map((spec) => agentFactory(spec, models));
  const repairClient = opts.repairAgent ? modelClientFor(opts.repairAgent, '--repair-agent', models) : null;
  const opened = await openDomain({ domain: opts.domain, ...(opts.data ? { data: opts.data } : {}) });
  const { domain, runtime, bank } = await withBankTasks(opened, opts.bank);
  const tasks = selectTasks(domain, opts);
  const issues = earlier ? await readTaskIssues(earlier.bank, domain.name) : null;
  const patterns = opts.patterns?.split(',').filter(Boolean);
  const known = taskPatternIds();
  const unknown = patterns?.find((p) => !known.includes(p));
  if (unknown) throw new UsageError(`--patterns: unknown task pattern "${unknown}" (known: ${known.join(', ')})`);
  const { report, trajectories, variants } = await evolve({
    runtime,
    tasks,
    agent,
    user,
    k: opts.k,
    rounds: opts.rounds,
    seed: opts.seed,
    concurrency: opts.concurrency,
    clock: () => steppingClock(domain.now, 1000),
    ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}),
    ...(judge ? { judge } : {}),
    ...(previous ? { previous } : {}),
    ...(issues ? { issues } : {}),
    ...(channel ? { channel } : {}),
    ...(opts.harden || opts.hardenChannel
      ? {
          harden: {
            // --harden-channel alone: the channel is the only axis.
            ...(patterns ? { patterns } : opts.harden ? {} : { patterns: [] }),
            ...(opts.perTask ? { perTask: opts.perTask } : {}),
            ...(opts.hardenChannel ? { channel: true } : {}),
          },
        }
      : {}),
    ...(crossPolicies.length ? { crossPolicies } : {}),
    ...(repairClient ? { repair: { client: repairClient } } : {}),
  });
  const byKey = trialOrder(tasks);
  const lines = trajectories.flatMap((round) => [...round].sort(byKey));
  await writeJsonlStream(join(outDir, 'trajectories.jsonl'), lines);
  await writeFile(join(outDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  const last = report.rounds[report.rounds.length - 1]!;
  await writeFile(join(outDir, 'weights.json'), `${JSON.stringify(last.weights, null, 2)}\n`);
  if (opts.harden || opts.hardenChannel || repairClient)
    await writeBank(join(outDir, 'bank'), opened.domain.tasks, admitToBank(bank, variants));
  await writeTaskIssues(join(outDir, 'bank'), domain.name, last.issues);
  return report;
}

/**
 * An earlier run named by `--previous`: its folder (or its `weights.json`). Returns the weights
 * and the bank folder whose `issues.json` holds its task issues.
 */
async function previousRun(path: string): Promise<{ weights: SamplingWeights; bank: string }> {
  const file = await weightsFilePath(path);
  return { weights: await readWeightsFile(file), bank: join(dirname(file), 'bank') };
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

/** The per-round table: label histogram, mean reward, gradient supply, rollouts. */
export function renderEvolve(report: EvolveReport): string {
  const cross = report.cross_policies.length ? ` · cross-policy ${report.cross_policies.join(', ')}` : '';
  const head = `evolve ${report.domain} · agent ${report.agent}${cross} · user ${report.user} · K=${report.k} · thresholds: always_pass ≥ ${report.thresholds.always_pass}, always_fail ≤ ${report.thresholds.always_fail}, min valid ${report.thresholds.min_valid}`;
  const headers = ['round', 'seed', ...TASK_LABELS, 'mean reward', 'supply σ>0', 'episodes', 'invalid'];
  const rows = report.rounds.map((r) => [
    String(r.round),
    String(r.seed),
    ...TASK_LABELS.map((l) => String(r.labels.histogram[l])),
    num(r.labels.mean_reward),
    pct(r.labels.supply.outcome),
    String(r.episodes),
    String(r.invalid_attempts),
  ]);
  const last = report.rounds[report.rounds.length - 1]!;
  const top = last.weights.tasks
    .filter((t) => t.weight > 0)
    .slice(0, 5)
    .map((t) => `  ${t.task_id} (${t.label}, pass ${num(t.pass_rate)}): ${t.weight.toFixed(3)}`);
  const verdicts = report.rounds.flatMap((r) =>
    r.attribution.map(
      (a) =>
        `  round ${r.round} ${a.task_id}: ${a.verdict}${a.findings.map((f) => `\n    ${f.kind}${f.rule ? ` ${f.rule}` : ''}${f.field ? ` ${f.field}` : ''} (evidence ${f.trajectory_ids[0] ?? '-'}): ${f.detail}`).join('')}${(a.invalid_policies ?? []).map((p) => `\n    ${p}: every rollout invalid (infrastructure); not counted for cross-policy agreement`).join('')}`,
    ),
  );
  const hardening = report.rounds.flatMap((r) =>
    r.hardening
      ? [
          ...r.hardening.admitted.map((a) => `  round ${r.round} ${a.task_id}: admitted (${a.reason})`),
          ...r.hardening.rejected.map(
            (x) => `  round ${r.round} ${x.task_id}: rejected by the gate: ${x.gate_reasons.join('; ')}`,
          ),
        ]
      : [],
  );
  const repairs = report.rounds.flatMap((r) =>
    (r.repairs ?? []).map(
      (x) =>
        `  round ${r.round} ${x.task_id}: ${x.status === 'admitted' ? `repaired, version ${x.version} (${x.detail})` : `${x.status}: ${x.detail}`}`,
    ),
  );
  return [
    head,
    table(headers, rows, new Set(headers.slice(1))),
    `labels before → after: ${TASK_LABELS.map((l) => `${l} ${report.summary.labels_before[l]} → ${report.summary.labels_after[l]}`).join(', ')}`,
    ...(verdicts.length ? ['', 'always-failed tasks:', ...verdicts] : []),
    ...(report.rounds.some((r) => r.hardening)
      ? ['', 'hardened always-passed tasks:', ...(hardening.length ? hardening : ['  none'])]
      : []),
    ...(report.rounds.some((r) => r.repairs)
      ? ['', 'model repairs of broken tasks:', ...(repairs.length ? repairs : ['  none'])]
      : []),
    '',
    'sample next (weights.json, first five):',
    ...top,
  ].join('\n');
}

/** Add the `evolve` command. */
export function registerEvolve(program: Command, io: CliIo, setCode: (code: number) => void): Command {
  const collect = (value: string, previous: string[]) => [...previous, value];
  return addChannelOptions(withSamplingOptions(withDomainOptions(withJudgeOptions(program.command('evolve')))))
    .option(
      '--agent <spec>',
      'agent: reference | noop | noisy:<p> | <flavor>:<model>@<base-url> | local:<model-id>',
      'reference',
    )
    .option('--user <spec>', 'simulated caller: scripted | <flavor>:<model>@<base-url>', 'scripted')
    .option(
      '--cross-policy <spec>',
      'another agent run K times on each always-failed task, for cross-policy agreement (repeatable)',
      collect,
      [],
    )
    .option('--k <n>', 'rollouts per task per round', intOption('--k', 1), 8)
    .option('--rounds <n>', 'rounds of the loop', intOption('--rounds', 1), 1)
    .option('--seed <n>', 'base seed; round r, trial t uses seed + r·K + t', intOption('--seed', 0), 0)
    .option('--concurrency <n>', 'rollouts in flight', intOption('--concurrency', 1), 4)
    .option('--max-steps <n>', 'participant turns per episode (default 100)', intOption('--max-steps', 1))
    .option(
      '--previous <run>',
      "an earlier run's --out folder (or its weights.json): the bandit continues from its weights, its task issues (bank/issues.json) carry on",
    )
    .option('--harden', 'harden always-passed tasks with the hard-pattern library (variants admitted by the gate)')
    .option(
      '--harden-channel',
      'also harden on the channel axis: an always-passed task no task pattern hardened moves one step up the channel ladder (preset clean → control → regular → harsh, then barge-in); needs --preset; alone, the only axis',
    )
    .option(
      '--patterns <ids>',
      `task patterns to try with --harden (comma-separated; default all: ${taskPatternIds().join(', ')})`,
    )
    .option('--per-task <n>', 'variants admitted per always-passed task', intOption('--per-task', 1), 1)
    .option(
      '--repair-agent <spec>',
      'a code-agent model (<flavor>:<model>@<base-url>) that proposes a JSON patch for each broken task; admitted only through the schema and the gate',
    )
    .option('--bank <dir>', 'a task bank folder (bank/ of an earlier evolve --harden): its tasks join the domain')
    .requiredOption(
      '--out <dir>',
      'write report.json, weights.json, trajectories.jsonl and bank/issues.json (and the bank with --harden or --repair-agent) here',
    )
    .option('--json', 'print the report as one JSON document')
    .action(async (opts: EvolveOpts) => {
      const report = await runEvolve(opts);
      io.out(opts.json ? JSON.stringify(report, null, 2) : renderEvolve(report));
      if (!opts.json) io.err(`wrote report.json, weights.json, trajectories.jsonl and bank/ to ${resolve(opts.out)}`);
      setCode(0);
    });
}

/**
 * `switchboard replay <file> --domain <d> [--data <dir>] [--json]`: re-execute the tool calls of
 * recorded episodes (a tau2-bench results file, or our trajectories) on fresh databases and report,
 * call by call, whether our output equals the recorded one, and whether our reward equals the
 * recorded reward. Exit code 0 when everything is equal, 1 when something differs, 2 on bad input.
 * With `--bank`, a task bank's tasks and versions join the domain's; each episode is scored
 * against the task version it recorded, or with `--fresh-tasks` against the current version.
 */
import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import { readRecording, type Recording, type RecordingFormat } from '../../adapters/node/tau2-results.ts';
import { jsonDifferences, parseOutput } from '../../core/replay/compare.ts';
import { ReplayInputError, checkEpisodes, fieldAt, type RecordedEpisode } from '../../core/replay/episode.ts';
import { lineageOf, taskVersion } from '../../core/evolution/bank.ts';
import type { Task } from '../../core/schema/task.ts';
import {
  replayEpisodes,
  type CallComparison,
  type ReplayReport,
  type ReplaySummary,
  type RewardComparison,
} from '../../core/replay/replay.ts';
import { openDomain, withBankTasks } from '../domains.ts';
import type { CliIo } from '../io.ts';
import { DATA_HELP, DOMAIN_HELP } from '../options.ts';
import { UsageError } from '../participants.ts';

/** Options of the command. */
export interface ReplayOpts {
  domain: string;
  data?: string;
  json?: boolean;
  /** A task-bank folder: its tasks and versions join the domain's. */
  bank?: string;
  /** Score every episode against the current version of its task, not the version it recorded. */
  freshTasks?: boolean;
}

/** The `--json` document: every call, every reward, and the totals with the file and its format. */
export interface ReplayDocument {
  calls: CallComparison[];
  rewards: RewardComparison[];
  summary: ReplaySummary & { file: string; format: RecordingFormat };
}

/** Differences listed in text mode. */
const SHOWN_DIFFERENCES = 10;

const FORMAT_NAMES: Readonly<Record<RecordingFormat, string>> = {
  'tau2-results': 'tau2-bench results',
  'tau2-results-dir': 'tau2-bench results folder',
  'tau2-simulations': 'tau2-bench simulations',
  'switchboard-trajectories': 'Switchboard trajectories',
};

function clip(text: string, max = 160): string {
  const one = text.replace(/\s+/g, ' ');
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

function rewardText(x: number | null): string {
  return x === null ? '-' : String(Math.round(x * 1000) / 1000);
}

function callLines(c: CallComparison): string[] {
  const head = `  ${c.simulation_id} call ${c.index}${c.requestor === 'user' ? ' (user)' : ''}: ${c.name}(${clip(JSON.stringify(c.arguments), 80)})`;
  if (c.recorded_error !== c.ours_error) {
    return [
      head,
      `    recorded: ${c.recorded_error ? 'error' : 'success'} ${clip(c.recorded ?? '(no output recorded)')}`,
      `    ours:     ${c.ours_error ? 'error' : 'success'} ${clip(c.ours)}`,
    ];
  }
  const a = parseOutput(c.recorded);
  const b = parseOutput(c.ours);
  if (a !== undefined && b !== undefined) return [head, ...jsonDifferences(a, b).map((l) => `    ${l}`)];
  return [head, `    recorded: ${clip(c.recorded ?? '(no output recorded)')}`, `    ours:     ${clip(c.ours)}`];
}

function rewardLines(r: RewardComparison): string[] {
  const partial = r.partial ? ' (partial)' : '';
  const head = `  ${r.simulation_id} reward (task ${r.task_id}${r.termination ? `, ${r.termination}` : ''}): recorded ${rewardText(r.recorded)}, ours ${rewardText(r.ours)}${partial}`;
  return [head, ...r.ours_notes.map((n) => `    ${clip(n, 200)}`)];
}

function pct(x: number | null): string {
  return x === null ? '-' : `${x}%`;
}

/** The text report: totals, then the first differences in episode order. */
export function renderReplay(recording: Recording, doc: ReplayDocument): string {
  const s = doc.summary;
  const out = [
    `Replay: ${recording.file} (${FORMAT_NAMES[recording.format]}) on ${s.domain} · ${s.simulations} simulation${s.simulations === 1 ? '' : 's'}`,
    `Tool calls: ${s.calls.equal} of ${s.calls.total} equal (${pct(s.calls.percent_equal)}) · ${s.calls.different} different` +
      (s.calls.unanswered ? ` · ${s.calls.unanswered} unanswered (not replayed)` : ''),
    `Rewards:    ${s.rewards.equal} of ${s.rewards.compared} equal (${pct(s.rewards.percent_equal)}) · ${s.rewards.different} different` +
      (s.rewards.partial ? ` · ${s.rewards.partial} partial (no judge)` : '') +
      (s.rewards.not_recorded ? ` · ${s.rewards.not_recorded} not recorded` : ''),
  ];
  if (s.policy.breaking) {
    out.push(
      `Policy:     ${s.policy.breaking} episode${s.policy.breaking === 1 ? '' : 's'} broke a rule check (${s.policy.breaking_passes} of them scored 1; rule checks never change the reward)`,
    );
    for (const r of doc.rewards.filter((x) => x.rule_breaks.length).slice(0, SHOWN_DIFFERENCES))
      out.push(...r.rule_breaks.map((b) => `  ${r.simulation_id} (task ${r.task_id}): ${b}`));
  }
  const diffs: string[][] = [];
  let next = 0;
  for (const r of doc.rewards) {
    // Calls are in episode order, `r.calls` of them per episode.
    for (const c of doc.calls.slice(next, next + r.calls)) if (!c.equal) diffs.push(callLines(c));
    next += r.calls;
    if (r.equal === false) diffs.push(rewardLines(r));
  }
  if (diffs.length) {
    out.push(`First differences (${Math.min(diffs.length, SHOWN_DIFFERENCES)} of ${diffs.length}):`);
    for (const d of diffs.slice(0, SHOWN_DIFFERENCES)) out.push(...d);
  }
  out.push(
    s.all_equal
      ? `ALL EQUAL: ${s.calls.total} call${s.calls.total === 1 ? '' : 's'} and ${s.rewards.compared} reward${s.rewards.compared === 1 ? '' : 's'}`
      : `DIFFERENT: ${s.calls.different} call${s.calls.different === 1 ? '' : 's'} and ${s.rewards.different} reward${s.rewards.different === 1 ? '' : 's'} differ`,
  );
  return out.join('\n');
}

/**
 * Read, replay and compare. Input problems (unreadable or malformed file, wrong domain, unknown
 * task) become {@link UsageError}s naming the file and field.
 */
export async function runReplay(
  io: CliIo,
  file: string,
  opts: ReplayOpts,
): Promise<{ recording: Recording; doc: ReplayDocument }> {
  let recording: Recording;
  try {
    recording = await readRecording(file);
  } catch (e) {
    throw e instanceof ReplayInputError ? new UsageError(e.message) : e;
  }
  const opened = await openDomain({ domain: opts.domain, ...(opts.data ? { data: opts.data } : {}) });
  const { domain, runtime, bank } = await withBankTasks(opened, opts.bank);
  try {
    checkEpisodes(domain, recording.episodes);
  } catch (e) {
    throw e instanceof ReplayInputError ? new UsageError(e.message) : e;
  }
  // Each episode is scored against the task version it recorded, unless --fresh-tasks.
  const recorded = new Map<RecordedEpisode, Task>();
  if (!opts.freshTasks)
    for (const ep of recording.episodes) {
      const version = ep.task_version ?? lineageOf(domain.tasks.find((t) => t.id === ep.task_id)!).version;
      const task = taskVersion(opened.domain.tasks, bank, ep.task_id, version);
      if (!task)
        throw new UsageError(
          `${ep.file}: ${fieldAt(ep.where, 'task_version')}: episode ${ep.simulation_id} was scored with version ${version} of task ${ep.task_id}, which neither the domain nor ${opts.bank ? `the bank ${opts.bank}` : 'a bank (--bank)'} has; pass --fresh-tasks to re-score against the current version`,
        );
      recorded.set(ep, task);
    }
  const bar =
    io.progress && !opts.json
      ? new cliProgress.SingleBar(
          {
            format: `replay ${domain.name} [{bar}] {value}/{total} · {duration_formatted}`,
            stream: process.stderr,
            hideCursor: true,
          },
          cliProgress.Presets.shades_classic,
        )
      : null;
  bar?.start(recording.episodes.length, 0);
  let report: ReplayReport;
  try {
    report = await replayEpisodes(runtime, recording.episodes, {
      onEpisode: () => bar?.increment(),
      ...(opts.freshTasks ? {} : { taskFor: (ep) => recorded.get(ep) }),
    });
  } finally {
    bar?.stop();
  }
  const doc: ReplayDocument = {
    calls: report.calls,
    rewards: report.rewards,
    summary: { file, format: recording.format, ...report.summary },
  };
  return { recording, doc };
}

/**
 * Add the `replay` command to `program`.
 *
 * @param setCode receives the exit code: 0 all equal, 1 something differs (input errors are
 *   thrown as {@link UsageError}: exit 2).
 */
export function registerReplay(program: Command, io: CliIo, setCode: (code: number) => void): Command {
  return program
    .command('replay')
    .argument(
      '<file>',
      'tau2-bench results (JSON file, or results folder), or trajectories (JSONL from run --out, or a JSON array)',
    )
    .requiredOption('--domain <name>', DOMAIN_HELP)
    .option('--data <dir>', DATA_HELP)
    .option('--json', 'print one JSON document: calls, rewards, summary')
    .option(
      '--bank <dir>',
      'a task bank folder (bank/ of evolve --harden): its tasks and task versions join the domain',
    )
    .option(
      '--fresh-tasks',
      'score every episode against the current version of its task (default: the version it recorded)',
    )
    .action(async (file: string, opts: ReplayOpts) => {
      const { recording, doc } = await runReplay(io, file, opts);
      io.out(opts.json ? JSON.stringify(doc, null, 2) : renderReplay(recording, doc));
      setCode(doc.summary.all_equal ? 0 : 1);
    });
}

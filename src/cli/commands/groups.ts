/**
 * `switchboard groups --domain … --granularity conversation|milestone|turn --k 4 --out rows.jsonl`:
 * sample GRPO groups, compute advantages, and write one validated GRPO row per sample (JSONL).
 * Prints the batch's gradient supply.
 */
import type { Command } from 'commander';
import { steppingClock } from '../../core/ports/clock.ts';
import type { Trajectory } from '../../core/schema/trajectory.ts';
import {
  conversationGroups,
  grpoRows,
  milestoneGroups,
  runWithMilestones,
  scoreGroups,
  turnGroups,
  type Group,
  type Granularity,
  type GradientSupply,
  type TurnSample,
} from '../../core/training/index.ts';
import { writeJsonl } from '../../adapters/node/training-files.ts';
import { openDomain, selectTasks } from '../domains.ts';
import type { CliIo } from '../io.ts';
import { agentFactory, userFactory } from '../participants.ts';
import { choiceOption, intOption, prepareOutFile } from '../options.ts';

/** Options of the command. */
export interface GroupsOpts {
  domain: string;
  data?: string;
  split?: string;
  taskIds?: string;
  granularity: Granularity;
  k: number;
  seed: number;
  agent: string;
  user: string;
  reward: 'final' | 'shaped';
  flat: 'zero' | 'drop';
  out: string;
  json?: boolean;
}

/** What the command reports. */
export interface GroupsReport {
  domain: string;
  granularity: Granularity;
  k: number;
  seed: number;
  reward: 'final' | 'shaped';
  groups: number;
  rows: number;
  dropped: string[];
  supply: GradientSupply;
  out: string;
}

/** Sample, score and write. */
export async function runGroups(opts: GroupsOpts): Promise<GroupsReport> {
  const out = await prepareOutFile(opts.out);
  const agent = agentFactory(opts.agent);
  const user = userFactory(opts.user);
  const { domain, runtime } = await openDomain({ domain: opts.domain, ...(opts.data ? { data: opts.data } : {}) });
  const tasks = selectTasks(domain, opts);
  const base = { runtime, agent, user, clock: () => steppingClock(domain.now, 1000) };
  let groups: Group<Trajectory | TurnSample>[] = [];
  const milestoneTurns = new Map<string, number>();
  if (opts.granularity === 'conversation') {
    groups = (await conversationGroups({ ...base, tasks, k: opts.k, seed: opts.seed })).groups;
  } else if (opts.granularity === 'milestone') {
    const out = await milestoneGroups({ ...base, tasks, k: opts.k, seed: opts.seed });
    groups = out.groups;
    for (const m of out.milestones) milestoneTurns.set(m.id, m.checkpoint.turns.length);
  } else {
    for (const task of tasks) {
      const { trajectory } = await runWithMilestones({ ...base, task, seed: opts.seed });
      if (!trajectory.valid) continue;
      groups.push(...(await turnGroups({ runtime, task, trajectory, agent, k: opts.k, seed: opts.seed + 1 })));
    }
  }
  const batch = scoreGroups(groups, { reward: opts.reward, flat: opts.flat });
  const rows = grpoRows(domain, batch, { milestoneTurns });
  await writeJsonl(out, rows);
  return {
    domain: domain.name,
    granularity: opts.granularity,
    k: opts.k,
    seed: opts.seed,
    reward: opts.reward,
    groups: batch.groups.length,
    rows: rows.length,
    dropped: batch.dropped,
    supply: batch.supply,
    out,
  };
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

/** Add the `groups` command. */
export function registerGroups(program: Command, io: CliIo, setCode: (code: number) => void): Command {
  return program
    .command('groups')
    .description('Sample GRPO groups (K samples per shared prefix), compute advantages, write one GRPO row per sample.')
    .requiredOption(
      '--domain <name>',
      'carrier, a path to a domain folder, or tau2-airline / tau2-retail (data from --data or `switchboard data tau2`)',
    )
    .option('--data <dir>', 'tau2-bench data folder (tau2 domains; default the `switchboard data tau2` cache)')
    .option('--split <name>', 'tau2 task split: base, train or test')
    .option('--task-ids <ids>', 'comma-separated task ids')
    .option(
      '--granularity <g>',
      'conversation | milestone | turn',
      choiceOption('--granularity', ['conversation', 'milestone', 'turn'] as const),
      'conversation',
    )
    .option('--k <n>', 'samples per group', intOption('--k', 2), 4)
    .option('--seed <n>', 'base seed; sample i uses seed + i', intOption('--seed', 0), 0)
    .option('--agent <spec>', 'agent: reference | noop', 'reference')
    .option('--user <spec>', 'simulated caller: scripted', 'scripted')
    .option(
      '--reward <r>',
      'advantage on final | shaped (final + process returns)',
      choiceOption('--reward', ['final', 'shaped'] as const),
      'final',
    )
    .option(
      '--flat <p>',
      'groups whose outcomes are all equal: zero | drop',
      choiceOption('--flat', ['zero', 'drop'] as const),
      'zero',
    )
    .requiredOption('--out <file>', 'GRPO rows, JSONL')
    .option('--json', 'print the report as one JSON document')
    .action(async (opts: GroupsOpts) => {
      const report = await runGroups(opts);
      if (opts.json) io.out(JSON.stringify(report, null, 2));
      else {
        io.out(
          [
            `${report.granularity} groups on ${report.domain}: ${report.groups} kept, ${report.dropped.length} dropped, ${report.rows} rows → ${report.out}`,
            `gradient supply (σ > 0): outcome ${pct(report.supply.outcome)} · final ${pct(report.supply.final)} · shaped ${pct(report.supply.shaped)} of ${report.supply.groups} groups`,
          ].join('\n'),
        );
      }
      setCode(report.rows > 0 ? 0 : 1);
    });
}

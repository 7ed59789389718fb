/**
 * `switchboard export sft <trajectories.jsonl> --domain … --out sft.jsonl [filters]` and
 * `switchboard export grpo <rows.jsonl> --out rows.parquet|rows.jsonl`: training-data files in
 * the documented formats (docs/training-data.md), validated before they are written.
 */
import { dirname, relative, resolve, sep } from 'node:path';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { RewardComponent } from '../../core/schema/task.ts';
import { Trajectory } from '../../core/schema/trajectory.ts';
import { GrpoRow, sftRecords } from '../../core/training/export.ts';
import { readJsonl, writeGrpoParquet, writeJsonl } from '../../adapters/node/training-files.ts';
import { openDomain } from '../domains.ts';
import { prepareOutFile } from '../options.ts';
import type { CliIo } from '../io.ts';
import { UsageError } from '../participants.ts';

interface SftOpts {
  domain: string;
  data?: string;
  out: string;
  minReward?: number;
  require?: RewardComponent[];
  teacher: boolean;
  audioRoot?: string;
  json?: boolean;
}

function components(v: string): RewardComponent[] {
  return v.split(',').map((s) => {
    const p = RewardComponent.safeParse(s.trim());
    if (!p.success)
      throw new InvalidArgumentError(`unknown component "${s.trim()}" (known: ${RewardComponent.options.join(', ')})`);
    return p.data;
  });
}

function reward(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n)) throw new InvalidArgumentError('--min-reward must be a number');
  return n;
}

/**
 * Audio paths of an SFT export: a recorded path (relative to `root`, the run's output folder)
 * rewritten relative to the exported file's folder, with `/` separators, so it resolves from
 * the file wherever the two folders are.
 */
function audioPathFrom(root: string, out: string): (ref: string) => string {
  return (ref) =>
    relative(dirname(resolve(out)), resolve(root, ref))
      .split(sep)
      .join('/');
}

async function read<T>(file: string, schema: Parameters<typeof readJsonl<T>>[1]): Promise<T[]> {
  try {
    return await readJsonl(file, schema);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** Add `export sft` and `export grpo`. */
export function registerExport(program: Command, io: CliIo, setCode: (code: number) => void): Command {
  const cmd = program
    .command('export')
    .description('Write training data: SFT chat records or GRPO rows (JSONL, Parquet).');
  cmd
    .command('sft')
    .description('One OpenAI-format chat record per scored trajectory, with tool schemas and reward breakdown.')
    .argument('<trajectories>', 'trajectories.jsonl from run --out')
    .requiredOption('--domain <name>', 'the domain the trajectories were recorded on')
    .option('--data <dir>', 'tau2-bench data folder (tau2 domains; default the `switchboard data tau2` cache)')
    .requiredOption('--out <file>', 'SFT records, JSONL')
    .option('--min-reward <x>', 'keep rewards ≥ x', reward)
    .option(
      '--require <components>',
      'keep only trajectories whose components (comma-separated) all scored 1',
      components,
    )
    .option('--no-teacher', 'leave out teacher-guided trajectories')
    .option(
      '--audio-root <dir>',
      "folder the trajectories' audio paths are relative to (default: the trajectories file's folder)",
    )
    .option('--json', 'print the report as one JSON document')
    .action(async (file: string, opts: SftOpts) => {
      const out = await prepareOutFile(opts.out);
      const trajectories = await read(file, Trajectory);
      const { domain } = await openDomain({ domain: opts.domain, ...(opts.data ? { data: opts.data } : {}) });
      const foreign = trajectories.findIndex((t) => t.domain !== domain.name);
      if (foreign >= 0) {
        throw new UsageError(
          `${file}: trajectory ${foreign + 1} was recorded in domain "${trajectories[foreign]!.domain}", not ${domain.name}`,
        );
      }
      const { records, rejected } = sftRecords(
        domain,
        trajectories,
        {
          ...(opts.minReward !== undefined ? { minReward: opts.minReward } : {}),
          ...(opts.require ? { requireComponents: opts.require } : {}),
          allowTeacher: opts.teacher,
        },
        { audioPath: audioPathFrom(opts.audioRoot ?? dirname(resolve(file)), out) },
      );
      await writeJsonl(out, records);
      const report = { out, records: records.length, rejected };
      io.out(
        opts.json
          ? JSON.stringify(report, null, 2)
          : `wrote ${records.length} SFT records to ${out}; left out ${rejected.length}`,
      );
      setCode(records.length > 0 ? 0 : 1);
    });
  cmd
    .command('grpo')
    .description('Convert GRPO rows (JSONL from `groups`) to Parquet (.parquet) or validated JSONL (.jsonl).')
    .argument('<rows>', 'GRPO rows, JSONL')
    .requiredOption('--out <file>', 'rows.parquet or rows.jsonl')
    .option('--json', 'print the report as one JSON document')
    .action(async (file: string, opts: { out: string; json?: boolean }) => {
      const rows = await read(file, GrpoRow);
      if (rows.length === 0) throw new UsageError(`${file}: no GRPO rows`);
      if (!/\.(parquet|jsonl)$/.test(opts.out)) throw new UsageError(`--out ${opts.out}: name it .parquet or .jsonl`);
      const out = await prepareOutFile(opts.out);
      if (out.endsWith('.parquet')) await writeGrpoParquet(out, rows);
      else if (out.endsWith('.jsonl')) await writeJsonl(out, rows);
      else throw new UsageError(`--out ${opts.out}: name it .parquet or .jsonl`);
      io.out(
        opts.json ? JSON.stringify({ out, rows: rows.length }, null, 2) : `wrote ${rows.length} GRPO rows to ${out}`,
      );
      setCode(0);
    });
  return cmd;
}

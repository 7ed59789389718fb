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
import { GrpoRow, repeatedSample, sftRecords, tokenCoverage, withAudioPaths } from '../../core/training/export.ts';
import { RolloutGroupLine, rolloutGrpoRows } from '../../core/training/policy-rollout.ts';
import { readJsonl, verlParquet, writeGrpoParquet, writeJsonl } from '../../adapters/node/training-files.ts';
import {
  RAW_ARGUMENTS_KEY,
  TrainerFormatError,
  type TrainerFormatTally,
  trlGrpoRows,
  trlSftRows,
  verlRows,
  type VerlRow,
} from '../../core/training/trainer-formats.ts';
import { writeFile } from 'node:fs/promises';
import { openDomain } from '../domains.ts';
import { choiceOption, DATA_HELP, prepareOutFile } from '../options.ts';
import type { CliIo } from '../io.ts';
import { UsageError } from '../participants.ts';
import { unansweredCalls, unansweredMidway, withUnrunAnswered } from '../../core/rollout/unrun-calls.ts';

interface SftOpts {
  format: 'switchboard' | 'trl';
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

type Issue = { path: PropertyKey[]; message: string };
type Parsed<T> = { success: true; data: T } | { success: false; error: { issues: Issue[] } };
const fail = (message: string, path: PropertyKey[] = []): Parsed<never> => ({
  success: false,
  error: { issues: [{ path, message }] },
});
const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** What the report says of tool calls whose arguments a trainer format wrapped (nothing when none was). */
function wrappedNote(tally: TrainerFormatTally): string {
  if (tally.wrappedArguments === 0) return '';
  return `; ${tally.wrappedArguments} tool call(s) whose argument text the model wrote was not a JSON object carry it as {"${RAW_ARGUMENTS_KEY}": <text>}`;
}

/** The summary of token-id coverage over the rows read (`tokens` of each {@link GrpoRow}). */
function tokenNote(t: Record<GrpoRow['tokens'], number>): string {
  const n = t.all + t.partial + t.none;
  if (t.all === n) return 'token ids: every turn of every sample';
  if (t.none === n) return 'token ids: none (token_ids null)';
  return `token ids partial: ${t.all} of ${n} samples have every turn's ids, ${t.partial} some (the others null), ${t.none} none`;
}

/** A GRPO row written before rows had `tokens`: an empty turn array meant "no ids", now null. */
function olderRow(x: Record<string, unknown>): Record<string, unknown> {
  const turns = (v: unknown) => (Array.isArray(v) ? v.map((t) => (Array.isArray(t) && t.length === 0 ? null : t)) : v);
  const token_ids = turns(x.token_ids);
  return {
    ...x,
    token_ids,
    logprobs: turns(x.logprobs),
    tokens: tokenCoverage(Array.isArray(token_ids) ? (token_ids as (number[] | null)[]) : null),
  };
}

/**
 * The rows when every tool call in their messages has its tool message; else the first row that
 * has one without, refused: rows written before calls that never ran were answered (8a2af74) can
 * end among a reply's calls, and a trainer's chat template needs every call answered.
 */
function answered(rows: GrpoRow[]): Parsed<GrpoRow[]> {
  for (const r of rows) {
    const u = unansweredCalls(
      r.messages.map((m) => ({ role: m.role, calls: m.role === 'assistant' ? (m.tool_calls?.length ?? 0) : 0 })),
      true,
    );
    if (u)
      return fail(
        `message ${u.at} (${u.role}) of group ${r.group_id} sample ${r.sample_index}: ${u.calls - u.answered} of its ${u.calls} tool calls have no tool message (written before calls that never ran were answered): make the rows again (\`switchboard groups\` or \`rollout\`)`,
        ['messages'],
      );
  }
  return { success: true, data: rows };
}

/**
 * A line of `export grpo`'s input: a GRPO row (from `switchboard groups`) as it is, or a rollout
 * group (from `switchboard rollout` / `POST /rollout`, a line with `samples`) as its rows; the
 * `failed` and `summary` lines of a saved `POST /rollout` answer give no rows, and its `error`
 * line is refused, and so are rows with a tool call left without its tool message ({@link answered}).
 * A line that is none of these says which two shapes are read.
 */
const GrpoInputLine = {
  safeParse(x: unknown): Parsed<GrpoRow[]> {
    // A saved `POST /rollout` answer: its `failed` and `summary` lines hold no samples.
    if (isObject(x) && (x.type === 'failed' || x.type === 'summary')) return { success: true, data: [] };
    if (isObject(x) && x.type === 'error')
      return fail(
        `a POST /rollout answer that ended in an error (${String(x.message)}): its groups before it are complete, run the rest again`,
      );
    if (isObject(x) && Array.isArray(x.samples)) {
      const g = RolloutGroupLine.safeParse(x);
      if (!g.success) {
        const issue = g.error.issues[0]!;
        const old =
          issue.path[0] === 'samples' && issue.path[2] === 'messages' && issue.message.includes('undefined')
            ? ' (a rollout file from before samples carried `messages`: run `switchboard rollout` again)'
            : '';
        return fail(`rollout group: ${issue.message}${old}`, issue.path);
      }
      return answered(rolloutGrpoRows(g.data));
    }
    // Rows from before `tokens` (issue 14): coverage read from their token ids, `[]` turns as null.
    const r = GrpoRow.safeParse(isObject(x) && x.tokens === undefined ? olderRow(x) : x);
    if (r.success) return answered([r.data]);
    const issue = r.error.issues[0]!;
    return fail(
      `${issue.message} (export grpo reads GRPO rows from \`switchboard groups\` or rollout groups from \`switchboard rollout\`, one per line; trajectories from \`run --out\` go to \`export sft\`)`,
      issue.path,
    );
  },
};

/**
 * A line of `export sft`'s input: a trajectory, with the calls its last reply left unanswered
 * (files written before they were) answered `not_run` ({@link withUnrunAnswered}); one whose calls
 * go unanswered before its end is refused. A GRPO row or rollout group line is refused naming the
 * command that reads it.
 */
const SftInputLine = {
  safeParse(x: unknown): Parsed<Trajectory> {
    const t = Trajectory.safeParse(x);
    if (t.success) {
      const midway = unansweredMidway(t.data.turns);
      if (midway)
        return fail(
          `${midway}: every tool call needs its tool turn before the conversation goes on (was this file edited?)`,
          ['turns'],
        );
      return { success: true, data: withUnrunAnswered(t.data) };
    }
    if (isObject(x) && typeof x.group_id === 'string')
      return fail(
        `this is ${Array.isArray(x.samples) ? 'a rollout group (from `switchboard rollout`)' : 'a GRPO row (from `switchboard groups`)'}, not a trajectory: export sft reads trajectories.jsonl from \`switchboard run --out\`; use \`switchboard export grpo\` for this file`,
      );
    const issue = t.error.issues[0]!;
    return fail(issue.message, issue.path);
  },
};

/** Add `export sft` and `export grpo`. */
export function registerExport(program: Command, io: CliIo, setCode: (code: number) => void): Command {
  const cmd = program.command('export');
  cmd
    .command('sft')
    .description('One OpenAI-format chat record per scored trajectory, with tool schemas and reward breakdown.')
    .argument('<trajectories>', 'trajectories.jsonl from run --out')
    .requiredOption('--domain <name>', 'the domain the trajectories were recorded on')
    .option('--data <dir>', DATA_HELP)
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
    .option(
      '--format <f>',
      'switchboard (our records) | trl (TRL SFTTrainer: messages, tools; one content shape)',
      choiceOption('--format', ['switchboard', 'trl'] as const),
      'switchboard',
    )
    .option('--json', 'print the report as one JSON document')
    .action(async (file: string, opts: SftOpts) => {
      const out = await prepareOutFile(opts.out);
      const trajectories = await read(file, SftInputLine);
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
      const tally: TrainerFormatTally = { wrappedArguments: 0 };
      await writeJsonl(out, opts.format === 'trl' ? trlSftRows(records, tally) : records);
      const report = { out, records: records.length, rejected, wrapped_arguments: tally.wrappedArguments };
      io.out(
        opts.json
          ? JSON.stringify(report, null, 2)
          : `wrote ${records.length} SFT records to ${out}; left out ${rejected.length}${wrappedNote(tally)}`,
      );
      setCode(records.length > 0 ? 0 : 1);
    });
  cmd
    .command('grpo')
    .description(
      'Convert GRPO rows (JSONL from `groups`, or rollout groups from `rollout`, one row per sample): ours as Parquet or JSONL, TRL GRPO (prompt/completion JSONL) or verl (Parquet).',
    )
    .argument('<rows>', 'GRPO rows (from `groups`) or rollout groups (from `rollout`), JSONL')
    .requiredOption('--out <file>', 'rows.parquet or rows.jsonl (trl: .jsonl; verl: .parquet)')
    .option(
      '--format <f>',
      'switchboard | trl (prompt, completion, tools) | verl (data_source, prompt, ability, reward_model, extra_info)',
      choiceOption('--format', ['switchboard', 'trl', 'verl'] as const),
      'switchboard',
    )
    .option(
      '--audio-root <dir>',
      "folder the rows' caller-audio paths are relative to (default: the rows file's folder); written relative to --out",
    )
    .option('--json', 'print the report as one JSON document')
    .action(
      async (
        file: string,
        opts: { out: string; format: 'switchboard' | 'trl' | 'verl'; audioRoot?: string; json?: boolean },
      ) => {
        const audioPath = audioPathFrom(opts.audioRoot ?? dirname(resolve(file)), opts.out);
        const rows = (await read(file, GrpoInputLine))
          .flat()
          .map((r) => ({ ...r, messages: withAudioPaths(r.messages, audioPath) }));
        if (rows.length === 0) throw new UsageError(`${file}: no GRPO rows`);
        const twice = repeatedSample(rows);
        if (twice)
          throw new UsageError(
            `${file}: group ${twice} appears twice (two runs of the same task joined?): a group's advantages are computed over its own samples, so export each run's file on its own`,
          );
        const ext = { switchboard: /\.(parquet|jsonl)$/, trl: /\.jsonl$/, verl: /\.parquet$/ }[opts.format];
        if (!ext.test(opts.out))
          throw new UsageError(
            `--out ${opts.out}: name it ${{ switchboard: '.parquet or .jsonl', trl: '.jsonl', verl: '.parquet' }[opts.format]} for --format ${opts.format}`,
          );
        const out = await prepareOutFile(opts.out);
        let written = rows.length;
        const tally: TrainerFormatTally = { wrappedArguments: 0 };
        if (opts.format === 'trl') await writeJsonl(out, trlGrpoRows(rows, tally));
        else if (opts.format === 'verl') {
          let verl: VerlRow[];
          try {
            verl = verlRows(rows, {}, tally);
          } catch (e) {
            if (e instanceof TrainerFormatError) throw new UsageError(`${file}: ${e.message}`);
            throw e;
          }
          await writeFile(out, new Uint8Array(verlParquet(verl)));
          written = verl.length;
        } else if (out.endsWith('.parquet')) await writeGrpoParquet(out, rows);
        else await writeJsonl(out, rows);
        const tokens = { all: 0, partial: 0, none: 0 };
        for (const r of rows) tokens[r.tokens]++;
        io.out(
          opts.json
            ? JSON.stringify(
                { out, rows: written, format: opts.format, tokens, wrapped_arguments: tally.wrappedArguments },
                null,
                2,
              )
            : `wrote ${written} ${opts.format === 'verl' ? 'verl prompts (one per group)' : 'GRPO rows'} to ${out}; ${tokenNote(tokens)}${wrappedNote(tally)}`,
        );
        setCode(0);
      },
    );
  return cmd;
}

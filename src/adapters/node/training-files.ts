/**
 * Training-data files: JSONL for SFT records and GRPO rows, Parquet for GRPO rows (verl reads
 * Parquet). Parquet is written with hyparquet-writer (pure JavaScript, no native code). Scalar
 * fields become typed columns; nested fields (messages, tools, rewards per step, token ids) are
 * UTF-8 string columns holding JSON text, so any Parquet reader opens the file and a
 * `json.loads` per cell restores the structure (see docs/training-data.md).
 */
import { writeFile } from 'node:fs/promises';
import { jsonlLines, writeJsonlStream } from './jsonl.ts';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { GrpoRow } from '../../core/training/export.ts';
import type { VerlRow } from '../../core/training/trainer-formats.ts';

/** Columns of a GRPO Parquet file, in order; `json` ones hold JSON text. */
export const GRPO_PARQUET_COLUMNS = [
  ['group_id', 'STRING'],
  ['sample_index', 'INT32'],
  ['group_size', 'INT32'],
  ['granularity', 'STRING'],
  ['prefix_ref', 'STRING'],
  ['prefix_messages', 'INT32'],
  ['domain', 'STRING'],
  ['task_id', 'STRING'],
  ['messages', 'json'],
  ['tools', 'json'],
  ['step_rewards', 'json'],
  ['returns', 'json'],
  ['final_reward', 'DOUBLE'],
  ['outcome', 'INT32'],
  ['partial', 'BOOLEAN'],
  ['reward_choice', 'STRING'],
  ['advantage', 'DOUBLE'],
  ['policy', 'STRING'],
  ['sampling_seed', 'INT64'],
  ['sampling', 'json'],
  ['token_ids', 'json'],
  ['logprobs', 'json'],
  ['tokens', 'STRING'],
  ['interaction_metrics', 'json'],
] as const satisfies readonly (readonly [keyof GrpoRow, string])[];

/** GRPO rows as a Parquet file image (rows are validated first). */
export function grpoParquet(rows: readonly GrpoRow[]): ArrayBuffer {
  const valid = rows.map((r) => GrpoRow.parse(r));
  if (valid.length === 0) throw new Error('no GRPO rows to write');
  return parquetWriteBuffer({
    columnData: GRPO_PARQUET_COLUMNS.map(([name, type]) => {
      const values = valid.map((r) => r[name]);
      if (type === 'json')
        return { name, type: 'STRING' as const, data: values.map((v) => (v === null ? null : JSON.stringify(v))) };
      if (type === 'INT64') return { name, type, data: values.map((v) => BigInt(v as number)) };
      return { name, type, data: values, nullable: false };
    }),
    kvMetadata: [{ key: 'switchboard.format', value: 'grpo-rows/1' }],
    createdBy: 'switchboard',
  });
}

/** Write GRPO rows to a Parquet file. */
export async function writeGrpoParquet(file: string, rows: readonly GrpoRow[]): Promise<void> {
  await writeFile(file, new Uint8Array(grpoParquet(rows)));
}

const str = (name: string) =>
  ({ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' }) as const;
const req = (name: string, type: 'INT64' | 'INT32' | 'DOUBLE') =>
  ({ name, type, repetition_type: 'REQUIRED' }) as const;

const optStr = (name: string) =>
  ({ name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' }) as const;
/** A LIST column (Parquet's three-level list) of `element` children. */
const list = (name: string, repetition: 'REQUIRED' | 'OPTIONAL', element: readonly object[]) => [
  { name, repetition_type: repetition, converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  ...element,
];

/**
 * The Parquet schema of a verl file: `prompt` is LIST<STRUCT<role, content>> (plus, in a file
 * whose prompts hold tool calls, `tool_calls`: OPTIONAL LIST<STRUCT<id, type, function:
 * STRUCT<name, arguments>>> and `tool_call_id`: OPTIONAL STRING), `audios` (in a file with caller
 * audio) LIST<STRING>, `reward_model` and `extra_info` STRUCTs; every other leaf typed and required.
 */
export function verlParquetSchema(opts: { tools: boolean; audio: boolean }) {
  const message = [
    { name: 'element', repetition_type: 'REQUIRED', num_children: opts.tools ? 4 : 2 },
    str('role'),
    str('content'),
    ...(opts.tools
      ? [
          ...list('tool_calls', 'OPTIONAL', [
            { name: 'element', repetition_type: 'REQUIRED', num_children: 3 },
            str('id'),
            str('type'),
            { name: 'function', repetition_type: 'REQUIRED', num_children: 2 },
            str('name'),
            str('arguments'),
          ]),
          optStr('tool_call_id'),
        ]
      : []),
  ];
  return [
    { name: 'root', num_children: opts.audio ? 6 : 5 },
    str('data_source'),
    ...list('prompt', 'REQUIRED', message),
    ...(opts.audio ? list('audios', 'REQUIRED', [str('element')]) : []),
    str('ability'),
    { name: 'reward_model', repetition_type: 'REQUIRED', num_children: 2 },
    str('style'),
    str('ground_truth'),
    { name: 'extra_info', repetition_type: 'REQUIRED', num_children: 7 },
    req('index', 'INT64'),
    str('split'),
    str('group_id'),
    str('task_id'),
    str('prefix_ref'),
    req('group_size', 'INT32'),
    req('mean_reward', 'DOUBLE'),
  ];
}

/** verl rows as a Parquet file image (nested columns typed, see {@link verlParquetSchema}). */
export function verlParquet(rows: readonly VerlRow[]): ArrayBuffer {
  if (rows.length === 0) throw new Error('no verl rows to write');
  const tools = rows[0]!.prompt.some((m) => 'tool_calls' in m);
  const audio = rows[0]!.audios !== undefined;
  return parquetWriteBuffer({
    columnData: [
      { name: 'data_source', data: rows.map((r) => r.data_source) },
      { name: 'prompt', data: rows.map((r) => r.prompt) },
      ...(audio ? [{ name: 'audios', data: rows.map((r) => r.audios ?? []) }] : []),
      { name: 'ability', data: rows.map((r) => r.ability) },
      { name: 'reward_model', data: rows.map((r) => r.reward_model) },
      { name: 'extra_info', data: rows.map((r) => ({ ...r.extra_info, index: BigInt(r.extra_info.index) })) },
    ],
    schema: verlParquetSchema({ tools, audio }).map((e) => ({ ...e })) as never,
    kvMetadata: [{ key: 'switchboard.format', value: 'verl/1' }],
    createdBy: 'switchboard',
  });
}

/** Write records as JSON Lines (one JSON document per line, trailing newline), as a stream. */
export async function writeJsonl(file: string, records: readonly unknown[]): Promise<void> {
  await writeJsonlStream(file, records);
}

/** Options of {@link readJsonl}. */
export interface ReadJsonlOptions {
  /**
   * Called for a line that is not JSON or fails the schema, with its number and the message;
   * the line is skipped and reading goes on. Without it the first bad line throws.
   */
  onBadLine?: (line: number, message: string) => void;
}

/**
 * Read a JSONL file line by line (a stream: the file may be larger than one string can hold) and
 * validate every line with `schema`; errors name the line (`<file>:<n>: …`).
 * @throws Error `<file>: cannot read (<code>)` when the file cannot be read; the first bad line's
 *   message unless `options.onBadLine` takes it.
 */
export async function readJsonl<T>(
  file: string,
  schema: {
    safeParse(
      x: unknown,
    ): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  },
  options: ReadJsonlOptions = {},
): Promise<T[]> {
  const out: T[] = [];
  const bad = (n: number, message: string) => {
    if (!options.onBadLine) throw new Error(`${file}:${n}: ${message}`);
    options.onBadLine(n, message);
  };
  try {
    for await (const { n, line } of jsonlLines(file)) {
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch (e) {
        bad(n, `not JSON (${(e as Error).message})`);
        continue;
      }
      const parsed = schema.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        bad(n, `${issue.path.map(String).join('.') || '(line)'}: ${issue.message}`);
        continue;
      }
      out.push(parsed.data);
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code) throw new Error(`${file}: cannot read (${code})`);
    throw e;
  }
  return out;
}

export { GrpoRow };

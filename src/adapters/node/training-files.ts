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
  ['reward_choice', 'STRING'],
  ['advantage', 'DOUBLE'],
  ['policy', 'STRING'],
  ['sampling_seed', 'INT64'],
  ['sampling', 'json'],
  ['token_ids', 'json'],
  ['logprobs', 'json'],
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

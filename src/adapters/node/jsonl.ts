/**
 * JSON Lines as streams (issue 11): a run of thousands of episodes writes hundreds of MB of
 * trajectories, more than one JavaScript string can hold (V8: about 2^29 characters). Files are
 * written one line per write with back-pressure and read one line at a time, so memory does not
 * grow with the file beyond the parsed records a caller keeps.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

/** One non-blank line of a JSONL file, numbered from 1 (blank lines count). */
export interface JsonlLine {
  n: number;
  line: string;
}

/**
 * The non-blank lines of `file`, in order, read as a stream (a UTF-8 byte-order mark on the first
 * line is dropped; `\r\n` line ends are accepted).
 * @throws the stream's error (e.g. ENOENT) when the file cannot be read.
 */
export async function* jsonlLines(file: string): AsyncGenerator<JsonlLine> {
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let n = 0;
  for await (const raw of lines) {
    n++;
    const line = n === 1 ? raw.replace(/^\uFEFF/, '') : raw;
    if (line.trim()) yield { n, line };
  }
}

/**
 * Write `records` to `file` as JSON Lines, one `write` per record, waiting for the stream to drain
 * when its buffer is full: no string longer than one record is built.
 */
export async function writeJsonlStream(
  file: string,
  records: Iterable<unknown> | AsyncIterable<unknown>,
): Promise<void> {
  const out = createWriteStream(file, { encoding: 'utf8' });
  const failed = once(out, 'error').then(([e]) => {
    throw e;
  });
  failed.catch(() => undefined);
  try {
    for await (const r of records) {
      if (!out.write(`${JSON.stringify(r)}\n`)) await Promise.race([once(out, 'drain'), failed]);
    }
  } finally {
    out.end();
  }
  await Promise.race([once(out, 'finish'), failed]);
}

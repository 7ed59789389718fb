/**
 * JSON Lines as streams (issue 11): a run of thousands of episodes writes hundreds of MB of
 * trajectories, more than one JavaScript string can hold (V8: about 2^29 characters). Files are
 * written one line per write with back-pressure and read one line at a time, so memory does not
 * grow with the file beyond the parsed records a caller keeps.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename } from 'node:fs/promises';
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

/**
 * Rewrite a JSONL file (written by us: UTF-8, `\n` line ends, no byte-order mark) with its lines
 * sorted by `key` of each parsed line (numbers compared in order; ties keep file order). Two
 * passes over the file: one reads each line's key and byte range, one copies the lines in order
 * into a new file that then replaces it. Memory holds the keys, not the lines.
 */
export async function sortJsonlFile(file: string, key: (record: unknown) => readonly number[]): Promise<void> {
  const entries: { key: readonly number[]; start: number; length: number; n: number }[] = [];
  let offset = 0;
  let n = 0;
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of lines) {
    const length = Buffer.byteLength(line, 'utf8') + 1;
    if (line.trim()) entries.push({ key: key(JSON.parse(line)), start: offset, length, n: n++ });
    offset += length;
  }
  entries.sort((a, b) => {
    for (let i = 0; i < Math.max(a.key.length, b.key.length); i++) {
      const d = (a.key[i] ?? 0) - (b.key[i] ?? 0);
      if (d) return d;
    }
    return a.n - b.n;
  });
  const tmp = `${file}.sorting`;
  const input = await open(file, 'r');
  try {
    await writeJsonlBytes(
      tmp,
      (async function* () {
        for (const e of entries) {
          const buf = Buffer.alloc(e.length);
          await input.read(buf, 0, e.length, e.start);
          // The last line of a file may lack its newline.
          if (buf[e.length - 1] !== 0x0a) buf[e.length - 1] = 0x0a;
          yield buf;
        }
      })(),
    );
  } finally {
    await input.close();
  }
  await rename(tmp, file);
}

async function writeJsonlBytes(file: string, chunks: AsyncIterable<Buffer>): Promise<void> {
  const out = createWriteStream(file);
  const failed = once(out, 'error').then(([e]) => {
    throw e;
  });
  failed.catch(() => undefined);
  try {
    for await (const c of chunks) {
      if (!out.write(c)) await Promise.race([once(out, 'drain'), failed]);
    }
  } finally {
    out.end();
  }
  await Promise.race([once(out, 'finish'), failed]);
}

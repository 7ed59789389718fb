/**
 * JSON Lines written in parts (issue 15, item 5): each thread of `run`'s rollout pool appends its
 * trajectories to a part file of its own and reports where each line is (its byte offset and
 * length), so no trajectory crosses threads; once the run ends, the parts are merged into the
 * one file, in the order the caller gives, by copying those byte ranges (no line is parsed
 * again). A line's place is known only once its whole write returned, so a run stopped part-way
 * merges only complete lines.
 */
import { closeSync, openSync, readdirSync, readSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Where one line is: part `part` of a file, `length` bytes (newline included) from byte `start`. */
export interface LinePlace {
  part: number;
  start: number;
  length: number;
}

/** The file of part `part` of `file`: `<file>.part-<part>`, beside it. */
export function partFile(file: string, part: number): string {
  return `${file}.part-${part}`;
}

/** Write all of `buf` to `fd` (a write to a regular file may, rarely, take less than all of it). */
function writeAll(fd: number, buf: Buffer, length = buf.length): void {
  for (let done = 0; done < length; ) done += writeSync(fd, buf, done, length - done);
}

/**
 * One part of a JSONL file, written from one thread: each line at once (one synchronous write a
 * line), or, given a buffer size, gathered in memory and written when the buffer is full, at
 * {@link flush} and at {@link close}. A line's place is its place in the file once written: a
 * buffered part's lines are on disk only after the write that holds them, so whoever merges the
 * parts flushes a buffered part first.
 */
export class JsonlPart {
  readonly part: number;
  private fd: number | undefined;
  private offset = 0;
  /** Lines appended and not yet written (buffered parts only). */
  private readonly pending: Buffer | undefined;
  private used = 0;

  /**
   * Create (or empty) part `part` of `file`.
   * @param bufferBytes gather lines up to this many bytes before writing them (0: write each line
   *   at once). A line longer than the buffer is written on its own, after what is buffered.
   * @throws the file system's error (e.g. EACCES) when it cannot be created.
   */
  constructor(file: string, part: number, bufferBytes = 0) {
    this.part = part;
    this.fd = openSync(partFile(file, part), 'w');
    this.pending = bufferBytes > 0 ? Buffer.allocUnsafe(bufferBytes) : undefined;
  }

  /**
   * Append `record` as one line (`JSON.stringify` and a newline, UTF-8); returns its place.
   * @throws when the part is closed, or a write fails (e.g. ENOSPC).
   */
  append(record: unknown): LinePlace {
    if (this.fd === undefined) throw new Error(`JSONL part ${this.part} is closed`);
    const buf = Buffer.from(`${JSON.stringify(record)}\n`, 'utf8');
    const { pending } = this;
    if (!pending) writeAll(this.fd, buf);
    else {
      if (this.used + buf.length > pending.length) this.flush();
      if (buf.length > pending.length) writeAll(this.fd, buf);
      else this.used += buf.copy(pending, this.used);
    }
    const place = { part: this.part, start: this.offset, length: buf.length };
    this.offset += buf.length;
    return place;
  }

  /**
   * Write the buffered lines (none for an unbuffered or closed part).
   * @throws when the write fails (e.g. ENOSPC).
   */
  flush(): void {
    if (this.fd === undefined || !this.pending || this.used === 0) return;
    const used = this.used;
    this.used = 0;
    writeAll(this.fd, this.pending, used);
  }

  /**
   * Write the buffered lines, then close the part's file (its lines stay; later appends throw).
   * @throws when the last write fails (the file is closed all the same).
   */
  close(): void {
    if (this.fd === undefined) return;
    try {
      this.flush();
    } finally {
      closeSync(this.fd);
      this.fd = undefined;
    }
  }
}

/** Bytes gathered before one write to the merged file. */
const MERGE_BUFFER_BYTES = 1 << 20;

/**
 * Write `file` from scratch with the lines at `places`, in that order, copied from the parts of
 * `file` (synchronous: one positional read per line, writes of up to 1 MiB).
 * @throws the file system's error when a part cannot be read or `file` written.
 */
export function mergeJsonlParts(file: string, places: readonly LinePlace[]): void {
  const parts = new Map<number, number>();
  const out = openSync(file, 'w');
  let buf = Buffer.alloc(MERGE_BUFFER_BYTES);
  let used = 0;
  try {
    for (const p of places) {
      let fd = parts.get(p.part);
      if (fd === undefined) parts.set(p.part, (fd = openSync(partFile(file, p.part), 'r')));
      if (used + p.length > buf.length) {
        writeAll(out, buf, used);
        used = 0;
        if (p.length > buf.length) buf = Buffer.alloc(p.length);
      }
      for (let got = 0; got < p.length; ) {
        const n = readSync(fd, buf, used + got, p.length - got, p.start + got);
        if (n === 0) throw new Error(`${partFile(file, p.part)}: ends before byte ${p.start + p.length}`);
        got += n;
      }
      used += p.length;
    }
    writeAll(out, buf, used);
  } finally {
    closeSync(out);
    for (const fd of parts.values()) closeSync(fd);
  }
}

/** Remove every part of `file` (`<file>.part-*` beside it), from this run or an earlier one. */
export function removeJsonlParts(file: string): void {
  const prefix = `${basename(file)}.part-`;
  for (const name of readdirSync(dirname(file)))
    if (name.startsWith(prefix)) rmSync(join(dirname(file), name), { force: true });
}

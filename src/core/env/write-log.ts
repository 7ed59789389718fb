/**
 * Write capture. The database connection records every row each INSERT, UPDATE and DELETE writes
 * (native/write-log.c, built into vendor/sql.js: SQLite's preupdate hook) and serves the records
 * as the virtual table `_sb_write_log(seq, tbl, op, old, new, rid)`: the old and new row, each a
 * JSON array of its values in column order as SQLite's `json_array` writes them; a call's entries
 * are read as one JSON text ({@link WRITE_LOG_SINCE}). The environment expands those row images
 * into column-level {@link WriteEntry}s. Tools never log their own writes.
 *
 * Until issue 15 (session 16) AFTER triggers on every table inserted the same rows into a real
 * `_sb_write_log` table. Measured in one process (tau2-airline and tau2-retail write tools, two
 * runtimes alternating in blocks of 50 calls, medians of per-block ratios; a noisy host, so
 * quartiles of ±5-15%):
 * - the log in C against the triggers, both on this sql.js build (30 blocks): book_reservation
 *   x0.78, update_reservation_flights x0.85, send_certificate x0.93, modify_pending_order_items
 *   x0.86; every write tool x0.78-0.94. The triggers' firing, their `json_array` calls and the log
 *   table's b-tree inserts are gone; the entries are read back as before.
 * - this build with the log against stock sql.js 1.17 with the triggers (20 blocks): the airline
 *   write tools x0.91-0.95 (book_reservation x0.94, flights x0.91); the retail ones x0.89-1.10,
 *   around x1.0. Stock sql.js is built by a 2026 emscripten: its SQLite, at -Oz, runs statements a
 *   few % faster than this build's (emscripten 3.1.6) at -O3, which takes back part of the gain.
 */
import type { SqlRow, SqlValue } from '../ports/sql-db.ts';
import type { Requestor } from '../schema/task.ts';
import type { WriteEntry } from '../schema/trajectory.ts';

/** Name of the write log's virtual table. Tables starting with `_sb_` are internal and never exported or logged. */
export const WRITE_LOG_TABLE = '_sb_write_log';

/** Column layout of one table, read from `PRAGMA table_info`. */
export interface TableInfo {
  name: string;
  columns: string[];
  /** Primary-key columns in key order; empty for a table without a declared key. */
  primaryKey: string[];
  /**
   * How the table stores its rows: `rowid` (an ordinary table, rows addressed by their rowid,
   * which an INTEGER PRIMARY KEY aliases) or `none` (WITHOUT ROWID). Absent: not read (the write
   * log then records no rowid for it).
   */
  rowid?: 'rowid' | 'none';
}

/** Quote an SQL identifier. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** A row of the write log as read by the environment (`seq`, table, operation, row images). */
export interface LogRow {
  tbl: string;
  op: 'insert' | 'update' | 'delete';
  /** The row before the write (`null` for inserts): JSON array of its values in column order. */
  old: string | null;
  /** The row after the write (`null` for deletes): JSON array of its values in column order. */
  new: string | null;
}

/**
 * A {@link LogRow} with its images parsed: each row's values in column order, `null` for none
 * (JSON holds no blobs: SQLite's `json_array` refuses one, so a blob write fails).
 */
export interface ParsedLogRow {
  tbl: string;
  op: LogRow['op'];
  before: WriteEntry['before'][] | null;
  after: WriteEntry['after'][] | null;
}

/**
 * The log entries after a `seq`, as one text: `SELECT _sb_write_log_since(?) AS log` gives
 * `[tbl, old, new, tbl, old, new, …]` (each image a JSON array, `null` for none), in `seq` order
 * from the bound seq + 1; entries are numbered densely, so n entries read after seq s end at
 * s + n. Errors as a read of the virtual table does (a write the log missed).
 */
export const WRITE_LOG_SINCE = 'SELECT _sb_write_log_since(?) AS log';

/**
 * Parse {@link WRITE_LOG_SINCE}'s text into log rows, the op told by which image is absent: the
 * log records an insert with no `old`, a delete with no `new`, an update with both (an image is
 * never NULL). Values come back as `SELECT *` of the row gives them: text, integers within ±2^53,
 * NULL, and reals, which SQLite ≥ 3.43 prints with round-trip precision.
 *
 * One text for all of a call's entries, parsed once: read and parsed in ~5 µs for the 8 entries
 * of a tau2-airline booking, where reading `tbl, old, new` of the virtual table and parsing the
 * images one by one took ~10-12 µs (same process, 20,000 reads each way, three rounds). Whole
 * calls on fresh environments, this read against that one (same process, two checkouts
 * alternating in 16 rounds of 50 calls a tool, medians of per-round ratios): book_reservation
 * x0.92, update_reservation_flights x0.94, modify_pending_order_items x0.89, every tau2 write tool
 * x0.88-1.01 (send_certificate, one entry, x1.01).
 *
 * Measured and not done (issue 15 item 2, Node 20, one image at a time, load 4-6): reading an
 * image element by element in JavaScript (a string without escapes as its slice, a number by
 * `Number`, an escaped string by `JSON.parse` of that element alone, and an update's old image
 * taking the new image's value of every element whose text is the same) was ~3x slower than
 * `JSON.parse`: 2.5 vs 0.84 µs for an 18-column tau2-retail `orders` image without its one
 * escaped column, 8.8 vs 4.0 µs for both images of its update. Nor an update's old image made of
 * the new image's values with `JSON.parse` of only the elements between the two texts' common
 * prefix and suffix: 7.4 vs 4.0 µs for that `orders` update, 4.6 vs 2.4 for an `order_items` one.
 * A JavaScript loop over the characters costs ~6 ns a character here, far more than `JSON.parse`
 * spends on one.
 * @throws SyntaxError when the text is not JSON (an entry appended with an image that is not).
 */
export function parseLogText(text: string): ParsedLogRow[] {
  const items = JSON.parse(text) as (string | SqlValue[] | null)[];
  const out: ParsedLogRow[] = [];
  for (let i = 0; i + 2 < items.length; i += 3) {
    const before = items[i + 1] as WriteEntry['before'][] | null;
    const after = items[i + 2] as WriteEntry['after'][] | null;
    out.push({
      tbl: items[i] as string,
      op: before === null ? 'insert' : after === null ? 'delete' : 'update',
      before,
      after,
    });
  }
  return out;
}

/** The row a parsed log image stands for, as column name → value in column order (`null` for none). */
export function logImage(table: TableInfo, values: readonly SqlValue[] | null): SqlRow | null {
  if (values === null) return null;
  const row: SqlRow = {};
  const { columns } = table;
  for (let i = 0; i < columns.length; i++) row[columns[i]!] = values[i] ?? null;
  return row;
}

/**
 * Makes the write log take part in the transaction just begun (run it right after BEGIN): a
 * ROLLBACK, a ROLLBACK TO a savepoint, or a statement that fails part-way then drops the entries of
 * the writes it undoes. It writes nothing (SQLite joins a virtual table to the transaction of a
 * statement that writes to it).
 */
export const JOIN_WRITE_LOG = `DELETE FROM ${WRITE_LOG_TABLE} WHERE 0`;

/** Stops recording writes on the connection (a domain's seed rows are no episode's writes). */
export const PAUSE_WRITE_LOG = 'SELECT _sb_write_log_capture(0)';

/** Appends one {@link LoggedWrite} to the write log (carrying a log over to a restored image). */
export const APPEND_WRITE_LOG = `INSERT INTO ${WRITE_LOG_TABLE} (tbl, op, old, new, rid) VALUES (:tbl, :op, :old, :new, :rid)`;

/** A row of the write log as a snapshot keeps it (see {@link replayStatement}). */
export interface LoggedWrite extends LogRow {
  /** Rowid of the row written (`null` for a WITHOUT ROWID table). */
  rid: number | null;
}

/** `json_extract` of column `c` of `table` from the row image bound as `param`. */
function fromJson(table: TableInfo, param: string, c: string): string {
  return `json_extract(${param}, '$[${table.columns.indexOf(c)}]')`;
}

/**
 * The statement that makes one logged write again on a database in the state the write found:
 * the row inserted with its rowid (named beside an INTEGER PRIMARY KEY column, which SQLite
 * accepts as the same value), updated to its new image (setting only the columns the update
 * changed: {@link changedColumns}), or deleted, addressed by its rowid (by
 * primary key in a WITHOUT ROWID table). Values come back through `json_extract`, which gives
 * the logged values with their SQLite types (an integer stays an integer, a real a real, text
 * text). The log records the replayed write exactly as the original one.
 *
 * @param table a table whose `rowid` was read.
 */
export function replayStatement(table: TableInfo, w: LoggedWrite): { sql: string; params: Record<string, SqlValue> } {
  const name = ident(table.name);
  const where =
    table.rowid === 'rowid'
      ? 'rowid = :rid'
      : table.primaryKey.map((c) => `${ident(c)} IS ${fromJson(table, ':old', c)}`).join(' AND ');
  const params = { ':new': w.new, ':old': w.old, ':rid': w.rid };
  if (w.op === 'delete') return { sql: `DELETE FROM ${name} WHERE ${where}`, params };
  if (w.op === 'update') {
    const changed = changedColumns(table, w);
    const set = changed.map((c) => `${ident(c)} = ${fromJson(table, ':new', c)}`).join(', ');
    return { sql: `UPDATE ${name} SET ${set} WHERE ${where}`, params };
  }
  const cols = table.columns.map(ident);
  const values = table.columns.map((c) => fromJson(table, ':new', c));
  if (table.rowid === 'rowid') {
    cols.unshift('rowid');
    values.unshift(':rid');
  }
  return { sql: `INSERT INTO ${name} (${cols.join(', ')}) VALUES (${values.join(', ')})`, params };
}

/**
 * The columns of a logged update whose value the update changed: those whose element differs
 * between the two row images' texts (the same element text is the same value and type through
 * `json_extract`); every column when the images do not split into one element per column. A
 * replayed update that sets only these leaves the row as the original update did, and spares
 * SQLite the columns it would otherwise rewrite (and the indexes on them: setting every column
 * of tau2-airline's `reservations` rewrote its key and both indexes, ~30 µs of a replayed update).
 */
function changedColumns(table: TableInfo, w: LoggedWrite): readonly string[] {
  const before = w.old === null ? null : arrayElements(w.old);
  const after = w.new === null ? null : arrayElements(w.new);
  const { columns } = table;
  if (before?.length !== columns.length || after?.length !== columns.length) return columns;
  const out = columns.filter((_, i) => before[i] !== after[i]);
  return out.length > 0 ? out : columns;
}

/**
 * The element texts of a JSON array of scalars as SQLite's `json_array` writes it (no spaces;
 * strings with `\\` escapes), or null when the text is not such an array.
 */
export function arrayElements(text: string): string[] | null {
  if (text.charCodeAt(0) !== 0x5b || text.charCodeAt(text.length - 1) !== 0x5d) return null;
  const out: string[] = [];
  let start = 1;
  let inString = false;
  for (let i = 1; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) return null;
    else if (c === 0x2c) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (inString) return null;
  if (text.length > 2) out.push(text.slice(start, text.length - 1));
  return out;
}

/** Index in `columns` of each key column of a table (its primary key, else every column), by table. */
const keyIndexes = new WeakMap<TableInfo, { names: readonly string[]; at: number[] }>();

function keyColumns(table: TableInfo): { names: readonly string[]; at: number[] } {
  let out = keyIndexes.get(table);
  if (!out) {
    const names = table.primaryKey.length > 0 ? table.primaryKey : table.columns;
    out = { names, at: names.map((k) => table.columns.indexOf(k)) };
    keyIndexes.set(table, out);
  }
  return out;
}

/**
 * Expand one log row into column entries, appended to `out`: an insert logs every column (before
 * `null`), a delete every column (after `null`), an update only the columns whose value changed.
 * The entries are numbered from `seq` on (one more each). The entries of one log row share one
 * `key` object (nothing changes a write's key; readers that group entries by row, such as
 * `rowImages` in write-images.ts, then see the same row as the same object instead of comparing keys: a
 * 7-column insert's images ~1.6 -> ~0.5 µs, and one key built instead of one per column).
 * @returns the number of entries appended.
 */
export function expandLogRow(
  row: ParsedLogRow,
  table: TableInfo,
  meta: { turn: number; actor: Requestor; tool: string },
  seq: number,
  out: WriteEntry[],
): number {
  const { op, before, after } = row;
  const image = (after ?? before)!;
  const { columns } = table;
  const { names, at } = keyColumns(table);
  const { turn, actor, tool } = meta;
  const first = seq;
  // Built field by field (no spreads), once for the row.
  const key: WriteEntry['key'] = {};
  for (let k = 0; k < names.length; k++) key[names[k]!] = image[at[k]!] ?? null;
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i]!;
    const b = before ? (before[i] ?? null) : null;
    const a = after ? (after[i] ?? null) : null;
    if (op === 'update' && b === a) continue;
    out.push({ seq: seq++, turn, actor, tool, table: table.name, op, key, column, before: b, after: a });
  }
  return seq - first;
}

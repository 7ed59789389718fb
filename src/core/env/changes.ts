/**
 * State changes: what an environment's episode changed, read from its write log, and a
 * comparison of two change sets that gives exactly the full-state diff ({@link diffStates}) of
 * two environments opened in the same initial state, without exporting either database.
 *
 * Why it is exact: two environments opened by `runtime.open(task)` start from the same rows, and
 * a row can only change through a write, which the triggers log (the environment turns SQLite's
 * `recursive_triggers` on, so the rows a `REPLACE` deletes are logged too). A row that neither
 * environment touched is the same in both and adds no diff line; so the diff of the touched rows
 * only, in the same order, is the diff of the whole states. For a key touched by one side only,
 * the other side still holds the row as it was when opened, which is the `before` image of the
 * first log entry for that key on the touching side.
 *
 * Tables without a primary key, with a `COLLATE` clause (ordering of keys would need SQLite's
 * collation) or with hidden columns are compared whole (every row exported), as is a table where
 * a write left a NULL in a primary-key column (SQLite allows that in rowid tables; such keys do
 * not identify a row).
 */
import type { SqlRow, SqlValue } from '../ports/sql-db.ts';
import type { TableOptions } from '../schema/domain.ts';
import { canonicalJson, diffStates, keyJson, sameRow, type DbState, type StateDiff } from './state.ts';
import { logImage, type ParsedLogRow, type TableInfo } from './write-log.ts';
import { SwitchboardError } from '../errors.ts';

/** One row (by primary key) that an episode wrote. */
export interface RowChange {
  /** Primary-key values, in key order. */
  key: SqlValue[];
  /** The row when the environment was opened (task initial state applied); `null` when absent. */
  before: SqlRow | null;
  /** The row now; `null` when absent (deleted, or inserted and deleted again). */
  after: SqlRow | null;
}

/**
 * What an episode changed, relative to the state its environment was opened in. Plain data
 * (no open database), so a gold replay's changes can be kept and reused by many evaluations.
 *
 * Row images come from the write log (`json_array` of every column, {@link logImage}): text,
 * integers within ±2^53, NULL and reals (SQLite ≥ 3.43 prints reals with round-trip precision)
 * come back as the same JavaScript values `exportState()` reads.
 */
export interface StateChanges {
  /**
   * Tables compared by key: table name → key text (`canonicalJson(key)`) → change. Only rows
   * that were written appear, and only tables with such rows.
   */
  rows: Record<string, Record<string, RowChange>>;
  /**
   * Tables compared whole: table name → every row now, ordered as `exportState()` orders them.
   * Holds the runtime's {@link DomainRuntime.wholeTables} and any table where a written row has
   * a NULL primary-key value.
   */
  whole: DbState;
}

/**
 * Fold log rows (in `seq` order, images parsed: `parseLogText`) into per-key changes.
 *
 * @param tables the runtime's tables; log rows of other tables are ignored.
 * @param whole tables not to fold (compared whole).
 * @returns the keyed changes, and the tables whose written rows have a NULL key value (to be
 *   compared whole as well; their entries are left out of `rows`).
 */
export function collectChanges(
  log: readonly ParsedLogRow[],
  tables: readonly TableInfo[],
  whole: ReadonlySet<string>,
): { rows: StateChanges['rows']; nullKeyTables: Set<string> } {
  const byName = new Map(tables.map((t) => [t.name, t]));
  const rows: StateChanges['rows'] = {};
  const nullKeyTables = new Set<string>();
  for (const entry of log) {
    const info = byName.get(entry.tbl);
    if (!info || whole.has(info.name) || nullKeyTables.has(info.name)) continue;
    const before = logImage(info, entry.before);
    const after = logImage(info, entry.after);
    const table = (rows[info.name] ??= {});
    const oldKey = before ? primaryKeyOf(info, before) : null;
    const newKey = after ? primaryKeyOf(info, after) : null;
    if (oldKey?.includes(null) || newKey?.includes(null)) {
      nullKeyTables.add(info.name);
      delete rows[info.name];
      continue;
    }
    // A key's first log entry tells its state at open: the old image for an update or delete,
    // absent for an insert (the insert would have failed, or its REPLACE logged a delete first)
    // and for the new key of an update that changes the key.
    const oldText = oldKey ? keyJson(oldKey) : null;
    const newText = newKey ? keyJson(newKey) : null;
    if (oldKey && oldText !== null) {
      table[oldText] ??= { key: oldKey, before, after: before };
      if (newText !== oldText) table[oldText].after = null;
    }
    if (newKey && newText !== null) {
      if (newText !== oldText) table[newText] ??= { key: newKey, before: null, after: null };
      table[newText]!.after = after;
    }
  }
  return { rows, nullKeyTables };
}

/** The primary-key values of `row`, in key order. */
function primaryKeyOf(table: TableInfo, row: SqlRow): SqlValue[] {
  return table.primaryKey.map((c) => row[c] ?? null);
}

/** SQLite's storage-class order: NULL, numbers, text, blob. */
function storageRank(v: SqlValue): number {
  if (v === null) return 0;
  if (typeof v === 'number') return 1;
  if (typeof v === 'string') return 2;
  return 3;
}

/**
 * Text in SQLite's BINARY collation order: UTF-8 byte order, which is code-point order. UTF-16
 * code units give the same order except that surrogates (code points ≥ U+10000) sort after
 * U+E000…U+FFFF.
 */
function compareText(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

/**
 * Compare two values as SQLite's `ORDER BY` does with the BINARY collation: NULL first, then
 * numbers by value, text by UTF-8 bytes, blobs by bytes.
 */
export function compareSqlValues(a: SqlValue, b: SqlValue): number {
  const ra = storageRank(a);
  const rb = storageRank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return compareText(a, b);
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
    return a.length - b.length;
  }
  return 0;
}

/** Compare two keys column by column with {@link compareSqlValues}. */
export function compareKeys(a: readonly SqlValue[], b: readonly SqlValue[]): number {
  for (let i = 0; i < a.length && i < b.length; i++) {
    const c = compareSqlValues(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

/**
 * Thrown when two change sets cannot come from environments opened in the same state. Caller: a
 * bug in the caller's pairing of environments (compare only rollouts of one task and seed state).
 */
export class ChangeBaseMismatch extends SwitchboardError {
  override name = 'ChangeBaseMismatch';
}

/**
 * Diff the state `actual` changed to against the state `expected` changed to, both from the
 * same initial state. Gives exactly what {@link diffStates} gives on the two exported states
 * (same `equal`, same lines in the same order), reading only the written rows.
 *
 * @returns the diff, or `null` when a table is compared whole on one side and by key on the
 *   other (a NULL key written on one side only): then only the full states can be compared.
 * @throws ChangeBaseMismatch when a row both sides wrote had different `before` images (the
 *   change sets do not share their initial state, e.g. a gold replay of another task).
 */
export function diffChanges(
  expected: StateChanges,
  actual: StateChanges,
  tables: readonly TableInfo[],
  options: Readonly<Record<string, TableOptions>> = {},
): StateDiff | null {
  const exp: DbState = {};
  const act: DbState = {};
  // Every touched row the same on both sides (and no table compared whole): the states are
  // equal under any table options (they only ignore more), so no sort and no diff are needed.
  let same = true;
  for (const t of tables) {
    const ew = expected.whole[t.name];
    const aw = actual.whole[t.name];
    if (ew || aw) {
      if (!ew || !aw) return null;
      exp[t.name] = ew;
      act[t.name] = aw;
      same = false;
      continue;
    }
    const er = expected.rows[t.name];
    const ar = actual.rows[t.name];
    if (!er && !ar) continue;
    const touched: { key: SqlValue[]; e: SqlRow | null; a: SqlRow | null }[] = [];
    for (const [k, ec] of Object.entries(er ?? {})) {
      const ac = ar?.[k];
      if (ac && !sameRow(ac.before, ec.before)) {
        throw new ChangeBaseMismatch(
          `${t.name}${canonicalJson(ec.key)}: the two replays started from different rows (${canonicalJson(ec.before)} vs ${canonicalJson(ac.before)})`,
        );
      }
      const a = ac ? ac.after : ec.before;
      if (same && !sameRow(ec.after, a)) same = false;
      touched.push({ key: ec.key, e: ec.after, a });
    }
    for (const [k, ac] of Object.entries(ar ?? {})) {
      if (er && Object.hasOwn(er, k)) continue;
      if (same && !sameRow(ac.before, ac.after)) same = false;
      touched.push({ key: ac.key, e: ac.before, a: ac.after });
    }
    if (same) continue;
    touched.sort((x, y) => compareKeys(x.key, y.key));
    exp[t.name] = touched.flatMap((r) => (r.e ? [r.e] : []));
    act[t.name] = touched.flatMap((r) => (r.a ? [r.a] : []));
  }
  if (same) return { equal: true, lines: [] };
  return diffStates(exp, act, tables, options);
}

/**
 * Write capture by triggers. Every table gets AFTER INSERT/UPDATE/DELETE triggers that append
 * the old and new row (as JSON) to `_sb_write_log`; the environment expands those row images
 * into column-level {@link WriteEntry}s. Tools never log their own writes.
 */
import type { SqlRow, SqlValue } from '../ports/sql-db.ts';
import type { Requestor } from '../schema/task.ts';
import type { WriteEntry } from '../schema/trajectory.ts';

/** Name of the log table. Tables starting with `_sb_` are internal and never exported. */
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

function jsonRow(alias: 'NEW' | 'OLD', columns: readonly string[]): string {
  return `json_object(${columns.map((c) => `'${c.replace(/'/g, "''")}', ${alias}.${ident(c)}`).join(', ')})`;
}

/** DDL that creates the log table and the triggers of every table in `tables`. */
/**
 * DDL that creates the log table and the triggers of every table in `tables`. Besides the row
 * images, each log row holds the rowid of the row written (`rid`: the new row's for an insert,
 * the old row's for an update or delete; NULL for a WITHOUT ROWID table), so that a snapshot can
 * be restored by replaying its log rows exactly ({@link replayStatement}).
 */
export function writeLogDdl(tables: readonly TableInfo[]): string {
  const out = [
    `CREATE TABLE IF NOT EXISTS ${WRITE_LOG_TABLE} (seq INTEGER PRIMARY KEY, tbl TEXT NOT NULL, op TEXT NOT NULL, old TEXT, new TEXT, rid INTEGER);`,
  ];
  for (const t of tables) {
    const name = ident(t.name);
    const lit = `'${t.name.replace(/'/g, "''")}'`;
    const changed = t.columns.map((c) => `OLD.${ident(c)} IS NOT NEW.${ident(c)}`).join(' OR ');
    const rid = (alias: 'NEW' | 'OLD') => (t.rowid === 'rowid' ? `${alias}.rowid` : 'NULL');
    out.push(
      `CREATE TRIGGER ${ident(`_sb_${t.name}_ins`)} AFTER INSERT ON ${name} BEGIN INSERT INTO ${WRITE_LOG_TABLE}(tbl, op, old, new, rid) VALUES (${lit}, 'insert', NULL, ${jsonRow('NEW', t.columns)}, ${rid('NEW')}); END;`,
      `CREATE TRIGGER ${ident(`_sb_${t.name}_upd`)} AFTER UPDATE ON ${name} WHEN ${changed} BEGIN INSERT INTO ${WRITE_LOG_TABLE}(tbl, op, old, new, rid) VALUES (${lit}, 'update', ${jsonRow('OLD', t.columns)}, ${jsonRow('NEW', t.columns)}, ${rid('OLD')}); END;`,
      `CREATE TRIGGER ${ident(`_sb_${t.name}_del`)} AFTER DELETE ON ${name} BEGIN INSERT INTO ${WRITE_LOG_TABLE}(tbl, op, old, new, rid) VALUES (${lit}, 'delete', ${jsonRow('OLD', t.columns)}, NULL, ${rid('OLD')}); END;`,
    );
  }
  return out.join('\n');
}

/** A row of the write log as a snapshot keeps it (see {@link replayStatement}). */
export interface LoggedWrite {
  tbl: string;
  op: 'insert' | 'update' | 'delete';
  /** JSON object of the row before the write (`null` for inserts). */
  old: string | null;
  /** JSON object of the row after the write (`null` for deletes). */
  new: string | null;
  /** Rowid of the row written (`null` for a WITHOUT ROWID table). */
  rid: number | null;
}

/** `json_extract` of column `c` from the JSON row image bound as `param`. */
function fromJson(param: string, c: string): string {
  return `json_extract(${param}, '$."${c}"')`;
}

/**
 * The statement that makes one logged write again on a database in the state the write found:
 * the row inserted with its rowid (named beside an INTEGER PRIMARY KEY column, which SQLite
 * accepts as the same value), updated to its new image, or deleted, addressed by its rowid (by
 * primary key in a WITHOUT ROWID table). Values come back through `json_extract`, which gives
 * the logged values with their SQLite types (an integer stays an integer, a real a real, text
 * text). The triggers log the replayed write exactly as the original one.
 *
 * @param table a table whose `rowid` was read and whose column names hold no `"` (JSON paths).
 */
export function replayStatement(table: TableInfo, w: LoggedWrite): { sql: string; params: Record<string, SqlValue> } {
  const name = ident(table.name);
  const where =
    table.rowid === 'rowid'
      ? 'rowid = :rid'
      : table.primaryKey.map((c) => `${ident(c)} IS ${fromJson(':old', c)}`).join(' AND ');
  const params = { ':new': w.new, ':old': w.old, ':rid': w.rid };
  if (w.op === 'delete') return { sql: `DELETE FROM ${name} WHERE ${where}`, params };
  if (w.op === 'update') {
    const set = table.columns.map((c) => `${ident(c)} = ${fromJson(':new', c)}`).join(', ');
    return { sql: `UPDATE ${name} SET ${set} WHERE ${where}`, params };
  }
  const cols = table.columns.map(ident);
  const values = table.columns.map((c) => fromJson(':new', c));
  if (table.rowid === 'rowid') {
    cols.unshift('rowid');
    values.unshift(':rid');
  }
  return { sql: `INSERT INTO ${name} (${cols.join(', ')}) VALUES (${values.join(', ')})`, params };
}

type Json = string | number | null;

/**
 * Expand one log row into column entries: an insert logs every column (before `null`), a delete
 * every column (after `null`), an update only the columns whose value changed.
 */
export function expandLogRow(
  row: SqlRow,
  table: TableInfo,
  meta: { seq: number; turn: number; actor: Requestor; tool: string },
): WriteEntry[] {
  const op = row.op as WriteEntry['op'];
  const before = row.old == null ? null : (JSON.parse(row.old as string) as Record<string, Json>);
  const after = row.new == null ? null : (JSON.parse(row.new as string) as Record<string, Json>);
  const image = (after ?? before)!;
  const key: Record<string, Json> = {};
  const keyCols = table.primaryKey.length > 0 ? table.primaryKey : table.columns;
  for (const k of keyCols) key[k] = image[k] ?? null;
  const out: WriteEntry[] = [];
  const { seq, turn, actor, tool } = meta;
  for (const column of table.columns) {
    const b = before ? (before[column] ?? null) : null;
    const a = after ? (after[column] ?? null) : null;
    if (op === 'update' && b === a) continue;
    // An object literal in the entry's field order (not spreads): this runs for every column written.
    out.push({ seq, turn, actor, tool, table: table.name, op, key: { ...key }, column, before: b, after: a });
  }
  return out;
}

/**
 * Write capture by triggers. Every table gets AFTER INSERT/UPDATE/DELETE triggers that append
 * the old and new row (as JSON) to `_sb_write_log`; the environment expands those row images
 * into column-level {@link WriteEntry}s. Tools never log their own writes.
 */
import type { SqlRow } from '../ports/sql-db.ts';
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
}

/** Quote an SQL identifier. */
export function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function jsonRow(alias: 'NEW' | 'OLD', columns: readonly string[]): string {
  return `json_object(${columns.map((c) => `'${c.replace(/'/g, "''")}', ${alias}.${ident(c)}`).join(', ')})`;
}

/** DDL that creates the log table and the triggers of every table in `tables`. */
export function writeLogDdl(tables: readonly TableInfo[]): string {
  const out = [
    `CREATE TABLE IF NOT EXISTS ${WRITE_LOG_TABLE} (seq INTEGER PRIMARY KEY, tbl TEXT NOT NULL, op TEXT NOT NULL, old TEXT, new TEXT);`,
  ];
  for (const t of tables) {
    const name = ident(t.name);
    const lit = `'${t.name.replace(/'/g, "''")}'`;
    const changed = t.columns.map((c) => `OLD.${ident(c)} IS NOT NEW.${ident(c)}`).join(' OR ');
    out.push(
      `CREATE TRIGGER ${ident(`_sb_${t.name}_ins`)} AFTER INSERT ON ${name} BEGIN INSERT INTO ${WRITE_LOG_TABLE}(tbl, op, old, new) VALUES (${lit}, 'insert', NULL, ${jsonRow('NEW', t.columns)}); END;`,
      `CREATE TRIGGER ${ident(`_sb_${t.name}_upd`)} AFTER UPDATE ON ${name} WHEN ${changed} BEGIN INSERT INTO ${WRITE_LOG_TABLE}(tbl, op, old, new) VALUES (${lit}, 'update', ${jsonRow('OLD', t.columns)}, ${jsonRow('NEW', t.columns)}); END;`,
      `CREATE TRIGGER ${ident(`_sb_${t.name}_del`)} AFTER DELETE ON ${name} BEGIN INSERT INTO ${WRITE_LOG_TABLE}(tbl, op, old, new) VALUES (${lit}, 'delete', ${jsonRow('OLD', t.columns)}, NULL); END;`,
    );
  }
  return out.join('\n');
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
  for (const column of table.columns) {
    const b = before ? (before[column] ?? null) : null;
    const a = after ? (after[column] ?? null) : null;
    if (op === 'update' && b === a) continue;
    out.push({ ...meta, table: table.name, op, key: { ...key }, column, before: b, after: a });
  }
  return out;
}

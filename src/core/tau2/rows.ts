/**
 * Helpers for mapping tau2-bench JSON documents to relational rows and back: ordered grouping of
 * child rows, the `absent_fields` convention and JSON-list columns.
 */
import type { SqlRow, SqlValue } from '../ports/sql-db.ts';

/** Rows of one table grouped by a parent key column, each group sorted by `position`. */
export function groupByParent(rows: readonly SqlRow[] | undefined, parentColumn: string): Map<string, SqlRow[]> {
  const out = new Map<string, SqlRow[]>();
  for (const row of rows ?? []) {
    const key = String(row[parentColumn]);
    let list = out.get(key);
    if (!list) out.set(key, (list = []));
    list.push(row);
  }
  for (const list of out.values()) list.sort(byPosition);
  return out;
}

/** Sort comparator on the `position` column (list index or dict insertion order). */
export function byPosition(a: SqlRow, b: SqlRow): number {
  return (a.position as number) - (b.position as number);
}

/** Rows sorted by `position` (a copy). */
export function inPositionOrder(rows: readonly SqlRow[] | undefined): SqlRow[] {
  return [...(rows ?? [])].sort(byPosition);
}

/**
 * The `absent_fields` column: a JSON array of the optional fields a source record did not have
 * (e.g. `["status"]`), or `null` when it had all of them. On export a listed field is left out
 * only while its value is still `null`, so a tool that sets it makes it appear.
 */
export function absentFieldsColumn(record: Readonly<Record<string, unknown>>, optional: readonly string[]): string | null {
  const absent = optional.filter((path) => {
    const [head, tail] = path.split('.') as [string, string | undefined];
    const value = record[head];
    if (tail === undefined) return value === undefined;
    return typeof value === 'object' && value !== null && (value as Record<string, unknown>)[tail] === undefined;
  });
  return absent.length ? JSON.stringify(absent) : null;
}

/** The set of absent fields stored by {@link absentFieldsColumn}. */
export function absentFields(value: SqlValue | undefined): ReadonlySet<string> {
  return typeof value === 'string' ? new Set(JSON.parse(value) as string[]) : new Set();
}

/** A JSON-array column (list of strings) → array; `null` stays `null`. */
export function jsonList(value: SqlValue | undefined): string[] | null {
  return typeof value === 'string' ? (JSON.parse(value) as string[]) : null;
}

/** An object-valued JSON column → object (key order kept). */
export function jsonObject(value: SqlValue | undefined): Record<string, string> {
  return JSON.parse(String(value)) as Record<string, string>;
}

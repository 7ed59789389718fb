/**
 * Row images read back from column writes (the write log): what a rule check needs of the state a
 * write replaced without keeping a copy of the database.
 */
import type { SqlRow, SqlValue } from '../ports/sql-db.ts';
import type { WriteEntry } from '../schema/trajectory.ts';

/**
 * The rows of `table` that `writes` touched with operation `op`, one image per primary key in
 * first-write order: the values before the write for `delete` (complete: a delete logs every
 * column), after it for `insert` (complete too); for `update` only the changed columns, with
 * their values before (`side: 'before'`) or after (default for insert and update).
 */
export function rowImages(
  writes: readonly WriteEntry[],
  table: string,
  op: WriteEntry['op'],
  side: 'before' | 'after' = op === 'delete' ? 'before' : 'after',
): SqlRow[] {
  // The column entries of one written row come one after another with equal keys (the same key
  // object, from the write log): the row found for the last key is reused while the key stays
  // equal. Rows are told apart by their keys' JSON, made only once a second key is seen: most
  // calls write one row of a table, and JSON.stringify of its key was ~0.5 µs of ~1 µs here.
  let first: SqlRow | undefined;
  let firstKey: WriteEntry['key'] | undefined;
  let rows: Map<string, SqlRow> | undefined;
  let lastKey: WriteEntry['key'] | undefined;
  let row: SqlRow | undefined;
  for (const w of writes) {
    if (w.table !== table || w.op !== op) continue;
    if (!row || !sameKey(lastKey!, w.key)) {
      if (!first) {
        row = first = {};
        firstKey = w.key;
      } else {
        rows ??= new Map([[JSON.stringify(firstKey), first]]);
        const k = JSON.stringify(w.key);
        row = rows.get(k);
        if (!row) {
          row = {};
          rows.set(k, row);
        }
      }
      lastKey = w.key;
    }
    // The first `before` and the last `after` of a column stand for the whole call.
    if (side === 'before') {
      if (!(w.column in row)) row[w.column] = w.before;
    } else row[w.column] = w.after;
  }
  return rows ? [...rows.values()] : first ? [first] : [];
}

/** Whether two write keys hold the same columns with the same values, in the same order. */
function sameKey(a: WriteEntry['key'], b: WriteEntry['key']): boolean {
  if (a === b) return true;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i] || a[ka[i]!] !== b[kb[i]!]) return false;
  return true;
}

/**
 * How `writes` changed `column` of the row of `table` whose key includes `key`: the value before
 * the first write and after the last, or `null` when the column was not written.
 */
export function columnChange(
  writes: readonly WriteEntry[],
  table: string,
  column: string,
  key: Readonly<Record<string, SqlValue>>,
): { before: SqlValue; after: SqlValue } | null {
  let out: { before: SqlValue; after: SqlValue } | null = null;
  for (const w of writes) {
    if (w.table !== table || w.column !== column) continue;
    if (!Object.entries(key).every(([c, v]) => w.key[c] === v)) continue;
    out = out ? { before: out.before, after: w.after } : { before: w.before, after: w.after };
  }
  return out;
}

/**
 * Database state export and comparison. A state is every domain table as rows sorted by primary
 * key; comparison honours each table's {@link TableOptions} and yields a readable diff.
 */
import type { SqlRow, SqlValue } from '../ports/sql-db.ts';
import type { TableOptions } from '../schema/domain.ts';
import type { TableInfo } from './write-log.ts';

/** Exported state: table name → rows (column order as declared, rows by primary key). */
export type DbState = Record<string, SqlRow[]>;

/** JSON with object keys sorted at every level: equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value instanceof Uint8Array) return JSON.stringify(Array.from(value));
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

function keyOf(row: SqlRow, cols: readonly string[]): string {
  return canonicalJson(cols.map((c) => row[c] ?? null));
}

function show(v: SqlValue | undefined): string {
  return v === undefined ? 'absent' : JSON.stringify(v);
}

/** Result of comparing two states. */
export interface StateDiff {
  equal: boolean;
  /** One line per difference, e.g. `bills[B1002].status: "unpaid" → "paid"`. */
  lines: string[];
}

/**
 * Compare the `actual` state with the `expected` one.
 * Ordered tables pair rows by primary key; `unordered` tables compare as multisets after
 * dropping `ignoreColumns`.
 */
export function diffStates(
  expected: DbState,
  actual: DbState,
  tables: readonly TableInfo[],
  options: Readonly<Record<string, TableOptions>> = {},
): StateDiff {
  const lines: string[] = [];
  for (const t of tables) {
    const exp = expected[t.name] ?? [];
    const act = actual[t.name] ?? [];
    const opt = options[t.name] ?? {};
    if (opt.unordered) {
      const ignore = new Set(opt.ignoreColumns ?? []);
      const strip = (r: SqlRow) => canonicalJson(Object.fromEntries(Object.entries(r).filter(([k]) => !ignore.has(k))));
      const count = new Map<string, number>();
      for (const r of exp) count.set(strip(r), (count.get(strip(r)) ?? 0) + 1);
      for (const r of act) {
        const k = strip(r);
        const n = count.get(k) ?? 0;
        if (n > 0) count.set(k, n - 1);
        else lines.push(`${t.name}: unexpected row ${k}`);
      }
      for (const [k, n] of count) for (let i = 0; i < n; i++) lines.push(`${t.name}: missing row ${k}`);
      continue;
    }
    const keyCols = t.primaryKey.length > 0 ? t.primaryKey : t.columns;
    const label = (r: SqlRow) => keyCols.map((c) => String(r[c])).join(',');
    const actByKey = new Map(act.map((r) => [keyOf(r, keyCols), r]));
    const seen = new Set<string>();
    for (const e of exp) {
      const k = keyOf(e, keyCols);
      const a = actByKey.get(k);
      seen.add(k);
      if (!a) {
        lines.push(`${t.name}[${label(e)}]: missing row ${canonicalJson(e)}`);
        continue;
      }
      for (const c of t.columns) {
        if (canonicalJson(e[c] ?? null) !== canonicalJson(a[c] ?? null)) {
          lines.push(`${t.name}[${label(e)}].${c}: expected ${show(e[c])}, got ${show(a[c])}`);
        }
      }
    }
    for (const a of act) {
      if (!seen.has(keyOf(a, keyCols))) lines.push(`${t.name}[${label(a)}]: unexpected row ${canonicalJson(a)}`);
    }
  }
  return { equal: lines.length === 0, lines };
}

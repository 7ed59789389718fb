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

/**
 * {@link canonicalJson} of a list of column values (a key), without its recursion when no value
 * is a blob: for strings, numbers and null, `JSON.stringify` of the array is the same text.
 */
export function keyJson(values: readonly SqlValue[]): string {
  return values.some((v) => v !== null && typeof v === 'object') ? canonicalJson(values) : JSON.stringify(values);
}

function keyOf(row: SqlRow, cols: readonly string[]): string {
  return keyJson(cols.map((c) => row[c] ?? null));
}

/** `canonicalJson(x) === canonicalJson(y)`, without serializing when `x === y`. */
function sameValue(x: SqlValue, y: SqlValue): boolean {
  return x === y || canonicalJson(x) === canonicalJson(y);
}

/**
 * Whether two rows (or two absent rows) are equal as {@link canonicalJson} texts are: the same
 * columns with the same values. Builds no text unless a value is a blob.
 */
export function sameRow(a: SqlRow | null, b: SqlRow | null): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const k of keys) if (!Object.hasOwn(b, k) || !sameValue(a[k]!, b[k]!)) return false;
  return true;
}

/**
 * `row` without the columns in `ignore`, as {@link canonicalJson} writes it (keys sorted). The
 * sorted column list is kept per column layout in `layouts`, so rows of one table sort once.
 */
function strippedJson(row: SqlRow, ignore: ReadonlySet<string>, layouts: Map<string, string[]>): string {
  const keys = Object.keys(row);
  const layout = keys.join('\u0000');
  let cols = layouts.get(layout);
  if (!cols) {
    cols = keys.filter((k) => !ignore.has(k)).sort();
    layouts.set(layout, cols);
  }
  let out = '{';
  for (const [i, k] of cols.entries()) out += `${i ? ',' : ''}${JSON.stringify(k)}:${canonicalJson(row[k])}`;
  return `${out}}`;
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
 * Compare the `actual` state with the `expected` one, table by table in `tables` order.
 *
 * Ordered tables pair rows by primary key (all columns when there is none): for each expected
 * row in state order, `missing row` or one line per differing column; then `unexpected row` for
 * each actual row without a partner, in state order. `unordered` tables compare as multisets
 * after dropping `ignoreColumns`: one `unexpected row` line per surplus actual row, then one
 * `missing row` line per surplus expected row, each group sorted by the row's JSON text.
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
      const layouts = new Map<string, string[]>();
      const strip = (r: SqlRow) => strippedJson(r, ignore, layouts);
      // expected count − actual count per stripped row. Lines depend only on these counts (not
      // on row order, which follows the primary key, often an ignored surrogate id), so a diff
      // of the written rows alone gives the same lines (see changes.ts).
      const count = new Map<string, number>();
      for (const r of exp) {
        const k = strip(r);
        count.set(k, (count.get(k) ?? 0) + 1);
      }
      for (const r of act) {
        const k = strip(r);
        count.set(k, (count.get(k) ?? 0) - 1);
      }
      const texts = [...count.keys()].sort();
      for (const k of texts) for (let n = count.get(k)!; n < 0; n++) lines.push(`${t.name}: unexpected row ${k}`);
      for (const k of texts) for (let n = count.get(k)!; n > 0; n--) lines.push(`${t.name}: missing row ${k}`);
      continue;
    }
    const keyCols = t.primaryKey.length > 0 ? t.primaryKey : t.columns;
    const label = (r: SqlRow) => keyCols.map((c) => String(r[c])).join(',');
    const actKeys = act.map((r) => keyOf(r, keyCols));
    const actByKey = new Map(act.map((r, i) => [actKeys[i]!, r]));
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
        if (!sameValue(e[c] ?? null, a[c] ?? null)) {
          lines.push(`${t.name}[${label(e)}].${c}: expected ${show(e[c])}, got ${show(a[c])}`);
        }
      }
    }
    act.forEach((a, i) => {
      if (!seen.has(actKeys[i]!)) lines.push(`${t.name}[${label(a)}]: unexpected row ${canonicalJson(a)}`);
    });
  }
  return { equal: lines.length === 0, lines };
}

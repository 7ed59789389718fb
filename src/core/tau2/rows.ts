/**
 * Helpers for mapping tau2-bench JSON documents to relational rows and back: ordered grouping of
 * child rows, the `absent_fields` convention and JSON-list columns.
 */
import { z } from 'zod';
import type { SqlRow, SqlValue } from '../ports/sql-db.ts';
import { PyFloat, parsePyJson, type PyDict } from './py-json.ts';

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
export function absentFieldsColumn(
  record: Readonly<Record<string, unknown>>,
  optional: readonly string[],
): string | null {
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

/** An object-valued JSON column (e.g. `options`) → a dict, key order kept. */
export function jsonDict(value: SqlValue | undefined): PyDict {
  return parsePyJson(String(value)) as PyDict;
}

/** A dict → the text of a JSON column, key order kept. */
export function dictColumn(dict: ReadonlyMap<string, string>): string {
  return `{${[...dict].map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;
}

/**
 * zod building blocks that read both a {@link parsePyJson} tree (dicts as `Map`, floats as
 * `PyFloat`) and a plain `JSON.parse` result, and output dicts as `Map` (order kept) and numbers
 * as `number`. A plain object loses the order of integer-like keys; pass text when it matters.
 */
export const pyZod = {
  /** A record (pydantic model): strict object, unknown fields refused. */
  record<S extends z.ZodRawShape>(shape: S) {
    return z.preprocess(mapToObject, z.strictObject(shape));
  },
  /** A tagged union of records, e.g. by `status` or `source`. */
  union<T extends readonly [z.ZodObject, ...z.ZodObject[]]>(tag: string, options: T) {
    return z.preprocess(
      mapToObject,
      z.discriminatedUnion(tag, options as never) as unknown as z.ZodType<z.output<T[number]>>,
    );
  },
  /** A dict `Dict[str, X]`: a `Map` in insertion order. */
  dict<V extends z.ZodType>(value: V) {
    return z.preprocess(objectToMap, z.map(z.string(), value));
  },
  /** A float field (an int in the file is accepted, as pydantic does). */
  float: z.preprocess((v) => (v instanceof PyFloat ? v.value : v), z.number()),
  /** An int field (a float with no fraction is accepted, as pydantic does). */
  int: z.preprocess((v) => (v instanceof PyFloat && Number.isInteger(v.value) ? v.value : v), z.number().int()),
};

function mapToObject(v: unknown): unknown {
  return v instanceof Map ? Object.fromEntries(v) : v;
}

function objectToMap(v: unknown): unknown {
  return v !== null && typeof v === 'object' && !(v instanceof Map) && !Array.isArray(v)
    ? new Map(Object.entries(v))
    : v;
}

/** The document to validate: text is parsed with {@link parsePyJson} (order and floats kept). */
export function pyDocument(source: unknown): unknown {
  return typeof source === 'string' ? parsePyJson(source) : source;
}

/** Record form: `model` (all fields, tau2's `model_dump()`) or `source` (as the data file had them). */
export type RecordForm = 'model' | 'source';

/** Options of a tau2 domain's `exportTau2Db`. */
export interface ExportOptions {
  /**
   * `source` (default): optional fields the imported file left out stay out while unset, so an
   * export right after import equals db.json. `model`: every field present (the database
   * model's `model_dump()`, what tau2's DB hash is computed over).
   */
  form?: RecordForm;
}

/**
 * Check that an exported state has every table of a tau2 schema.
 * @throws Error naming the first missing table.
 */
export function requireTables(state: Readonly<Record<string, unknown>>, names: readonly string[]): void {
  for (const name of names) if (!state[name]) throw new Error(`exportTau2Db: state has no table "${name}"`);
}

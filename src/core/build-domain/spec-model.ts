/**
 * The API model `switchboard build-domain` reads out of an OpenAPI 3.x description or an MCP
 * tool list (./openapi.ts, ./mcp.ts) and turns into a domain folder (./scaffold.ts): tables of
 * typed columns, and operations on one table each.
 */
import { FileFieldError } from '../errors.ts';

/** A malformed or unsupported API description. The message is `<file>: <path in the spec>: <detail>`. */
export class SpecError extends FileFieldError {
  override name = 'SpecError';
}

/** SQLite storage of a column; `boolean` is stored as INTEGER 0/1. */
export type ColumnType = 'text' | 'integer' | 'real' | 'boolean';

/** One column of a generated table. */
export interface ColumnModel {
  /** snake_case identifier. */
  name: string;
  type: ColumnType;
  /** Allowed values (a CHECK constraint and a parameter enum). */
  enum?: (string | number)[];
  /** `date` ('YYYY-MM-DD') or `date-time` (ISO 8601 with offset), from the spec's `format`. */
  format?: 'date' | 'date-time';
  /** Table whose (single-column) key this column references. */
  references?: string;
  /** Values are unique (a key, or a column an operation locates rows by). */
  unique?: boolean;
  description?: string;
}

/** One generated table. */
export interface TableModel {
  /** Plural snake_case identifier, e.g. `pets`. */
  name: string;
  /** Singular noun the goal texts use, e.g. `pet`. */
  noun: string;
  /** Key columns (one, or several for a composite key). */
  key: string[];
  columns: ColumnModel[];
  /** Where in the spec it comes from, e.g. `components.schemas.Pet`. */
  from: string;
}

/**
 * What an operation parameter does: `locator` finds the row (key or unique column), `value`
 * sets or gives a column, `filter` narrows a list, `dispatch` selects a variant of the
 * operation (an enum such as MCP `method`), not stored.
 */
export type ParamRole = 'locator' | 'value' | 'filter' | 'dispatch';

/** One parameter of a generated tool. */
export interface ParamModel {
  /** snake_case parameter name. */
  name: string;
  /** The column it reads or writes (absent for `dispatch`). */
  column?: string;
  type: ColumnType;
  enum?: (string | number)[];
  required: boolean;
  role: ParamRole;
  description?: string;
}

/** The verb of an operation: reads `get` (one row) and `list`, writes `create`, `update`, `delete`. */
export type Verb = 'get' | 'list' | 'create' | 'update' | 'delete';

/** One operation, to become one tool. */
export interface OperationModel {
  /** snake_case tool name. */
  name: string;
  kind: 'read' | 'write';
  verb: Verb;
  table: string;
  description: string;
  params: ParamModel[];
  /** Where in the spec it comes from, e.g. `paths./pet/{petId}.get`. */
  from: string;
}

/** A part of the spec the scaffold leaves out, with the reason (listed in the build report). */
export interface Skip {
  path: string;
  reason: string;
}

/**
 * A nested object property flattened one level into columns (and tool parameters) named
 * `<property>_<field>`: `address: {city, zip}` → `address_city`, `address_zip`. Listed in the
 * build report; objects nested deeper and arrays are skipped.
 */
export interface Flattened {
  path: string;
  columns: string[];
}

/**
 * An operation (or MCP tool) whose name has no ASCII letter (`获取书`), renamed deterministically
 * from its HTTP method and path (`GET /books/{id}` → `get_books_by_id`). Listed in the build report.
 */
export interface Renamed {
  path: string;
  from: string;
  to: string;
}

/** Everything the scaffold needs from a spec. */
export interface SpecModel {
  format: 'openapi' | 'mcp';
  title: string;
  tables: TableModel[];
  operations: OperationModel[];
  skipped: Skip[];
  flattened: Flattened[];
  renamed: Renamed[];
}

/** A parsed JSON object. */
export type Json = Record<string, unknown>;

/** True for a JSON object (not null, not an array). */
export const isObj = (x: unknown): x is Json => !!x && typeof x === 'object' && !Array.isArray(x);

/** Most operations (or MCP tools) one spec may have; more is refused as a huge spec. */
export const MAX_OPERATIONS = 1000;
/** Most characters one spec file may have (10 MB); more is refused as a huge spec. */
export const MAX_SPEC_CHARS = 10_000_000;

/** `petId`, `Pet-Store`, `first name` → `pet_id`, `pet_store`, `first_name`. */
export function snake(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/[^a-zA-Z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();
}

/**
 * A tool name from an HTTP method and path, for an operationId with no ASCII letter: the method,
 * then each literal segment, then `by_<param>` for each `{param}` segment
 * (`get`, `/books/{id}` → `get_books_by_id`; `post`, `/books` → `post_books`).
 */
export function nameFromRoute(method: string, route: string): string {
  const words = route
    .split('/')
    .filter(Boolean)
    .map((seg) => {
      const param = /^\{(.+)\}$/.exec(seg)?.[1];
      return param !== undefined ? (snake(param) ? `by_${snake(param)}` : '') : snake(seg);
    })
    .filter(Boolean);
  return [method.toLowerCase(), ...words].join('_');
}

/** English plural of a snake_case noun (last word): `category` → `categories`, `pet` → `pets`. */
export function plural(noun: string): string {
  if (/[^aeiou]y$/.test(noun)) return `${noun.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(noun)) return `${noun}es`;
  return `${noun}s`;
}

/** English singular of a snake_case noun (last word): `categories` → `category`, `gists` → `gist`. */
export function singular(noun: string): string {
  if (/ies$/.test(noun)) return `${noun.slice(0, -3)}y`;
  if (/(ss|us|is)$/.test(noun)) return noun;
  if (/(x|z|ch|sh|ses)es$/.test(noun)) return noun.slice(0, -2);
  if (/s$/.test(noun)) return noun.slice(0, -1);
  return noun;
}

/** SQL words a generated name must not be (a table gets `_records`, a column `_value`). */
const SQL_WORDS = new Set(
  'abort action add all alter and as asc between by case cast check collate column commit constraint create cross current default delete desc distinct drop else end escape except exists from full glob group having if in index inner insert intersect into is join key left like limit match natural no not null of offset on or order outer primary references regexp release rename replace right rollback row rowid select set table then to transaction trigger union unique update using values view when where with without'.split(
    ' ',
  ),
);

/**
 * Names every plain object inherits (`constructor`, `toString` …): a tool parameter of such a name,
 * left out of a call, would be read as the inherited function by the argument check.
 */
const INHERITED = new Set(Object.getOwnPropertyNames(Object.prototype));

/**
 * A snake_case name that is safe as an SQL identifier and as a tool parameter: not a keyword, not
 * a name objects inherit, not starting with a digit (`order` → `order_value`, `constructor` →
 * `constructor_value`).
 */
export function safeIdent(name: string, suffix: '_records' | '_value'): string {
  const base = /^[0-9]/.test(name) ? `n_${name}` : name || 'unnamed';
  return SQL_WORDS.has(base) || INHERITED.has(base) ? `${base}${suffix}` : base;
}

/** A column type from a JSON Schema `type` (and `format`), or null when not a scalar. */
export function columnType(schema: { type?: unknown }): ColumnType | null {
  const t = Array.isArray(schema.type) ? schema.type.find((x) => x !== 'null') : schema.type;
  if (t === 'string') return 'text';
  if (t === 'integer') return 'integer';
  if (t === 'number') return 'real';
  if (t === 'boolean') return 'boolean';
  return null;
}

/** `date` / `date-time` from a JSON Schema `format`. */
export function dateFormat(schema: { format?: unknown }): 'date' | 'date-time' | undefined {
  return schema.format === 'date' || schema.format === 'date-time' ? schema.format : undefined;
}

/** Scalar enum values of a JSON Schema, if any. */
export function enumOf(schema: { enum?: unknown }): (string | number)[] | undefined {
  if (!Array.isArray(schema.enum)) return undefined;
  const values = schema.enum.filter((v): v is string | number => typeof v === 'string' || typeof v === 'number');
  return values.length ? [...new Set(values)] : undefined;
}

/**
 * Parameters of lists and searches that are not record fields (paging, sorting, free text);
 * dropped from the generated tools and listed in the build report.
 */
export const CONTROL_PARAMS = new Set([
  'page',
  'per_page',
  'page_size',
  'limit',
  'offset',
  'cursor',
  'after',
  'before',
  'since',
  'sort',
  'order',
  'direction',
  'q',
  'query',
]);

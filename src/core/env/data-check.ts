/**
 * Checks of a domain's SQL data (issue 11): a broken `schema.sql`, seed rows or task
 * `initial_state` rows are reported as {@link DomainFileError}s naming the file and the field
 * (for SQL, the statement and its line) before any episode runs, instead of surfacing as an
 * invalid rollout or a silent difference (SQLite keeps `"abc"` in an INTEGER column as text and
 * checks no foreign key unless asked).
 */
import type { SqlDb, SqlRow } from '../ports/sql-db.ts';
import { DomainFileError } from '../schema/domain.ts';
import { ident, type TableInfo } from './write-log.ts';

/** One statement of an SQL script and the line (1-based) it starts on. */
export interface SqlStatement {
  sql: string;
  line: number;
}

/**
 * Split an SQL script into statements at `;`, outside quotes (`'…'`, `"…"`, `` `…` ``, `[…]`),
 * comments (`-- …`, `/* … *\/`) and trigger bodies (`CREATE TRIGGER … BEGIN … END;`). Empty
 * statements are dropped. For error messages only: SQLite itself runs the script.
 */
export function splitSqlStatements(script: string): SqlStatement[] {
  const out: SqlStatement[] = [];
  let start = 0;
  let line = 1;
  let startLine = 1;
  let i = 0;
  const push = (end: number) => {
    const text = script.slice(start, end);
    const lead = text.length - text.trimStart().length;
    const skipped = text.slice(0, lead).split('\n').length - 1;
    if (text.trim()) out.push({ sql: text.trim(), line: startLine + skipped });
  };
  while (i < script.length) {
    const c = script[i]!;
    const close = c === "'" ? "'" : c === '"' ? '"' : c === '`' ? '`' : c === '[' ? ']' : null;
    if (close) {
      const end = script.indexOf(close, i + 1);
      const stop = end < 0 ? script.length : end + 1;
      line += script.slice(i, stop).split('\n').length - 1;
      i = stop;
      continue;
    }
    if (c === '-' && script[i + 1] === '-') {
      const end = script.indexOf('\n', i);
      i = end < 0 ? script.length : end;
      continue;
    }
    if (c === '/' && script[i + 1] === '*') {
      const end = script.indexOf('*/', i + 2);
      const stop = end < 0 ? script.length : end + 2;
      line += script.slice(i, stop).split('\n').length - 1;
      i = stop;
      continue;
    }
    if (c === '\n') line++;
    if (c === ';') {
      const text = script.slice(start, i);
      const trigger = /^\s*CREATE\s+(?:TEMP\s+|TEMPORARY\s+)?TRIGGER\b/i.test(text);
      if (!trigger || /\bEND\s*$/i.test(text)) {
        push(i);
        start = i + 1;
        startLine = line;
      }
    }
    i++;
  }
  push(script.length);
  return out;
}

/** First line of a statement, cut to 80 characters, for messages. */
function head(sql: string): string {
  const first = sql.split('\n')[0]!;
  return first.length > 80 ? `${first.slice(0, 80)}…` : first;
}

/**
 * Find the statement of `schema` that fails, running them one by one on `db` (a fresh
 * database), after the whole script failed with `error`.
 * @returns a DomainFileError `<file>: line <n>: <statement's first line>: <SQLite message>`.
 */
export async function schemaError(db: SqlDb, schema: string, file: string, error: unknown): Promise<DomainFileError> {
  for (const s of splitSqlStatements(schema)) {
    try {
      await db.exec(s.sql);
    } catch (e) {
      return new DomainFileError(file, `line ${s.line}`, `${head(s.sql)}: ${(e as Error).message}`);
    }
  }
  return new DomainFileError(file, '', (error as Error).message);
}

/** SQLite's type affinity of a declared column type (https://sqlite.org/datatype3.html §3.1). */
export function typeAffinity(declared: string): 'INTEGER' | 'TEXT' | 'BLOB' | 'REAL' | 'NUMERIC' {
  const t = declared.toUpperCase();
  if (t.includes('INT')) return 'INTEGER';
  if (t.includes('CHAR') || t.includes('CLOB') || t.includes('TEXT')) return 'TEXT';
  if (t.includes('BLOB') || t === '') return 'BLOB';
  if (t.includes('REAL') || t.includes('FLOA') || t.includes('DOUB')) return 'REAL';
  return 'NUMERIC';
}

/** Declared column types of every table: table → column → affinity. */
export async function columnAffinities(
  db: SqlDb,
  tables: readonly TableInfo[],
): Promise<Map<string, Map<string, ReturnType<typeof typeAffinity>>>> {
  const out = new Map<string, Map<string, ReturnType<typeof typeAffinity>>>();
  for (const t of tables) {
    const cols = await db.all('SELECT name, type FROM pragma_table_info(?)', [t.name]);
    out.set(t.name, new Map(cols.map((c) => [c.name as string, typeAffinity(String(c.type ?? ''))])));
  }
  return out;
}

/** Where rows come from, for messages: the file and the field of row `i`. */
export interface RowSource {
  file: string;
  /** Field path of row `i` of the table, e.g. `customers[3]` or `[2].initial_state.rows.customers[0]`. */
  row: (i: number) => string;
}

/**
 * The first value of `rows` that SQLite would store other than as declared: a value that is not
 * a string, number or null; text in an INTEGER, REAL or NUMERIC column that is not a number
 * (SQLite would keep it as text).
 * @throws DomainFileError naming `<row>.<column>`.
 */
export function checkRowValues(
  rows: readonly Record<string, unknown>[],
  table: string,
  affinities: ReadonlyMap<string, ReturnType<typeof typeAffinity>> | undefined,
  where: RowSource,
): void {
  rows.forEach((row, i) => {
    for (const [col, v] of Object.entries(row)) {
      const field = `${where.row(i)}.${col}`;
      if (!(v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)))) {
        throw new DomainFileError(
          where.file,
          field,
          `expected a string, a finite number or null, got ${JSON.stringify(v) ?? typeof v}`,
        );
      }
      const aff = affinities?.get(col);
      const numeric = aff === 'INTEGER' || aff === 'REAL' || aff === 'NUMERIC';
      if (numeric && typeof v === 'string' && (v.trim() === '' || !Number.isFinite(Number(v)))) {
        throw new DomainFileError(where.file, field, `text ${JSON.stringify(v)} in ${aff} column ${table}.${col}`);
      }
    }
  });
}

/**
 * Rows that reference a missing row (`PRAGMA foreign_key_check`), as an error naming the first
 * one: `<row>.<column>: "<value>" references <parent>(<column>), which has no such row`. `rowsOf`
 * gives the source rows of a table in insertion order (row i of a rowid table has rowid i + 1 when
 * the table started empty; an INTEGER PRIMARY KEY is matched by value).
 */
export async function foreignKeyError(
  db: SqlDb,
  rowsOf: (table: string) => { rows: readonly SqlRow[]; where: RowSource } | undefined,
  tables: readonly TableInfo[],
): Promise<DomainFileError | null> {
  const [bad] = await db.all('PRAGMA foreign_key_check');
  if (!bad) return null;
  const table = bad.table as string;
  const fks = await db.all('SELECT id, seq, "table" AS parent, "from", "to" FROM pragma_foreign_key_list(?)', [table]);
  const fk = fks.filter((f) => f.id === bad.fkid);
  const from = fk.map((f) => f.from as string);
  const parent = (bad.parent as string) ?? (fk[0]?.parent as string);
  const to = fk.map((f) => (f.to as string | null) ?? '').join(', ');
  const source = rowsOf(table);
  const info = tables.find((t) => t.name === table);
  let index = -1;
  if (source && bad.rowid !== null && bad.rowid !== undefined) {
    const [image] = await db.all(`SELECT * FROM ${ident(table)} WHERE rowid = ?`, [bad.rowid as number]);
    const key = info?.primaryKey.length ? info.primaryKey : from;
    index = source.rows.findIndex((r) => key.every((k) => image && String(r[k]) === String(image[k])));
  }
  const value = index >= 0 && source ? from.map((c) => JSON.stringify(source.rows[index]![c])).join(', ') : '';
  const field = source
    ? `${index >= 0 ? source.where.row(index) : table}${from.length === 1 && index >= 0 ? `.${from[0]}` : ''}`
    : table;
  const what = value ? `${value} references` : `a row of ${table} references`;
  return new DomainFileError(source?.where.file ?? table, field, `${what} ${parent}(${to}), which has no such row`);
}

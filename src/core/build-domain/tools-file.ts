/**
 * Operations → declarative tools (`tools.json`, src/core/schema/declarative-tools.ts): guarded
 * parameterized SQL, no code.
 * - `get`: a lookup by the locator that must find the row (`<noun> <value> not found`), the row.
 * - `list`: rows matching the given filters (a filter left out matches all), by key, at most 20.
 * - `create`: references must find their parent row, a given key must be new; one INSERT (an
 *   integer key left out is the largest + 1, a text key `<prefix><count + 100001>`); the new row.
 * - `update`: the row must exist, references must find their parent, at least one value must be
 *   given when all are optional; one UPDATE of the given values (`COALESCE(?, column)` keeps a
 *   left-out optional value); the row after.
 * - `delete`: the row must exist and no row of another table may still reference it; one DELETE.
 * Enums and required parameters are checked by the parameter schema before any step runs.
 */
import type { ToolSpec } from '../schema/declarative-tools.ts';
import type { ColumnType, OperationModel, ParamModel, TableModel } from './spec-model.ts';
import { keyPrefix } from './synthetic-db.ts';

/** The JSON Schema type of a column type. */
const JSON_TYPE: Record<ColumnType, string> = {
  text: 'string',
  integer: 'integer',
  real: 'number',
  boolean: 'boolean',
};

/** Lookup names start with `_`, which no generated parameter name does. */
const ROW = '_row';

function parameters(op: OperationModel): ToolSpec['parameters'] {
  const properties: Record<string, Record<string, unknown>> = {};
  for (const p of op.params) {
    properties[p.name] = {
      type: JSON_TYPE[p.type],
      ...(p.enum ? { enum: p.enum } : {}),
      ...(p.description ? { description: p.description.slice(0, 300) } : {}),
    };
  }
  const required = op.params.filter((p) => p.required).map((p) => p.name);
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

const where = (ps: readonly ParamModel[]) => ps.map((p) => `${p.column} = ?`).join(' AND ');
const braces = (ps: readonly ParamModel[]) => ps.map((p) => `{${p.name}}`).join(' / ');

/** Steps that check each given reference finds its parent row. */
function referenceGuards(op: OperationModel, tables: readonly TableModel[], table: TableModel): ToolSpec['steps'] {
  const steps: ToolSpec['steps'] = [];
  for (const p of op.params) {
    const col = table.columns.find((c) => c.name === p.column);
    if (!col?.references || p.role === 'locator') continue;
    const parent = tables.find((t) => t.name === col.references)!;
    steps.push({
      fail_if: `SELECT 1 WHERE ? IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${parent.name} WHERE ${parent.key[0]} = ?)`,
      args: [p.name, p.name],
      error: `${parent.noun.replace(/_/g, ' ')} {${p.name}} not found`,
    });
  }
  return steps;
}

/** The declarative tool of one operation. */
export function toolSpec(op: OperationModel, tables: readonly TableModel[]): ToolSpec {
  const table = tables.find((t) => t.name === op.table)!;
  const noun = table.noun.replace(/_/g, ' ');
  const locators = op.params.filter((p) => p.role === 'locator');
  const values = op.params.filter((p) => p.role === 'value');
  const base = {
    name: op.name,
    kind: op.kind,
    description: op.description.slice(0, 1000),
    parameters: parameters(op),
    spokenAs: op.name.replace(/_/g, ' '),
  };
  const found = {
    lookup: ROW,
    sql: `SELECT * FROM ${table.name} WHERE ${where(locators)}`,
    args: locators.map((p) => p.name),
    error: `${noun} ${braces(locators)} not found`,
  };
  const rowResult = {
    sql: `SELECT * FROM ${table.name} WHERE ${where(locators)}`,
    args: locators.map((p) => p.name),
    rows: 'one' as const,
  };
  switch (op.verb) {
    case 'get':
      return { ...base, steps: [found], result: rowResult };
    case 'list': {
      const filters = op.params.filter((p) => p.role === 'filter' || p.role === 'locator');
      const cond = filters.map((p) => (p.required ? `${p.column} = ?` : `(? IS NULL OR ${p.column} = ?)`));
      const args = filters.flatMap((p) => (p.required ? [p.name] : [p.name, p.name]));
      return {
        ...base,
        steps: [],
        result: {
          sql: `SELECT * FROM ${table.name}${cond.length ? ` WHERE ${cond.join(' AND ')}` : ''} ORDER BY ${table.key.join(', ')} LIMIT 20`,
          args,
          rows: 'all',
        },
      };
    }
    case 'create': {
      const steps: ToolSpec['steps'] = [];
      const keyParams = op.params.filter((p) => p.column && table.key.includes(p.column));
      if (keyParams.length)
        steps.push({
          fail_if: `SELECT 1 FROM ${table.name} WHERE ${where(keyParams)}`,
          args: keyParams.map((p) => p.name),
          error: `${noun} ${braces(keyParams)} already exists`,
        });
      steps.push(...referenceGuards(op, tables, table));
      const cols: string[] = [];
      const vals: string[] = [];
      const args: string[] = [];
      for (const p of op.params) {
        if (!p.column) continue;
        cols.push(p.column);
        args.push(p.name);
        const generated =
          table.key.length === 1 && p.column === table.key[0]
            ? p.type === 'integer'
              ? `COALESCE(?, (SELECT COALESCE(MAX(${p.column}), 1000) + 1 FROM ${table.name}))`
              : `COALESCE(?, '${keyPrefix(table)}' || ((SELECT COUNT(*) FROM ${table.name}) + 100001))`
            : '?';
        vals.push(generated);
      }
      if (table.key.length === 1 && !cols.includes(table.key[0]!)) {
        const k = table.key[0]!;
        const type = table.columns.find((c) => c.name === k)!.type;
        cols.unshift(k);
        vals.unshift(
          type === 'integer'
            ? `(SELECT COALESCE(MAX(${k}), 1000) + 1 FROM ${table.name})`
            : `'${keyPrefix(table)}' || ((SELECT COUNT(*) FROM ${table.name}) + 100001)`,
        );
      }
      steps.push({ write: `INSERT INTO ${table.name} (${cols.join(', ')}) VALUES (${vals.join(', ')})`, args });
      return {
        ...base,
        steps,
        result: {
          sql: `SELECT * FROM ${table.name} WHERE rowid = (SELECT MAX(rowid) FROM ${table.name})`,
          args: [],
          rows: 'one',
        },
      };
    }
    case 'update': {
      const steps: ToolSpec['steps'] = [found, ...referenceGuards(op, tables, table)];
      if (values.every((p) => !p.required))
        steps.push({
          fail_if: `SELECT 1 WHERE ${values.map(() => '? IS NULL').join(' AND ')}`,
          args: values.map((p) => p.name),
          error: `nothing to change: give at least one of ${values.map((p) => p.name).join(', ')}`,
        });
      const set = values.map((p) => (p.required ? `${p.column} = ?` : `${p.column} = COALESCE(?, ${p.column})`));
      steps.push({
        write: `UPDATE ${table.name} SET ${set.join(', ')} WHERE ${where(locators)}`,
        args: [...values.map((p) => p.name), ...locators.map((p) => p.name)],
      });
      return { ...base, steps, result: rowResult };
    }
    case 'delete': {
      const steps: ToolSpec['steps'] = [found];
      for (const child of tables)
        for (const c of child.columns)
          if (c.references === table.name)
            steps.push({
              fail_if: `SELECT 1 FROM ${child.name} WHERE ${c.name} = ?`,
              args: [`${ROW}.${table.key[0]}`],
              error: `${noun} ${braces(locators)} still has ${child.name.replace(/_/g, ' ')}; it cannot be deleted`,
            });
      steps.push({ write: `DELETE FROM ${table.name} WHERE ${where(locators)}`, args: locators.map((p) => p.name) });
      const keyCols = locators.map((p) => `? AS ${p.column}`).join(', ');
      return {
        ...base,
        steps,
        result: { sql: `SELECT ${keyCols}, 'deleted' AS status`, args: locators.map((p) => p.name), rows: 'one' },
      };
    }
  }
}

/**
 * An MCP tool list → {@link SpecModel}. Accepted shapes: the `tools/list` result
 * (`{ "tools": [...] }`), the whole JSON-RPC reply (`{ "result": { "tools": [...] } }`), a bare
 * array of tools, or one tool (`{ "name", "inputSchema" }`, as a server's tool snapshot file).
 *
 * A tool's name gives its verb and its table: the words that are not verbs (`get_gist` → `gist`,
 * `label_write` → `label`) name the table, and `readOnlyHint` (or, without annotations, the
 * verb) says read or write. A table's columns are the scalar input properties of its tools,
 * less paging controls (`page`, `perPage`, …) and dispatch enums (`method`, `action`); its key
 * is the required input of its `get` tool, or a `<noun>_id` / `id` property.
 */
import {
  type ColumnModel,
  type OperationModel,
  type ParamModel,
  type Skip,
  type Flattened,
  type Renamed,
  type SpecModel,
  type TableModel,
  CONTROL_PARAMS,
  type Json,
  isObj,
  MAX_OPERATIONS,
  SpecError,
  columnType,
  dateFormat,
  enumOf,
  plural,
  safeIdent,
  singular,
  snake,
} from './spec-model.ts';

const READ_WORDS = new Set(['get', 'read', 'fetch', 'show', 'view', 'describe', 'lookup']);
const LIST_WORDS = new Set(['list', 'search', 'find', 'query']);
const CREATE_WORDS = new Set(['create', 'add', 'new', 'insert', 'post', 'open', 'make']);
const DELETE_WORDS = new Set(['delete', 'remove', 'destroy', 'drop', 'archive']);
const UPDATE_WORDS = new Set([
  'update',
  'edit',
  'set',
  'write',
  'modify',
  'patch',
  'change',
  'rename',
  'assign',
  'manage',
  'mark',
]);
const DISPATCH = new Set(['method', 'action', 'operation', 'op', 'mode']);

/** The tools array of an MCP tool list in any accepted shape, or null when `doc` is not one. */
export function mcpTools(doc: unknown): { tools: unknown[]; at: string } | null {
  if (Array.isArray(doc) && doc.every((t) => isObj(t) && 'inputSchema' in t)) return { tools: doc, at: '' };
  if (!isObj(doc)) return null;
  if (Array.isArray(doc.tools)) return { tools: doc.tools, at: 'tools' };
  if (isObj(doc.result) && Array.isArray(doc.result.tools)) return { tools: doc.result.tools, at: 'result.tools' };
  if (typeof doc.name === 'string' && isObj(doc.inputSchema)) return { tools: [doc], at: '' };
  return null;
}

interface RawTool {
  name: string;
  words: string[];
  noun: string;
  verb: OperationModel['verb'] | null;
  kind: 'read' | 'write';
  description: string;
  props: { name: string; schema: Json; required: boolean; at: string }[];
  at: string;
}

/** Read an MCP tool list. @throws SpecError naming `file` and the path (e.g. `tools[3].inputSchema`). */
export function readMcp(file: string, tools: unknown[], base: string): SpecModel {
  const skipped: Skip[] = [];
  const flattened: Flattened[] = [];
  const renamed: Renamed[] = [];
  if (tools.length === 0) throw new SpecError(file, base, 'the tool list is empty');
  if (tools.length > MAX_OPERATIONS)
    throw new SpecError(
      file,
      base,
      `${tools.length} tools: more than ${MAX_OPERATIONS}, too large a spec for one domain; split it`,
    );
  const raw: RawTool[] = [];
  const names = new Map<string, string>();
  tools.forEach((t, i) => {
    const at = base ? `${base}[${i}]` : tools.length === 1 ? '' : `[${i}]`;
    const f = (x: string) => (at ? `${at}.${x}` : x);
    if (!isObj(t) || typeof t.name !== 'string' || !t.name.trim())
      throw new SpecError(file, f('name'), 'a tool needs a "name" (string)');
    const schema = t.inputSchema;
    if (!isObj(schema) || (schema.type !== undefined && schema.type !== 'object'))
      throw new SpecError(
        file,
        f('inputSchema'),
        `tool ${t.name}: "inputSchema" must be a JSON Schema of type "object"`,
      );
    // A name with no ASCII letter (`获取书`) takes the tool's title (MCP `title` or
    // `annotations.title`) when that has one; otherwise it cannot say what the tool does.
    let source = t.name;
    if (!/[A-Za-z]/.test(t.name)) {
      const titles = [t.title, isObj(t.annotations) ? t.annotations.title : undefined];
      const title = titles.find((x): x is string => typeof x === 'string' && /[A-Za-z]/.test(x));
      if (!title) {
        skipped.push({
          path: f('name'),
          reason: `tool ${t.name}: its name has no ASCII letter and it has no title with one, so no tool name (give "title", e.g. "Get book")`,
        });
        return;
      }
      source = title;
    }
    const name = safeIdent(snake(source), '_value');
    if (source !== t.name) renamed.push({ path: f('name'), from: t.name, to: name });
    const clash = names.get(name);
    if (clash !== undefined)
      throw new SpecError(file, f('name'), `name clash: tools "${clash}" and "${t.name}" both become tool "${name}"`);
    names.set(name, t.name);
    const words = name.split('_');
    const has = (set: Set<string>) => words.some((w) => set.has(w));
    const nounWords = words.filter(
      (w) => ![READ_WORDS, LIST_WORDS, CREATE_WORDS, DELETE_WORDS, UPDATE_WORDS].some((s) => s.has(w)),
    );
    const annotations = isObj(t.annotations) ? t.annotations : {};
    const hint = typeof annotations.readOnlyHint === 'boolean' ? annotations.readOnlyHint : undefined;
    const plain = nounWords.at(-1) ?? '';
    const isList = has(LIST_WORDS) || (plain !== singular(plain) && !has(READ_WORDS));
    let verb: OperationModel['verb'] | null;
    let kind: 'read' | 'write';
    if (hint === true || (hint === undefined && (has(READ_WORDS) || has(LIST_WORDS)) && !has(UPDATE_WORDS))) {
      kind = 'read';
      verb = isList ? 'list' : 'get';
    } else {
      kind = 'write';
      verb = has(DELETE_WORDS) ? 'delete' : has(CREATE_WORDS) ? 'create' : has(UPDATE_WORDS) ? 'update' : null;
    }
    const req = new Set(
      Array.isArray(schema.required) ? schema.required.filter((x): x is string => typeof x === 'string') : [],
    );
    const props: RawTool['props'] = [];
    for (const [k, v] of isObj(schema.properties) ? Object.entries(schema.properties) : []) {
      if (!isObj(v)) continue;
      const at = f(`inputSchema.properties.${k}`);
      if (columnType(v) || !isObj(v.properties)) {
        props.push({ name: k, schema: v, required: req.has(k), at });
        continue;
      }
      // A nested object input: its scalar fields become inputs `<name>_<field>`, one level deep.
      const inner = new Set(
        Array.isArray(v.required) ? v.required.filter((x): x is string => typeof x === 'string') : [],
      );
      const made: string[] = [];
      for (const [sub, sv] of Object.entries(v.properties)) {
        if (!isObj(sv)) continue;
        const name = `${k}_${sub}`;
        if (!columnType(sv) && !enumOf(sv)) {
          skipped.push({
            path: `${at}.properties.${sub}`,
            reason: `${String(sv.type ?? 'untyped')} field of a nested object input; left out (nested objects are flattened one level only)`,
          });
          continue;
        }
        props.push({ name, schema: sv, required: req.has(k) && inner.has(sub), at: `${at}.properties.${sub}` });
        made.push(safeIdent(snake(name), '_value'));
      }
      if (made.length) flattened.push({ path: at, columns: made });
    }
    const described =
      typeof t.description === 'string' && t.description.trim() ? t.description.trim() : name.replace(/_/g, ' ');
    // A renamed tool's description keeps its original name.
    const description = source === t.name ? described : `${described} (MCP tool "${t.name}")`;
    raw.push({
      name,
      words,
      noun: nounWords.map((w, k) => (k === nounWords.length - 1 ? singular(w) : w)).join('_'),
      verb,
      kind,
      description,
      props,
      at: `${at || '(the tool)'} (${t.name})`,
    });
  });

  // Tables: one per noun, columns from its tools' scalar inputs.
  const nouns = [...new Set(raw.filter((r) => r.noun).map((r) => r.noun))];
  const tables: TableModel[] = [];
  const columnName = (p: string) => safeIdent(snake(p), '_value');
  for (const noun of nouns) {
    const mine = raw.filter((r) => r.noun === noun);
    const columns: ColumnModel[] = [];
    for (const r of mine)
      for (const p of r.props) {
        const col = columnName(p.name);
        const type = columnType(p.schema) ?? (enumOf(p.schema) ? 'text' : null);
        if (!type || CONTROL_PARAMS.has(col) || (DISPATCH.has(col) && enumOf(p.schema))) continue;
        if (columns.some((c) => c.name === col)) continue;
        const e = enumOf(p.schema);
        const fm = dateFormat(p.schema);
        const description = typeof p.schema.description === 'string' ? p.schema.description : undefined;
        columns.push({
          name: col,
          type,
          ...(e ? { enum: e } : {}),
          ...(fm ? { format: fm } : {}),
          ...(description ? { description } : {}),
        });
      }
    const getter = mine.find((r) => r.verb === 'get');
    let key =
      getter?.props
        .filter((p) => p.required)
        .map((p) => columnName(p.name))
        .filter((c) => columns.some((x) => x.name === c)) ?? [];
    if (key.length === 0) key = [`${noun}_id`, 'id'].filter((c) => columns.some((x) => x.name === c)).slice(0, 1);
    const at = mine.map((r) => r.at).join(', ');
    if (key.length === 0) {
      skipped.push({
        path: at,
        reason: `tools on "${noun}": no get tool with required inputs and no "${noun}_id" / "id" input, so no key; left out`,
      });
      continue;
    }
    for (const c of columns) if (key.includes(c.name) && key.length === 1) c.unique = true;
    tables.push({ name: safeIdent(plural(noun), '_records'), noun, key, columns, from: at });
  }
  for (const t of tables)
    for (const c of t.columns) {
      const parent = tables.find((p) => p !== t && p.key.length === 1 && p.key[0] === c.name && c.name.endsWith('_id'));
      if (parent && !t.key.includes(c.name)) c.references = parent.name;
    }

  const operations: OperationModel[] = [];
  for (const r of raw) {
    const table = tables.find((t) => t.noun === r.noun);
    if (!r.noun) {
      skipped.push({ path: r.at, reason: `tool ${r.name}: its name has no noun besides verbs, so no table` });
      continue;
    }
    if (!table) continue; // the table's skip is listed
    if (!r.verb) {
      skipped.push({ path: r.at, reason: `tool ${r.name}: a write whose name says neither create, update nor delete` });
      continue;
    }
    const params: ParamModel[] = [];
    for (const p of r.props) {
      const col = columnName(p.name);
      const e = enumOf(p.schema);
      const description = typeof p.schema.description === 'string' ? p.schema.description : undefined;
      const extra = { ...(e ? { enum: e } : {}), ...(description ? { description } : {}) };
      if (DISPATCH.has(col) && e) {
        params.push({ name: col, type: 'text', required: p.required, role: 'dispatch', ...extra });
        continue;
      }
      const c = table.columns.find((x) => x.name === col);
      if (!c) {
        skipped.push({
          path: p.at,
          reason: `${CONTROL_PARAMS.has(col) ? 'paging/sorting control' : `${String(p.schema.type ?? 'untyped')} input`}; left out of tool ${r.name}`,
        });
        continue;
      }
      const isKey = table.key.includes(col);
      const role = r.verb === 'list' ? 'filter' : isKey && r.verb !== 'create' ? 'locator' : 'value';
      params.push({ name: col, column: col, type: c.type, required: p.required || role === 'locator', role, ...extra });
    }
    if (r.verb === 'get' || r.verb === 'update' || r.verb === 'delete') {
      const missing = table.key.filter((k) => !params.some((p) => p.column === k && p.role === 'locator'));
      if (missing.length) {
        skipped.push({
          path: r.at,
          reason: `tool ${r.name}: does not take the key ${missing.join(', ')} of ${table.name}, so cannot find the row`,
        });
        continue;
      }
    }
    if (r.verb === 'update' && !params.some((p) => p.role === 'value')) {
      skipped.push({ path: r.at, reason: `tool ${r.name}: changes no column` });
      continue;
    }
    operations.push({
      name: r.name,
      kind: r.kind,
      verb: r.verb,
      table: table.name,
      description: r.description,
      params,
      from: r.at,
    });
  }
  const title = 'MCP tools';
  return { format: 'mcp', title, tables, operations, skipped, flattened, renamed };
}

/**
 * OpenAPI 3.x → {@link SpecModel}. Object schemas of `components.schemas` with a key become
 * tables (scalar properties → columns; a `$ref` to another table → a foreign-key column
 * `<property>_id`; a property named `<table>Id` → a foreign key too); each operation with an
 * `operationId` becomes a tool on the table its request body, response or path names:
 * GET with a path parameter that finds a row → `get`, other GETs → `list`, DELETE → `delete`,
 * PUT / PATCH and POST with a locating path parameter → `update`, other POSTs → `create`.
 * What cannot be expressed (nested arrays, batch bodies, operations without ids or without a
 * table) is skipped and listed; what is wrong (`$ref` cycles, external refs, clashing names)
 * throws a {@link SpecError} naming the path in the spec.
 */
import {
  type ColumnModel,
  type OperationModel,
  type ParamModel,
  type SpecModel,
  type TableModel,
  type Skip,
  type Flattened,
  type Renamed,
  nameFromRoute,
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

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

interface Ctx {
  file: string;
  doc: Json;
  skipped: Skip[];
  flattened: Flattened[];
  renamed: Renamed[];
}

/** The component a local `$ref` points at; throws on external or dangling refs. */
function target(ctx: Ctx, ref: unknown, at: string): { value: Json; path: string; parts: string[] } {
  if (typeof ref !== 'string' || !ref.startsWith('#/')) {
    throw new SpecError(
      ctx.file,
      at,
      `external or malformed $ref ${JSON.stringify(ref)} is not supported (only #/components/…)`,
    );
  }
  let node: unknown = ctx.doc;
  const parts = ref
    .slice(2)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  for (const p of parts) node = isObj(node) ? node[p] : undefined;
  if (!isObj(node)) throw new SpecError(ctx.file, at, `$ref ${ref} points at nothing`);
  return { value: node, path: parts.join('.'), parts };
}

/** Follows `$ref` chains; throws on a cycle, naming the chain. */
function deref(ctx: Ctx, node: unknown, at: string, chain: string[] = []): { value: Json; name?: string } {
  if (!isObj(node)) return { value: {} };
  if (node.$ref === undefined) return { value: node };
  const { value, path, parts } = target(ctx, node.$ref, at);
  if (chain.includes(path)) throw new SpecError(ctx.file, at, `$ref cycle: ${[...chain, path].join(' → ')}`);
  const inner = deref(ctx, value, path, [...chain, path]);
  // The schema's own name, dots and all (`v1.Book`, `com.example.Pet`): from the pointer's parts.
  const schema = parts.length === 3 && parts[0] === 'components' && parts[1] === 'schemas' ? parts[2] : undefined;
  return { value: inner.value, name: inner.name ?? schema };
}

/** Properties and required names of an object schema, merging `allOf`; throws on a cycle. */
function flatten(
  ctx: Ctx,
  schema: Json,
  at: string,
  chain: string[] = [],
): { props: [string, Json, string][]; required: Set<string> } {
  const props: [string, Json, string][] = [];
  const required = new Set<string>();
  const all = Array.isArray(schema.allOf) ? schema.allOf : [];
  all.forEach((part, i) => {
    const p = `${at}.allOf[${i}]`;
    let node: unknown = part;
    const seen = [...chain];
    if (isObj(part) && part.$ref !== undefined) {
      const { path } = target(ctx, part.$ref, p);
      if (seen.includes(path)) throw new SpecError(ctx.file, p, `$ref cycle: ${[...seen, path].join(' → ')}`);
      seen.push(path);
      node = deref(ctx, part, p, seen.slice(0, -1)).value;
    }
    if (!isObj(node)) return;
    const inner = flatten(ctx, node, p, seen);
    props.push(...inner.props);
    for (const r of inner.required) required.add(r);
  });
  if (isObj(schema.properties)) {
    for (const [k, v] of Object.entries(schema.properties)) if (isObj(v)) props.push([k, v, `${at}.properties.${k}`]);
  }
  if (Array.isArray(schema.required)) for (const r of schema.required) if (typeof r === 'string') required.add(r);
  return { props, required };
}

const isObjectSchema = (s: Json) => s.type === 'object' || isObj(s.properties) || Array.isArray(s.allOf);

/** Read an OpenAPI 3.x description (parsed JSON/YAML). @throws SpecError naming `file` and the path in the spec. */
export function readOpenApi(file: string, doc: Json): SpecModel {
  const ctx: Ctx = { file, doc, skipped: [], flattened: [], renamed: [] };
  const info = isObj(doc.info) ? doc.info : {};
  const title = typeof info.title === 'string' && info.title.trim() ? info.title.trim() : 'API';
  const schemas = isObj(doc.components) && isObj(doc.components.schemas) ? doc.components.schemas : {};
  const paths = isObj(doc.paths) ? doc.paths : null;
  if (!paths) throw new SpecError(file, 'paths', 'an OpenAPI description needs "paths" with operations');

  // Tables: every object schema with a key column.
  const tableName = new Map<string, string>(); // schema name → table
  const used = new Map<string, string>(); // table → schema path
  for (const [name, raw] of Object.entries(schemas)) {
    const at = `components.schemas.${name}`;
    const s = deref(ctx, raw, at).value;
    if (!isObjectSchema(s)) continue;
    const t = safeIdent(plural(snake(name)), '_records');
    const clash = used.get(t);
    if (clash) throw new SpecError(file, at, `name clash: both ${clash} and ${at} become table "${t}"`);
    used.set(t, at);
    tableName.set(name, t);
  }
  const nounOf = (table: string) => singular(table.replace(/_records$/, ''));
  const tables: TableModel[] = [];
  for (const [name, t] of tableName) {
    const at = `components.schemas.${name}`;
    const s = deref(ctx, schemas[name], at).value;
    const { props } = flatten(ctx, s, at, [at]);
    const columns: ColumnModel[] = [];
    const seen = new Set<string>();
    // Two properties that become one column (`ownerId` and `owner_id`): the later is left out, listed.
    const taken = (name: string, path: string): boolean => {
      const other = columns.find((c) => c.name === name);
      if (other)
        ctx.skipped.push({ path, reason: `becomes column ${name} of ${t}, which an earlier property is; left out` });
      return !!other;
    };
    for (const [prop, rawProp, p] of props) {
      if (seen.has(prop)) continue; // allOf repeats
      seen.add(prop);
      const { value: ps, name: refName } = deref(ctx, rawProp, p);
      const description = typeof ps.description === 'string' ? ps.description : undefined;
      if (refName && tableName.has(refName) && isObjectSchema(ps)) {
        if (taken(safeIdent(`${snake(prop)}_id`, '_value'), p)) continue;
        columns.push({
          name: safeIdent(`${snake(prop)}_id`, '_value'),
          type: 'integer',
          references: tableName.get(refName)!,
          ...(description ? { description } : {}),
        });
        continue;
      }
      const type = columnType(ps) ?? (enumOf(ps) ? 'text' : null);
      if (!type && isObjectSchema(ps)) {
        // A nested object: its scalar fields become columns `<prop>_<field>`, one level deep.
        const made: string[] = [];
        for (const [sub, rawSub, sp] of flatten(ctx, ps, p).props) {
          const s2 = deref(ctx, rawSub, sp).value;
          const t2 = columnType(s2) ?? (enumOf(s2) ? 'text' : null);
          const name = safeIdent(snake(`${prop}_${sub}`), '_value');
          if (!t2) {
            ctx.skipped.push({
              path: sp,
              reason: `${String(s2.type ?? 'untyped')} field of a nested object is not a column (nested objects are flattened one level only)`,
            });
            continue;
          }
          if (taken(name, sp)) continue;
          const e2 = enumOf(s2);
          const f2 = dateFormat(s2);
          columns.push({ name, type: t2, ...(e2 ? { enum: e2 } : {}), ...(f2 ? { format: f2 } : {}) });
          made.push(name);
        }
        if (made.length) ctx.flattened.push({ path: p, columns: made });
        else ctx.skipped.push({ path: p, reason: 'object property with no scalar field; not a column' });
        continue;
      }
      if (!type) {
        ctx.skipped.push({
          path: p,
          reason: `${String(ps.type ?? 'untyped')} property is not a column (nested values are not stored)`,
        });
        continue;
      }
      const col = safeIdent(snake(prop), '_value');
      if (taken(col, p)) continue;
      const e = enumOf(ps);
      const f = dateFormat(ps);
      const fk = /^(.*)_id$/.exec(col)?.[1];
      const parent = fk ? [...tableName.values()].find((x) => nounOf(x) === fk && x !== t) : undefined;
      columns.push({
        name: col,
        type,
        ...(e ? { enum: e } : {}),
        ...(f ? { format: f } : {}),
        ...(parent ? { references: parent } : {}),
        ...(description ? { description } : {}),
      });
    }
    const key = columns.find((c) => c.name === 'id') ?? columns.find((c) => c.name === `${nounOf(t)}_id`);
    if (!key) {
      ctx.skipped.push({ path: at, reason: 'no "id" or "<name>_id" property: not a table' });
      continue;
    }
    key.unique = true;
    tables.push({ name: t, noun: nounOf(t), key: [key.name], columns, from: at });
  }
  // A foreign key's type is its parent key's type; a reference to a keyless schema is a plain column.
  const byName = new Map(tables.map((t) => [t.name, t]));
  for (const t of tables)
    for (const c of t.columns) {
      if (!c.references) continue;
      const parent = byName.get(c.references);
      if (!parent) delete c.references;
      else c.type = parent.columns.find((x) => x.name === parent.key[0])!.type;
    }

  // Operations.
  const operations: OperationModel[] = [];
  const toolFrom = new Map<string, string>();
  let count = 0;
  for (const [route, rawItem] of Object.entries(paths)) {
    const item = deref(ctx, rawItem, `paths.${route}`).value;
    for (const method of METHODS) {
      const op = item[method];
      if (!isObj(op)) continue;
      const at = `paths.${route}.${method}`;
      if (++count > MAX_OPERATIONS)
        throw new SpecError(
          file,
          at,
          `more than ${MAX_OPERATIONS} operations: too large a spec for one domain; split it`,
        );
      if (typeof op.operationId !== 'string' || !op.operationId.trim()) {
        ctx.skipped.push({ path: at, reason: 'no operationId: the tool would have no stable name' });
        continue;
      }
      // An operationId with no ASCII letter (`获取书`) is named from its method and path.
      const ascii = /[A-Za-z]/.test(op.operationId);
      const name = safeIdent(ascii ? snake(op.operationId) : nameFromRoute(method, route), '_value');
      if (!ascii) ctx.renamed.push({ path: `${at}.operationId`, from: op.operationId, to: name });
      const clash = toolFrom.get(name);
      if (clash)
        throw new SpecError(file, `${at}.operationId`, `name clash: ${clash} and ${at} both become tool "${name}"`);
      toolFrom.set(name, at);
      const built = operation(ctx, tables, tableName, route, method, item, op, at, name);
      if (typeof built === 'string') ctx.skipped.push({ path: at, reason: built });
      else operations.push(built);
    }
  }
  return {
    format: 'openapi',
    title,
    tables,
    operations,
    skipped: ctx.skipped,
    flattened: ctx.flattened,
    renamed: ctx.renamed,
  };
}

function jsonSchemaOf(content: unknown, at: string): { schema: Json; at: string } | null {
  if (!isObj(content)) return null;
  const type =
    Object.keys(content).find((k) => k.includes('json')) ?? Object.keys(content).find((k) => k.includes('form'));
  if (!type) return null;
  const media = content[type];
  if (!isObj(media) || !isObj(media.schema)) return null;
  return { schema: media.schema, at: `${at}.content.${type}.schema` };
}

/** One operation → a model, or the reason it is skipped. */
function operation(
  ctx: Ctx,
  tables: TableModel[],
  tableName: Map<string, string>,
  route: string,
  method: (typeof METHODS)[number],
  item: Json,
  op: Json,
  at: string,
  name: string,
): OperationModel | string {
  const description =
    [op.summary, op.description].find((x): x is string => typeof x === 'string' && !!x.trim())?.trim() ??
    name.replace(/_/g, ' ');
  // Request body.
  let body: { schema: Json; at: string; ref?: string } | null = null;
  if (op.requestBody !== undefined) {
    const rb = deref(ctx, op.requestBody, `${at}.requestBody`).value;
    const found = jsonSchemaOf(rb.content, `${at}.requestBody`);
    if (found) {
      const d = deref(ctx, found.schema, found.at);
      if (d.value.type === 'array') return 'request body is an array (batch operations are not supported)';
      body = { schema: d.value, at: found.at, ...(d.name ? { ref: d.name } : {}) };
    }
  }
  // Response schema (for the table only).
  let responseRef: string | undefined;
  const responses = isObj(op.responses) ? op.responses : {};
  for (const code of ['200', '201', 'default']) {
    const r = responses[code];
    if (r === undefined) continue;
    const found = jsonSchemaOf(deref(ctx, r, `${at}.responses.${code}`).value.content, `${at}.responses.${code}`);
    if (!found) continue;
    const d = deref(ctx, found.schema, found.at);
    responseRef =
      d.name ?? (d.value.type === 'array' ? deref(ctx, d.value.items, `${found.at}.items`).name : undefined);
    if (responseRef) break;
  }
  const segments = route.split('/').filter((s) => s && !s.startsWith('{'));
  const byPath = tables.find((t) =>
    segments.some((s) => [t.name, t.noun].includes(snake(s)) || singular(snake(s)) === t.noun),
  );
  const pick = (ref: string | undefined) => (ref ? tables.find((t) => t.name === tableName.get(ref)) : undefined);
  const table = pick(body?.ref) ?? pick(responseRef) ?? byPath;
  if (!table) return 'no table: neither its body, its response nor its path names a component schema with a key';

  const colOf = (param: string): string | undefined => {
    const s = safeIdent(snake(param), '_value');
    if (table.columns.some((c) => c.name === s)) return s;
    if (s === `${table.noun}_id` || s === `${table.noun}_${table.key[0]}`) return table.key[0];
    return undefined;
  };
  const params: ParamModel[] = [];
  const add = (p: ParamModel) => {
    if (!params.some((x) => x.name === p.name)) params.push(p);
  };
  const rawParams = [
    ...(Array.isArray(item.parameters)
      ? item.parameters.map((p, i) => [p, `paths.${route}.parameters[${i}]`] as const)
      : []),
    ...(Array.isArray(op.parameters) ? op.parameters.map((p, i) => [p, `${at}.parameters[${i}]`] as const) : []),
  ];
  let pathLocator = false;
  for (const [raw, p] of rawParams) {
    const prm = deref(ctx, raw, p).value;
    if (typeof prm.name !== 'string' || (prm.in !== 'path' && prm.in !== 'query')) continue;
    const s = deref(ctx, prm.schema, `${p}.schema`).value;
    const type = columnType(s) ?? (enumOf(s) ? 'text' : null);
    const pname = safeIdent(snake(prm.name), '_value');
    if (!type) {
      ctx.skipped.push({
        path: p,
        reason: `parameter ${prm.name}: ${String(s.type ?? 'untyped')} values are not supported; left out`,
      });
      continue;
    }
    if (CONTROL_PARAMS.has(pname)) {
      ctx.skipped.push({ path: p, reason: `parameter ${prm.name}: paging/sorting control; left out` });
      continue;
    }
    const column = colOf(prm.name);
    // A parameter without its own enum takes its column's (a query `status` of an enum column).
    const e = enumOf(s) ?? table.columns.find((c) => c.name === column)?.enum;
    const desc = typeof prm.description === 'string' ? prm.description : undefined;
    if (prm.in === 'path') {
      if (!column) return `path parameter ${prm.name} names no column of ${table.name}`;
      pathLocator = true;
      add({
        name: pname,
        column,
        type,
        required: true,
        role: 'locator',
        ...(e ? { enum: e } : {}),
        ...(desc ? { description: desc } : {}),
      });
    } else if (column) {
      add({
        name: pname,
        column,
        type,
        required: prm.required === true,
        role: method === 'get' ? 'filter' : 'value',
        ...(e ? { enum: e } : {}),
        ...(desc ? { description: desc } : {}),
      });
    } else ctx.skipped.push({ path: p, reason: `parameter ${prm.name} names no column of ${table.name}; left out` });
  }
  if (body) {
    const { props: top, required } = flatten(ctx, body.schema, body.at);
    // A nested object's fields are the flattened columns `<prop>_<field>` (see the table's columns).
    const props: [string, Json, string, boolean][] = [];
    for (const [prop, rawProp, p] of top) {
      const { value: ps, name: refName } = deref(ctx, rawProp, p);
      if (!(refName && tableName.has(refName)) && !colOf(prop) && isObjectSchema(ps) && !columnType(ps)) {
        const inner = flatten(ctx, ps, p);
        for (const [sub, rawSub, sp] of inner.props)
          props.push([`${prop}_${sub}`, rawSub, sp, required.has(prop) && inner.required.has(sub)]);
      } else props.push([prop, rawProp, p, required.has(prop)]);
    }
    for (const [prop, rawProp, p, isRequired] of props) {
      const { value: ps, name: refName } = deref(ctx, rawProp, p);
      const fkCol = refName && tableName.has(refName) ? safeIdent(`${snake(prop)}_id`, '_value') : undefined;
      const column = fkCol && table.columns.some((c) => c.name === fkCol) ? fkCol : colOf(prop);
      if (!column) continue; // nested values were reported with the table
      const col = table.columns.find((c) => c.name === column)!;
      const isKey = table.key.includes(column);
      // The path finds the row: a key in the body is not a second locator, nor a value to set.
      if (isKey && pathLocator) continue;
      const desc = typeof ps.description === 'string' ? ps.description : col.description;
      add({
        name: column,
        column,
        type: col.type,
        required: isRequired && !isKey,
        role: isKey ? 'locator' : 'value',
        ...(col.enum ? { enum: col.enum } : {}),
        ...(desc ? { description: desc } : {}),
      });
    }
  }
  const locators = params.filter((p) => p.role === 'locator');
  let verb: OperationModel['verb'];
  if (method === 'get') verb = pathLocator ? 'get' : 'list';
  else if (method === 'delete') verb = 'delete';
  else if (method === 'post' && !pathLocator) verb = 'create';
  else verb = 'update';
  if (verb === 'get' || verb === 'list') {
    for (const p of params) if (p.role === 'value') p.role = 'filter';
  }
  if ((verb === 'update' || verb === 'delete' || verb === 'get') && locators.length === 0)
    return `${method.toUpperCase()} has no parameter that finds the ${table.noun} (a key or path parameter)`;
  if (verb === 'update') {
    for (const p of locators) p.required = true;
    if (!params.some((p) => p.role === 'value')) return 'changes no column of the table';
  }
  if (verb === 'create') for (const p of locators) p.required = false;
  return { name, kind: method === 'get' ? 'read' : 'write', verb, table: table.name, description, params, from: at };
}

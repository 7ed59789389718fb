/**
 * Declarative tools: a domain's tools as data (`tools.json`) instead of code (`tools.ts`).
 *
 * A tools file is `{ "tools": [ToolSpec, …] }`. Each tool has a name, a kind (`read` | `write`),
 * a description, a JSON Schema of its parameters (an `object` schema, turned into zod with
 * `z.fromJSONSchema`, so argument errors read exactly like a hand-written tool's; unknown
 * arguments are dropped unless the schema sets `additionalProperties`), guarded steps
 * of parameterized SQL and a result query:
 *
 * ```json
 * { "name": "change_plan", "kind": "write", "description": "…",
 *   "parameters": { "type": "object", "properties": { "customer_id": { "type": "string" } }, "required": ["customer_id"] },
 *   "steps": [
 *     { "lookup": "c", "sql": "SELECT * FROM customers WHERE customer_id = ?", "args": ["customer_id"],
 *       "error": "customer {customer_id} not found" },
 *     { "fail_if": "SELECT 1 WHERE ? = ?", "args": ["c.plan_id", "plan_id"], "error": "already on plan {plan_id}" },
 *     { "write": "UPDATE customers SET next_plan_id = ? WHERE customer_id = ?", "args": ["plan_id", "customer_id"] }
 *   ],
 *   "result": { "sql": "SELECT ? AS customer_id", "args": ["customer_id"] } }
 * ```
 *
 * Steps run in order: `lookup` binds the first row under its name, or raises its `error` as a
 * {@link ToolError} when there is none; `fail_if` raises its `error` when its query returns a
 * row; `write` runs an INSERT / UPDATE / DELETE. The result is the first row of `result.sql`
 * (`rows: "one"`, the default; `null` when none) or all of its rows (`rows: "all"`).
 *
 * An argument reference is a parameter name (`customer_id`), a column of an earlier lookup
 * (`c.plan_id`), `$now` (the policy clock, ms since the Unix epoch) or a literal `{ "value": x }`.
 * Values are only ever bound to `?` placeholders, never spliced into SQL; the file is checked
 * when parsed (one statement, no named placeholders, as many `?` as arguments, references that
 * exist). Error texts may name references in braces: `{c.plan_id}`. Nothing is evaluated as code,
 * so a tools file runs the same way in Node and in the page, through the same environment
 * (write log, whitelist, snapshot) as a hand-written tool.
 */
import { z } from 'zod';
import { DomainFileError, ToolError } from '../errors.ts';
import type { SqlRow, SqlValue } from '../ports/sql-db.ts';
import {
  fieldPath,
  parseJson,
  type DomainDefinition,
  type RuleCheck,
  type ToolDb,
  type ToolDefinition,
} from './domain.ts';

const Ident = z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/, 'must be an identifier (letters, digits, _)');
const Literal = z.object({ value: z.union([z.string(), z.number(), z.null()]) }).strict();
const Arg = z.union([z.string().min(1), Literal]);
const Args = z.array(Arg).default([]);

const LookupStep = z.object({ lookup: Ident, sql: z.string(), args: Args, error: z.string().min(1) }).strict();
const FailIfStep = z.object({ fail_if: z.string(), args: Args, error: z.string().min(1) }).strict();
const WriteStep = z.object({ write: z.string(), args: Args }).strict();
const Step = z.union([LookupStep, FailIfStep, WriteStep]);

const ToolSpec = z
  .object({
    name: Ident,
    kind: z.enum(['read', 'write']),
    description: z.string().min(1),
    spokenAs: z.string().optional(),
    spokenValues: z.record(z.string(), z.string()).optional(),
    operationCues: z.array(z.string()).optional(),
    parameters: z
      .object({ type: z.literal('object'), properties: z.record(z.string(), z.record(z.string(), z.unknown())) })
      .loose(),
    steps: z.array(Step).default([]),
    result: z.object({ sql: z.string(), args: Args, rows: z.enum(['one', 'all']).default('one') }).strict(),
  })
  .strict();

/**
 * A rule check as data (`rule_checks` of a tools file), the declarative form of a
 * {@link RuleCheck}: when a call of one of `tools` runs (`before`: on the database as the call
 * found it; `after`, the default: after its writes), `violation_if` is run with `args` bound
 * (parameter names of the call, `$now`, literals); a returned row is a violation, reported as
 * `message` (braces name parameters or columns of the returned row as `row.<column>`).
 */
const RuleCheckSpec = z
  .object({
    rule: z.string().min(1),
    description: z.string().min(1),
    policy: z.string().min(1).optional(),
    tools: z.array(Ident).min(1),
    when: z.enum(['before', 'after']).default('after'),
    violation_if: z.string(),
    args: Args,
    message: z.string().min(1),
  })
  .strict();

/** The shape of a tools file (`tools.json`): tools, and optionally rule checks as data. */
export const ToolsFile = z
  .object({ tools: z.array(ToolSpec).min(1), rule_checks: z.array(RuleCheckSpec).optional() })
  .strict();
/** One data rule check as written in a tools file. */
export type RuleCheckSpec = z.infer<typeof RuleCheckSpec>;
/** One declarative tool as written in a tools file. */
export type ToolSpec = z.infer<typeof ToolSpec>;
type ArgRef = z.infer<typeof Arg>;

/**
 * Placeholders and statement shape of `sql`, scanning outside string literals and quoted names.
 * @returns the number of `?` placeholders and the first keyword (upper case)
 * @throws Error with the reason when the statement has a named or numbered placeholder, more
 *   than one statement, or an unterminated quote
 */
function scanSql(sql: string): { placeholders: number; keyword: string } {
  let placeholders = 0;
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i]!;
    if (ch === "'" || ch === '"' || ch === '`') {
      const end = sql.indexOf(ch, i + 1);
      if (end < 0) throw new Error(`unterminated ${ch} quote`);
      i = end + 1;
      continue;
    }
    if (ch === '-' && sql[i + 1] === '-') throw new Error('comments are not allowed');
    if (ch === ';' && sql.slice(i + 1).trim()) throw new Error('only one statement is allowed');
    if (ch === '?') {
      if (/[0-9]/.test(sql[i + 1] ?? '')) throw new Error('numbered placeholders (?1) are not allowed; use ?');
      placeholders += 1;
    }
    if ((ch === ':' || ch === '@' || ch === '$') && /[a-zA-Z_]/.test(sql[i + 1] ?? '')) {
      throw new Error(`named placeholders (${ch}name) are not allowed; use ? and args`);
    }
    i += 1;
  }
  return { placeholders, keyword: (/^\s*([a-zA-Z]+)/.exec(sql)?.[1] ?? '').toUpperCase() };
}

const READ_KEYWORDS = ['SELECT', 'WITH'];
const WRITE_KEYWORDS = ['INSERT', 'UPDATE', 'DELETE'];

/** Checks one statement; throws a DomainFileError at `field`. */
function checkSql(file: string, field: string, sql: string, args: readonly ArgRef[], allowed: string[]): void {
  let scan: { placeholders: number; keyword: string };
  try {
    scan = scanSql(sql);
  } catch (e) {
    throw new DomainFileError(file, field, (e as Error).message);
  }
  if (!allowed.includes(scan.keyword)) {
    throw new DomainFileError(file, field, `must start with ${allowed.join(' or ')}, got "${scan.keyword || sql}"`);
  }
  if (scan.placeholders !== args.length) {
    throw new DomainFileError(file, field, `has ${scan.placeholders} "?" placeholders but ${args.length} args`);
  }
}

/** Checks that a reference names a parameter, an earlier lookup or `$now`; throws at `field`. */
function checkRef(file: string, field: string, ref: ArgRef, params: ReadonlySet<string>, lookups: ReadonlySet<string>) {
  if (typeof ref !== 'string' || ref === '$now') return;
  const dot = ref.indexOf('.');
  if (dot < 0) {
    if (!params.has(ref)) {
      throw new DomainFileError(
        file,
        field,
        `unknown parameter "${ref}" (parameters: ${[...params].join(', ') || 'none'})`,
      );
    }
    return;
  }
  const step = ref.slice(0, dot);
  if (!lookups.has(step) || !ref.slice(dot + 1)) {
    throw new DomainFileError(
      file,
      field,
      `"${ref}" names no earlier lookup (lookups so far: ${[...lookups].join(', ') || 'none'})`,
    );
  }
}

/** References named in braces in an error text: `customer {customer_id} not found` → `customer_id`. */
function templateRefs(text: string): string[] {
  return [...text.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1]!);
}

/** Validates the references and statements of one tool; throws at the first problem. */
function checkTool(file: string, at: string, spec: ToolSpec): void {
  const params = new Set(Object.keys(spec.parameters.properties));
  const lookups = new Set<string>();
  const refs = (field: string, args: readonly ArgRef[]) =>
    args.forEach((a, k) => checkRef(file, `${field}.args[${k}]`, a, params, lookups));
  const texts = (field: string, text: string) => {
    for (const r of templateRefs(text)) checkRef(file, `${field}.error`, r, params, lookups);
  };
  spec.steps.forEach((step, j) => {
    const field = `${at}.steps[${j}]`;
    if ('lookup' in step) {
      checkSql(file, `${field}.sql`, step.sql, step.args, READ_KEYWORDS);
      refs(field, step.args);
      texts(field, step.error);
      if (lookups.has(step.lookup) || params.has(step.lookup)) {
        throw new DomainFileError(file, `${field}.lookup`, `"${step.lookup}" is already a lookup or parameter name`);
      }
      lookups.add(step.lookup);
    } else if ('fail_if' in step) {
      checkSql(file, `${field}.fail_if`, step.fail_if, step.args, READ_KEYWORDS);
      refs(field, step.args);
      texts(field, step.error);
    } else {
      if (spec.kind === 'read') throw new DomainFileError(file, `${field}.write`, 'a read tool cannot write');
      checkSql(file, `${field}.write`, step.write, step.args, WRITE_KEYWORDS);
      refs(field, step.args);
    }
  });
  checkSql(file, `${at}.result.sql`, spec.result.sql, spec.result.args, READ_KEYWORDS);
  refs(`${at}.result`, spec.result.args);
}

/** What a running tool's references resolve against. */
interface Scope {
  args: Record<string, unknown>;
  rows: Map<string, SqlRow>;
  now: number;
}

function resolveRef(tool: string, ref: ArgRef, scope: Scope): SqlValue {
  if (typeof ref !== 'string') return ref.value;
  if (ref === '$now') return scope.now;
  const dot = ref.indexOf('.');
  const raw =
    dot < 0 ? scope.args[ref] : (scope.rows.get(ref.slice(0, dot)) as SqlRow | undefined)?.[ref.slice(dot + 1)];
  if (raw === undefined) {
    if (dot < 0) return null; // an optional parameter left out
    throw new Error(`${tool}: lookup "${ref.slice(0, dot)}" has no column "${ref.slice(dot + 1)}"`);
  }
  if (raw === null || typeof raw === 'string' || typeof raw === 'number') return raw;
  if (typeof raw === 'boolean') return raw ? 1 : 0;
  // Arrays and objects (a JSON-schema parameter of that type) are bound as JSON text.
  return JSON.stringify(raw);
}

function render(tool: string, text: string, scope: Scope): string {
  return text.replace(/\{([^{}]+)\}/g, (_, ref: string) => String(resolveRef(tool, ref, scope)));
}

async function runSpec(spec: ToolSpec, db: ToolDb, args: Record<string, unknown>, now: number): Promise<unknown> {
  const scope: Scope = { args, rows: new Map(), now };
  const bind = (list: readonly ArgRef[]) => list.map((a) => resolveRef(spec.name, a, scope));
  for (const step of spec.steps) {
    if ('lookup' in step) {
      const row = await db.one(step.sql, bind(step.args));
      if (!row) throw new ToolError(render(spec.name, step.error, scope));
      scope.rows.set(step.lookup, row);
    } else if ('fail_if' in step) {
      if (await db.one(step.fail_if, bind(step.args))) throw new ToolError(render(spec.name, step.error, scope));
    } else {
      await db.run(step.write, bind(step.args));
    }
  }
  if (spec.result.rows === 'all') return db.all(spec.result.sql, bind(spec.result.args));
  return (await db.one(spec.result.sql, bind(spec.result.args))) ?? null;
}

/**
 * Turn a parsed tools file into tool definitions the environment runs like hand-written ones.
 *
 * @param file the file's name or path, for error messages
 * @param raw the file's parsed JSON (`{ "tools": [...] }`)
 * @throws DomainFileError naming `file` and the field (e.g. `tools[2].steps[0].sql`) of the first
 *   problem: a shape error, an SQL statement that is not one parameterized statement of the
 *   right kind, a reference to an unknown parameter or lookup, a bad parameter schema or a tool
 *   name used twice.
 */
export function declarativeTools(file: string, raw: unknown): ToolDefinition[] {
  const parsed = ToolsFile.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new DomainFileError(file, fieldPath(issue.path), issue.message);
  }
  const seen = new Set<string>();
  return parsed.data.tools.map((spec, i) => {
    const at = `tools[${i}]`;
    if (seen.has(spec.name)) throw new DomainFileError(file, `${at}.name`, `tool "${spec.name}" is defined twice`);
    seen.add(spec.name);
    checkTool(file, at, spec);
    let converted: z.ZodType;
    try {
      converted = z.fromJSONSchema(spec.parameters as Parameters<typeof z.fromJSONSchema>[0]);
    } catch (e) {
      throw new DomainFileError(file, `${at}.parameters`, `not a usable JSON Schema (${(e as Error).message})`);
    }
    if (!(converted instanceof z.ZodObject)) {
      throw new DomainFileError(file, `${at}.parameters`, 'must be an object schema');
    }
    // Without `additionalProperties`, drop unknown arguments as a hand-written zod object does
    // (and show models the same schema).
    const params = 'additionalProperties' in spec.parameters ? converted : converted.strip();
    const def: ToolDefinition = {
      name: spec.name,
      kind: spec.kind,
      description: spec.description,
      params,
      ...(spec.spokenAs === undefined ? {} : { spokenAs: spec.spokenAs }),
      ...(spec.spokenValues === undefined ? {} : { spokenValues: spec.spokenValues }),
      ...(spec.operationCues === undefined ? {} : { operationCues: spec.operationCues }),
      run: ({ db, now }, args) => runSpec(spec, db, args as Record<string, unknown>, now()),
    };
    return def;
  });
}

/** Parameter names of a tool (the keys of its zod object schema). */
function paramNames(tool: ToolDefinition): string[] {
  return tool.params instanceof z.ZodObject ? Object.keys(tool.params.shape) : [];
}

/**
 * The data rule checks of a parsed tools file (`rule_checks`), as {@link RuleCheck}s the
 * environment runs like hand-written ones.
 *
 * @param tools every agent tool of the domain (a check's `tools` must name them)
 * @throws DomainFileError naming `file` and the field (e.g. `rule_checks[0].violation_if`): a
 *   shape error, a statement that is not one parameterized SELECT, an unknown tool, an argument
 *   that is not a parameter of every tool the check names.
 */
export function declarativeRuleChecks(file: string, raw: unknown, tools: readonly ToolDefinition[]): RuleCheck[] {
  const parsed = ToolsFile.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new DomainFileError(file, fieldPath(issue.path), issue.message);
  }
  return (parsed.data.rule_checks ?? []).map((spec, i) => {
    const at = `rule_checks[${i}]`;
    const named: ToolDefinition[] = spec.tools.map((name, k) => {
      const t = tools.find((x) => x.name === name);
      if (!t)
        throw new DomainFileError(
          file,
          `${at}.tools[${k}]`,
          `unknown tool "${name}" (tools: ${tools.map((x) => x.name).join(', ')})`,
        );
      return t;
    });
    // An argument must be a parameter of every tool the check applies to.
    const params = new Set(paramNames(named[0]!).filter((p) => named.every((t) => paramNames(t).includes(p))));
    checkSql(file, `${at}.violation_if`, spec.violation_if, spec.args, READ_KEYWORDS);
    spec.args.forEach((a, k) => checkRef(file, `${at}.args[${k}]`, a, params, new Set()));
    for (const r of templateRefs(spec.message)) checkRef(file, `${at}.message`, r, params, new Set(['row']));
    const check: RuleCheck = {
      rule: spec.rule,
      description: spec.description,
      ...(spec.policy === undefined ? {} : { policy: spec.policy }),
      tools: spec.tools,
      when: spec.when,
      async check({ db, args, now }) {
        const scope: Scope = { args, rows: new Map(), now: now() };
        const row = await db.one(
          spec.violation_if,
          spec.args.map((a) => resolveRef(spec.rule, a, scope)),
        );
        if (!row) return null;
        scope.rows.set('row', row);
        return render(spec.rule, spec.message, scope);
      },
    };
    return check;
  });
}

/**
 * Parse a tools file's text ({@link declarativeTools} after `JSON.parse`).
 * @throws DomainFileError naming `file` when the text is not JSON or the tools are malformed.
 */
export function parseDeclarativeTools(file: string, text: string): ToolDefinition[] {
  return declarativeTools(file, parseJson(file, text));
}

/** File name of a domain folder's declarative tools. */
export const TOOLS_FILE = 'tools.json';
/** File name of a code-free domain folder's definition (instead of `domain.ts`). */
export const DOMAIN_FILE = 'domain.json';

/**
 * Add a folder's declarative tools (`tools.json`) to its definition's agent tools, after the
 * hand-written ones, and its data rule checks (`rule_checks`) after the code's rule checks.
 * @throws DomainFileError naming `file` when the tools are malformed or a name is already a tool.
 */
export function withToolsFile(def: DomainDefinition, file: string, text: string): DomainDefinition {
  const raw = parseJson(file, text);
  const added = declarativeTools(file, raw);
  const taken = new Set([...def.tools, ...(def.userTools ?? [])].map((t) => t.name));
  added.forEach((t, i) => {
    if (taken.has(t.name)) {
      throw new DomainFileError(file, `tools[${i}].name`, `tool "${t.name}" is already defined by the domain's code`);
    }
  });
  const tools = [...def.tools, ...added];
  const checks = declarativeRuleChecks(file, raw, tools);
  return { ...def, tools, ...(checks.length ? { ruleChecks: [...(def.ruleChecks ?? []), ...checks] } : {}) };
}

const DomainJson = z
  .object({
    name: Ident,
    language: z.string().min(2),
    roles: z
      .array(z.enum(['inbound', 'outbound']))
      .min(1)
      .default(['inbound']),
    /** The policy clock as an ISO 8601 timestamp with offset, e.g. `2025-03-15T10:00:00+08:00`. */
    now: z.iso.datetime({ offset: true }),
    greeting: z.string().min(1),
  })
  .strict();

/**
 * A code-free domain's definition from `domain.json` (`{ name, language, roles?, now, greeting }`,
 * `now` an ISO 8601 timestamp with offset, `roles` defaulting to `["inbound"]`); its tools come
 * from `tools.json` ({@link withToolsFile}).
 * @throws DomainFileError naming `file` and the field of the first problem.
 */
export function parseDomainJson(file: string, text: string): DomainDefinition {
  const parsed = DomainJson.safeParse(parseJson(file, text));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new DomainFileError(file, fieldPath(issue.path), issue.message);
  }
  const d = parsed.data;
  return {
    name: d.name,
    language: d.language,
    roles: d.roles,
    now: Date.parse(d.now),
    greeting: d.greeting,
    tools: [],
  };
}

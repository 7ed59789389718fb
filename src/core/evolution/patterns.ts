/**
 * The global hard-pattern library: named, documented, deterministic task mutators. What each
 * pattern does is described in one data file, `hard-patterns.json` (ids, axis, descriptions,
 * parameters, the phrases the mutators put in a caller's mouth per language); the mutators are
 * here. A mutator takes a task, the domain, the pattern's parameters and a seed, and returns a
 * new task (its own reference solution, assertions, whitelist and caller) or the reason it does
 * not apply. Mutators never touch the base task; the variant is a new task with its own id and
 * lineage (parent, generation, the change with pattern, parameters and seed). They are generic
 * over a domain's tools and tables, so one library serves every domain (carrier, tau2-retail).
 */
import { z } from 'zod';
import type { DomainRuntime } from '../env/environment.ts';
import { neededFacts } from '../participants/reference-plan.ts';
import { seededRng, type Rng } from '../ports/rng.ts';
import { toolSchema, toolsFor, type Domain } from '../schema/domain.ts';
import { reasonForCall, type Action, type Fact, type Task, type TaskChange } from '../schema/task.ts';
import { firstPersonRequest, spokenArguments } from '../participants/spoken.ts';
import libraryJson from './hard-patterns.json';

/** Phrases one language gives the mutators (`{name}` placeholders are filled in). */
export const PatternPhrases = z.object({
  claim_done: z.string().min(1),
  claim_handled: z.string().min(1),
  no_record: z.string().min(1),
  concede: z.string().min(1),
  check_cues: z.array(z.string().min(1)).min(1),
  misremember_note: z.string().min(1),
  deflect: z.string().min(1),
  withhold_note: z.string().min(1),
  follow_up: z.string().min(1),
  follow_up_note: z.string().min(1),
  change_mind: z.string().min(1),
  change_mind_note: z.string().min(1),
});
export type PatternPhrases = z.infer<typeof PatternPhrases>;

/** One pattern of the library. */
export const HardPattern = z.object({
  id: z.string().regex(/^[a-z_]+$/),
  /** `task`: a new task; `channel`: the same task under harder channel conditions. */
  axis: z.enum(['task', 'channel']),
  title: z.string().min(1),
  description: z.string().min(1),
  params: z.record(z.string(), z.unknown()),
});
export type HardPattern = z.infer<typeof HardPattern>;

/** The library file (`hard-patterns.json`). */
export const HardPatternLibrary = z.object({
  format: z.literal('switchboard.hard-patterns'),
  version: z.literal(1),
  phrases: z.object({ zh: PatternPhrases, en: PatternPhrases }),
  patterns: z.array(HardPattern).min(1),
});
export type HardPatternLibrary = z.infer<typeof HardPatternLibrary>;

/** The library as shipped (`src/core/evolution/hard-patterns.json`), validated. */
export const HARD_PATTERNS: HardPatternLibrary = HardPatternLibrary.parse(libraryJson);

/** The result of one mutator: a new task and why, or why it does not apply. */
export type Mutation = { task: Task; reason: string } | { skip: string };

/** What a mutator gets. */
export interface MutatorContext {
  domain: Domain;
  runtime: DomainRuntime;
  phrases: PatternPhrases;
  params: Record<string, unknown>;
  /** Seeded from the pattern id, base task id and seed: the same inputs give the same variant. */
  rng: Rng;
}

type Mutator = (base: Task, ctx: MutatorContext) => Promise<Mutation>;

/** Fill `{name}` placeholders. */
function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (m, k: string) => values[k] ?? m);
}

function agentActions(task: Task): Action[] {
  return (task.evaluation_criteria?.actions ?? []).filter((a) => a.requestor === 'assistant');
}

function kindOf(domain: Domain, name: string) {
  return toolsFor(domain, 'assistant').find((t) => t.name === name)?.kind;
}

/** Append a sentence to the caller's task instructions (a string instruction gets it appended). */
function addInstruction(task: Task, sentence: string, sep: string): void {
  const s = task.user_scenario;
  if (typeof s.instructions === 'string') s.instructions = [s.instructions, sentence].join(sep);
  else s.instructions.task_instructions = [s.instructions.task_instructions, sentence].filter(Boolean).join(sep);
}

function sepOf(domain: Domain): string {
  return domain.language.toLowerCase().startsWith('zh') ? '' : ' ';
}

/** Make COMMUNICATE part of the basis and add `item` (once). */
function addCommunicate(task: Task, item: string): void {
  const ec = task.evaluation_criteria!;
  const info = ec.communicate_info ?? [];
  if (!info.includes(item)) ec.communicate_info = [...info, item];
  if (!ec.reward_basis.includes('COMMUNICATE')) ec.reward_basis = [...ec.reward_basis, 'COMMUNICATE'];
}

/** Run actions in order on a fresh environment; the parsed result of each. */
async function runActions(runtime: DomainRuntime, task: Task, actions: readonly Action[]) {
  const env = await runtime.open(task);
  try {
    const out: { error: boolean; content: string }[] = [];
    for (const [i, a] of actions.entries()) {
      const o = await env.call(
        { id: `pattern-${i}`, name: a.name, arguments: structuredClone(a.arguments) },
        a.requestor,
        i,
      );
      out.push({ error: o.error, content: o.content });
    }
    return out;
  } finally {
    await env.close();
  }
}

/** Numeric fields of a JSON value, depth first, as [path, value]. */
function numericFields(value: unknown, path = '', out: [string, number][] = []): [string, number][] {
  if (typeof value === 'number') out.push([path, value]);
  else if (Array.isArray(value)) value.forEach((v, i) => numericFields(v, `${path}[${i}]`, out));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) numericFields(v, path ? `${path}.${k}` : k, out);
  return out;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * A fact the reference needs, for the caller patterns: the task's needed facts, else one made
 * from a string argument of the first agent action that the caller's known_info states (tau2
 * tasks have no facts). Cues are the argument's name in words.
 */
function factsToUse(task: Task): Fact[] {
  const needed = neededFacts(task);
  if (needed.length > 0) return needed;
  const first = agentActions(task)[0];
  const ins = task.user_scenario.instructions;
  const known = typeof ins === 'string' ? ins : [ins.known_info, ins.reason_for_call].filter(Boolean).join('\n');
  if (!first) return [];
  return Object.entries(first.arguments)
    .filter((e): e is [string, string] => typeof e[1] === 'string' && e[1].length > 0 && known.includes(e[1]))
    .map(([k, v]) => ({ key: k, value: v, cues: [k.replace(/_/g, ' ')] }));
}

/** Put `fact` into the task's facts (a made-up one is added). */
function ensureFact(task: Task, fact: Fact): void {
  const facts = task.user_scenario.facts ?? [];
  if (!facts.some((f) => f.key === fact.key)) task.user_scenario.facts = [...facts, fact];
}

const claimMutator: Mutator = async (base, ctx) => {
  if (base.user_scenario.false_claims?.length) return { skip: 'the caller already makes a false claim' };
  const task = structuredClone(base);
  const write = agentActions(task).find((a) => kindOf(ctx.domain, a.name) === 'write');
  const spoken = write
    ? (toolsFor(ctx.domain, 'assistant').find((t) => t.name === write.name)?.spokenAs ?? write.name.replace(/_/g, ' '))
    : null;
  const claim = spoken ? fill(ctx.phrases.claim_done, { action: spoken }) : ctx.phrases.claim_handled;
  task.user_scenario.false_claims = [{ claim, contradict_cues: [ctx.phrases.no_record], concede: ctx.phrases.concede }];
  addCommunicate(task, ctx.phrases.no_record);
  return {
    task,
    reason: `the caller claims "${claim}"; the records contradict it and the agent must say "${ctx.phrases.no_record}"`,
  };
};

const serialMutator: Mutator = async (base, ctx) => {
  if ((base.user_scenario.requests?.length ?? 1) > 1 || agentActions(base).some((a) => (a.intent ?? 0) > 0))
    return { skip: 'the task already has more than one intent' };
  const actions = base.evaluation_criteria?.actions ?? [];
  const results = await runActions(ctx.runtime, base, actions);
  const before = new Map<number, unknown>();
  const reads: { action: Action; at: number }[] = [];
  actions.forEach((a, i) => {
    if (a.requestor === 'assistant' && kindOf(ctx.domain, a.name) === 'read' && !results[i]!.error) {
      before.set(i, parseJson(results[i]!.content));
      reads.push({ action: a, at: i });
    }
  });
  // Each read again after all of the reference: what the caller's follow-up gets told.
  const again = await runActions(ctx.runtime, base, [...actions, ...reads.map((r) => r.action)]);
  const candidates = reads
    .map((r, j) => {
      const after = numericFields(parseJson(again[actions.length + j]!.content));
      const old = new Map(numericFields(before.get(r.at)));
      const changed = after.find(([p, v]) => old.has(p) && old.get(p) !== v);
      return { read: r.action, value: (changed ?? after[0])?.[1] };
    })
    .filter((c): c is { read: Action; value: number } => c.value !== undefined);
  if (candidates.length === 0) return { skip: 'no agent read of the reference returns a number to tell' };
  // A number the task does not already make the agent tell, when there is one.
  const told = new Set(base.evaluation_criteria?.communicate_info ?? []);
  const fresh = candidates.filter((c) => !told.has(String(c.value)));
  const pick = ctx.rng.pick(fresh.length ? fresh : candidates);
  const task = structuredClone(base);
  const ec = task.evaluation_criteria!;
  ec.actions = [
    ...(ec.actions ?? []).map((a) => ({ ...a, intent: 0 })),
    { ...structuredClone(pick.read), action_id: `serial-${pick.read.name}`, intent: 1 },
  ];
  // The opening request as the scripted caller says it (a tau2 reason for call in the first person).
  const reason = reasonForCall(base);
  const first =
    task.user_scenario.requests?.[0] ??
    (ctx.domain.language.toLowerCase().startsWith('en') ? firstPersonRequest(reason) : reason);
  task.user_scenario.requests = [first, ctx.phrases.follow_up];
  addInstruction(task, ctx.phrases.follow_up_note, sepOf(ctx.domain));
  addCommunicate(task, String(pick.value));
  return {
    task,
    reason: `a second intent after the first is done: ${pick.read.name} again and tell ${pick.value}`,
  };
};

/** `value` with the digits at i and i+1 swapped, for every i where they differ. */
function swaps(value: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < value.length; i++) {
    const a = value[i]!;
    const b = value[i + 1]!;
    if (/\d/.test(a) && /\d/.test(b) && a !== b) out.push(value.slice(0, i) + b + a + value.slice(i + 2));
  }
  return out;
}

const misrememberMutator: Mutator = async (base, ctx) => {
  const taken = new Set([
    ...(base.user_scenario.misremembers ?? []).map((m) => m.fact),
    ...(base.user_scenario.withholds ?? []).map((w) => w.fact),
  ]);
  const facts = factsToUse(base).filter((f) => !taken.has(f.key) && swaps(f.value).length > 0);
  if (facts.length === 0) return { skip: 'no needed fact with two different adjacent digits' };
  const fact = ctx.rng.pick(facts);
  const wrong = ctx.rng.pick(swaps(fact.value));
  // The wrong value must not be found: the first agent action that takes the fact, with it.
  const lookup = agentActions(base).find((a) => Object.values(a.arguments).includes(fact.value));
  if (lookup) {
    const args = Object.fromEntries(
      Object.entries(lookup.arguments).map(([k, v]) => [k, v === fact.value ? wrong : v]),
    );
    const [r] = await runActions(ctx.runtime, base, [{ ...lookup, arguments: args }]);
    if (r && !r.error) return { skip: `${lookup.name} finds the misremembered ${fact.key} ${wrong} too` };
  }
  const task = structuredClone(base);
  ensureFact(task, fact);
  task.user_scenario.misremembers = [
    ...(task.user_scenario.misremembers ?? []),
    { fact: fact.key, wrong, check_cues: ctx.phrases.check_cues },
  ];
  addInstruction(
    task,
    fill(ctx.phrases.misremember_note, { key: fact.key, wrong, value: fact.value }),
    sepOf(ctx.domain),
  );
  return {
    task,
    reason: `the caller first gives ${fact.key} as ${wrong} (digits swapped; the right value is ${fact.value})`,
  };
};

const withholdMutator: Mutator = async (base, ctx) => {
  const taken = new Set([
    ...(base.user_scenario.misremembers ?? []).map((m) => m.fact),
    ...(base.user_scenario.withholds ?? []).map((w) => w.fact),
  ]);
  const facts = factsToUse(base).filter((f) => !taken.has(f.key));
  if (facts.length === 0) return { skip: 'no needed fact the caller could hold back' };
  const fact = ctx.rng.pick(facts);
  const task = structuredClone(base);
  ensureFact(task, fact);
  task.user_scenario.withholds = [
    ...(task.user_scenario.withholds ?? []),
    { fact: fact.key, deflect: ctx.phrases.deflect },
  ];
  addInstruction(task, fill(ctx.phrases.withhold_note, { key: fact.key }), sepOf(ctx.domain));
  return { task, reason: `the caller holds back ${fact.key} until asked a second time` };
};

/** `value` with its digit at `pos` (counted from the end among digits) stepped by `step` (1–9), or null. */
function nudgeDigit(value: string, step: number, pos: number): string | null {
  const at = [...value].flatMap((c, i) => (/\d/.test(c) ? [i] : [])).reverse()[pos];
  if (at === undefined) return null;
  const d = (Number(value[at]) + step) % 10;
  return `${value.slice(0, at)}${d}${value.slice(at + 1)}`;
}

const nearDuplicateMutator: Mutator = async (base, ctx) => {
  const lookup = agentActions(base).find((a) => kindOf(ctx.domain, a.name) === 'read');
  const value = lookup && Object.values(lookup.arguments).find((v): v is string => typeof v === 'string');
  if (!lookup || !value) return { skip: 'no agent lookup by a text value' };
  const env = await ctx.runtime.open(base);
  try {
    for (const table of ctx.runtime.tables) {
      if (table.primaryKey.length !== 1) continue;
      const pk = table.primaryKey[0]!;
      for (const column of table.columns) {
        const q = (sql: string, p: unknown[]) => env.query(sql, p as never);
        const rows = await q(`SELECT * FROM "${table.name}" WHERE "${column}" = ? LIMIT 1`, [value]);
        const row = rows[0];
        if (!row) continue;
        const start = 1 + ctx.rng.int(9);
        const free = async (col: string, v: string) =>
          (await q(`SELECT 1 FROM "${table.name}" WHERE "${col}" = ? LIMIT 1`, [v])).length === 0;
        const nudged = async (col: string, v: string) => {
          // The last digit first, then the one before it, …; steps from the seeded start.
          for (let pos = 0; pos < v.length; pos++)
            for (let k = 0; k < 9; k++) {
              const n = nudgeDigit(v, ((start + k - 1) % 9) + 1, pos);
              if (n === null) return null;
              if (n !== v && (await free(col, n))) return n;
            }
          return null;
        };
        const copy: Record<string, unknown> = { ...row };
        const newKey = column === pk ? null : await nudged(pk, String(row[pk]));
        const newValue = await nudged(column, value);
        if ((column !== pk && newKey === null) || newValue === null)
          return { skip: `no free near-duplicate of ${table.name} ${row[pk]}` };
        if (newKey !== null) copy[pk] = newKey;
        copy[column] = newValue;
        const task = structuredClone(base);
        const init = task.initial_state ?? {};
        const rowsByTable = init.rows ?? {};
        rowsByTable[table.name] = [...(rowsByTable[table.name] ?? []), copy];
        task.initial_state = { ...init, rows: rowsByTable };
        return {
          task,
          reason: `a near-duplicate of ${table.name} ${row[pk]} (${column} ${value} → ${newValue}${newKey ? `, ${pk} ${newKey}` : ''})`,
        };
      }
    }
  } finally {
    await env.close();
  }
  return { skip: `no table row holds the looked-up value ${value}` };
};

/** One entry of `value_past_threshold`'s per-domain table (`params.limits[<domain name>]`). */
const DateWindowLimit = z.object({
  kind: z.literal('date_window'),
  /** Policy rule the limit comes from (cited by the new assertion). */
  rule: z.string().min(1),
  /** The write tool the limit governs. */
  tool: z.string().min(1),
  /** Argument of the write naming the record (its value is looked up in `table`). */
  key_arg: z.string().min(1),
  table: z.string().min(1),
  /** Date column (`YYYY-MM-DD`) the window applies to. */
  column: z.string().min(1),
  /** Window length, days: a date `days` days before the policy date is still inside (inclusive). */
  days: z.number().int().positive(),
  /** Offset of the domain's local calendar from UTC, hours. */
  utc_offset_hours: z.number(),
  /** What the agent must say when refusing (becomes communicate_info). */
  refusal: z.string().min(1),
  /** Text of the new assertion. */
  text: z.string().min(1),
});
/**
 * An amount limit of `value_past_threshold`'s table: a write's amount may be at most `limit`
 * (e.g. carrier R3: one bill gets at most ¥200 a day from the prepaid balance); the rest is paid
 * another way, which the agent must say.
 */
const AmountLimit = z.object({
  kind: z.literal('amount_limit'),
  rule: z.string().min(1),
  tool: z.string().min(1),
  /** Argument of the write holding the amount, in the domain's currency unit (yuan). */
  amount_arg: z.string().min(1),
  /** Argument naming the record whose amount is due (its value is looked up in `table`). */
  key_arg: z.string().min(1),
  table: z.string().min(1),
  /** Columns of the amount due and the amount already paid, in `scale` units (fen). */
  amount_column: z.string().min(1),
  paid_column: z.string().min(1),
  /** Column units per currency unit (100 fen a yuan). */
  scale: z.number().positive(),
  /** The limit, in currency units. */
  limit: z.number().positive(),
  /** How far past the limit the due amount is moved, in currency units (the smallest step that matters). */
  over: z.number().positive(),
  /** The funds the write draws on: `table`'s `column` (in `scale` units) of the record named by the write's `key_arg`. */
  funds: z.object({ table: z.string().min(1), key_arg: z.string().min(1), column: z.string().min(1) }),
  /** Sentence for the caller's instructions (`{limit}`, `{rest}` filled in). */
  note: z.string().min(1),
  /** Text of the new assertions (`{limit}`, `{due}` filled in). */
  text: z.string().min(1),
});
const ThresholdLimits = z.record(z.string(), z.array(z.discriminatedUnion('kind', [DateWindowLimit, AmountLimit])));

/** One row of `table` by its single-column primary key, on the task's initial state. */
async function rowByKey(ctx: MutatorContext, task: Task, table: string, key: unknown) {
  const pk = ctx.runtime.tables.find((t) => t.name === table)?.primaryKey;
  if (pk?.length !== 1) return undefined;
  const env = await ctx.runtime.open(task);
  const rows = await env
    .query(`SELECT * FROM "${table}" WHERE "${pk[0]}" = ? LIMIT 1`, [key] as never)
    .finally(() => env.close());
  return rows[0];
}

/** Upsert `row` into the task's initial rows of `table`. */
function upsertRow(task: Task, table: string, row: Record<string, unknown>): void {
  const init = task.initial_state ?? {};
  const rows = init.rows ?? {};
  rows[table] = [...(rows[table] ?? []), row];
  task.initial_state = { ...init, rows };
}

/** Round to the currency's smallest unit (1/scale). */
const roundTo = (x: number, scale: number) => Math.round(x * scale) / scale;

/**
 * `amount_limit`: the due amount moved to `limit + over`, the funds raised to cover the whole due
 * amount; the reference pays exactly `limit` and tells the limit and the rest.
 */
async function amountPastLimit(
  base: Task,
  ctx: MutatorContext,
  limit: z.infer<typeof AmountLimit>,
): Promise<Mutation | null> {
  const actions = base.evaluation_criteria?.actions ?? [];
  const at = actions.findIndex((a) => a.requestor === 'assistant' && a.name === limit.tool);
  const write = actions[at];
  const amount = write?.arguments[limit.amount_arg];
  if (!write || typeof amount !== 'number' || amount >= limit.limit) return null;
  const record = await rowByKey(ctx, base, limit.table, write.arguments[limit.key_arg]);
  const funds = await rowByKey(ctx, base, limit.funds.table, write.arguments[limit.funds.key_arg]);
  if (!record || !funds) return null;
  const due = roundTo(limit.limit + limit.over, limit.scale);
  const paid = Number(record[limit.paid_column]);
  const task = structuredClone(base);
  upsertRow(task, limit.table, { ...record, [limit.amount_column]: paid + Math.round(due * limit.scale) });
  const balance = Number(funds[limit.funds.column]);
  const needed = Math.round((due - amount) * limit.scale);
  upsertRow(task, limit.funds.table, { ...funds, [limit.funds.column]: balance + Math.max(0, needed) });
  const ec = task.evaluation_criteria!;
  ec.actions = (ec.actions ?? []).map((a, j) =>
    j === at ? { ...a, arguments: { ...a.arguments, [limit.amount_arg]: limit.limit } } : a,
  );
  const rest = roundTo(due - limit.limit, limit.scale);
  ec.communicate_info = [String(limit.limit), String(rest)];
  if (!ec.reward_basis.includes('COMMUNICATE')) ec.reward_basis = [...ec.reward_basis, 'COMMUNICATE'];
  const text = fill(limit.text, { limit: String(limit.limit), due: String(due) });
  const key = write.arguments[limit.key_arg];
  ec.assertions = [
    ...(ec.assertions ?? []).filter((a) => !(a.check?.tool === limit.tool && a.check.kind.startsWith('tool_'))),
    {
      id: 'at-limit',
      rule: limit.rule,
      text,
      check: { kind: 'tool_called', tool: limit.tool, args: { [limit.key_arg]: key, [limit.amount_arg]: limit.limit } },
    },
    {
      id: 'past-limit',
      rule: limit.rule,
      text,
      check: { kind: 'tool_not_called', tool: limit.tool, args: { [limit.amount_arg]: due } },
    },
  ];
  addInstruction(task, fill(limit.note, { limit: String(limit.limit), rest: String(rest) }), sepOf(ctx.domain));
  return {
    task,
    reason: `${limit.table} ${String(key)}: due ${amount} → ${due}, ${limit.over} past the ${limit.limit} limit of ${limit.tool} (${limit.rule}); the agent must pay ${limit.limit} and tell the rest ${rest}`,
  };
}

const DAY_MS = 86_400_000;

const thresholdMutator: Mutator = async (base, ctx) => {
  const limits = ThresholdLimits.parse(ctx.params.limits ?? {})[ctx.domain.name] ?? [];
  if (limits.length === 0) return { skip: `no policy limit listed for domain ${ctx.domain.name}` };
  const actions = base.evaluation_criteria?.actions ?? [];
  for (const limit of limits) {
    if (limit.kind === 'amount_limit') {
      const out = await amountPastLimit(base, ctx, limit);
      if (out) return out;
      continue;
    }
    const at = actions.findIndex((a) => a.requestor === 'assistant' && a.name === limit.tool);
    const key = at < 0 ? undefined : actions[at]!.arguments[limit.key_arg];
    if (typeof key !== 'string') continue;
    const row = await rowByKey(ctx, base, limit.table, key);
    if (!row) continue;
    // One day before the window's first day (the first day is `days` days before the policy date).
    const past = new Date(ctx.domain.now + limit.utc_offset_hours * 3_600_000 - (limit.days + 1) * DAY_MS)
      .toISOString()
      .slice(0, 10);
    const task = structuredClone(base);
    upsertRow(task, limit.table, { ...row, [limit.column]: past });
    const ec = task.evaluation_criteria!;
    ec.actions = actions.slice(0, at).map((a) => structuredClone(a));
    ec.communicate_info = [limit.refusal];
    if (!ec.reward_basis.includes('COMMUNICATE')) ec.reward_basis = [...ec.reward_basis, 'COMMUNICATE'];
    ec.assertions = [
      ...(ec.assertions ?? []).filter((a) => !(a.check && 'tool' in a.check && a.check.tool === limit.tool)),
      {
        id: 'past-threshold',
        rule: limit.rule,
        text: limit.text,
        check: { kind: 'tool_not_called', tool: limit.tool },
      },
    ];
    ec.write_whitelist = [];
    return {
      task,
      reason: `${limit.table} ${key}: ${limit.column} ${String(row[limit.column])} → ${past}, one day past the ${limit.days}-day window (${limit.rule}); the agent must refuse ${limit.tool} and say "${limit.refusal}"`,
    };
  }
  return { skip: `no agent write governed by a ${ctx.domain.name} limit` };
};

/** Other values an argument of `tool` could take: its enum's other values, in schema order. */
function enumAlternatives(domain: Domain, tool: string, key: string, value: unknown): unknown[] {
  const def = toolsFor(domain, 'assistant').find((t) => t.name === tool);
  const props = def
    ? (toolSchema(def).function.parameters as { properties?: Record<string, { enum?: unknown[] }> })
    : {};
  return (props.properties?.[key]?.enum ?? []).filter((v) => v !== value);
}

/**
 * Other values of a string argument that names a record: the other primary keys of the first
 * single-key table whose key column holds `value`, in key order (at most 20) — those that share
 * an `…_id` column's value with the record (the same customer's other orders; any record of a
 * table without such columns, like a plan).
 */
async function recordAlternatives(ctx: MutatorContext, task: Task, value: string): Promise<string[]> {
  const env = await ctx.runtime.open(task);
  try {
    for (const table of ctx.runtime.tables) {
      if (table.primaryKey.length !== 1) continue;
      const pk = table.primaryKey[0]!;
      const q = (sql: string, p: unknown[]) => env.query(sql, p as never);
      const row = (await q(`SELECT * FROM "${table.name}" WHERE "${pk}" = ? LIMIT 1`, [value]))[0];
      if (!row) continue;
      const others = async (where: string, p: unknown[]) =>
        (
          await q(`SELECT "${pk}" AS k FROM "${table.name}" WHERE "${pk}" <> ?${where} ORDER BY "${pk}" LIMIT 20`, [
            value,
            ...p,
          ])
        ).map((r) => String(r.k));
      const links = table.columns.filter(
        (c) => c !== pk && c.endsWith('_id') && row[c] !== null && row[c] !== undefined,
      );
      const related = links.length
        ? await others(
            ` AND (${links.map((c) => `"${c}" = ?`).join(' OR ')})`,
            links.map((c) => row[c]),
          )
        : [];
      return links.length ? related : others('', []);
    }
    return [];
  } finally {
    await env.close();
  }
}

/** `value` with every occurrence of `from` (a whole scalar) replaced by `to`, deep. */
function replaceScalar<T>(value: T, from: unknown, to: unknown): T {
  if (value === from) return to as T;
  if (Array.isArray(value)) return value.map((v) => replaceScalar(v, from, to)) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceScalar(v, from, to)])) as T;
  return value;
}

/**
 * What an assertion's text may quote of an argument's old value, and the new value's counterpart:
 * the values themselves, the enum's spoken words (`spokenValues`), and, for a record key, each
 * column of the old record that differs from the new one's — whole, and its digit runs position by
 * position (PL58 → PL18 gives 58 → 18, so "58 元套餐" becomes "18 元套餐"). A digit run that would
 * map to two different runs is left out.
 */
async function quotedPairs(
  ctx: MutatorContext,
  task: Task,
  from: unknown,
  to: unknown,
  words: Readonly<Record<string, string>> | undefined,
): Promise<Map<string, string>> {
  const whole = new Map<string, string>([[String(from), String(to)]]);
  if (words?.[String(from)] && words[String(to)]) whole.set(words[String(from)]!, words[String(to)]!);
  const digits = new Map<string, string | null>();
  for (const table of ctx.runtime.tables) {
    const a = await rowByKey(ctx, task, table.name, from);
    const b = a ? await rowByKey(ctx, task, table.name, to) : undefined;
    if (!a || !b) continue;
    for (const [col, v] of Object.entries(a)) {
      const w = b[col];
      if (v === null || w === null || v === w || (typeof v !== 'string' && typeof v !== 'number')) continue;
      whole.set(String(v), String(w));
      const ds = String(v).match(/\d+/g) ?? [];
      const dt = String(w).match(/\d+/g) ?? [];
      if (ds.length !== dt.length) continue;
      ds.forEach((d, i) => digits.set(d, digits.has(d) && digits.get(d) !== dt[i] ? null : dt[i]!));
    }
    break;
  }
  for (const [d, t] of digits) if (t !== null && !whole.has(d)) whole.set(d, t);
  return whole;
}

/** `text` with each key of `pairs` (longest first; a number only where it is not part of a longer one) replaced, in one pass. */
function rewriteQuoted(text: string, pairs: ReadonlyMap<string, string>): string {
  const keys = [...pairs.keys()].filter((k) => k.length > 0).sort((x, y) => y.length - x.length);
  if (keys.length === 0) return text;
  const esc = (k: string) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(keys.map((k) => (/^\d+$/.test(k) ? `(?<!\\d)${esc(k)}(?!\\d)` : esc(k))).join('|'), 'g');
  return text.replace(re, (m) => pairs.get(m) ?? m);
}

const changeOfMindMutator: Mutator = async (base, ctx) => {
  if (base.user_scenario.change_of_mind) return { skip: 'the caller already changes its mind' };
  const actions = base.evaluation_criteria?.actions ?? [];
  const at = actions.findIndex((a) => a.requestor === 'assistant' && kindOf(ctx.domain, a.name) === 'write');
  const write = actions[at];
  if (!write) return { skip: 'no agent write to change' };
  if (write.say) return { skip: `${write.name} is proposed by the task's own line (say)` };
  // Candidates: (argument, new value) — an enum's other values; without any, another record of
  // the table a string argument is a key of. A value the first successful agent lookup returns
  // (the caller's account) is who the caller is, not what it wants: it is kept, so a write is
  // never moved to a record of another caller (tau2-retail task 39: the first lookup, with the
  // wrong zip, fails; the second finds the user whose address is modified).
  const before = await runActions(ctx.runtime, base, actions.slice(0, at));
  const found = before.find((r, j) => actions[j]!.requestor === 'assistant' && !r.error);
  const args = Object.entries(write.arguments).filter(
    ([, v]) => !(typeof v === 'string' && found?.content.includes(v)),
  );
  let candidates: [string, unknown][] = args.flatMap(([key, value]) =>
    enumAlternatives(ctx.domain, write.name, key, value).map((v): [string, unknown] => [key, v]),
  );
  if (candidates.length === 0)
    for (const [key, value] of args)
      if (typeof value === 'string')
        candidates = [
          ...candidates,
          ...(await recordAlternatives(ctx, base, value)).map((v): [string, unknown] => [key, v]),
        ];
  if (candidates.length === 0) return { skip: `no argument of ${write.name} with another value to change to` };
  const start = ctx.rng.int(candidates.length);
  for (let i = 0; i < candidates.length; i++) {
    const [key, to] = candidates[(start + i) % candidates.length]!;
    const from = write.arguments[key];
    const changed: Action = {
      ...structuredClone(write),
      action_id: write.action_id ?? `change-${write.name}`,
      arguments: { ...structuredClone(write.arguments), [key]: to },
    };
    const replayed = await runActions(ctx.runtime, base, [...actions.slice(0, at), changed]);
    if (replayed[at]!.error) continue;
    const task = structuredClone(base);
    const ec = task.evaluation_criteria!;
    ec.actions = (ec.actions ?? []).map((a, j) => (j === at ? changed : a));
    const words = toolsFor(ctx.domain, 'assistant').find((t) => t.name === write.name)?.spokenValues;
    // The changed write's assertions check the new value, and their text quotes it.
    const pairs = await quotedPairs(ctx, base, from, to, words);
    ec.assertions = [
      ...(ec.assertions ?? []).map((a) =>
        a.check?.tool === write.name && a.check.args && key in a.check.args
          ? { ...a, text: rewriteQuoted(a.text, pairs), check: { ...a.check, args: { ...a.check.args, [key]: to } } }
          : a,
      ),
    ];
    const said = {
      first: spokenArguments({ [key]: from }, ctx.domain.language, words),
      value: spokenArguments({ [key]: to }, ctx.domain.language, words),
    };
    const rule = (base.evaluation_criteria?.assertions ?? []).find(
      (a) => a.check?.kind === 'confirm_before_write',
    )?.rule;
    if (rule)
      ec.assertions.push({
        id: 'final-intent',
        rule,
        text: fill(ctx.phrases.change_mind_note, said),
        check: { kind: 'tool_not_called', tool: write.name, args: { [key]: from } },
      });
    if (ec.write_whitelist) ec.write_whitelist = replaceScalar(ec.write_whitelist, from, to);
    if (ec.communicate_info)
      ec.communicate_info = ec.communicate_info.map((c) => (c === String(from) ? String(to) : c));
    task.user_scenario.change_of_mind = {
      action_id: changed.action_id!,
      first: { [key]: from },
      say: fill(ctx.phrases.change_mind, said),
    };
    addInstruction(task, fill(ctx.phrases.change_mind_note, said), sepOf(ctx.domain));
    return {
      task,
      reason: `the caller first asks for ${write.name} with ${key} ${JSON.stringify(from)}, then at the confirmation changes it to ${JSON.stringify(to)}; only the final intent passes`,
    };
  }
  return { skip: `${write.name} fails with every other value of its arguments` };
};

/** The mutator of each `task`-axis pattern, by id. */
export const MUTATORS: Readonly<Record<string, Mutator>> = {
  db_contradicts_claim: claimMutator,
  serial_multi_intent: serialMutator,
  misremembered_value: misrememberMutator,
  withhold_until_asked_twice: withholdMutator,
  near_duplicate_record: nearDuplicateMutator,
  value_past_threshold: thresholdMutator,
  mid_call_change_of_mind: changeOfMindMutator,
};

/** Id of the variant of `base` made by `pattern` with `seed`: `<base>~<pattern>.<seed>`. */
export function variantId(baseId: string, pattern: string, seed: number): string {
  return `${baseId}~${pattern}.${seed}`;
}

/**
 * Apply one task pattern to one task: the variant (new id, lineage one generation further, the
 * change's reason, pattern, parameters and seed) or why the pattern does not apply.
 * @throws RangeError for an unknown pattern or one on the channel axis
 */
export async function applyPattern(
  base: Task,
  patternId: string,
  opts: { domain: Domain; runtime: DomainRuntime; seed: number; library?: HardPatternLibrary; by?: string },
): Promise<Mutation> {
  const library = opts.library ?? HARD_PATTERNS;
  const pattern = library.patterns.find((p) => p.id === patternId);
  if (!pattern)
    throw new RangeError(
      `unknown hard pattern "${patternId}" (library: ${library.patterns.map((p) => p.id).join(', ')})`,
    );
  const mutator = MUTATORS[pattern.id];
  if (pattern.axis !== 'task' || !mutator) throw new RangeError(`hard pattern "${patternId}" is not a task mutator`);
  const phrases = opts.domain.language.toLowerCase().startsWith('zh') ? library.phrases.zh : library.phrases.en;
  const rng = seededRng(opts.seed).fork(`${pattern.id}:${base.id}`);
  const out = await mutator(base, { domain: opts.domain, runtime: opts.runtime, phrases, params: pattern.params, rng });
  if ('skip' in out) return out;
  const parent = base.lineage ?? { version: 1, generation: 0, parent: null, changes: [] };
  const change: TaskChange = {
    version: 1,
    reason: out.reason,
    by: opts.by ?? `hard-pattern:${pattern.id}`,
    pattern: pattern.id,
    params: pattern.params,
    seed: opts.seed,
  };
  const task: Task = {
    ...out.task,
    id: variantId(base.id, pattern.id, opts.seed),
    lineage: {
      version: 1,
      parent: { task_id: base.id, version: parent.version },
      generation: parent.generation + 1,
      changes: [change],
    },
  };
  return { task, reason: out.reason };
}

/** Channel conditions a task is run under (the `harsher_channel` axis). */
export interface ChannelLevel {
  preset: string;
  barge_in: number;
}

/**
 * One step up the `harsher_channel` ladder: the next preset, and once at the harshest preset the
 * next barge-in probability; null at the top of both.
 * @throws RangeError when the level is not on the library's ladder
 */
export function harsherChannel(level: ChannelLevel, library: HardPatternLibrary = HARD_PATTERNS): ChannelLevel | null {
  const p = library.patterns.find((x) => x.id === 'harsher_channel');
  const presets = z.array(z.string()).parse(p?.params.presets);
  const steps = z.array(z.number()).parse(p?.params.barge_in_steps);
  const i = presets.indexOf(level.preset);
  const j = steps.indexOf(level.barge_in);
  if (i < 0 || j < 0)
    throw new RangeError(`channel level ${JSON.stringify(level)} is not on the harsher_channel ladder`);
  if (i + 1 < presets.length) return { preset: presets[i + 1]!, barge_in: level.barge_in };
  if (j + 1 < steps.length) return { preset: level.preset, barge_in: steps[j + 1]! };
  return null;
}

/**
 * Domain and tool definitions. A domain folder's `domain.ts` calls {@link defineDomain} with its
 * code (tools, rule checks, table options); its data files (policy.md, schema.sql, seed.json,
 * tasks.json) are read by a platform adapter and joined with {@link buildDomain}, which
 * validates them and names the file and field of anything malformed.
 */
import { z } from 'zod';
import type { SqlParams, SqlRow, SqlValue } from '../ports/sql-db.ts';
import { Task } from './task.ts';
import type { Requestor } from './task.ts';
import type { WriteEntry } from './trajectory.ts';
import { parsePolicy, type PolicyRule } from './policy.ts';
import { DomainFileError, ToolError } from '../errors.ts';
import { pathUnsafeId } from './safe-id.ts';

/** Tool kinds: `read` never writes; `write` changes state; `think` is a scratchpad; `generic` is anything else (transfer, calculate). */
export type ToolKind = 'read' | 'write' | 'think' | 'generic';

/** Re-exported where tools and loaders have always imported them (see `../errors.ts`). */
export { DomainFileError, ToolError };

/** What a tool may do with the database: parameterized SQL only. */
export interface ToolDb {
  /** First row of a query, or `undefined`. */
  one(sql: string, params?: SqlParams): Promise<SqlRow | undefined>;
  /** All rows of a query. */
  all(sql: string, params?: SqlParams): Promise<SqlRow[]>;
  /** A statement that changes rows; returns the number changed. */
  run(sql: string, params?: SqlParams): Promise<number>;
}

/** Everything a tool's `run` receives besides its arguments. */
export interface ToolContext {
  db: ToolDb;
  /** The domain's "current time" (the policy clock), ms since the Unix epoch. */
  now(): number;
  /** Who is calling: the agent (`assistant`) or the caller (`user`, for user tools). */
  actor: Requestor;
  /**
   * True when the caller keeps only whether the call failed (and its message) and what it
   * wrote, never a successful result: the gold replay of scoring, which compares states. A tool
   * may then return `''` instead of building its result, but only after every check that can
   * fail the call and every write: its error messages and writes must be the same either way.
   */
  resultDiscarded?: boolean;
  /**
   * Hand this call's `after` rule checks a fact about the state the call leaves
   * ({@link RuleCheckContext.told}), under a key the domain's tools and checks agree on: rows the
   * tool read or wrote, as a read right after the call would give them, so that a check need not
   * read them again. Absent when no `after` check will see the call (a caller's call, checks off,
   * a tool without such checks): tools call it as `ctx.tell?.(key, value)`. A value told is the
   * tool's word: it must be exactly what the check would otherwise read (a check must give the
   * same finding without it). The value is handed over as it is (not copied): neither side may
   * change it afterwards. Facts told are dropped when the domain's `syncState` writes after the
   * tool.
   */
  tell?(key: string, value: unknown): void;
}

/** A tool definition. `params` is a zod object; its JSON Schema is what models see. */
export interface ToolDefinition<P extends z.ZodObject = z.ZodObject> {
  name: string;
  kind: ToolKind;
  description: string;
  params: P;
  /**
   * How the action is said aloud, e.g. "pay the bill from your wallet". The reference agent uses
   * it to describe a write before asking for confirmation and to ask the caller to run a user
   * tool; the scripted caller recognizes a request for a user tool by it.
   */
  spokenAs?: string;
  /**
   * Words for argument values when the reference agent reads them out, by value (e.g. an enum's
   * `not_subscribed` → `未开通该业务`); values not listed are read as they are (see
   * `spokenArguments` in src/core/participants/spoken.ts).
   */
  spokenValues?: Readonly<Record<string, string>>;
  /**
   * Words that name this write when the agent proposes it (lower-case substrings, e.g. `缴`,
   * `pay`). When given, the consent check (`confirm_before_write`) only counts a yes to an agent
   * turn that contains one of them; absent, the operation's name is not checked.
   */
  operationCues?: readonly string[];
  /**
   * Checks the argument names before `params` parses them and returns the error text the caller
   * of the tool sees (without `Error: `), or `null` to go on. For imported domains whose tools
   * answer a missing or unexpected argument in their own words (tau2-bench's Python `TypeError`
   * texts); without it the environment answers `invalid arguments for <tool>: …`.
   */
  argumentError?(args: Readonly<Record<string, unknown>>): string | null;
  /** Returns a string (shown as is) or a JSON-serializable value (shown as JSON). */
  run(ctx: ToolContext, args: z.infer<P>): Promise<unknown>;
}

/** Identity helper that keeps the parameter type of `run` tied to `params`. */
export function defineTool<P extends z.ZodObject>(def: ToolDefinition<P>): ToolDefinition<P> {
  if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(def.name)) {
    throw new Error(`tool name "${def.name}" must be an identifier`);
  }
  return def;
}

/** A tool in OpenAI's `tools` format (chat completions). */
export interface OpenAiToolSchema {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** Each tool definition's schema, made once (an episode asks for every tool's; zod's export was ~12% of a scripted episode). */
const schemaCache = new WeakMap<ToolDefinition, OpenAiToolSchema>();

/** Freeze `value` and everything in it; returns it. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * Export a tool's parameters as JSON Schema (draft 2020-12, input side) in OpenAI's `tools`
 * format. Made once per definition and shared: the result is deeply frozen (copy it to change it).
 */
export function toolSchema(tool: ToolDefinition): OpenAiToolSchema {
  const cached = schemaCache.get(tool);
  if (cached) return cached;
  // Through JSON: a copy that shares nothing with zod's schema (e.g. a default value's object) before it is frozen.
  const parameters = JSON.parse(
    JSON.stringify(z.toJSONSchema(tool.params, { target: 'draft-2020-12', io: 'input' })),
  ) as Record<string, unknown>;
  delete parameters.$schema;
  const schema = deepFreeze<OpenAiToolSchema>({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters },
  });
  schemaCache.set(tool, schema);
  return schema;
}

/**
 * How the state export treats a table.
 * - `unordered`: rows are a multiset (e.g. payments): compared after dropping `ignoreColumns`
 *   (surrogate ids, generated timestamps) and sorting, so the same two payments made in the
 *   opposite order compare equal.
 * - `userSide`: the caller's own state (dual control); agent tools must not touch it.
 */
export interface TableOptions {
  unordered?: boolean;
  ignoreColumns?: string[];
  userSide?: boolean;
  /**
   * A column that only records the order of a list or of a dict's keys (e.g. tau2's `position`).
   * The DB verdict compares it like any column (tau2 compares lists in order); the
   * order-insensitive comparison reported beside it drops it and compares rows as a multiset.
   */
  orderColumn?: string;
}

/** What a rule check sees around one agent write. */
export interface RuleCheckContext {
  /**
   * Read-only queries on the database: after the write for `after` checks, before the tool runs
   * for `before` checks.
   */
  db: Pick<ToolDb, 'one' | 'all'>;
  tool: string;
  args: Record<string, unknown>;
  /** Column writes made by this call (empty for `before` checks). */
  writes: readonly WriteEntry[];
  /** Every write of the episode before this call, in order (the write log). */
  log: readonly WriteEntry[];
  now(): number;
  /**
   * A fact of the episode's starting state, computed once and shared by every episode opened
   * from the same state (a domain runtime's pristine database; an episode with an initial state
   * of its own keeps its facts to itself): `compute()` is called the first time `key` is asked
   * and its value handed to every later asker, as long as none of `tables` has been written
   * since the episode started (by any call, or restored into a forked episode). Once one has,
   * `compute()` runs afresh for this call and its value is not kept. `compute` must read only
   * `tables` (through {@link db}) and depend on nothing but `key`; callers must not change the
   * value. Rejections are not kept. A value kept and settled is handed back as it is, not as a
   * promise (a check can then answer at once, {@link RuleCheck.check}); otherwise its promise.
   */
  baseFact<T>(key: string, tables: readonly string[], compute: () => Promise<T>): T | Promise<T>;
  /**
   * What the tool told its `after` checks ({@link ToolContext.tell}) in this call, by key (empty
   * for `before` checks, and when the call's `syncState` wrote). A check that finds no value for
   * its key reads the state itself; one that finds it must not change it.
   */
  told: ReadonlyMap<string, unknown>;
}

/**
 * A policy rule written as code, returning a violation message or `null` when the rule holds.
 *
 * - `after` (default) checks run after every successful agent write (in the gate on every
 *   reference write, in scoring on every write the agent made), on the database after the write
 *   and the call's column writes (`before` values give the state the write replaced).
 * - `before` checks run before the tool, on the database as the call found it and the call's
 *   arguments: preconditions the policy puts on a call. Their violations are reported for a
 *   call the tool then refuses too (marked `refused`), since the call was still attempted.
 */
export interface RuleCheck {
  /** Rule id, e.g. `R3` or `cancel-eligible`. */
  rule: string;
  description: string;
  /**
   * The policy text the rule encodes, quoted verbatim from the domain's policy (whitespace
   * aside); the gate reports a quote the policy does not contain as a domain problem.
   */
  policy?: string;
  /** The agent tools whose writes the check applies to (default: every write). */
  tools?: readonly string[];
  /** When the check runs (default `after`). */
  when?: 'before' | 'after';
  /**
   * The violation message, or `null` when the rule holds: returned as it is when the check needs
   * no read to tell (a fact it was told, the call's writes alone), else its promise. The
   * environment awaits only a promise, and a phase whose checks all return at once takes no
   * await at all (src/core/env, `checkRules`).
   */
  check(ctx: RuleCheckContext): string | null | Promise<string | null>;
}

/** A function the evaluator may call on the final state (tau2 `env_assertions`). */
export type EnvFunction = (db: Pick<ToolDb, 'one' | 'all'>, args: Record<string, unknown>) => Promise<unknown>;

/** What a domain's task setup ({@link DomainDefinition.setupTask}) may use. */
export interface TaskSetupContext {
  db: ToolDb;
  now(): number;
}

/**
 * A consequence an outbound domain's policy allows the agent to state (e.g. debt-negotiation R4:
 * "逾期会按合同继续计收滞纳金"). `id` names it, `text` is the policy's wording, and `cues` are the
 * words (lower case, plain substrings) a sentence must all contain to state it
 * (`scoring/threats.ts`).
 */
export interface AllowedConsequence {
  id: string;
  text: string;
  cues: readonly string[];
}

/** The code half of a domain, written in its `domain.ts`. */
export interface DomainDefinition {
  name: string;
  /** BCP-47 language of the conversation, e.g. `zh-CN`, `en-US`. */
  language: string;
  roles: readonly ('inbound' | 'outbound')[];
  /** The policy clock: what "now" is for the tools and rules, ms since the Unix epoch. */
  now: number;
  tools: readonly ToolDefinition[];
  userTools?: readonly ToolDefinition[];
  tables?: Readonly<Record<string, TableOptions>>;
  ruleChecks?: readonly RuleCheck[];
  /**
   * Policy rules the phone-channel reaction checks enforce (`scoring/channel-checks.ts`): the
   * agent's reply to a caller turn cut off by a dropout (`dropout`) and to a barge-in
   * (`bargeIn`). When set, and the domain is `native`, those verdicts carry these rule ids and
   * count in `ASSERTIONS` and the turn rubric; the gate counts the rules as cited. Absent (and
   * for `imported` domains): the verdicts are reported beside the reward (rule `channel`).
   */
  channelRules?: Readonly<{ dropout: string; bargeIn: string }>;
  envFunctions?: Readonly<Record<string, EnvFunction>>;
  /**
   * Outbound domains: the consequences of not paying (or not renewing) that the policy lets the
   * agent state; any other consequence the agent states is a threat (`scoring/threats.ts`, used by
   * the `no_threat` check and by the scripted callee's hang-up). Absent: none is allowed.
   */
  allowedConsequences?: readonly AllowedConsequence[];
  /**
   * Brings the two sides of a dual-control domain into agreement (tau2-bench's `sync_tools`: the
   * carrier's records → the caller's surroundings, a payment the caller made → the bill). Run by
   * the environment after every successful tool call of either side, inside the same call (its
   * writes are that call's writes). Throwing is a domain or task defect, never the caller's.
   */
  syncState?(db: ToolDb): Promise<void>;
  /**
   * Whether the gold replay of a reference solution runs {@link syncState} after each action.
   * Default true. tau2-bench's evaluator makes its gold calls without syncing between them;
   * tau2 domains that sync set `false` so the gold state is tau2's.
   */
  goldReplaySync?: boolean;
  /**
   * Puts an opened environment in the task's starting state beyond `initial_state.rows`
   * (tau2-bench's `initialization_actions`). Its writes are setup, not episode writes.
   * @throws DomainFileError naming the task's field when the task asks for something impossible.
   */
  setupTask?(ctx: TaskSetupContext, task: Task, where: { file: string; field: string }): Promise<void>;
  /**
   * The error text (without `Error: `) for a call of a tool the caller of it does not have, as an
   * imported domain's own environment words it (tau2-bench: `Tool 'x' not found.`). Absent: ours,
   * `unknown tool x` / `tool x is not available to the caller`.
   */
  unknownToolError?(name: string): string;
  /** The agent's first words on an inbound call. */
  greeting: string;
  /**
   * Where the tasks come from. `imported` tasks (e.g. tau2-bench's, kept unmodified) are gated
   * for solvability only: a task a do-nothing agent passes is reported, not refused. Default
   * `native`: such a task is refused.
   */
  taskOrigin?: 'native' | 'imported';
}

export function defineDomain(def: DomainDefinition): DomainDefinition {
  const names = new Set<string>();
  for (const t of [...def.tools, ...(def.userTools ?? [])]) {
    if (names.has(t.name)) throw new Error(`domain ${def.name}: tool "${t.name}" is defined twice`);
    names.add(t.name);
  }
  return def;
}

/** The data half of a domain, as texts read from its folder. */
export interface DomainSources {
  policy: string;
  schema: string;
  /** seed.json: table → rows. */
  seed: string;
  tasks: string;
}

/** A loaded, validated domain. */
export interface Domain extends DomainDefinition {
  /** Paths (or names) of the files the domain was read from, for error messages. */
  files?: Partial<Record<keyof DomainSources, string>>;
  policy: string;
  rules: PolicyRule[];
  schema: string;
  seed: Record<string, SqlRow[]>;
  tasks: Task[];
}

/** Render a zod issue path as `[3].user_scenario.instructions`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`)).join('');
}

/**
 * `JSON.parse` for a domain file.
 * @throws DomainFileError naming `file` when `text` is not JSON.
 */
export function parseJson(file: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new DomainFileError(file, '', `not valid JSON (${(e as Error).message})`);
  }
}

const SeedFile = z.record(z.string(), z.array(z.record(z.string(), z.union([z.string(), z.number(), z.null()]))));

/**
 * Parse and validate tasks. Throws {@link DomainFileError} naming `file` and the first bad field.
 */
export function parseTasks(file: string, text: string): Task[] {
  const raw = parseJson(file, text);
  const parsed = z.array(Task).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new DomainFileError(file, fieldPath(issue.path), issue.message);
  }
  const seen = new Set<string>();
  parsed.data.forEach((t, i) => {
    if (seen.has(t.id)) throw new DomainFileError(file, `[${i}].id`, `duplicate task id "${t.id}"`);
    const unsafe = pathUnsafeId(t.id);
    if (unsafe) throw new DomainFileError(file, `[${i}].id`, `unsafe task id ${JSON.stringify(t.id)}: ${unsafe}`);
    seen.add(t.id);
    // Imperfect-caller fields name one of the task's facts.
    const sc = t.user_scenario;
    const keys = (sc.facts ?? []).map((f) => f.key);
    for (const [field, list] of [
      ['misremembers', sc.misremembers],
      ['withholds', sc.withholds],
    ] as const) {
      list?.forEach((m, j) => {
        if (!keys.includes(m.fact)) {
          throw new DomainFileError(
            file,
            `[${i}].user_scenario.${field}[${j}].fact`,
            `unknown fact "${m.fact}" (task ${t.id}; its facts: ${keys.join(', ') || 'none'})`,
          );
        }
      });
    }
  });
  return parsed.data;
}

/**
 * Join a domain's code and files. Validates the seed and the tasks, checks that every tool a
 * task's reference solution names exists, and parses the policy's rule ids (a policy without
 * ids, such as tau2-bench's, gives no rules; the gate then skips rule binding).
 *
 * @param files file names used in error messages (defaults: policy.md, schema.sql, seed.json, tasks.json)
 * @throws DomainFileError naming the file and field of the first problem.
 */
export function buildDomain(
  def: DomainDefinition,
  src: DomainSources,
  files: Partial<Record<keyof DomainSources, string>> = {},
): Domain {
  const f = { policy: 'policy.md', schema: 'schema.sql', seed: 'seed.json', tasks: 'tasks.json', ...files };
  const seedParsed = SeedFile.safeParse(parseJson(f.seed, src.seed));
  if (!seedParsed.success) {
    const issue = seedParsed.error.issues[0]!;
    throw new DomainFileError(f.seed, fieldPath(issue.path), issue.message);
  }
  const tasks = parseTasks(f.tasks, src.tasks);
  const agentTools = new Set(def.tools.map((t) => t.name));
  const userTools = new Set((def.userTools ?? []).map((t) => t.name));
  tasks.forEach((task, i) => {
    (task.evaluation_criteria?.actions ?? []).forEach((a, j) => {
      const pool = a.requestor === 'user' ? userTools : agentTools;
      if (!pool.has(a.name)) {
        throw new DomainFileError(
          f.tasks,
          `[${i}].evaluation_criteria.actions[${j}].name`,
          `unknown ${a.requestor === 'user' ? 'user ' : ''}tool "${a.name}" (task ${task.id})`,
        );
      }
    });
  });
  if (!src.schema.trim()) throw new DomainFileError(f.schema, '', 'empty schema');
  let rules: PolicyRule[];
  try {
    rules = parsePolicy(src.policy);
  } catch (e) {
    throw new DomainFileError(f.policy, '', (e as Error).message.replace(/^policy: /, ''));
  }
  return { ...def, files: f, policy: src.policy, rules, schema: src.schema, seed: seedParsed.data, tasks };
}

/** Tools callable by `actor`. */
export function toolsFor(domain: DomainDefinition, actor: Requestor): readonly ToolDefinition[] {
  return actor === 'user' ? (domain.userTools ?? []) : domain.tools;
}

export type { SqlValue };

/**
 * The domain stages of `build-domain --agent` (#19 item 3): after each task's caller text
 * (./code-agent.ts), a model behind the {@link ModelClient} port
 *
 * a. refines the policy's rule texts (`rules`): ids kept, each text non-empty, one line, naming no
 *    tool, table or column the domain lacks;
 * b. adds business rules (`business_rules`), each both a guard step in one write tool
 *    (`fail_if` with bound arguments, raising a named tool error) and a data rule check
 *    (`rule_checks` of `tools.json`); each is checked for shape, a new id, an existing write
 *    tool, SQL built only with `?` placeholders (no `||` concatenation, no templates in string
 *    literals), the tools file's own validation, tables and columns that exist (SQLite prepares
 *    the statement) and the gate on the whole domain (its references still pass, the rule is
 *    cited);
 * c. proposes harder tasks (`harder_tasks`): the task schema, a new id, a reference of two or
 *    more calls unlike any other task's, and the gate.
 *
 * Every proposal ends admitted or rejected with a status and the reason. Each stage is one
 * request (seed `seed + k`), recorded in order, so a run replays exactly from the recorded
 * replies. An endpoint failure is an {@link InfrastructureError}: the build stops.
 */
import { z } from 'zod';
import { DomainRuntime } from '../env/environment.ts';
import { InfrastructureError } from '../errors.ts';
import { gateVariants } from '../evolution/harden.ts';
import { parseJsonReply } from '../evolution/proposals.ts';
import { gateDomain } from '../gate/gate.ts';
import type { ModelClient, ModelResponse } from '../ports/model-client.ts';
import type { SqlDbFactory } from '../ports/sql-db.ts';
import {
  DOMAIN_BUILDER_PROMPT_VERSION,
  DOMAIN_BUILDER_SYSTEM,
  renderBusinessRules,
  renderHarderTasks,
  renderRefineRules,
  type DomainView,
} from '../prompts/domain-builder.ts';
import { fieldPath, type Domain } from '../schema/domain.ts';
import { unsafeModelId } from '../schema/safe-id.ts';
import { Task } from '../schema/task.ts';
import { type AgentStage, recordingClient, type RecordedReply } from './code-agent.ts';
import { domainFromFiles } from './index.ts';

/** Most harder tasks one run asks for. */
export const MAX_HARDER_TASKS = 3;
/** Most business rules one run admits. */
export const MAX_BUSINESS_RULES = 3;

/** What one stage did: admitted and rejected proposals, each named by its rule or task id. */
export interface StageReport {
  admitted: { id: string; detail: string }[];
  rejected: { id: string; status: string; detail: string }[];
}

/** Options of {@link runDomainAgent}. */
export interface DomainAgentOptions {
  client: ModelClient;
  /** The domain folder's files (name → text) after the caller-text stage. */
  files: Readonly<Record<string, string>>;
  /** Folder name for error messages. */
  dir: string;
  factory: SqlDbFactory;
  /** Seed of the first stage's request; stage k uses `seed + k`. */
  seed: number;
  /** The run's recorded replies; the stages append theirs. */
  replies: RecordedReply[];
}

/** The new files and what each stage did. */
export interface DomainAgentResult {
  files: Record<string, string>;
  rules: StageReport;
  business_rules: StageReport;
  harder_tasks: StageReport;
}

const json = (x: unknown) => `${JSON.stringify(x, null, 2)}\n`;

/** What the model sees: policy, schema, one line per tool, the first rows of each table. */
function viewOf(domain: Domain, withTasks = false): DomainView {
  const rows = Object.entries(domain.seed)
    .map(
      ([table, list]) =>
        `${table}: ${(list as unknown[])
          .slice(0, 3)
          .map((r) => JSON.stringify(r))
          .join(' ')}`,
    )
    .join('\n');
  return {
    policy: domain.policy,
    schema: domain.schema,
    tools: domain.tools.map((t) => {
      const params = 'shape' in t.params ? Object.keys((t.params as z.ZodObject).shape) : [];
      return `${t.name} (${t.kind}): ${t.description.replace(/\s+/g, ' ').slice(0, 200)}; parameters: ${params.join(', ')}`;
    }),
    ...(withTasks ? { rows, tasks: domain.tasks.slice(0, 2).map(({ lineage: _, ...t }) => t as Task) } : {}),
  };
}

/**
 * Snake_case words a rule text names that are no tool, table, column or parameter of the domain
 * (a refinement may not invent tool names).
 */
function inventedNames(text: string, domain: Domain, tables: readonly { name: string; columns: string[] }[]): string[] {
  const known = new Set<string>();
  for (const t of domain.tools) {
    known.add(t.name);
    if ('shape' in t.params) for (const p of Object.keys((t.params as z.ZodObject).shape)) known.add(p);
  }
  for (const t of tables) {
    known.add(t.name);
    for (const c of t.columns) known.add(c);
  }
  const words = text.match(/\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g) ?? [];
  return [...new Set(words.filter((w) => !known.has(w)))];
}

/**
 * Why a statement is built from strings rather than bound parameters, or null: `||`
 * concatenation or `+` next to a string literal outside quotes, or a `{…}` template inside one.
 */
export function stringBuiltSql(sql: string): string | null {
  let i = 0;
  let outside = '';
  while (i < sql.length) {
    const ch = sql[i]!;
    if (ch === "'" || ch === '"') {
      const end = sql.indexOf(ch, i + 1);
      if (end < 0) return `unterminated ${ch} quote`;
      if (/[{}]/.test(sql.slice(i + 1, end))) return `a template inside the string literal ${sql.slice(i, end + 1)}`;
      outside += ` ${ch}${ch} `;
      i = end + 1;
      continue;
    }
    outside += ch;
    i++;
  }
  if (outside.includes('||')) return 'builds text with || (string concatenation); bind each value with ? and args';
  if (/['"]\s*\+|\+\s*['"]/.test(outside)) return 'joins strings with +; bind each value with ? and args';
  return null;
}

/**
 * `duplicate_id` detail when `id` was already proposed earlier in the same reply (whatever became
 * of that first proposal), else null; records `id` as seen at `at`.
 */
function repeatedInReply(seen: Map<string, string>, id: string, at: string): string | null {
  const first = seen.get(id);
  if (first !== undefined)
    return `${id} is proposed twice in one reply (first at ${first}); only the first is considered`;
  seen.set(id, at);
  return null;
}

/** One line per gate refusal: domain problems, then each refused task's reasons. */
async function gateReasons(runtime: DomainRuntime): Promise<string[]> {
  const report = await gateDomain(runtime);
  return [
    ...report.domain_problems,
    ...report.tasks.filter((t) => !t.accepted).flatMap((t) => t.reasons.map((r) => `${t.task_id}: ${r}`)),
  ];
}

/** The tables and their columns (SQLite's own view of the schema). */
async function tablesOf(runtime: DomainRuntime): Promise<{ name: string; columns: string[] }[]> {
  return runtime.tables.map((t) => ({ name: t.name, columns: [...t.columns] }));
}

/** Ask once; the reply (recorded), or an InfrastructureError when the endpoint fails. */
async function ask(
  opts: DomainAgentOptions,
  stage: AgentStage,
  prompt: string,
  seed: number,
): Promise<Pick<ModelResponse, 'text' | 'reasoning'>> {
  const client = recordingClient(opts.client, opts.replies, { stage });
  try {
    const res = await client.complete({
      messages: [
        { role: 'system', content: DOMAIN_BUILDER_SYSTEM },
        { role: 'user', content: prompt },
      ],
      sampling: { temperature: 0, top_p: 1, top_k: null, max_tokens: 4096, seed },
      json: true,
    });
    return res;
  } catch (e) {
    throw new InfrastructureError(
      `the code agent's endpoint failed on the ${stage} request: ${(e as Error).message}; nothing was written`,
    );
  }
}

const RulesReply = z.object({ rules: z.array(z.unknown()) });
const RuleText = z.object({ id: z.string().min(1), text: z.string() }).strict();

/** The line of rule `id` in a generated policy (`- **R3** …`). */
const ruleLine = (id: string) => new RegExp(`^- \\*\\*${id.replace(/[^A-Za-z0-9_-]/g, '')}\\*\\* .*$`, 'm');

async function refineRules(opts: DomainAgentOptions, files: Record<string, string>, report: StageReport) {
  const domain = domainFromFiles(opts.dir, files);
  const runtime = await DomainRuntime.create(domain, opts.factory);
  const tables = await tablesOf(runtime);
  await runtime.close();
  const reply = parseJsonReply(
    await ask(opts, 'rules', renderRefineRules(viewOf(domain)), opts.seed),
    RulesReply,
    '{"rules": [...]}',
  );
  if (typeof reply === 'string') {
    report.rejected.push({ id: '(reply)', status: 'unparseable', detail: reply });
    return files;
  }
  let policy = files['policy.md']!;
  const seen = new Map<string, string>();
  reply.rules.forEach((raw, i) => {
    const r = RuleText.safeParse(raw);
    const id = r.success ? r.data.id : `rules[${i}]`;
    const reject = (status: string, detail: string) => report.rejected.push({ id, status, detail });
    if (!r.success) {
      const issue = r.error.issues[0]!;
      return reject('schema_invalid', `${fieldPath(issue.path) || '(item)'}: ${issue.message}`);
    }
    const text = r.data.text.trim();
    const unsafe = unsafeModelId(id);
    if (unsafe) return reject('unsafe_id', `id: ${unsafe}`);
    const twice = repeatedInReply(seen, id, `rules[${i}]`);
    if (twice) return reject('duplicate_id', twice);
    if (!domain.rules.some((x) => x.id === id))
      return reject(
        'unknown_rule',
        `no rule ${id} in the policy (ids: ${domain.rules.map((x) => x.id).join(', ')}); ids are kept, none added`,
      );
    if (!text) return reject('empty_text', 'the new text is empty');
    if (/\n/.test(text) || text.length > 1000)
      return reject('schema_invalid', 'the text must be one line of at most 1000 characters');
    const invented = inventedNames(text, domain, tables);
    if (invented.length)
      return reject('invented_name', `names ${invented.join(', ')}, which no tool, table or column of the domain is`);
    policy = policy.replace(ruleLine(id), `- **${id}** ${text}`);
    report.admitted.push({ id, detail: text });
  });
  return { ...files, 'policy.md': policy };
}

const SqlPart = {
  args: z
    .array(z.union([z.string().min(1), z.object({ value: z.union([z.string(), z.number(), z.null()]) }).strict()]))
    .default([]),
};
const BusinessRule = z
  .object({
    id: z.string().regex(/^[A-Za-z][A-Za-z0-9_-]*$/, 'must be a rule id such as R9'),
    text: z.string().min(1).max(1000),
    tool: z.string().min(1),
    guard: z.object({ fail_if: z.string().min(1), ...SqlPart, error: z.string().min(1).max(300) }).strict(),
    check: z
      .object({
        when: z.enum(['before', 'after']).default('before'),
        violation_if: z.string().min(1),
        ...SqlPart,
        message: z.string().min(1).max(300),
      })
      .strict(),
  })
  .strict();

async function businessRules(opts: DomainAgentOptions, files: Record<string, string>, report: StageReport) {
  const domain = domainFromFiles(opts.dir, files);
  const base = await DomainRuntime.create(domain, opts.factory);
  const tables = await tablesOf(base);
  await base.close();
  const numbers = domain.rules.map((r) => Number(/^R(\d+)$/.exec(r.id)?.[1] ?? 0));
  const next = `R${Math.max(0, ...numbers) + 1}`;
  const text = await ask(opts, 'business_rules', renderBusinessRules(viewOf(domain), next), opts.seed + 1);
  const reply = parseJsonReply(text, RulesReply, '{"rules": [...]}');
  if (typeof reply === 'string') {
    report.rejected.push({ id: '(reply)', status: 'unparseable', detail: reply });
    return files;
  }
  let current = files;
  const seen = new Map<string, string>();
  for (const [i, raw] of reply.rules.entries()) {
    const r = BusinessRule.safeParse(raw);
    const id = r.success ? r.data.id : `rules[${i}]`;
    const reject = (status: string, detail: string) => void report.rejected.push({ id, status, detail });
    if (!r.success) {
      const issue = r.error.issues[0]!;
      reject('schema_invalid', `${fieldPath(issue.path) || '(item)'}: ${issue.message}`);
      continue;
    }
    if (report.admitted.length >= MAX_BUSINESS_RULES) {
      reject('over_limit', `at most ${MAX_BUSINESS_RULES} business rules per run`);
      continue;
    }
    const rule = r.data;
    const unsafe = (['id', 'tool'] as const).map((f) => [f, unsafeModelId(rule[f])] as const).find(([, why]) => why);
    if (unsafe) {
      reject('unsafe_id', `${unsafe[0]}: ${unsafe[1]}`);
      continue;
    }
    const twice = repeatedInReply(seen, rule.id, `rules[${i}]`);
    if (twice) {
      reject('duplicate_id', twice);
      continue;
    }
    const dom = domainFromFiles(opts.dir, current);
    if (dom.rules.some((x) => x.id === rule.id)) {
      reject('duplicate_id', `the policy already has a rule ${rule.id}`);
      continue;
    }
    const tool = dom.tools.find((t) => t.name === rule.tool);
    if (tool?.kind !== 'write') {
      reject('unknown_tool', `${rule.tool} is not a write tool of the domain`);
      continue;
    }
    const invented = inventedNames(rule.text, dom, tables);
    if (invented.length) {
      reject('invented_name', `names ${invented.join(', ')}, which no tool, table or column of the domain is`);
      continue;
    }
    const built = (
      [
        ['guard.fail_if', rule.guard.fail_if],
        ['check.violation_if', rule.check.violation_if],
      ] as const
    ).map(([f, sql]) => [f, stringBuiltSql(sql)] as const);
    const bad = built.find(([, why]) => why);
    if (bad) {
      reject('sql_not_parameterized', `${bad[0]}: ${bad[1]}`);
      continue;
    }
    // The guard goes before the tool's first write (after its lookups); the check joins rule_checks.
    const toolsDoc = JSON.parse(current['tools.json']!) as {
      tools: { name: string; steps: Record<string, unknown>[] }[];
      rule_checks?: unknown[];
    };
    const spec = toolsDoc.tools.find((t) => t.name === rule.tool)!;
    const at = spec.steps.findIndex((s) => 'write' in s);
    spec.steps.splice(at < 0 ? spec.steps.length : at, 0, {
      fail_if: rule.guard.fail_if,
      args: rule.guard.args,
      error: rule.guard.error,
    });
    toolsDoc.rule_checks = [
      ...(toolsDoc.rule_checks ?? []),
      {
        rule: rule.id,
        description: rule.text,
        policy: rule.text,
        tools: [rule.tool],
        when: rule.check.when,
        violation_if: rule.check.violation_if,
        args: rule.check.args,
        message: rule.check.message,
      },
    ];
    const policy = current['policy.md']!;
    const lines = policy.split('\n');
    const last = lines.reduce(
      (k, l, j) => (/^- \*\*[^*]+\*\* /.test(l) && !lines.slice(0, j).some((x) => x.startsWith('## Other')) ? j : k),
      -1,
    );
    lines.splice(last + 1, 0, `- **${rule.id}** ${rule.text}`);
    const candidate = { ...current, 'tools.json': json(toolsDoc), 'policy.md': lines.join('\n') };
    let runtime: DomainRuntime;
    try {
      runtime = await DomainRuntime.create(domainFromFiles(opts.dir, candidate), opts.factory);
    } catch (e) {
      reject('invalid', (e as Error).message.replace(`${opts.dir}/`, ''));
      continue;
    }
    try {
      // Tables and columns must exist: SQLite prepares each statement (EXPLAIN runs nothing).
      const env = await runtime.open();
      let missing: string | null = null;
      for (const [f, sql, args] of [
        ['guard.fail_if', rule.guard.fail_if, rule.guard.args],
        ['check.violation_if', rule.check.violation_if, rule.check.args],
      ] as const) {
        try {
          await env.reader.all(
            `EXPLAIN ${sql}`,
            args.map(() => null),
          );
        } catch (e) {
          missing = `${f}: ${(e as Error).message}`;
          break;
        }
      }
      await env.close();
      if (missing) {
        reject('sql_invalid', missing);
        continue;
      }
      const reasons = await gateReasons(runtime);
      if (reasons.length) {
        reject('gate_rejected', `the gate refuses the domain with it: ${reasons.join('; ')}`);
        continue;
      }
    } finally {
      await runtime.close();
    }
    current = candidate;
    report.admitted.push({ id: rule.id, detail: `${rule.text} (guard on ${rule.tool}, ${rule.check.when} check)` });
  }
  return current;
}

const TasksReply = z.object({ tasks: z.array(z.unknown()) });

async function harderTasks(opts: DomainAgentOptions, files: Record<string, string>, report: StageReport) {
  const domain = domainFromFiles(opts.dir, files);
  const seed = opts.seed + 2;
  const text = await ask(opts, 'harder_tasks', renderHarderTasks(viewOf(domain, true), MAX_HARDER_TASKS), seed);
  const reply = parseJsonReply(text, TasksReply, '{"tasks": [...]}');
  if (typeof reply === 'string') {
    report.rejected.push({ id: '(reply)', status: 'unparseable', detail: reply });
    return files;
  }
  const runtime = await DomainRuntime.create(domain, opts.factory);
  const tasks: unknown[] = JSON.parse(files['tasks.json']!);
  const ids = new Set(domain.tasks.map((t) => t.id));
  const walks = new Set(
    domain.tasks.map((t) => JSON.stringify(t.evaluation_criteria?.actions?.map((a) => [a.name, a.arguments]))),
  );
  const seen = new Map<string, string>();
  try {
    for (const [i, raw] of reply.tasks.entries()) {
      const rawId = (raw as { id?: unknown } | null)?.id;
      const id = typeof rawId === 'string' || typeof rawId === 'number' ? String(rawId) : `tasks[${i}]`;
      const reject = (status: string, detail: string) => void report.rejected.push({ id, status, detail });
      if (report.admitted.length >= MAX_HARDER_TASKS) {
        reject('over_limit', `at most ${MAX_HARDER_TASKS} harder tasks per run`);
        continue;
      }
      if (raw && typeof raw === 'object' && 'lineage' in raw) {
        reject('schema_invalid', 'lineage: set by the builder, not by the model');
        continue;
      }
      const parsed = Task.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        reject('schema_invalid', `${fieldPath(issue.path) || '(task)'}: ${issue.message}`);
        continue;
      }
      const unsafe = unsafeModelId(parsed.data.id);
      if (unsafe) {
        reject('unsafe_id', `id: ${unsafe}`);
        continue;
      }
      const twice = repeatedInReply(seen, parsed.data.id, `tasks[${i}]`);
      if (twice) {
        reject('duplicate_id', twice);
        continue;
      }
      if (ids.has(parsed.data.id)) {
        reject('duplicate_id', `a task ${parsed.data.id} exists`);
        continue;
      }
      const actions = parsed.data.evaluation_criteria?.actions ?? [];
      const unknown = actions.find((a) => a.requestor === 'assistant' && !domain.tools.some((t) => t.name === a.name));
      if (unknown) {
        reject('schema_invalid', `evaluation_criteria.actions: unknown tool "${unknown.name}"`);
        continue;
      }
      const walk = JSON.stringify(actions.map((a) => [a.name, a.arguments]));
      if (actions.length < 2 || walks.has(walk)) {
        reject(
          'not_harder',
          actions.length < 2 ? 'a reference of fewer than two calls' : 'the same reference as another task',
        );
        continue;
      }
      const task: Task = {
        ...parsed.data,
        lineage: {
          version: 1,
          parent: null,
          generation: 0,
          changes: [
            {
              version: 1,
              reason: 'proposed as a harder task',
              by: `model:${opts.client.id}`,
              prompt: DOMAIN_BUILDER_PROMPT_VERSION,
              seed,
            },
          ],
        },
      };
      const { accepted, reasons } = await gateVariants(runtime, [task]);
      if (!accepted.has(task.id)) {
        reject('gate_rejected', `the gate refuses it: ${(reasons.get(task.id) ?? []).join('; ')}`);
        continue;
      }
      ids.add(task.id);
      walks.add(walk);
      tasks.push(task);
      report.admitted.push({ id: task.id, detail: `${actions.map((a) => a.name).join(' → ')}` });
    }
  } finally {
    await runtime.close();
  }
  return { ...files, 'tasks.json': json(tasks) };
}

/**
 * Run stages a–c on a built domain's files, in order; each admitted change is kept for the next.
 * @throws InfrastructureError when the endpoint fails a request (the build stops, nothing written)
 */
export async function runDomainAgent(opts: DomainAgentOptions): Promise<DomainAgentResult> {
  const rules: StageReport = { admitted: [], rejected: [] };
  const business: StageReport = { admitted: [], rejected: [] };
  const harder: StageReport = { admitted: [], rejected: [] };
  let files = { ...opts.files };
  files = await refineRules(opts, files, rules);
  files = await businessRules(opts, files, business);
  files = await harderTasks(opts, files, harder);
  return { files, rules, business_rules: business, harder_tasks: harder };
}

/**
 * The domain builder's prompts (`switchboard build-domain --agent`, #19 item 3): fixed, versioned
 * templates that show a model a scaffolded domain (policy, tables, tools) and ask for one JSON
 * object: refined rule texts, business rules (a guard and a rule check each), or harder tasks.
 * The caller-text refinement of each task uses the task editor's prompt (./task-editor.ts).
 */
import type { Task } from '../schema/task.ts';
import { bullets, joinSections, section } from './common.ts';

/** Version of the three requests below; bump it whenever their text changes (recorded with each run). */
export const DOMAIN_BUILDER_PROMPT_VERSION = 'domain-builder-v2';

/** The domain builder's system message. */
export const DOMAIN_BUILDER_SYSTEM =
  'You review an automatically scaffolded customer-service domain: a SQLite database, tools written as data ' +
  '(parameterized SQL steps), a policy of numbered rules, and tasks. You answer with one JSON object and nothing ' +
  'else. SQL you write is one SQLite statement with "?" placeholders bound from "args"; never put values into ' +
  'the SQL text and never build SQL from strings.';

/** What the model sees of the domain. */
export interface DomainView {
  policy: string;
  /** `schema.sql` as written. */
  schema: string;
  /** One line per tool: `name (kind): description; parameters: a, b`. */
  tools: string[];
  /** The first rows of each table, as JSON lines (for the harder-task request). */
  rows?: string;
  /** A few tasks as JSON (for the harder-task request). */
  tasks?: readonly Task[];
}

/**
 * The finding the task editor gets for each scaffolded task (its prompt: ./task-editor.ts): rewrite
 * the caller's text, keep every value and the evaluation criteria.
 */
export const REFINE_CALLER_TEXT =
  "The caller's persona, instructions and requests are template text from an automatic scaffold. Rewrite " +
  'user_scenario.persona, user_scenario.instructions (reason_for_call, known_info, unknown_info, ' +
  'task_instructions) and user_scenario.requests as a real caller of this service would say them, in the ' +
  "task's language. Keep every value (ids, names, amounts, the new values) exactly; keep user_scenario.facts; " +
  'change nothing under evaluation_criteria.';

function domainSections(view: DomainView): string[] {
  return [
    section('Policy', view.policy),
    section('Database schema (SQLite)', view.schema),
    section('Tools', bullets(view.tools)),
    section('First rows of each table', view.rows),
  ];
}

/** Stage a: refine the wording of the policy's rules; ids stay. */
export function renderRefineRules(view: DomainView): string {
  return joinSections([
    ...domainSections(view),
    section(
      'What to do',
      'The rule texts are drafts made from API descriptions. Rewrite each rule so an agent on the phone can ' +
        'follow it: plain, specific, one or two sentences. Keep every rule id; do not add or remove rules; name ' +
        'only tools, tables and columns that exist above.',
    ),
    section('Answer format', 'Return {"rules": [{"id": "<existing rule id>", "text": "<new text>"}, ...]}.'),
  ]);
}

/** Stage b: business rules, each as a guard on a write tool and an executable rule check. */
export function renderBusinessRules(view: DomainView, nextId: string): string {
  return joinSections([
    ...domainSections(view),
    section(
      'What to do',
      'Propose up to three business rules a real business of this kind would have and that the policy lacks ' +
        '(e.g. a state that forbids a change, a limit on a value). Each rule is enforced twice: a guard step ' +
        'in one write tool (a query that returns a row when the call must be refused, and the error the tool ' +
        'raises) and a rule check (a query that returns a row when a call broke the rule). Arguments are the ' +
        "tool's parameter names, columns of the tool's lookup as _row.<column> (guards only), or $now. " +
        `Number new rules from ${nextId}.`,
    ),
    section(
      'Answer format',
      'Return {"rules": [{"id": "R…", "text": "<the rule as a policy sentence>", "tool": "<write tool>", ' +
        '"guard": {"fail_if": "SELECT …", "args": [...], "error": "<message, may name {parameters}>"}, ' +
        '"check": {"when": "before" | "after", "violation_if": "SELECT …", "args": [...], "message": "<text>"}}]}.',
    ),
  ]);
}

/** Stage c: harder tasks (a reference that must respect a guard, a multi-step walk). */
export function renderHarderTasks(view: DomainView, max: number): string {
  return joinSections([
    ...domainSections(view),
    section('Some tasks of the domain (JSON)', JSON.stringify(view.tasks ?? [], null, 2)),
    section(
      'What to do',
      `Propose up to ${max} new tasks that are harder than these: a task whose reference solution must respect a ` +
        'business rule (the caller asks for something the rule forbids, or only part of it is allowed), or a ' +
        'walk of several reads and writes. Use rows that exist in the database. The reference solution must ' +
        'succeed on a fresh database, its writes must be inside write_whitelist, every assertion must cite a ' +
        'policy rule, and an agent that does nothing must fail the task.',
    ),
    section(
      'Answer format',
      'Return {"tasks": [<task JSON in the same shape as above, with a new "id">, ...]} without "lineage".',
    ),
  ]);
}

/**
 * Task schema. The baseline is tau2-bench's task shape (`Task` in tau2/data_model/tasks.py):
 * `id`, `description`, `user_scenario`, `initial_state`, `evaluation_criteria`. Unknown keys are
 * dropped, so tau2-bench task files parse as they are. Our additions are marked "ours".
 */
import { z } from 'zod';

/** A scalar a whitelist or a fact may hold. */
export const Scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** Reward components. tau2-bench's five, then ours. */
export const RewardComponent = z.enum([
  'DB',
  'COMMUNICATE',
  'ENV_ASSERTION',
  'NL_ASSERTION',
  'ACTION',
  'WRITE_WHITELIST',
  'QUALITY',
  'ASSERTIONS',
]);
export type RewardComponent = z.infer<typeof RewardComponent>;

/** Who makes a call: the agent (`assistant`) or the caller (`user`), as tau2's `requestor`. */
export const Requestor = z.enum(['assistant', 'user']);
export type Requestor = z.infer<typeof Requestor>;

/** One step of a reference solution (tau2 `Action`). */
export const Action = z.object({
  action_id: z.string().optional(),
  requestor: Requestor.default('assistant'),
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).default({}),
  info: z.string().nullish(),
  /** Argument names compared by the ACTION component; all when absent (tau2 `compare_args`). */
  compare_args: z.array(z.string()).nullish(),
  /**
   * Ours: which of the caller's requests (index into `user_scenario.requests`) this step serves.
   * The reference agent finishes one intent before the caller states the next. Default 0.
   */
  intent: z.number().int().min(0).optional(),
  /**
   * Ours: what the reference agent says as a turn of its own before this step, and waits for
   * the caller's reply (an outbound negotiation's offer, e.g. "标准保障现在是3600元。"). Before a
   * write it replaces the confirmation question, so use it only for writes that need no consent.
   */
  say: z.string().min(1).optional(),
});
export type Action = z.infer<typeof Action>;

/** A check of the final environment through a domain function (tau2 `EnvAssertion`). */
export const EnvAssertion = z.object({
  env_type: Requestor.default('assistant'),
  func_name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).default({}),
  assert_value: z.unknown().default(true),
  message: z.string().nullish(),
});
export type EnvAssertion = z.infer<typeof EnvAssertion>;

/** Deterministic behaviour-check kinds (ours). */
export const CheckKind = z.enum([
  'confirm_before_write',
  'tool_called',
  'tool_not_called',
  'read_before_write',
  'read_after_write',
  'plain_speech',
  'no_threat',
  'disclosed',
]);
export type CheckKind = z.infer<typeof CheckKind>;

/**
 * A behaviour assertion tied to a policy rule (ours). Without `check` it is judged by the Judge.
 * - `confirm_before_write`: every agent write (optionally only writes of `tool`) has the
 *   caller's consent: an explicit yes, as a whole turn and not a barge-in, to the agent turn
 *   that proposed that write with its key values (see `scoring/consent.ts`).
 * - `tool_called` / `tool_not_called`: the agent made / never made a successful call of `tool`
 *   whose arguments include `args`.
 * - `read_before_write`: a successful call of `tool` (a read) precedes every agent write.
 * - `read_after_write`: a successful call of `tool` (a read) follows the last successful write
 *   of `after` (a tool of either side; absent: the last write of either side). Order matters:
 *   "verify after payment" needs the read after the write.
 * - `plain_speech`: no assistant turn has written formatting, repetition or garbled text (the
 *   same detectors as the QUALITY veto), for rules about speaking style.
 * - `no_threat`: no assistant turn threatens or pressures the callee (`scoring/threats.ts`:
 *   pressure or harm cues, or a stated consequence outside the domain's `allowedConsequences`),
 *   for outbound rules against coercion.
 * - `disclosed`: every item of `says` is said by the agent at some point (each item a list of
 *   alternative wordings; numbers match as numbers), for required disclosures — also on an
 *   ending without a deal.
 */
export const Assertion = z.object({
  id: z.string().min(1),
  rule: z.string().min(1),
  text: z.string().min(1),
  check: z
    .object({
      kind: CheckKind,
      tool: z.string().optional(),
      args: z.record(z.string(), z.unknown()).optional(),
      /** `read_after_write`: the write tool (either side) the read must follow. */
      after: z.string().optional(),
      /** `disclosed`: the disclosures, each a non-empty list of alternative wordings. */
      says: z.array(z.array(z.string().min(1)).min(1)).optional(),
    })
    .optional(),
});
export type Assertion = z.infer<typeof Assertion>;

/**
 * Which writes a task may make (ours). A write is allowed when some entry names its table, its
 * operation (all when `ops` is absent), its column (all when `columns` is absent; inserts and
 * deletes are row-level and ignore `columns`) and its row matches every `where` pair (the row
 * after the write; before it for deletes).
 */
export const WhitelistEntry = z.object({
  table: z.string().min(1),
  ops: z.array(z.enum(['insert', 'update', 'delete'])).optional(),
  columns: z.array(z.string()).optional(),
  where: z.record(z.string(), Scalar).optional(),
});
export type WhitelistEntry = z.infer<typeof WhitelistEntry>;

/**
 * A fact the caller knows and gives when asked (ours): `cues` are words in the agent's question
 * that ask for it (case-insensitive substrings).
 */
export const Fact = z.object({
  key: z.string().min(1),
  value: z.string(),
  cues: z.array(z.string().min(1)).min(1),
  /** What the reference agent says to ask for it; default: a question built from `cues[0]`. */
  ask: z.string().optional(),
});
export type Fact = z.infer<typeof Fact>;

/**
 * Imperfect caller (ours): gives a wrong value for one of its facts first, and the right one when
 * the agent checks it. The scripted caller says `wrong` the first time the fact is asked for; when
 * a later agent turn contains one of `check_cues` (the agent could not find it, asks to
 * double-check) or asks for the fact again, it says `correction` (default: the fact's value).
 */
export const Misremember = z.object({
  /** `key` of the fact in `facts`. */
  fact: z.string().min(1),
  /** What the caller says first. */
  wrong: z.string().min(1),
  /** Words in an agent turn that question the value (case-insensitive substrings). */
  check_cues: z.array(z.string().min(1)).min(1),
  /** What the caller says when checked; should contain the fact's value. Default: the value. */
  correction: z.string().min(1).optional(),
});
export type Misremember = z.infer<typeof Misremember>;

/**
 * Imperfect caller (ours): holds back one of its facts until pressed. The scripted caller says
 * `deflect` when first asked; it gives the value when asked again and that turn contains one of
 * `press_cues` (the agent explains it cannot go on without it), or, without `press_cues`, when
 * asked again at all.
 */
export const Withhold = z.object({
  /** `key` of the fact in `facts`. */
  fact: z.string().min(1),
  /** What the caller says instead of the value. */
  deflect: z.string().min(1),
  /** Words in an agent turn that press for the value; absent: any repeated request presses. */
  press_cues: z.array(z.string().min(1)).optional(),
});
export type Withhold = z.infer<typeof Withhold>;

/**
 * Imperfect caller (ours): states something the database contradicts ("I paid it yesterday").
 * The scripted caller says `claim` right after its first request; when an agent turn contains one
 * of `contradict_cues` (the records say otherwise), it says `concede` once.
 */
export const FalseClaim = z.object({
  claim: z.string().min(1),
  contradict_cues: z.array(z.string().min(1)).min(1),
  concede: z.string().min(1),
});
export type FalseClaim = z.infer<typeof FalseClaim>;

/**
 * Imperfect caller (ours): changes its mind mid-call. The reference write `action_id` is first
 * proposed with the arguments `first` (what the caller asked for at the start); at that first
 * confirmation question the scripted caller says `say` (the new value) instead of yes, and
 * agrees when the agent proposes again. Only the final intent (the reference action's own
 * arguments) passes.
 */
export const ChangeOfMind = z.object({
  /** `action_id` of the agent write the caller changes its mind about. */
  action_id: z.string().min(1),
  /** The arguments the caller first asked for (the keys that change, with their first values). */
  first: z.record(z.string(), z.unknown()),
  /** What the caller says at the first confirmation question instead of yes. */
  say: z.string().min(1),
});
export type ChangeOfMind = z.infer<typeof ChangeOfMind>;

/**
 * How an outbound callee negotiates (ours). The scripted callee reads the price in each agent
 * turn (the last number before the last "元"/"yuan") and answers it: at or below `accept_at_most`
 * it agrees (`yes` to a confirmation question, else `accept`); above it, it says the next of
 * `objections` in order, then `decline` once, and hangs up on a further offer above it. It
 * hangs up at once (with `hang_up`) on an agent turn with a threat, and when the agent has taken
 * more than `patience` spoken turns. After an agent turn with one of `reconsider.cues` it
 * changes its mind and accepts up to `reconsider.accept_at_most`. A model callee gets all of
 * this in its private card.
 */
export const Negotiation = z.object({
  /** Highest price the callee accepts (its budget), in the domain's currency. */
  accept_at_most: z.number().positive(),
  /** Said in order, one per offer above the limit. */
  objections: z.array(z.string().min(1)).default([]),
  /** Said to the first offer above the limit after the objections ran out (e.g. asks for a callback). */
  decline: z.string().min(1),
  /** Said when agreeing to an offer that is not a confirmation question. */
  accept: z.string().min(1),
  /** Said when hanging up on a threat (`###STOP###` is added). */
  hang_up: z.string().min(1),
  /** Most agent spoken turns the callee stays on the line for. Default: no limit. */
  patience: z.number().int().positive().optional(),
  /** A change of mind: after an agent turn with one of `cues`, the limit becomes `accept_at_most`. */
  reconsider: z.object({ cues: z.array(z.string().min(1)).min(1), accept_at_most: z.number().positive() }).optional(),
});
export type Negotiation = z.infer<typeof Negotiation>;

/** tau2's structured user instructions. */
export const UserInstructions = z.object({
  domain: z.string().nullish(),
  reason_for_call: z.string(),
  known_info: z.string().nullish(),
  unknown_info: z.string().nullish(),
  task_instructions: z.string().nullish(),
});
export type UserInstructions = z.infer<typeof UserInstructions>;

export const UserScenario = z.object({
  persona: z.string().nullish(),
  instructions: z.union([UserInstructions, z.string()]),
  /** Ours: facts the scripted caller reveals only when asked. */
  facts: z.array(Fact).optional(),
  /** Ours: what the caller says for each intent, in order; the first opens the call. */
  requests: z.array(z.string().min(1)).optional(),
  /** Ours: what the caller will not go below / above. */
  bottom_line: z.string().nullish(),
  /** Ours (outbound callees): money the callee is willing to spend, in the domain's currency. */
  budget: z.number().nullish(),
  /** Ours (outbound callees): when the callee agrees. */
  accept_if: z.string().nullish(),
  /** Ours (outbound callees): when the callee hangs up. */
  hang_up_if: z.string().nullish(),
  /** Ours (outbound callees): how the callee answers offers; see {@link Negotiation}. */
  negotiation: Negotiation.optional(),
  /** Ours: replies the scripted caller gives to a confirmation question, in order (default yes). */
  confirmations: z.array(z.enum(['yes', 'no'])).optional(),
  /** Ours (imperfect caller): facts first given wrong, corrected when the agent checks. */
  misremembers: z.array(Misremember).optional(),
  /** Ours (imperfect caller): facts held back until the agent presses. */
  withholds: z.array(Withhold).optional(),
  /** Ours (imperfect caller): claims the database contradicts. */
  false_claims: z.array(FalseClaim).optional(),
  /** Ours (imperfect caller): a change of mind at the first confirmation question. */
  change_of_mind: ChangeOfMind.optional(),
});
export type UserScenario = z.infer<typeof UserScenario>;

/** Rows to upsert into tables before the episode: table → rows (ours, for SQL domains). */
export const TableRows = z.record(z.string(), z.array(z.record(z.string(), z.unknown())));

export const InitialState = z.object({
  initialization_data: z
    .object({
      agent_data: z.unknown().nullish(),
      user_data: z.unknown().nullish(),
    })
    .nullish(),
  initialization_actions: z.array(z.unknown()).nullish(),
  message_history: z.array(z.unknown()).nullish(),
  /** Ours: rows upserted after the seed, for SQL domains. */
  rows: TableRows.optional(),
});
export type InitialState = z.infer<typeof InitialState>;

export const EvaluationCriteria = z.object({
  actions: z.array(Action).nullish(),
  env_assertions: z.array(EnvAssertion).nullish(),
  communicate_info: z.array(z.string()).nullish(),
  nl_assertions: z.array(z.string()).nullish(),
  reward_basis: z.array(RewardComponent).default(['DB', 'COMMUNICATE']),
  /** Ours. */
  assertions: z.array(Assertion).optional(),
  /** Ours. Absent: no whitelist check (tau2 tasks). Present and empty: no write allowed. */
  write_whitelist: z.array(WhitelistEntry).nullish(),
  /**
   * Ours. Whether the QUALITY and WRITE_WHITELIST vetoes apply. Absent: yes for our own domains,
   * no for imported task banks (tau2-bench), whose tasks keep their own basis.
   */
  vetoes: z.boolean().optional(),
});
export type EvaluationCriteria = z.infer<typeof EvaluationCriteria>;

/**
 * One change of a task in the versioned task bank (ours): which version it made, why, and who
 * made it (`hard-pattern:<id>`, `repair`, `model:<name>`, `hand`).
 */
export const TaskChange = z.object({
  version: z.number().int().min(1),
  reason: z.string().min(1),
  by: z.string().min(1),
  /** The hard pattern and its parameters, for a hardened variant. */
  pattern: z.string().optional(),
  params: z.record(z.string(), z.unknown()).optional(),
  seed: z.number().int().optional(),
  /** The prompt version of a model-proposed change (e.g. `task-editor-v1`). */
  prompt: z.string().optional(),
});
export type TaskChange = z.infer<typeof TaskChange>;

/**
 * Where a task comes from in the versioned task bank (ours). Absent: version 1 of an original
 * task (no parent, generation 0, no changes). A repair keeps the id and bumps `version`; a
 * hardened variant is a new task whose `parent` is the task it was derived from, one generation
 * further.
 */
export const Lineage = z.object({
  version: z.number().int().min(1).default(1),
  /** The task (id and version) this one was derived from; null for an original task. */
  parent: z.object({ task_id: z.string().min(1), version: z.number().int().min(1) }).nullish(),
  /** 0 for an original task, parent's generation + 1 for a derived one. */
  generation: z.number().int().min(0).default(0),
  /** Every change, oldest first, each with its reason. */
  changes: z.array(TaskChange).default([]),
});
export type Lineage = z.infer<typeof Lineage>;

export const Task = z.object({
  id: z.union([z.string(), z.number()]).transform(String),
  /** Ours: version, parent, generation and the reason for each change (the versioned task bank). */
  lineage: Lineage.optional(),
  description: z
    .object({
      purpose: z.string().nullish(),
      relevant_policies: z.string().nullish(),
      notes: z.string().nullish(),
    })
    .nullish(),
  /** Ours: who places the call. Outbound: the agent calls the customer. */
  role: z.enum(['inbound', 'outbound']).default('inbound'),
  /** Ours, outbound only: the agent's first words (who calls and why). */
  opening: z.string().optional(),
  user_scenario: UserScenario,
  initial_state: InitialState.nullish(),
  evaluation_criteria: EvaluationCriteria.nullish(),
});
export type Task = z.infer<typeof Task>;
export type TaskInput = z.input<typeof Task>;

/** The reason for call of a task, whichever instruction shape it uses. */
export function reasonForCall(task: Task): string {
  const ins = task.user_scenario.instructions;
  return typeof ins === 'string' ? ins : ins.reason_for_call;
}

/**
 * What the caller can say: its instructions other than `unknown_info` (the reason for call,
 * known info, task instructions; or the whole text of string instructions), its requests and the
 * values of its facts, joined by newlines.
 */
export function callerCardText(task: Task): string {
  const s = task.user_scenario;
  const instr = s.instructions;
  const parts =
    typeof instr === 'string'
      ? [instr]
      : [instr.reason_for_call, instr.known_info, instr.task_instructions].filter((x): x is string => !!x);
  return [...parts, ...(s.requests ?? []), ...(s.facts ?? []).map((f) => f.value)].join('\n');
}

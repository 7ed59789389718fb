/**
 * The admission gate: a domain and its tasks enter the task bank only if they are solvable,
 * bound to the policy, and discriminating. See {@link gateDomain} for the checks.
 */
import type { DomainRuntime } from '../env/environment.ts';
import { fixedClock } from '../ports/clock.ts';
import type { Task } from '../schema/task.ts';
import type { ComponentResult } from '../schema/trajectory.ts';
import { toolsFor } from '../schema/domain.ts';
import { NoopAgent, ReferenceAgent, ScriptedUser } from '../participants/scripted.ts';
import type { Agent } from '../participants/types.ts';
import { runEpisode } from '../rollout/episode.ts';
import { ambiguousCommunicateItems } from './communicate-readings.ts';
import { evaluate, replayGold, whitelistViolations, type GoldResult } from '../scoring/index.ts';

/** Verdict on one task. */
export interface TaskVerdict {
  task_id: string;
  accepted: boolean;
  /** Why the task is refused (empty when accepted). */
  reasons: string[];
  /** Findings that do not refuse the task (e.g. a reference lookup that fails on purpose). */
  info: string[];
  /** Reward of the scripted caller + reference agent (must be 1). */
  reference_reward: number | null;
  /** Reward of the do-nothing agent (must be 0). */
  noop_reward: number | null;
  /** True when the reference reward left out components that need a judge (none configured). */
  reference_partial: boolean;
  /**
   * The domain's executable policy on the reference solution. For `native` domains each
   * violation also refuses the task (a line in `reasons`); for `imported` ones (tau2-bench's,
   * kept as they are) violations are findings only.
   */
  policy: PolicyCheck;
  /**
   * Imported tasks only, present when not empty: where the benchmark's own evaluation fails its
   * reference solution in a check outside the task's reward basis (tau2-telecom: the DB check,
   * whose gold replay skips tau2's state sync). Reported, not refused: the reward is tau2's.
   */
  known_issues?: string[];
}

/** One rule a reference write breaks. */
export interface PolicyFinding {
  /** Rule id of the check (e.g. `cancel-eligible`, `R4`). */
  rule: string;
  /** The policy text the rule encodes (quoted from policy.md), or null when the check has none. */
  policy: string | null;
  /** Index of the reference action (`evaluation_criteria.actions[i]`). */
  action_index: number;
  tool: string;
  arguments: Record<string, unknown>;
  /** What the write did against the rule. */
  message: string;
  /** True when the tool refused the write: the attempted call breaks the rule, the state is unchanged. */
  refused: boolean;
}

/**
 * The executable policy's verdict on a reference solution:
 * - `none`: the domain has no rule checks;
 * - `clean`: every reference write was checked and none breaks a rule;
 * - `violations`: every reference write was checked and some break rules;
 * - `unchecked`: a reference write failed (or the task could not be run), so the replayed state
 *   is not the one the task means and writes after it were checked on the wrong state; never a
 *   pass. Violations found are still listed.
 */
export interface PolicyCheck {
  status: 'none' | 'clean' | 'violations' | 'unchecked';
  violations: PolicyFinding[];
  /** Why the replay could not be checked (empty unless `unchecked`). */
  unchecked: string[];
}

/** The gate's report on a domain. */
export interface GateReport {
  domain: string;
  accepted: boolean;
  /** Problems of the domain as a whole (unbound rules). */
  domain_problems: string[];
  /** `imported`: rule violations of reference writes are findings, not refusals (see {@link TaskVerdict.policy}). */
  task_origin: 'native' | 'imported';
  tasks: TaskVerdict[];
}

/** Options of {@link gateDomain}. */
export interface GateOptions {
  /** Only these tasks (all when absent). */
  taskIds?: readonly string[];
  /** Check rule ↔ assertion binding (off for imported domains whose policy has no rule ids). */
  ruleBinding?: boolean;
  /** Run the scripted episodes (reference must score 1, do-nothing 0). Default true. */
  episodes?: boolean;
  /** Called after each task. */
  onTask?: (verdict: TaskVerdict) => void;
}

/**
 * Gate a domain. A task is refused unless:
 * 1. its reference solution replays on a fresh database with no failed write (a failed read is
 *    reported as information: tau2 reference solutions contain deliberate failed lookups);
 * 2. a reference with writes leaves a non-empty gold diff, one without writes an empty one;
 * 3. every gold write by the agent is inside the task's write whitelist;
 * 4. no reference write breaks an executable rule check of the domain (for `imported` domains a
 *    violation is a finding in {@link TaskVerdict.policy}, and the task is kept);
 * 5. every assertion cites an existing policy rule;
 * 6. no numeric communicate item is ambiguous: two readings of the task text (the number when
 *    the call starts, or after the reference's writes) give different numbers and the caller's
 *    text does not say which it means (./communicate-readings.ts; information only for
 *    `imported` domains);
 * 7. the do-nothing agent scores 0 and the reference agent with the scripted caller scores 1
 *    (for `imported` domains a do-nothing pass is reported as information only).
 * The domain is refused when any task is, when a policy rule is cited by no assertion (the
 * domain's `channelRules` count as citations, and so does a rule check naming its `tools` when
 * some task's reference calls one of them), or when a channel rule names no policy rule.
 */
export async function gateDomain(runtime: DomainRuntime, options: GateOptions = {}): Promise<GateReport> {
  const domain = runtime.domain;
  // Binding is checked whenever the policy has rule ids or any assertion cites a rule; only a
  // domain with neither (tau2-bench's) skips it.
  const anyCitation = domain.tasks.some((t) => (t.evaluation_criteria?.assertions?.length ?? 0) > 0);
  const ruleBinding = options.ruleBinding ?? (domain.rules.length > 0 || anyCitation);
  const ruleIds = new Set(domain.rules.map((r) => r.id));
  const cited = new Set<string>();
  const wanted = options.taskIds ? new Set(options.taskIds) : null;
  const tasks = domain.tasks.filter((t) => !wanted || wanted.has(t.id));
  const verdicts: TaskVerdict[] = [];

  for (const task of tasks) {
    const reasons: string[] = lintTask(runtime, task);
    const info: string[] = [];
    let reference: number | null = null;
    let noop: number | null = null;
    let partial = false;
    let policy: PolicyCheck = { status: 'unchecked', violations: [], unchecked: [] };
    let policyDone = false;
    const knownIssues: string[] = [];
    for (const a of task.evaluation_criteria?.assertions ?? []) {
      cited.add(a.rule);
      if (ruleBinding && !ruleIds.has(a.rule)) reasons.push(`assertion ${a.id} cites unknown rule ${a.rule}`);
    }
    // A rule check that names its tools is an assertion of its rule on every call of them: it
    // cites the rule when this task's reference calls one of those tools.
    const called = new Set((task.evaluation_criteria?.actions ?? []).map((a) => a.name));
    for (const rc of domain.ruleChecks ?? []) if (rc.tools?.some((t) => called.has(t))) cited.add(rc.rule);
    try {
      const gold = await replayGold(runtime, task);
      checkReplay(runtime, task, gold, reasons, info);
      policy = policyCheck(runtime, task, gold);
      policyDone = true;
      if (domain.taskOrigin !== 'imported') reasons.push(...policy.violations.map(violationLine));
      // Imported banks keep their tasks as they are: an ambiguous item is reported there.
      for (const a of await ambiguousCommunicateItems(runtime, task))
        (domain.taskOrigin === 'imported' ? info : reasons).push(a.message);
      if (options.episodes ?? true) {
        const ref = await score(runtime, task, new ReferenceAgent(), gold);
        reference = ref.reward;
        partial = ref.partial;
        if (ref.db && domain.taskOrigin === 'imported' && ref.db.score === 0 && !ref.basis.includes('DB')) {
          knownIssues.push(
            `the benchmark's DB check fails the reference solution itself (DB is not in this task's reward basis): ${ref.db.details.join('; ')}`,
          );
        }
        const nothing = await score(runtime, task, new NoopAgent(), gold);
        noop = nothing.reward;
        // An invalid rollout has no score: the line says why (its invalid_reason).
        const why = (r: Scored) => (r.invalid ? ` (invalid rollout: ${r.invalid})` : '');
        if (reference !== 1) reasons.push(`reference agent with scripted caller scores ${reference}, not 1${why(ref)}`);
        if (noop !== 0) {
          const line = `do-nothing agent scores ${noop}, not 0${why(nothing)}`;
          if (domain.taskOrigin === 'imported') info.push(`${line} (task does not discriminate; kept as imported)`);
          else reasons.push(line);
        }
      }
    } catch (e) {
      // A task whose setup or scoring throws (bad initial_state rows, an env function that
      // rejects its arguments) is refused with the reason, not a crash of the whole gate.
      const line = `task cannot be run: ${e instanceof Error ? e.message : String(e)}`;
      reasons.push(line);
      // Thrown before the gold replay was checked: the policy verdict is that it could not be.
      if (!policyDone) policy = { status: 'unchecked', violations: [], unchecked: [line] };
    }
    const verdict: TaskVerdict = {
      task_id: task.id,
      accepted: reasons.length === 0,
      reasons,
      info,
      reference_reward: reference,
      noop_reward: noop,
      reference_partial: partial,
      policy,
      ...(knownIssues.length ? { known_issues: knownIssues } : {}),
    };
    verdicts.push(verdict);
    options.onTask?.(verdict);
  }

  const domainProblems: string[] = [];
  // The channel reaction checks are assertions of the rules the domain names for them.
  for (const [kind, rule] of Object.entries(domain.channelRules ?? {})) {
    cited.add(rule);
    if (ruleBinding && !ruleIds.has(rule)) domainProblems.push(`channel rule ${kind} cites unknown rule ${rule}`);
  }
  domainProblems.push(...unquotedRules(domain));
  if (ruleBinding && !wanted) {
    for (const r of domain.rules)
      if (!cited.has(r.id)) domainProblems.push(`policy rule ${r.id} is cited by no assertion`);
  }
  return {
    domain: domain.name,
    accepted: domainProblems.length === 0 && verdicts.every((v) => v.accepted),
    domain_problems: domainProblems,
    task_origin: domain.taskOrigin ?? 'native',
    tasks: verdicts,
  };
}

/** One static defect of a task: the field of the task (e.g. `evaluation_criteria.write_whitelist[0].table`) and what is wrong. */
export interface TaskDefect {
  field: string;
  message: string;
}

/**
 * Static checks of a task against its domain: assertion checks name known tools and have the
 * fields their kind needs, assertion ids are unique, intents have a request to state them,
 * whitelists name known tables and columns, env assertions name known functions.
 */
export function lintTask(runtime: DomainRuntime, task: Task): string[] {
  return taskDefects(runtime, task).map((d) => d.message);
}

/** {@link lintTask} with the field of each defect, for messages that name it. */
export function taskDefects(runtime: DomainRuntime, task: Task): TaskDefect[] {
  const out: TaskDefect[] = [];
  const push = (field: string, message: string) => out.push({ field: `evaluation_criteria.${field}`, message });
  const domain = runtime.domain;
  const agentTools = new Set(domain.tools.map((t) => t.name));
  const criteria = task.evaluation_criteria;
  const ids = new Set<string>();
  (criteria?.assertions ?? []).forEach((a, j) => {
    const at = `assertions[${j}]`;
    if (ids.has(a.id)) push(`${at}.id`, `assertion id ${a.id} is used twice`);
    ids.add(a.id);
    const check = a.check;
    if (!check) return;
    const needsTool =
      check.kind === 'tool_called' ||
      check.kind === 'tool_not_called' ||
      check.kind === 'read_before_write' ||
      check.kind === 'read_after_write';
    if (needsTool && !check.tool) push(`${at}.check.tool`, `assertion ${a.id}: check ${check.kind} needs "tool"`);
    if (check.tool && !agentTools.has(check.tool))
      push(`${at}.check.tool`, `assertion ${a.id}: unknown agent tool "${check.tool}"`);
    const anyTool = [...domain.tools, ...(domain.userTools ?? [])];
    if (check.after && !anyTool.some((t) => t.name === check.after))
      push(`${at}.check.after`, `assertion ${a.id}: unknown tool "${check.after}" in "after"`);
  });
  const requests = task.user_scenario.requests?.length ?? 1;
  (criteria?.actions ?? []).forEach((a, i) => {
    if ((a.intent ?? 0) >= requests)
      push(
        `actions[${i}].intent`,
        `action #${i} ${a.name}: intent ${a.intent} has no request (user_scenario.requests has ${requests})`,
      );
  });
  const tables = new Map(runtime.tables.map((t) => [t.name, new Set(t.columns)]));
  (criteria?.write_whitelist ?? []).forEach((w, k) => {
    const at = `write_whitelist[${k}]`;
    const cols = tables.get(w.table);
    if (!cols) {
      push(`${at}.table`, `write_whitelist names unknown table "${w.table}"`);
      return;
    }
    for (const c of w.columns ?? []) {
      if (!cols.has(c)) push(`${at}.columns`, `write_whitelist names unknown column ${w.table}.${c}`);
    }
    for (const c of Object.keys(w.where ?? {})) {
      if (!cols.has(c)) push(`${at}.where.${c}`, `write_whitelist names unknown column ${w.table}.${c}`);
    }
  });
  (criteria?.env_assertions ?? []).forEach((e, k) => {
    if (!domain.envFunctions || !Object.hasOwn(domain.envFunctions, e.func_name)) {
      push(`env_assertions[${k}].func_name`, `env assertion names unknown function "${e.func_name}"`);
    }
  });
  return out;
}

function checkReplay(runtime: DomainRuntime, task: Task, gold: GoldResult, reasons: string[], info: string[]): void {
  const actions = task.evaluation_criteria?.actions ?? [];
  for (const e of gold.errors) {
    const a = actions[e.index]!;
    const kind = toolsFor(runtime.domain, a.requestor).find((t) => t.name === a.name)?.kind;
    const line = `reference action #${e.index} ${a.name}(${JSON.stringify(a.arguments)}) fails: ${e.content}`;
    if (kind === 'write') reasons.push(line);
    else info.push(line);
  }
  const expectsWrites = actions.some(
    (a) => toolsFor(runtime.domain, a.requestor).find((t) => t.name === a.name)?.kind === 'write',
  );
  if (expectsWrites && gold.writes.length === 0)
    reasons.push('reference solution has writes but leaves the database unchanged');
  if (!expectsWrites && gold.writes.length > 0)
    reasons.push('reference solution has no write tool but changes the database');
  const whitelist = task.evaluation_criteria?.write_whitelist;
  if (whitelist) {
    for (const line of whitelistViolations(gold.writes, whitelist))
      reasons.push(`gold write outside the whitelist: ${line}`);
  }
}

/** The refusal (native) or report line of one finding. */
export function violationLine(v: PolicyFinding): string {
  const refused = v.refused ? ' (refused by the tool)' : '';
  return `reference action #${v.action_index} ${v.tool} breaks ${v.rule}${refused}: ${v.message}`;
}

/** The executable policy's verdict on a gold replay (see {@link PolicyCheck}). */
export function policyCheck(runtime: DomainRuntime, task: Task, gold: GoldResult): PolicyCheck {
  if ((runtime.domain.ruleChecks?.length ?? 0) === 0) return { status: 'none', violations: [], unchecked: [] };
  const violations: PolicyFinding[] = gold.violations.map((v) => ({
    rule: v.rule,
    policy: v.policy ?? null,
    action_index: v.index,
    tool: v.action.name,
    arguments: v.action.arguments,
    message: v.message,
    refused: v.refused ?? false,
  }));
  const actions = task.evaluation_criteria?.actions ?? [];
  const unchecked = gold.errors
    .filter(
      (e) =>
        toolsFor(runtime.domain, actions[e.index]!.requestor).find((t) => t.name === e.action.name)?.kind === 'write',
    )
    .map((e) => `reference action #${e.index} ${e.action.name} fails (${e.content}): the gold state lacks its write`);
  const status = unchecked.length ? 'unchecked' : violations.length ? 'violations' : 'clean';
  return { status, violations, unchecked };
}

/** Whitespace-insensitive form of policy text, for matching quotes. */
const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

/** A domain problem for every rule check quoting text its policy does not contain. */
function unquotedRules(domain: DomainRuntime['domain']): string[] {
  const policy = squash(domain.policy);
  const out: string[] = [];
  for (const rc of domain.ruleChecks ?? [])
    if (rc.policy !== undefined && !policy.includes(squash(rc.policy)))
      out.push(`rule check ${rc.rule} quotes text the policy does not contain: "${rc.policy}"`);
  return out;
}

/** One gate episode's score: the reward, or null with the reason when the rollout is invalid. */
interface Scored {
  reward: number | null;
  partial: boolean;
  basis: readonly string[];
  db: ComponentResult | undefined;
  /** The invalid rollout's `invalid_reason` (reward null then). */
  invalid?: string;
}

async function score(runtime: DomainRuntime, task: Task, agent: Agent, gold: GoldResult): Promise<Scored> {
  const trajectory = await runEpisode({
    runtime,
    task,
    agent,
    user: new ScriptedUser(),
    seed: 0,
    clock: fixedClock(runtime.domain.now),
  });
  if (!trajectory.valid)
    return { reward: null, partial: false, basis: [], db: undefined, invalid: trajectory.invalid_reason ?? 'invalid' };
  const info = await evaluate(runtime, task, trajectory.turns, { gold, termination: trajectory.termination });
  return { reward: info.reward, partial: info.partial, basis: info.basis, db: info.components.DB };
}

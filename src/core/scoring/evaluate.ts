/**
 * The scorer: turns one recorded episode into a {@link RewardInfo}. Follows tau2-bench's
 * evaluator (tau2/evaluator/evaluator.py: components by `reward_basis`, reward = product, DB by
 * gold replay) and adds our vetoes (`WRITE_WHITELIST`, `QUALITY`) and behaviour `ASSERTIONS`.
 */
import type { DomainRuntime } from '../env/environment.ts';
import type { Judge, JudgeVerdict } from '../participants/types.ts';
import type { RewardComponent, Task } from '../schema/task.ts';
import type { ComponentResult, RewardInfo, TerminationReason, Turn } from '../schema/trajectory.ts';
import { scoreActions } from './action-match.ts';
import { checkAssertion, hasCheck, ruleVerdicts, scoreAssertions } from './behaviour-checks.ts';
import { channelVerdicts, countedChannelRules } from './channel-checks.ts';
import { ambiguousConsentItems, judgedConsent } from './consent.ts';
import { scoreCommunicate } from './communicate.ts';
import { passFail } from './component.ts';
import { scoreEnvAssertions } from './env-assertions.ts';
import { objectionScore } from './objections.ts';
import { assertionItems, judgeAll, judgedAssertionVerdicts, nlItems, scoreNlAssertions } from './judging.ts';
import { processRewards, type ProcessRewardOptions } from './process-reward.ts';
import { scoreQuality } from './quality.ts';
import { replayGold, replayTrajectory, type GoldResult } from './replay.ts';
import { scoreDb, scoreDbOrderInsensitive } from './state-match.ts';
import { scoreWriteWhitelist } from './write-whitelist.ts';

/** Options of {@link evaluate}. */
export interface EvaluateOptions {
  /** Judges NL assertions and assertions without `check`. Without one they are not judged. */
  judge?: Judge;
  /** Process-reward shaping (defaults +0.1, −0.1, γ = 0.99). */
  process?: ProcessRewardOptions;
  /**
   * A precomputed {@link replayGold} of the same task on the same runtime, to skip replaying it
   * again (the gate and batch replays share one per task). A gold result of another task throws.
   */
  gold?: GoldResult;
  /**
   * How the episode ended. `max_steps` and `too_many_errors` score 0 whatever the components
   * say (tau2-bench's evaluator does the same); absent: not checked.
   */
  termination?: TerminationReason;
}

/**
 * The components whose product is the reward: the task's `reward_basis`; then, when vetoes
 * apply, `WRITE_WHITELIST` (only when the task has a whitelist) and `QUALITY`; then `ASSERTIONS`
 * when the task has assertions or the domain has rule checks (`hasRuleChecks`: rule checks, or
 * channel rules that count, see `channelVerdicts`); an `imported` domain's rule checks never
 * enter the basis (their verdicts are reported beside tau2's reward). No duplicates.
 *
 * Vetoes apply when the task's `vetoes` says so; when it is absent, they apply to our own
 * domains and not to `imported` ones (tau2-bench tasks keep tau2's own basis by default).
 */
export function rewardBasis(
  task: Task,
  hasRuleChecks: boolean,
  taskOrigin: 'native' | 'imported' = 'native',
): RewardComponent[] {
  const c = task.evaluation_criteria;
  if (!c) return [];
  const basis = new Set<RewardComponent>(c.reward_basis);
  if (c.vetoes ?? taskOrigin !== 'imported') {
    if (c.write_whitelist != null) basis.add('WRITE_WHITELIST');
    basis.add('QUALITY');
  }
  if ((c.assertions?.length ?? 0) > 0 || (hasRuleChecks && taskOrigin !== 'imported')) basis.add('ASSERTIONS');
  return [...basis];
}

/**
 * Score one episode of `task`.
 *
 * 1. Replays the trajectory's tool turns on a fresh environment (predicted changes, writes, rule
 *    violations) and the reference solution on another (gold changes; or `options.gold`). `DB`
 *    compares the rows either replay wrote (exactly the full-state diff, without exporting the
 *    databases: see `diffWithGold`).
 * 2. Computes `DB`, `COMMUNICATE`, `ENV_ASSERTION`, `ACTION`, `QUALITY`, `WRITE_WHITELIST` (when
 *    the task has a whitelist), `ASSERTIONS` (when there are assertions or rule checks) and
 *    `NL_ASSERTION` (when in the basis; it is the only one that costs a judge call).
 * 3. Reward = product of the {@link rewardBasis} components' scores. A component that needed a
 *    judge and had none is skipped and makes the reward `partial` (never a pass).
 * 4. Process rewards and returns over the replayed trajectory; for an outbound negotiation, the
 *    objection-handled score beside the reward (`objections.ts`).
 *
 * A task without `evaluation_criteria` scores 1 with an empty basis, as in tau2-bench.
 *
 * @throws whatever the judge throws (an infrastructure failure: mark the rollout invalid).
 */
export async function evaluate(
  runtime: DomainRuntime,
  task: Task,
  turns: readonly Turn[],
  options: EvaluateOptions = {},
): Promise<RewardInfo> {
  const criteria = task.evaluation_criteria;
  if (!criteria) {
    const { reward, notes } = terminationOverride(1, options.termination);
    const p = processRewards(turns, reward, options.process);
    return {
      reward,
      partial: false,
      basis: [],
      components: {},
      assertions: [],
      step_rewards: p.step_rewards,
      returns: p.returns,
      notes,
    };
  }
  const domain = runtime.domain;
  const channelRules = countedChannelRules(domain);
  const basis = rewardBasis(
    task,
    (domain.ruleChecks?.length ?? 0) > 0 || channelRules !== undefined,
    domain.taskOrigin ?? 'native',
  );
  if (options.gold && options.gold.task_id !== task.id) {
    throw new Error(`evaluate: options.gold is the gold replay of task ${options.gold.task_id}, not of ${task.id}`);
  }
  // The replays' row-by-row `writes` serve only the write whitelist (the gold's: only the gate),
  // and the gold's rule violations only the gate and attribution.
  // Every reference call is replayed, reads too, as tau2 does: a tool declared `read` that writes
  // is a domain defect the attribution checks must see in the DB verdict.
  const gold = options.gold ?? (await replayGold(runtime, task, { writes: false, violations: false }));
  const predicted = await replayTrajectory(runtime, task, turns, { writes: criteria.write_whitelist != null });
  const components: Partial<Record<RewardComponent, ComponentResult>> = {};
  let orderFree: ComponentResult | null = null;
  try {
    components.DB = await scoreDb(runtime, task, gold, predicted);
    orderFree = await scoreDbOrderInsensitive(runtime, task, gold, predicted, components.DB.score === 1);
    components.COMMUNICATE = scoreCommunicate(
      turns,
      criteria.communicate_info ?? [],
      domain.taskOrigin === 'imported' ? 'substring' : 'numbers',
    );
    components.ENV_ASSERTION = await scoreEnvAssertions(predicted.env, criteria.env_assertions ?? []);
  } finally {
    await predicted.env.close();
  }
  components.ACTION = scoreActions(turns, criteria.actions ?? []);
  if (criteria.write_whitelist != null) {
    components.WRITE_WHITELIST = scoreWriteWhitelist(predicted.writes, criteria.write_whitelist);
  } else if (basis.includes('WRITE_WHITELIST')) {
    components.WRITE_WHITELIST = passFail(true, ['task has no write_whitelist: nothing to check']);
  }
  components.QUALITY = scoreQuality(turns);

  const assertions = criteria.assertions ?? [];
  const checked = assertions.filter(hasCheck);
  const unchecked = assertions.filter((a) => !hasCheck(a));
  const nl = basis.includes('NL_ASSERTION') ? nlItems(criteria.nl_assertions ?? []) : [];
  // Replies a consent check cannot label by its cues go to the judge, when there is one.
  const consentItems = checked.some((a) => a.check.kind === 'confirm_before_write')
    ? ambiguousConsentItems(predicted.turns, domain)
    : [];
  const verdicts: Map<string, JudgeVerdict> | null = options.judge
    ? await judgeAll(options.judge, [...nl, ...assertionItems(unchecked), ...consentItems], { domain, task, turns })
    : null;
  if (basis.includes('NL_ASSERTION')) components.NL_ASSERTION = scoreNlAssertions(nl, verdicts);
  const checkOptions = verdicts ? { judgedConsent: judgedConsent(verdicts) } : {};
  const assertionVerdicts = [
    ...checked.map((a) => checkAssertion(a, predicted.turns, domain, checkOptions)),
    ...judgedAssertionVerdicts(unchecked, verdicts),
    ...ruleVerdicts(domain, predicted.violations, predicted.turns),
  ];
  // Reactions to dropouts and barge-ins: assertions of the domain's rules when it declares them
  // (our own domains), else reported beside the reward (imported tau2 tasks keep tau2's reward).
  const reactions = channelVerdicts(predicted.turns, channelRules);
  if (channelRules) assertionVerdicts.push(...reactions);
  if (basis.includes('ASSERTIONS')) components.ASSERTIONS = scoreAssertions(assertionVerdicts);

  let reward = 1;
  let partial = false;
  for (const name of basis) {
    const c = components[name];
    if (!c) throw new Error(`scoring: basis component ${name} was not computed`);
    if (!c.judged) partial = true;
    if (c.score !== null) reward *= c.score;
  }
  const overridden = terminationOverride(reward, options.termination);
  reward = overridden.reward;
  const notes = overridden.notes;
  const p = processRewards(predicted.turns, reward, options.process);
  const negotiation = task.user_scenario.negotiation;
  return {
    reward,
    partial,
    basis,
    components,
    assertions: channelRules ? assertionVerdicts : [...assertionVerdicts, ...reactions],
    step_rewards: p.step_rewards,
    returns: p.returns,
    ...(orderFree ? { db_order_insensitive: orderFree } : {}),
    ...(negotiation ? { objections: objectionScore(negotiation, predicted.turns) } : {}),
    notes,
  };
}

/** Endings after which an episode is scored on its merits; any other valid ending scores 0. */
const NORMAL_ENDINGS: ReadonlySet<TerminationReason> = new Set(['user_stop', 'agent_stop', 'transfer', 'out_of_scope']);

function terminationOverride(
  reward: number,
  termination: TerminationReason | undefined,
): { reward: number; notes: string[] } {
  if (!termination || NORMAL_ENDINGS.has(termination)) return { reward, notes: [] };
  return {
    reward: 0,
    notes: [
      `episode ended on ${termination}: reward 0 (tau2-bench scores only episodes the agent or the caller ended)`,
    ],
  };
}

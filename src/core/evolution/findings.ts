/** The findings of attribution (./attribution.ts), its verdicts and the task issues they become. */

/** What a finding says is wrong with the task. */
export type FindingKind =
  | 'gold_breaks_rule'
  | 'gold_replay_fails'
  | 'gate_refuses'
  | 'noop_passes'
  | 'unsuppliable_value'
  | 'ambiguous_communicate'
  | 'caller_invented'
  | 'caller_hung_up_early'
  | 'db_brittle'
  | 'cross_policy_agreement';

/** Every finding kind, in check order. */
export const FINDING_KINDS = [
  'gold_breaks_rule',
  'gold_replay_fails',
  'gate_refuses',
  'noop_passes',
  'unsuppliable_value',
  'ambiguous_communicate',
  'caller_invented',
  'caller_hung_up_early',
  'db_brittle',
  'cross_policy_agreement',
] as const satisfies readonly FindingKind[];

/** One piece of evidence that a task is broken. */
export interface Finding {
  kind: FindingKind;
  /** The reward component or part of the task that fails (`DB`, `reference`, an action, …). */
  component: string;
  /** The policy rule id, for `gold_breaks_rule`. */
  rule?: string;
  /**
   * The field: `<tool>.<argument>`, `actions[<i>]`, `evaluation_criteria.communicate_info[<i>]`,
   * `user_scenario` (caller checks) or the DB variant that flips the verdict (`order_insensitive`,
   * `extra_read`, `removed_read`).
   */
  field?: string;
  detail: string;
  /** Trajectories that show it (the policy's failed rollouts, or the do-nothing rollout). */
  trajectory_ids: string[];
}

/** The verdict on one always-failed task. */
export interface Attribution {
  task_id: string;
  verdict: 'broken' | 'hard';
  findings: Finding[];
  /**
   * Policies (agent ids) every one of whose rollouts of the task was invalid (infrastructure):
   * they are left out of the cross-policy agreement check — counted neither as agreeing nor as
   * disagreeing. Absent when there are none.
   */
  invalid_policies?: string[];
}

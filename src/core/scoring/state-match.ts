/**
 * The `DB` component (tau2-bench `RewardType.DB`): the predicted state must equal the gold state,
 * compared with the domain's table options (`unordered`, `ignoreColumns`).
 */
import type { DomainRuntime } from '../env/environment.ts';
import type { DbState } from '../env/state.ts';
import type { ComponentResult } from '../schema/trajectory.ts';
import type { Task } from '../schema/task.ts';
import { passFail } from './component.ts';
import type { GoldResult } from './replay.ts';
import { showCall } from './turns.ts';

/**
 * Score `DB`: 1 when `predicted` equals the gold state, else 0; details are the diff lines
 * (`bills[B1002].status: expected "paid", got "unpaid"`).
 *
 * As in tau2-bench, a task with neither `actions` nor `env_assertions` (both absent, not empty)
 * has nothing to compare against and scores 1. Reference actions that failed during the gold
 * replay are listed first: the gold state is then incomplete and the task needs fixing.
 */
export function scoreDb(runtime: DomainRuntime, task: Task, gold: GoldResult, predicted: DbState): ComponentResult {
  const criteria = task.evaluation_criteria;
  if (criteria?.actions == null && criteria?.env_assertions == null) {
    return passFail(true, ['no reference actions or env assertions: state not compared']);
  }
  const warnings = gold.errors.map(
    (e) => `gold replay incomplete: action ${e.index} ${showCall(e.action.name, e.action.arguments)} failed: ${e.content}`,
  );
  const diff = runtime.diff(gold.state, predicted);
  return passFail(diff.equal, [...warnings, ...diff.lines]);
}

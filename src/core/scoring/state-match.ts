/**
 * The `DB` component (tau2-bench `RewardType.DB`): the predicted state must equal the gold state,
 * compared with the domain's table options (`unordered`, `ignoreColumns`).
 */
import type { DomainRuntime } from '../env/environment.ts';
import { diffChanges } from '../env/changes.ts';
import { diffStates, type StateDiff } from '../env/state.ts';
import type { TableOptions } from '../schema/domain.ts';
import type { ComponentResult } from '../schema/trajectory.ts';
import type { Task } from '../schema/task.ts';
import { passFail } from './component.ts';
import { goldState, type GoldResult, type TrajectoryReplay } from './replay.ts';
import { showCall } from './turns.ts';

/**
 * The diff of the predicted state against the gold state, as `runtime.diff(gold state,
 * predicted state)` would give it, computed from the two replays' changes (rows written only).
 * In the rare case the changes cannot decide it (a NULL primary-key value written on one side
 * only), the gold replay is run again and both full states are exported and compared.
 *
 * @param predicted the trajectory replay; its `env` must still be open.
 * @throws ChangeBaseMismatch when `gold` comes from another task or runtime (different rows at open).
 */
export async function diffWithGold(
  runtime: DomainRuntime,
  task: Task,
  gold: GoldResult,
  predicted: Pick<TrajectoryReplay, 'changes' | 'env'>,
): Promise<StateDiff> {
  const fast = runtime.diffChanges(gold.changes, predicted.changes);
  if (fast) return fast;
  return runtime.diff(await goldState(runtime, task), await predicted.env.exportState());
}

/**
 * Score `DB`: 1 when the predicted state equals the gold state, else 0; details are the diff
 * lines (`bills[B1002].status: expected "paid", got "unpaid"`), see {@link diffWithGold}.
 *
 * As in tau2-bench, a task with neither `actions` nor `env_assertions` (both absent, not empty)
 * has nothing to compare against and scores 1. Reference actions that failed during the gold
 * replay are listed first: the gold state is then incomplete and the task needs fixing.
 *
 * @param predicted the trajectory replay; its `env` must still be open.
 */
export async function scoreDb(
  runtime: DomainRuntime,
  task: Task,
  gold: GoldResult,
  predicted: Pick<TrajectoryReplay, 'changes' | 'env'>,
): Promise<ComponentResult> {
  const criteria = task.evaluation_criteria;
  if (criteria?.actions == null && criteria?.env_assertions == null) {
    return passFail(true, ['no reference actions or env assertions: state not compared']);
  }
  const warnings = gold.errors.map(
    (e) =>
      `gold replay incomplete: action ${e.index} ${showCall(e.action.name, e.action.arguments)} failed: ${e.content}`,
  );
  const diff = await diffWithGold(runtime, task, gold, predicted);
  return passFail(diff.equal, [...warnings, ...diff.lines]);
}

/** {@link orderInsensitiveOptions} by the domain's table options object (built once per domain). */
const orderFreeOf = new WeakMap<
  Readonly<Record<string, TableOptions>>,
  Readonly<Record<string, TableOptions>> | null
>();

/**
 * The domain's table options with every `orderColumn` table turned into an order-free multiset.
 * Made once per table options object (a domain's options do not change); do not modify the result.
 */
export function orderInsensitiveOptions(runtime: DomainRuntime): Readonly<Record<string, TableOptions>> | null {
  const tables = runtime.domain.tables;
  if (!tables) return null;
  let out = orderFreeOf.get(tables);
  if (out === undefined) {
    out = buildOrderFree(tables);
    orderFreeOf.set(tables, out);
  }
  return out;
}

function buildOrderFree(tables: Readonly<Record<string, TableOptions>>): Record<string, TableOptions> | null {
  const ordered = Object.entries(tables).filter(([, o]) => o.orderColumn);
  if (ordered.length === 0) return null;
  const out: Record<string, TableOptions> = { ...tables };
  for (const [name, o] of ordered)
    out[name] = { ...o, unordered: true, ignoreColumns: [...(o.ignoreColumns ?? []), o.orderColumn!] };
  return out;
}

/**
 * The DB comparison with list and key order ignored (tables with an `orderColumn`), reported
 * beside the order-sensitive verdict and never replacing it. `null` when the domain has no such
 * table.
 *
 * @param orderedEqual the order-sensitive comparison found the states equal: then they are equal
 *   with order ignored too (it only ignores more), and no second diff is made.
 */
export async function scoreDbOrderInsensitive(
  runtime: DomainRuntime,
  task: Task,
  gold: GoldResult,
  predicted: Pick<TrajectoryReplay, 'changes' | 'env'>,
  orderedEqual = false,
): Promise<ComponentResult | null> {
  const options = orderInsensitiveOptions(runtime);
  if (!options) return null;
  const criteria = task.evaluation_criteria;
  if (criteria?.actions == null && criteria?.env_assertions == null) return passFail(true, ['state not compared']);
  if (orderedEqual) return passFail(true, []);
  const diff =
    diffChanges(gold.changes, predicted.changes, runtime.tables, options) ??
    diffStates(await goldState(runtime, task), await predicted.env.exportState(), runtime.tables, options);
  return passFail(diff.equal, diff.lines);
}

/**
 * Replays for scoring. The predicted state comes from replaying the trajectory's tool turns on a
 * fresh environment (so a score depends only on the recorded trajectory, as in tau2-bench's
 * environment evaluator), the gold state from replaying the task's reference solution
 * (`evaluation_criteria.actions`) on another fresh environment.
 *
 * Both replays start from the same state (`runtime.open(task)`), so each is kept as its
 * {@link StateChanges} (the rows it wrote, before and after) rather than as an exported
 * database: comparing two change sets gives the full-state diff without reading the rest.
 */
import type { StateChanges } from '../env/changes.ts';
import type { DomainRuntime, Environment } from '../env/environment.ts';
import type { DbState } from '../env/state.ts';
import { ident } from '../env/write-log.ts';
import type { SqlRow } from '../ports/sql-db.ts';
import type { ToolContext } from '../schema/domain.ts';
import type { Action, Task } from '../schema/task.ts';
import { ranToolTurn, type Turn, type WriteEntry } from '../schema/trajectory.ts';

/**
 * Result of replaying a task's reference solution on a fresh environment. Plain data (the
 * environment is closed), reusable by every evaluation of the same task on the same runtime.
 */
export interface GoldResult {
  /** The task replayed; {@link evaluate} refuses a gold result of another task. */
  task_id: string;
  /**
   * The gold state as changes from the task's initial state: every row the reference wrote
   * (before and after, by primary key) plus the tables compared whole. Compare with
   * `runtime.diffChanges(gold.changes, predicted.changes)`; {@link goldState} exports the full
   * gold state when really needed.
   */
  changes: StateChanges;
  /**
   * Every write of the replay, in order, with its row (`turn` is the action's index); empty when
   * replayed with `writes: false` ({@link ReplayOptions}).
   */
  writes: ReplayedWrite[];
  /** Actions that failed (`content` is the `Error: …` message). A sound task has none. */
  errors: { index: number; action: Action; content: string }[];
  /**
   * Rules broken by the reference's agent writes (with the policy text the rule quotes; `refused`
   * for a reference write the tool refused). A sound task has none. Empty when replayed with
   * `violations: false` ({@link ReplayOptions}).
   */
  violations: { index: number; action: Action; rule: string; message: string; policy?: string; refused?: boolean }[];
}

/** A column write of the predicted replay, with the whole row it belongs to. */
export interface ReplayedWrite extends WriteEntry {
  /**
   * The written row: after the tool call for inserts and updates, before the write for deletes
   * (whitelist `where` pairs are matched against it).
   */
  row: Readonly<SqlRow>;
}

/** A rule broken by an agent write during the predicted replay. */
export interface ReplayedViolation {
  /** Index of the tool turn whose call broke the rule. */
  turn: number;
  tool: string;
  rule: string;
  message: string;
  /** The policy text the rule encodes, when its check quotes it. */
  policy?: string;
  /** True when the tool refused the call: an attempted write that changed nothing. */
  refused?: boolean;
}

/** Result of replaying a trajectory's tool turns. */
export interface TrajectoryReplay {
  /**
   * The trajectory with each tool turn's `content`, `error` and `writes` replaced by the
   * replay's: every later check reads these, never the recorded outcome.
   */
  turns: Turn[];
  /** Every write of the replay with its row; empty when replayed with `writes: false`. */
  writes: ReplayedWrite[];
  violations: ReplayedViolation[];
  /**
   * The predicted state as changes from the task's initial state (see {@link GoldResult.changes});
   * `env.exportState()` gives the full state while `env` is open.
   */
  changes: StateChanges;
  /** Tool turns whose replayed outcome differs from the recorded one (content or error flag). */
  diverged: number[];
  /** The replayed environment, still open for env assertions. The caller closes it. */
  env: Environment;
}

/** Options of {@link replayGold} and {@link replayTrajectory}. */
export interface ReplayOptions {
  /**
   * Collect `writes`, each with its whole row (default true). Every row written costs one read
   * after its call; scoring needs them only for a task's write whitelist, so `evaluate` leaves
   * them out otherwise (`writes` is then empty; each tool turn's own `writes` are kept).
   */
  writes?: boolean;
  /**
   * Run the domain's rule checks on the gold replay's agent writes (default true; {@link
   * replayGold} only). They read and never change the state, so without them `changes` and
   * `errors` are the same and `violations` is empty; `evaluate` needs neither.
   */
  violations?: boolean;
}

/**
 * Replay the reference solution of `task` (each action with its `requestor`) on a fresh
 * environment and record what it changed. The environment is closed before returning. Successful
 * results are not kept, so tools are told they are discarded ({@link ToolContext.resultDiscarded}):
 * a read that succeeds then costs its checks only.
 * Cost: the reference calls plus ~20 µs (tau2-airline: median 0.7 ms a task, ~0.2 ms a call).
 */
export async function replayGold(runtime: DomainRuntime, task: Task, options: ReplayOptions = {}): Promise<GoldResult> {
  const env = await runtime.open(task);
  try {
    const replay = await replayActions(env, task, options.writes !== false, options.violations !== false);
    return { task_id: task.id, changes: await env.changes(), ...replay };
  } finally {
    await env.close();
  }
}

/**
 * The full gold state: `exportState()` after replaying the reference solution on a fresh
 * environment. Reads the whole database (tau2-airline: ~100 ms); scoring does not need it.
 */
export async function goldState(runtime: DomainRuntime, task: Task): Promise<DbState> {
  const env = await runtime.open(task);
  try {
    await replayActions(env, task, false, false);
    return await env.exportState();
  } finally {
    await env.close();
  }
}

async function replayActions(
  env: Environment,
  task: Task,
  withWrites: boolean,
  checks: boolean,
): Promise<Omit<GoldResult, 'task_id' | 'changes'>> {
  const writes: ReplayedWrite[] = [];
  const errors: GoldResult['errors'] = [];
  const violations: GoldResult['violations'] = [];
  const actions = task.evaluation_criteria?.actions ?? [];
  const sync = env.domain.goldReplaySync !== false;
  for (const [index, action] of actions.entries()) {
    const call = { id: action.action_id ?? `gold-${index}`, name: action.name, arguments: action.arguments };
    const outcome = await env.call(call, action.requestor, index, { sync, result: false, checks });
    if (outcome.error) errors.push({ index, action, content: outcome.content });
    if (withWrites) writes.push(...(await withRows(env, outcome.writes)));
    for (const v of outcome.violations) violations.push({ index, action, ...v });
  }
  return { writes, errors, violations };
}

/**
 * Replay every tool turn of `turns` whose call ran (answers to calls that never ran, `not_run`, are
 * kept as they are), in order, with its requestor and turn index, on a fresh
 * environment for `task`. The returned `env` is left open; close it when done.
 */
export async function replayTrajectory(
  runtime: DomainRuntime,
  task: Task,
  turns: readonly Turn[],
  options: ReplayOptions = {},
): Promise<TrajectoryReplay> {
  const withWrites = options.writes !== false;
  const env = await runtime.open(task);
  try {
    const out: Turn[] = [];
    const writes: ReplayedWrite[] = [];
    const violations: ReplayedViolation[] = [];
    const diverged: number[] = [];
    for (const [index, turn] of turns.entries()) {
      if (!ranToolTurn(turn)) {
        out.push(turn);
        continue;
      }
      const call = { id: turn.tool_call_id, name: turn.name, arguments: turn.arguments };
      const outcome = await env.call(call, turn.requestor, index);
      if (outcome.error !== turn.error || outcome.content !== turn.content) diverged.push(index);
      out.push({ ...turn, content: outcome.content, error: outcome.error, writes: outcome.writes });
      if (withWrites) writes.push(...(await withRows(env, outcome.writes)));
      for (const v of outcome.violations) violations.push({ turn: index, tool: turn.name, ...v });
    }
    return { turns: out, writes, violations, changes: await env.changes(), diverged, env };
  } catch (e) {
    await env.close();
    throw e;
  }
}

/**
 * A row's identity among the writes of one call: its table and key values. Every entry of a call
 * comes from the write log with its key columns in the table's key order, so the values in order
 * identify the row (scalars only: JSON text is exact for them).
 */
const keyText = (w: WriteEntry) => `${w.table}:${JSON.stringify(Object.values(w.key))}`;

/**
 * Attach the whole row to each column write of one tool call, in one pass over the writes: each
 * row key is read from the database once, and the logged image of each (operation, row) pair is
 * built once (O(writes), not O(writes²)).
 */
async function withRows(env: Environment, writes: readonly WriteEntry[]): Promise<ReplayedWrite[]> {
  const keys = writes.map(keyText);
  const current = new Map<string, SqlRow | undefined>();
  const logged = new Map<string, SqlRow>();
  for (const [i, w] of writes.entries()) {
    const k = keys[i]!;
    if (!current.has(k)) current.set(k, await currentRow(env, w));
    addToLoggedImage(logged, `${w.op}|${k}`, w);
  }
  return writes.map((w, i) => {
    const k = keys[i]!;
    const image = logged.get(`${w.op}|${k}`)!;
    const row = w.op === 'delete' ? image : (current.get(k) ?? image);
    return { ...w, row };
  });
}

/** The row with `w`'s key as it is now, or `undefined` when it no longer exists. */
async function currentRow(env: Environment, w: WriteEntry): Promise<SqlRow | undefined> {
  const cols = Object.keys(w.key);
  const where = cols.map((c) => `${ident(c)} IS ?`).join(' AND ');
  const rows = await env.query(
    `SELECT * FROM ${ident(w.table)} WHERE ${where}`,
    cols.map((c) => w.key[c] ?? null),
  );
  return rows[0];
}

/**
 * Add `w` to the row image the write log holds for its row and operation within one call:
 * before-values for deletes, after-values otherwise (complete for inserts and deletes, which log
 * every column); a later write of a column replaces an earlier one.
 */
function addToLoggedImage(images: Map<string, SqlRow>, key: string, w: WriteEntry): void {
  let row = images.get(key);
  if (!row) {
    row = {};
    images.set(key, row);
  }
  row[w.column] = w.op === 'delete' ? w.before : w.after;
}

/**
 * The live score panel's numbers for a call in progress, computed by the core after every turn:
 * `evaluate` (assertion verdicts, QUALITY hits), `replayTrajectory` + `whitelistViolations`
 * (whether each agent tool call stayed inside the task's write whitelist), `processRewards`
 * (the shaping total). Nothing here scores on its own; it only arranges the core's results per
 * tool call for display.
 */
import type { DomainRuntime } from '../../core/env/environment.ts';
import { canonicalJson } from '../../core/env/state.ts';
import { evaluate } from '../../core/scoring/evaluate.ts';
import { PROCESS_DEFAULTS, processRewards } from '../../core/scoring/process-reward.ts';
import { replayTrajectory, type GoldResult } from '../../core/scoring/replay.ts';
import { whitelistViolations } from '../../core/scoring/write-whitelist.ts';
import { toolsFor } from '../../core/schema/domain.ts';
import type { Task } from '../../core/schema/task.ts';
import { ranToolTurn, trajectoryWrites, type Turn, type WriteEntry } from '../../core/schema/trajectory.ts';
import type { LiveScore, LiveToolCall } from './rollout-types.ts';

function show(v: unknown): string {
  return v === null || v === undefined ? 'null' : JSON.stringify(v);
}

/**
 * The database changes of an episode so far, from its recorded writes: one line per changed
 * column of an updated row (`bills[B1002].status: "unpaid" → "paid"`, first value before the
 * episode, last value now) and one per inserted or deleted row, in the order first written.
 * Columns written back to their original value are left out.
 */
export function describeChanges(writes: readonly WriteEntry[]): string[] {
  const rows = new Map<
    string,
    { label: string; op: WriteEntry['op']; cols: Map<string, { before: unknown; after: unknown }> }
  >();
  for (const w of writes) {
    const id = `${w.table}\u0000${canonicalJson(w.key)}`;
    const label = `${w.table}[${Object.values(w.key).map(String).join(',')}]`;
    let row = rows.get(id);
    if (!row) {
      row = { label, op: w.op, cols: new Map() };
      rows.set(id, row);
    } else if (w.op !== 'update') {
      // insert after delete (or the reverse) within one episode: keep the net operation.
      row.op = row.op === 'update' ? w.op : row.op === w.op ? w.op : 'update';
    }
    const col = row.cols.get(w.column);
    if (col) col.after = w.after;
    else row.cols.set(w.column, { before: w.before, after: w.after });
  }
  const out: string[] = [];
  for (const row of rows.values()) {
    if (row.op === 'insert' || row.op === 'delete') {
      const image = Object.fromEntries([...row.cols].map(([c, v]) => [c, row.op === 'insert' ? v.after : v.before]));
      out.push(`${row.label}: ${row.op === 'insert' ? 'inserted' : 'deleted'} ${canonicalJson(image)}`);
      continue;
    }
    for (const [c, v] of row.cols) {
      if (canonicalJson(v.before ?? null) !== canonicalJson(v.after ?? null))
        out.push(`${row.label}.${c}: ${show(v.before)} → ${show(v.after)}`);
    }
  }
  return out;
}

/**
 * Score the turns so far (see the module comment). `gold` is the task's gold replay, computed
 * once per call. Episode-end rules (termination overrides) are not applied: the call is not over.
 */
export async function liveScore(
  runtime: DomainRuntime,
  task: Task,
  turns: readonly Turn[],
  gold: GoldResult,
): Promise<LiveScore> {
  const info = await evaluate(runtime, task, turns, { gold });
  const replay = await replayTrajectory(runtime, task, turns);
  await replay.env.close();
  const whitelist = task.evaluation_criteria?.write_whitelist;
  const calls: LiveToolCall[] = [];
  turns.forEach((t, i) => {
    if (!ranToolTurn(t)) return;
    const agent = t.requestor === 'assistant';
    const writes = replay.writes.filter((w) => w.turn === i);
    const offending = agent && whitelist != null ? whitelistViolations(writes, whitelist) : [];
    const tool = toolsFor(runtime.domain, t.requestor).find((d) => d.name === t.name);
    calls.push({
      turn: i,
      name: t.name,
      requestor: t.requestor,
      kind: tool?.kind ?? null,
      ok: !t.error,
      process: agent ? (t.error ? PROCESS_DEFAULTS.failure : PROCESS_DEFAULTS.success) : null,
      whitelist:
        !agent || whitelist == null
          ? 'unchecked'
          : writes.length === 0
            ? 'no-writes'
            : offending.length
              ? 'outside'
              : 'inside',
      offending,
      writes: t.writes.length,
    });
  });
  const steps = processRewards(turns, 0).step_rewards;
  return {
    calls,
    processTotal: Math.round(steps.reduce((a, b) => a + b, 0) * 1e9) / 1e9,
    diff: describeChanges(trajectoryWrites(turns)),
    assertions: info.assertions,
    quality: info.components.QUALITY?.details ?? [],
  };
}

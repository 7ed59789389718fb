/**
 * DB-comparison brittleness (issue 16): does the `DB` verdict of a failed rollout depend on
 * something that should not matter? Each failed rollout whose reward basis has `DB` is re-scored
 * three ways, and a variant whose `DB` score differs from the recorded one is a flip:
 *
 * - `order_insensitive`: the comparison with list order ignored (`reward_info.db_order_insensitive`,
 *   domains whose tables record order in a column; see `scoreDbOrderInsensitive`);
 * - `extra_read`: the rollout's tool turns replayed with one more agent read — a repeat of its
 *   first successful agent read (or, without one, the reference's first agent read) just before
 *   its first write (at the end when it made none);
 * - `removed_read`: the rollout's tool turns replayed without its last successful agent read.
 *
 * Reads do not write, so a sound comparison gives the same verdict for all three; a flip means
 * the verdict hangs on list order or on a read with a side effect, and the task (or the domain's
 * comparison) is broken rather than hard.
 */
import type { DomainRuntime } from '../env/environment.ts';
import { toolsFor } from '../schema/domain.ts';
import type { Task } from '../schema/task.ts';
import { ranToolTurn, type ToolTurn, type Trajectory, type Turn } from '../schema/trajectory.ts';
import { replayTrajectory, scoreDb, type GoldResult } from '../scoring/index.ts';
import type { Finding } from './findings.ts';

/** A way of re-scoring the DB component. */
export type DbVariant = 'order_insensitive' | 'extra_read' | 'removed_read';

const WHAT: Record<DbVariant, string> = {
  order_insensitive: 'with the order-insensitive comparison',
  extra_read: 'with one more read',
  removed_read: 'with one read removed',
};

/** The tool turns of `turns` with one read added or removed, or null when there is nothing to add or remove. */
export function readVariant(
  turns: readonly Turn[],
  variant: 'extra_read' | 'removed_read',
  isRead: (name: string) => boolean,
  fallback: { name: string; arguments: Record<string, unknown> } | undefined,
): Turn[] | null {
  const reads = turns
    .map((t, i) => [t, i] as const)
    .filter(([t]) => t.role === 'tool' && t.requestor === 'assistant' && !t.error && isRead(t.name));
  if (variant === 'removed_read') {
    const last = reads.at(-1);
    return last ? turns.filter((_, i) => i !== last[1]) : null;
  }
  const first = reads[0]?.[0] as ToolTurn | undefined;
  const source = first ? { name: first.name, arguments: first.arguments } : fallback;
  if (!source) return null;
  const at = turns.findIndex((t) => ranToolTurn(t) && !isRead(t.name));
  const extra: ToolTurn = {
    role: 'tool',
    requestor: 'assistant',
    tool_call_id: 'brittleness-extra-read',
    name: source.name,
    arguments: structuredClone(source.arguments),
    content: '',
    error: false,
    writes: [],
    t_ms: 0,
  };
  const out = [...turns];
  out.splice(at < 0 ? out.length : at, 0, extra);
  return out;
}

async function dbScore(runtime: DomainRuntime, task: Task, gold: GoldResult, turns: readonly Turn[]) {
  const predicted = await replayTrajectory(runtime, task, turns);
  try {
    return (await scoreDb(runtime, task, gold, predicted)).score;
  } finally {
    await predicted.env.close();
  }
}

/**
 * The brittleness findings of one task: one per variant that flips the `DB` score of some failed
 * rollout, with those rollouts as evidence.
 *
 * @param failed the task's valid, failed rollouts
 * @param gold the task's {@link replayGold}
 */
export async function dbBrittlenessFindings(
  runtime: DomainRuntime,
  task: Task,
  failed: readonly Trajectory[],
  gold: GoldResult,
): Promise<Finding[]> {
  const kinds = new Map(toolsFor(runtime.domain, 'assistant').map((t) => [t.name, t.kind]));
  const isRead = (name: string) => kinds.get(name) === 'read';
  const fallback = (task.evaluation_criteria?.actions ?? []).find((a) => a.requestor === 'assistant' && isRead(a.name));
  const flips = new Map<DbVariant, { id: string; from: number; to: number }[]>();
  const flip = (v: DbVariant, id: string, from: number, to: number | null | undefined) => {
    if (to === null || to === undefined || to === from) return;
    flips.set(v, [...(flips.get(v) ?? []), { id, from, to }]);
  };
  for (const t of failed) {
    const db = t.reward_info?.components.DB?.score;
    if (!t.reward_info?.basis.includes('DB') || db === null || db === undefined) continue;
    flip('order_insensitive', t.id, db, t.reward_info.db_order_insensitive?.score);
    for (const v of ['extra_read', 'removed_read'] as const) {
      const turns = readVariant(t.turns, v, isRead, fallback);
      if (turns) flip(v, t.id, db, await dbScore(runtime, task, gold, turns));
    }
  }
  const order: DbVariant[] = ['order_insensitive', 'extra_read', 'removed_read'];
  return order
    .flatMap((v) => {
      const list = flips.get(v);
      return list ? [{ v, list }] : [];
    })
    .map(({ v, list }) => ({
      kind: 'db_brittle' as const,
      component: 'DB',
      field: v,
      detail: `the DB verdict of ${list[0]!.id} flips from ${list[0]!.from} to ${list[0]!.to} ${WHAT[v]} (${list.length} of ${failed.length} failed rollouts)`,
      trajectory_ids: list.map((x) => x.id),
    }));
}

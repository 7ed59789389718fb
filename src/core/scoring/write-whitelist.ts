/**
 * The `WRITE_WHITELIST` veto (ours): the agent may change only what the task's
 * `evaluation_criteria.write_whitelist` allows.
 */
import type { SqlValue } from '../ports/sql-db.ts';
import type { WhitelistEntry } from '../schema/task.ts';
import type { ComponentResult } from '../schema/trajectory.ts';
import { passFail } from './component.ts';
import type { ReplayedWrite } from './replay.ts';

type Scalar = string | number | boolean | null;

/** A whitelist value against a stored one; booleans match SQLite's 1/0. */
function sameValue(stored: SqlValue | undefined, wanted: Scalar): boolean {
  const want = typeof wanted === 'boolean' ? (wanted ? 1 : 0) : wanted;
  return (stored ?? null) === want;
}

/**
 * True when `entry` allows `write`: same table; `op` in `ops` (all when absent); for updates the
 * column in `columns` (all when absent; inserts and deletes are row-level); and the written row
 * (after the call; before the write for deletes) matches every `where` pair.
 */
export function whitelistAllows(entry: WhitelistEntry, write: ReplayedWrite): boolean {
  if (entry.table !== write.table) return false;
  if (entry.ops && !entry.ops.includes(write.op)) return false;
  if (write.op === 'update' && entry.columns && !entry.columns.includes(write.column)) return false;
  return Object.entries(entry.where ?? {}).every(([col, value]) => sameValue(write.row[col], value));
}

/**
 * `table[key].column (op by tool at turn N)` for an update, `table[key] (op by tool at turn N)`
 * for a row-level insert or delete. `key` is the primary-key values joined by commas.
 */
export function describeWrite(w: ReplayedWrite): string {
  const key = Object.values(w.key).map(String).join(',');
  const column = w.op === 'update' ? `.${w.column}` : '';
  return `${w.table}[${key}]${column} (${w.op} by ${w.tool} at turn ${w.turn})`;
}

/**
 * The agent writes (actor `assistant`) that no whitelist entry allows, one line each in
 * {@link describeWrite} form, in write order (an insert or delete is one write, an update one
 * per column). The caller's own writes (actor `user`) are not checked. An empty whitelist
 * allows no write. Used on the predicted replay (scoring) and on the gold replay (the gate).
 */
export function whitelistViolations(writes: readonly ReplayedWrite[], whitelist: readonly WhitelistEntry[]): string[] {
  const offending = new Set<string>();
  for (const w of writes) {
    if (w.actor !== 'assistant') continue;
    if (!whitelist.some((entry) => whitelistAllows(entry, w))) offending.add(describeWrite(w));
  }
  return [...offending];
}

/**
 * Score `WRITE_WHITELIST`: 1 when {@link whitelistViolations} finds none, else 0 with one
 * detail per offending write: `write not allowed: payments[3] (insert by pay at turn 4)`.
 */
export function scoreWriteWhitelist(
  writes: readonly ReplayedWrite[],
  whitelist: readonly WhitelistEntry[],
): ComponentResult {
  const offending = whitelistViolations(writes, whitelist);
  return passFail(
    offending.length === 0,
    offending.map((d) => `write not allowed: ${d}`),
  );
}

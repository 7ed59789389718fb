/**
 * tau2-bench telecom's `db.toml` (TelecomDB) and `user_db.toml` (TelecomUserDB) ↔ the tables of
 * `schema.sql`. Import validates each file against tau2's data model (unknown fields refused,
 * tau2's defaults filled in) and names the file and field of the first problem. Export gives the
 * documents back: `model` form is tau2's `model_dump()` (what its DB hashes cover), `source`
 * form drops the fields that are None, as a TOML file has them (TOML has no null), so that
 * `db.toml` comes back as it was read.
 */
import { parse as parseToml, TomlError } from 'smol-toml';
import type { DbState } from '../../src/core/env/state.ts';
import { DomainFileError } from '../../src/core/schema/domain.ts';
import type { SqlRow } from '../../src/core/ports/sql-db.ts';
import { AgentDbSchema, UserDbSchema, agentModelDump, parseDb, userModelDump } from './model.ts';
import { agentFromRows, agentRows, userFromRows, userRows, type TelecomTable } from './store.ts';

function toml(text: string, file: string): unknown {
  try {
    return parseToml(text);
  } catch (e) {
    if (e instanceof TomlError)
      throw new DomainFileError(file, `line ${e.line}`, `not valid TOML (${e.message.split('\n')[0]})`);
    throw e;
  }
}

/**
 * Validate `db.toml` and `user_db.toml` and turn them into table rows.
 * @param files names used in errors.
 * @returns table name → rows, for `buildDomain`'s seed.
 * @throws DomainFileError naming the file and the first bad field (e.g. `lines[2].status`).
 */
export function importTelecomDb(
  texts: { db: string; userDb: string },
  files: { db: string; userDb: string } = { db: 'db.toml', userDb: 'user_db.toml' },
): Record<string, SqlRow[]> {
  const agent = parseDb(AgentDbSchema, toml(texts.db, files.db), files.db);
  const user = parseDb(UserDbSchema, toml(texts.userDb, files.userDb), files.userDb);
  const rows: Record<string, SqlRow[]> = { ...agentRows(agent), ...userRows(user) };
  const seen = (what: string, list: readonly { id: string }[]) => {
    const ids = new Set<string>();
    list.forEach(({ id }, i) => {
      if (ids.has(id)) throw new DomainFileError(files.db, `${what}[${i}]`, `duplicate id "${id}"`);
      ids.add(id);
    });
  };
  seen(
    'plans',
    agent.plans.map((p) => ({ id: p.plan_id })),
  );
  seen(
    'customers',
    agent.customers.map((p) => ({ id: p.customer_id })),
  );
  seen(
    'lines',
    agent.lines.map((p) => ({ id: p.line_id })),
  );
  seen(
    'bills',
    agent.bills.map((p) => ({ id: p.bill_id })),
  );
  seen(
    'devices',
    agent.devices.map((p) => ({ id: p.device_id })),
  );
  return rows;
}

/** A document without its None fields, dicts as plain objects (the `source` form). */
function sourceForm(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sourceForm);
  const entries = v instanceof Map ? [...v] : v !== null && typeof v === 'object' ? Object.entries(v) : undefined;
  if (!entries) return v;
  return Object.fromEntries(entries.filter(([, x]) => x !== null).map(([k, x]) => [k, sourceForm(x)]));
}

/**
 * The two databases of an exported environment state.
 * @param form `model` (default): tau2's `model_dump()` of each, floats as `PyFloat`; `source`:
 *   plain objects without the None fields, dates and datetimes as in the files
 *   (`2025-01-20T14:30:00`), as `db.toml` parses.
 */
export function exportTelecomDb(state: DbState, form: 'model' | 'source' = 'model'): { db: unknown; user_db: unknown } {
  const rows = state as Partial<Record<TelecomTable, SqlRow[]>>;
  const agent = agentFromRows(rows);
  const user = userFromRows(rows);
  if (form === 'model') return { db: agentModelDump(agent), user_db: userModelDump(user) };
  return { db: sourceForm(agent), user_db: sourceForm(user) };
}

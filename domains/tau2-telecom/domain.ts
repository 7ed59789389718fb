/**
 * tau2-bench's telecom domain on our runtime (code half): dual control, the agent holding the
 * carrier's tools over `db.toml`, the caller holding tools over their own phone (`user_db.toml`),
 * kept in agreement by tau2's state sync after every call. Its data — db.toml, user_db.toml,
 * tasks.json, split_tasks.json, main_policy.md and the tech support manual — is not in this
 * folder: `loadTau2Domain('tau2-telecom', dir)` (src/adapters/node/tau2-loader.ts) reads it from a
 * tau2-bench data folder the user points at.
 */
import { defineDomain } from '../../src/core/schema/domain.ts';
import { TAU2_TELECOM_NOW_MS, TELECOM_ENV_FUNCTIONS, setupTelecomTask, syncTelecom } from './env.ts';
import { telecomRuleChecks } from './rules.ts';
import { agentTools, userTools } from './tools.ts';
import { AGENT_TABLES, USER_TABLES } from './store.ts';

export { TAU2_TELECOM_NOW_MS };

/** The tau2-telecom domain definition (code half). */
export const tau2Telecom = defineDomain({
  name: 'tau2-telecom',
  language: 'en-US',
  roles: ['inbound'],
  // tau2's telecom clock: 2025-02-25 12:08 (tau2 `get_now`), taken as US Eastern time.
  now: TAU2_TELECOM_NOW_MS,
  greeting: 'Hi! How can I help you today?',
  taskOrigin: 'imported',
  tools: agentTools,
  userTools,
  envFunctions: TELECOM_ENV_FUNCTIONS,
  ruleChecks: telecomRuleChecks,
  // tau2's toolkits answer a tool they lack in these words, whichever side calls it.
  unknownToolError: (name) => `Tool '${name}' not found.`,
  syncState: (db) => syncTelecom(db, TAU2_TELECOM_NOW_MS),
  // tau2's evaluator replays the reference solution without syncing between calls.
  goldReplaySync: false,
  setupTask: (ctx, task, where) => setupTelecomTask(ctx.db, ctx.now(), task, where),
  // tau2 compares both databases with lists in order: every table stays ordered by `position`
  // (the single-row and keyed caller tables have no list order to keep).
  tables: {
    ...Object.fromEntries(
      AGENT_TABLES.map((t) => [
        t,
        t.startsWith('customer_') || t === 'bill_line_items' ? {} : { orderColumn: 'position' },
      ]),
    ),
    ...Object.fromEntries(USER_TABLES.map((t) => [t, { userSide: true }])),
    user_apps: { userSide: true, orderColumn: 'position' },
    user_signal_strength: { userSide: true, orderColumn: 'position' },
  },
});

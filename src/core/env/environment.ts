/**
 * The executable environment of one episode: a domain's database behind the {@link SqlDb} port,
 * its tools, and the write log. Tools run real, parameterized SQL; every write is captured by
 * triggers; state can be snapshotted, restored and exported.
 */
import type { SqlDb, SqlDbFactory, SqlParams, SqlRow } from '../ports/sql-db.ts';
import {
  ToolError,
  toolsFor,
  type Domain,
  type RuleCheck,
  type ToolContext,
  type ToolDb,
  type ToolDefinition,
} from '../schema/domain.ts';
import type { Requestor, Task } from '../schema/task.ts';
import type { ToolCall, WriteEntry } from '../schema/trajectory.ts';
import { diffStates, type DbState, type StateDiff } from './state.ts';
import { WRITE_LOG_TABLE, expandLogRow, ident, writeLogDdl, type TableInfo } from './write-log.ts';

/** A broken rule found after an agent write. */
export interface RuleViolation {
  rule: string;
  message: string;
}

/** What one tool call produced. */
export interface ToolOutcome {
  /** What the caller of the tool sees: a string as returned, JSON otherwise, `Error: …` on failure. */
  content: string;
  error: boolean;
  /** Column writes of this call (none when it failed: a failed call is rolled back). */
  writes: WriteEntry[];
  /** Rules broken by this call (agent writes only; empty when the domain has no rule checks). */
  violations: RuleViolation[];
  /** Kind of the tool; `null` when the name was unknown. */
  kind: ToolDefinition['kind'] | null;
}

/** A saved environment: database image plus the write log so far. */
export interface EnvSnapshot {
  image: Uint8Array;
  writes: WriteEntry[];
  lastSeq: number;
}

/**
 * A domain prepared for many episodes: its schema, seed and triggers built once into an SQLite
 * image that every episode opens a copy of.
 */
export class DomainRuntime {
  private constructor(
    readonly domain: Domain,
    readonly tables: TableInfo[],
    private readonly image: Uint8Array,
    private readonly factory: SqlDbFactory,
  ) {}

  /** Build the pristine image: schema, seed rows, write-log triggers. */
  static async create(domain: Domain, factory: SqlDbFactory): Promise<DomainRuntime> {
    const db = await factory();
    try {
      await db.exec(domain.schema);
      const tables = await readTables(db);
      const known = new Map(tables.map((t) => [t.name, t]));
      // One transaction for the whole seed: autocommit per row is ~40x slower in sql.js
      // (tau2-airline's 53k seed rows: runtime build 6.6 s → about 0.4 s).
      await db.exec('BEGIN');
      for (const [table, rows] of Object.entries(domain.seed)) {
        const info = known.get(table);
        if (!info) throw new Error(`seed.json: table "${table}" is not in schema.sql`);
        await insertRows(db, info, rows);
      }
      await db.exec('COMMIT');
      await db.exec(writeLogDdl(tables));
      return new DomainRuntime(domain, tables, await db.snapshot(), factory);
    } finally {
      await db.close();
    }
  }

  /**
   * Open a fresh environment for `task`: a copy of the pristine database with the task's
   * `initial_state.rows` upserted (not logged as episode writes).
   */
  async open(task?: Task, options: { now?: number } = {}): Promise<Environment> {
    const db = await this.factory(this.image);
    const env = new Environment(this, db, options.now ?? this.domain.now);
    const rows = task?.initial_state?.rows;
    if (rows) {
      try {
        for (const [table, list] of Object.entries(rows)) {
          const info = this.tables.find((t) => t.name === table);
          if (!info) throw new Error(`task ${task.id}: initial_state.rows names unknown table "${table}"`);
          await insertRows(db, info, list as SqlRow[], 'INSERT OR REPLACE');
        }
        await env.markSetupDone();
      } catch (e) {
        await db.close();
        throw e;
      }
    }
    return env;
  }

  /** Compare two exported states with the domain's table options. */
  diff(expected: DbState, actual: DbState): StateDiff {
    return diffStates(expected, actual, this.tables, this.domain.tables);
  }
}

async function readTables(db: SqlDb): Promise<TableInfo[]> {
  const names = await db.all(
    `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_sb\\_%' ESCAPE '\\' ORDER BY name`,
  );
  const out: TableInfo[] = [];
  for (const { name } of names) {
    const cols = await db.all(`SELECT name, pk FROM pragma_table_info(?) ORDER BY cid`, [name as string]);
    out.push({
      name: name as string,
      columns: cols.map((c) => c.name as string),
      primaryKey: cols
        .filter((c) => (c.pk as number) > 0)
        .sort((a, b) => (a.pk as number) - (b.pk as number))
        .map((c) => c.name as string),
    });
  }
  return out;
}

async function insertRows(db: SqlDb, table: TableInfo, rows: readonly SqlRow[], verb = 'INSERT'): Promise<void> {
  if (rows.length === 0) return;
  const cols = new Set(table.columns);
  const statements = rows.map((row, i) => {
    const names = Object.keys(row);
    for (const n of names) {
      if (!cols.has(n)) throw new Error(`rows for table "${table.name}"[${i}]: unknown column "${n}"`);
    }
    return {
      sql: `${verb} INTO ${ident(table.name)} (${names.map(ident).join(', ')}) VALUES (${names.map(() => '?').join(', ')})`,
      params: names.map((n) => row[n] ?? null),
    };
  });
  await db.batch(statements);
}

/** One episode's environment. Create with {@link DomainRuntime.open}. */
export class Environment {
  private lastSeq = 0;
  private readonly log: WriteEntry[] = [];
  private readonly byName = new Map<string, TableInfo>();
  private readonly toolDb: ToolDb;

  /** @internal use {@link DomainRuntime.open} */
  constructor(
    readonly runtime: DomainRuntime,
    readonly db: SqlDb,
    private readonly nowMs: number,
  ) {
    for (const t of runtime.tables) this.byName.set(t.name, t);
    this.toolDb = {
      one: async (sql, params) => (await db.all(sql, params))[0],
      all: (sql, params) => db.all(sql, params),
      run: async (sql, params) => (await db.run(sql, params)).changes,
    };
  }

  get domain(): Domain {
    return this.runtime.domain;
  }

  /** Every write of the episode so far, in order. */
  get writes(): readonly WriteEntry[] {
    return this.log;
  }

  /** The policy clock in ms since the Unix epoch. */
  now(): number {
    return this.nowMs;
  }

  /** @internal forget setup writes (initial state) so they are not episode writes. */
  async markSetupDone(): Promise<void> {
    const rows = await this.db.all(`SELECT max(seq) AS m FROM ${WRITE_LOG_TABLE}`);
    this.lastSeq = (rows[0]?.m as number | null) ?? 0;
  }

  /**
   * Run one tool call. Unknown tools, arguments that fail the tool's schema and {@link ToolError}s
   * become error outcomes (`Error: …`); a failed write is rolled back. Any other exception is a
   * bug in the tool and is rethrown, as is an agent tool writing a `userSide` table.
   *
   * @param turn index of the tool turn in the trajectory, recorded on each write.
   */
  async call(call: ToolCall, actor: Requestor = 'assistant', turn = -1): Promise<ToolOutcome> {
    const tool = toolsFor(this.domain, actor).find((t) => t.name === call.name);
    if (!tool) {
      const other = toolsFor(this.domain, actor === 'user' ? 'assistant' : 'user').some((t) => t.name === call.name);
      const who = actor === 'user' ? 'the caller' : 'the agent';
      return failed(other ? `tool ${call.name} is not available to ${who}` : `unknown tool ${call.name}`, null);
    }
    const parsed = tool.params.safeParse(call.arguments ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const where = issue.path.length ? `${issue.path.join('.')}: ` : '';
      return failed(`invalid arguments for ${tool.name}: ${where}${issue.message}`, tool.kind);
    }
    const guarded = tool.kind === 'write' || tool.kind === 'generic';
    if (guarded) await this.db.run('SAVEPOINT sb_call');
    let result: unknown;
    try {
      const ctx: ToolContext = { db: this.toolDb, now: () => this.nowMs, actor };
      result = await tool.run(ctx, parsed.data);
    } catch (e) {
      if (guarded) await this.db.batch([{ sql: 'ROLLBACK TO sb_call' }, { sql: 'RELEASE sb_call' }]);
      if (e instanceof ToolError) return failed(e.message, tool.kind);
      throw e;
    }
    if (guarded) await this.db.run('RELEASE sb_call');
    const writes = await this.collectWrites(turn, actor, tool.name);
    if (actor === 'assistant') {
      const userSide = writes.find((w) => this.domain.tables?.[w.table]?.userSide);
      if (userSide) throw new Error(`agent tool ${tool.name} wrote the caller-side table ${userSide.table}: a bug in the domain`);
    }
    const violations =
      actor === 'assistant' && writes.length > 0 ? await this.checkRules(tool.name, parsed.data, writes) : [];
    const content = typeof result === 'string' ? result : JSON.stringify(result ?? null);
    return { content, error: false, writes, violations, kind: tool.kind };
  }

  private async collectWrites(turn: number, actor: Requestor, tool: string): Promise<WriteEntry[]> {
    const rows = await this.db.all(`SELECT seq, tbl, op, old, new FROM ${WRITE_LOG_TABLE} WHERE seq > ? ORDER BY seq`, [
      this.lastSeq,
    ]);
    if (rows.length === 0) return [];
    const out: WriteEntry[] = [];
    for (const row of rows) {
      const info = this.byName.get(row.tbl as string);
      if (!info) continue;
      for (const entry of expandLogRow(row, info, { seq: 0, turn, actor, tool })) {
        entry.seq = this.log.length + out.length + 1;
        out.push(entry);
      }
    }
    this.lastSeq = rows[rows.length - 1]!.seq as number;
    this.log.push(...out);
    return out;
  }

  private async checkRules(tool: string, args: Record<string, unknown>, writes: WriteEntry[]): Promise<RuleViolation[]> {
    const checks: readonly RuleCheck[] = this.domain.ruleChecks ?? [];
    const out: RuleViolation[] = [];
    for (const rc of checks) {
      const message = await rc.check({ db: this.toolDb, tool, args, writes, now: () => this.nowMs });
      if (message) out.push({ rule: rc.rule, message });
    }
    return out;
  }

  /** Read-only query helpers (for env assertions and rule checks). */
  get reader(): Pick<ToolDb, 'one' | 'all'> {
    return this.toolDb;
  }

  /** Every domain table, rows ordered by primary key. */
  async exportState(): Promise<DbState> {
    const statements = this.runtime.tables.map((t) => {
      const order = (t.primaryKey.length ? t.primaryKey : t.columns).map(ident).join(', ');
      return { sql: `SELECT * FROM ${ident(t.name)} ORDER BY ${order}` };
    });
    const results = await this.db.batch(statements);
    const state: DbState = {};
    this.runtime.tables.forEach((t, i) => {
      state[t.name] = results[i]!;
    });
    return state;
  }

  /** Save the database and the write log. */
  async snapshot(): Promise<EnvSnapshot> {
    return { image: await this.db.snapshot(), writes: this.log.map((w) => ({ ...w })), lastSeq: this.lastSeq };
  }

  /** Return to a saved point. */
  async restore(snap: EnvSnapshot): Promise<void> {
    await this.db.restore(snap.image);
    this.log.length = 0;
    this.log.push(...snap.writes.map((w) => ({ ...w })));
    this.lastSeq = snap.lastSeq;
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  /** Run a parameterized read query (tests and tooling). */
  query(sql: string, params?: SqlParams): Promise<SqlRow[]> {
    return this.db.all(sql, params);
  }
}

function failed(message: string, kind: ToolOutcome['kind']): ToolOutcome {
  return { content: `Error: ${message}`, error: true, writes: [], violations: [], kind };
}

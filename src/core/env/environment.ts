/**
 * The executable environment of one episode: a domain's database behind the {@link SqlDb} port,
 * its tools, and the write log. Tools run real, parameterized SQL; the connection records every
 * row written (write-log.ts); state can be snapshotted, restored and exported.
 */
import {
  syncSqlDb,
  type SqlDb,
  type SqlDbFactory,
  type SqlParams,
  type SqlRow,
  type SyncSqlDb,
} from '../ports/sql-db.ts';
import {
  DomainFileError,
  ToolError,
  toolsFor,
  type Domain,
  type RuleCheck,
  type RuleCheckContext,
  type ToolContext,
  type ToolDb,
  type ToolDefinition,
} from '../schema/domain.ts';
import type { Requestor, Task } from '../schema/task.ts';
import type { ToolCall, WriteEntry } from '../schema/trajectory.ts';
import { collectChanges, diffChanges, type StateChanges } from './changes.ts';
import { diffStates, type DbState, type StateDiff } from './state.ts';
import {
  APPEND_WRITE_LOG,
  JOIN_WRITE_LOG,
  PAUSE_WRITE_LOG,
  WRITE_LOG_SINCE,
  WRITE_LOG_TABLE,
  expandLogRow,
  ident,
  parseLogText,
  replayStatement,
  type LoggedWrite,
  type ParsedLogRow,
  type TableInfo,
} from './write-log.ts';
import {
  checkRowValues,
  columnAffinities,
  foreignKeyError,
  schemaError,
  type RowSource,
  type typeAffinity,
} from './data-check.ts';

type Affinities = Map<string, Map<string, ReturnType<typeof typeAffinity>>>;

/**
 * A domain's built database as plain data ({@link DomainRuntime.built}): the schema text it was
 * built from, its tables, the tables compared whole, the pristine SQLite image, each column's
 * type affinity by table, and whether snapshots replay the write log.
 */
export interface BuiltDatabase {
  schema: string;
  tables: TableInfo[];
  wholeTables: string[];
  image: Uint8Array;
  affinities: Affinities;
  replayable: boolean;
}

/** A broken rule found around an agent write. */
export interface RuleViolation {
  rule: string;
  message: string;
  /** The policy text the rule encodes ({@link RuleCheck.policy}), when the check quotes it. */
  policy?: string;
  /** True when the tool refused the call (a `before` check's violation of an attempted call). */
  refused?: boolean;
}

/** What one tool call produced. */
export interface ToolOutcome {
  /** What the caller of the tool sees: a string as returned, JSON otherwise, `Error: …` on failure. */
  content: string;
  error: boolean;
  /** Column writes of this call (none when it failed: a failed call is rolled back). */
  writes: WriteEntry[];
  /**
   * Rules broken by this call (agent writes only; empty when the domain has no rule checks). A
   * failed call carries only its `before` checks' violations, marked `refused`.
   */
  violations: RuleViolation[];
  /** Kind of the tool; `null` when the name was unknown. */
  kind: ToolDefinition['kind'] | null;
}

/**
 * A saved environment: the write log so far, and the database either as the episode's logged
 * writes since the task's initial state (`log`, on a {@link DomainRuntime.replayable} runtime:
 * restored by replaying them, O(writes) whatever the database size) or as a whole file image
 * (`image`, on other runtimes).
 */
export interface EnvSnapshot {
  image?: Uint8Array;
  /**
   * With `image`: the write log the image goes with, every row in order (the log lives beside
   * the database, not in its file). Absent: the image carries no log.
   */
  imageLog?: LoggedWrite[];
  /** The write-log rows after the initial-state setup, in order (replayed by {@link Environment.restore}). */
  log?: LoggedWrite[];
  writes: WriteEntry[];
  lastSeq: number;
  /** Last write-log `seq` of the task's initial-state setup (absent in older snapshots). */
  setupSeq?: number;
}

/**
 * Connection settings of every episode database, applied when it is created and after every
 * restore (they do not live in the image):
 * - `recursive_triggers`: SQLite fires a domain's own delete triggers for the rows a `REPLACE`
 *   removes (the write log records those deletes either way: native/write-log.c).
 * - `journal_mode = MEMORY`: the rollback journal stays in memory (the database file is a
 *   memory image anyway); savepoints and rollbacks work as before, faster.
 * - `foreign_keys = ON`: a write that leaves a reference to a missing row fails (SQLite checks
 *   no foreign key otherwise). Set outside any transaction (inside one it is a no-op), so also
 *   after every restore.
 * - `cache_size = -65536` (64 MiB): the whole database stays in SQLite's page cache (SQLite's
 *   default, 2 MiB, is less than tau2-airline's 4.5 MiB, so tool calls kept re-reading pages
 *   from the in-memory file); pages are only allocated as they are read.
 * - `locking_mode = EXCLUSIVE`: one connection per database, so the lock is kept between
 *   transactions and SQLite does not re-check the file for changes at each one.
 */
const CONNECTION_PRAGMAS =
  'PRAGMA recursive_triggers = ON; PRAGMA journal_mode = MEMORY; PRAGMA foreign_keys = ON; PRAGMA cache_size = -65536; PRAGMA locking_mode = EXCLUSIVE;';

/**
 * A domain prepared for many episodes: its schema and seed built once into an SQLite image that
 * every episode opens a copy of.
 *
 * Databases are reused: an environment runs inside one transaction begun at {@link open}, and
 * its `close()` rolls it back and hands the database (still at the pristine image, with SQLite's
 * parsed schema and the prepared statements) to the next `open`. That makes an open + close
 * ~20 µs instead of an image copy and schema parse (tau2-airline: ~2 ms). At most
 * {@link DomainRuntime.POOL_SIZE} idle databases are kept; {@link close} frees them.
 */
export class DomainRuntime {
  /** Most idle databases kept for reuse. */
  static readonly POOL_SIZE = 4;
  private readonly idle: SqlDb[] = [];
  /**
   * @internal Facts of the pristine database ({@link RuleCheckContext.baseFact}), by key, shared
   * by the environments opened without an initial state of their own.
   */
  readonly baseFacts = new Map<string, BaseFact>();

  private constructor(
    readonly domain: Domain,
    readonly tables: TableInfo[],
    /**
     * Tables that state comparison reads whole instead of by written key ({@link
     * Environment.changes}): no primary key, a `COLLATE` clause in the table's SQL, or hidden
     * (generated) columns. Empty for the built-in domains.
     */
    readonly wholeTables: ReadonlySet<string>,
    private readonly image: Uint8Array,
    private readonly factory: SqlDbFactory,
    private readonly affinities: Affinities,
    /**
     * True when a snapshot can be kept as its logged writes and restored by replaying them
     * ({@link replayStatement}), which gives exactly the saved state: every table has a primary
     * key and is compared by key (no {@link wholeTables}), the schema has no triggers of its own,
     * no foreign-key actions (ON DELETE/UPDATE other than NO ACTION or RESTRICT) and no
     * AUTOINCREMENT (a replayed write then changes nothing but its own row), and no column is
     * named like the rowid or holds a `"`. Otherwise snapshots are file images.
     */
    readonly replayable: boolean,
  ) {}

  /**
   * Build the pristine image: schema and seed rows (not recorded in the write log).
   * @throws DomainFileError naming the file and field of the first problem: the failing
   *   statement of the schema with its line, a seed row with an unknown table or column, a value
   *   that is not a string, number or null, text in a numeric column, a row breaking a CHECK,
   *   NOT NULL, UNIQUE or primary key (with SQLite's message), a foreign key to a missing row.
   */
  static async create(domain: Domain, factory: SqlDbFactory): Promise<DomainRuntime> {
    const schemaFile = domain.files?.schema ?? 'schema.sql';
    const seedFile = domain.files?.seed ?? 'seed.json';
    const db = await factory();
    try {
      try {
        await db.exec(domain.schema);
      } catch (e) {
        const fresh = await factory();
        try {
          throw await schemaError(fresh, domain.schema, schemaFile, e);
        } finally {
          await fresh.close();
        }
      }
      const tables = await readTables(db);
      const generated = await generatedColumn(db, tables);
      if (generated)
        throw new DomainFileError(
          schemaFile,
          generated,
          `generated columns are not supported: the write log records a table's stored columns as PRAGMA table_info lists them (${generated})`,
        );
      const affinities = await columnAffinities(db, tables);
      const known = new Map(tables.map((t) => [t.name, t]));
      const seedRows = (table: string): RowSource => ({ file: seedFile, row: (i) => `${table}[${i}]` });
      // The seed is the pristine state, not anyone's writes.
      await db.exec(PAUSE_WRITE_LOG);
      // One transaction for the whole seed: autocommit per row is ~40x slower in sql.js
      // (tau2-airline's 53k seed rows: runtime build 6.6 s → about 0.4 s).
      await db.exec('BEGIN');
      for (const [table, rows] of Object.entries(domain.seed)) {
        const info = known.get(table);
        if (!info) throw new DomainFileError(seedFile, table, `table "${table}" is not in ${schemaFile}`);
        await insertRows(db, info, rows, 'INSERT', seedRows(table), affinities.get(table));
      }
      await db.exec('COMMIT');
      // Foreign keys are checked once the whole seed is in (its tables may come in any order).
      const fk = await foreignKeyError(
        db,
        (t) => (domain.seed[t] ? { rows: domain.seed[t], where: seedRows(t) } : undefined),
        tables,
      );
      if (fk) throw fk;
      const wholeTables = await readWholeTables(db, tables);
      const replayable = wholeTables.size === 0 && (await replayableSchema(db, tables));
      return new DomainRuntime(domain, tables, wholeTables, await db.snapshot(), factory, affinities, replayable);
    } finally {
      await db.close();
    }
  }

  /**
   * What {@link create} built, as plain data (structured-cloneable: a rollout thread is handed
   * it, issue 15 item 5): the pristine image and what was read of its schema. {@link fromBuilt}
   * makes a runtime of it without building the schema and seed again (tau2-airline: ~1 s of
   * CPU). The image is this runtime's own (not a copy): do not change it.
   */
  built(): BuiltDatabase {
    return {
      schema: this.domain.schema,
      tables: this.tables,
      wholeTables: [...this.wholeTables],
      image: this.image,
      affinities: this.affinities,
      replayable: this.replayable,
    };
  }

  /**
   * A runtime of `domain` on a database another runtime of the same domain built ({@link
   * built}): the same image, tables and snapshot kind as {@link create} gives, without its build.
   * @throws Error when `built` was made from another schema than `domain.schema`.
   */
  static fromBuilt(domain: Domain, built: BuiltDatabase, factory: SqlDbFactory): DomainRuntime {
    if (built.schema !== domain.schema)
      throw new Error(`domain ${domain.name}: the built database is of another schema`);
    return new DomainRuntime(
      domain,
      built.tables,
      new Set(built.wholeTables),
      built.image,
      factory,
      built.affinities,
      built.replayable,
    );
  }

  /**
   * The same database image and tables with another task list (a derived bank, hardened
   * variants): no schema or seed rebuild. The new runtime has its own pool of idle databases;
   * {@link close} it when done.
   */
  withTasks(tasks: Task[]): DomainRuntime {
    return new DomainRuntime(
      { ...this.domain, tasks },
      this.tables,
      this.wholeTables,
      this.image,
      this.factory,
      this.affinities,
      this.replayable,
    );
  }

  /**
   * Open and close an environment for every task with `initial_state.rows`, so that a bad row
   * is reported before any episode runs (the gate and every command do this first).
   * @throws DomainFileError naming the tasks file and the row's field.
   */
  async checkTaskStates(): Promise<void> {
    for (const task of this.domain.tasks) {
      if (!task.initial_state?.rows && !this.domain.setupTask) continue;
      const env = await this.open(task);
      await env.close();
    }
  }

  /**
   * Open a fresh environment for `task`: the pristine database (a reused idle one, or a new copy
   * of the image) with the task's `initial_state.rows` upserted (not logged as episode writes).
   * Close it when done: that returns the database for reuse.
   */
  async open(task?: Task, options: { now?: number } = {}): Promise<Environment> {
    const db = this.idle.pop() ?? (await this.newDb());
    try {
      await beginLogged(db);
    } catch (e) {
      await db.close();
      throw e;
    }
    const env = new Environment(this, db, options.now ?? this.domain.now);
    const rows = task?.initial_state?.rows;
    const setup = task ? this.domain.setupTask : undefined;
    if (rows || setup) {
      const file = this.domain.files?.tasks ?? 'tasks.json';
      const at = this.domain.tasks.indexOf(task!);
      const taskField = at >= 0 ? `[${at}]` : `(task ${task!.id})`;
      const prefix = `${taskField}.initial_state.rows`;
      try {
        for (const [table, list] of Object.entries(rows ?? {})) {
          const info = this.tables.find((t) => t.name === table);
          if (!info)
            throw new DomainFileError(file, `${prefix}.${table}`, `unknown table "${table}" (task ${task!.id})`);
          const where = { file, row: (i: number) => `${prefix}.${table}[${i}]` };
          await insertRows(db, info, list as SqlRow[], 'INSERT OR REPLACE', where, this.affinities.get(table));
        }
        if (setup) await setup({ db: env.setupDb, now: () => env.now() }, task!, { file, field: taskField });
        await env.markSetupDone();
      } catch (e) {
        await env.close();
        throw e;
      }
    }
    // The episode's writes start here: a restore of a logged snapshot rolls back to this point.
    if (this.replayable) await db.all(EPISODE_SAVEPOINT);
    return env;
  }

  private async newDb(): Promise<SqlDb> {
    const db = await this.factory(this.image);
    try {
      await db.exec(CONNECTION_PRAGMAS);
    } catch (e) {
      await db.close();
      throw e;
    }
    return db;
  }

  /**
   * @internal Take back the database of a closed environment, rolled back to the pristine image
   * (checked by the caller); closes it when the pool is full.
   */
  async release(db: SqlDb): Promise<void> {
    if (this.idle.length >= DomainRuntime.POOL_SIZE) await db.close();
    else this.idle.push(db);
  }

  /**
   * Free the idle databases kept for reuse. Open environments are not affected, and the runtime
   * stays usable (later opens pool again).
   */
  async close(): Promise<void> {
    const dbs = this.idle.splice(0);
    await Promise.all(dbs.map((db) => db.close()));
  }

  /** Compare two exported states with the domain's table options. */
  diff(expected: DbState, actual: DbState): StateDiff {
    return diffStates(expected, actual, this.tables, this.domain.tables);
  }

  /**
   * Compare what two episodes of the same task changed ({@link Environment.changes}), with the
   * domain's table options: the same result as {@link diff} on their exported states, reading
   * only the rows they wrote.
   *
   * @returns `null` when the change sets cannot decide it (a NULL primary-key value written on
   *   one side only); compare exported states then.
   * @throws ChangeBaseMismatch when the two did not start from the same state.
   */
  diffChanges(expected: StateChanges, actual: StateChanges): StateDiff | null {
    return diffChanges(expected, actual, this.tables, this.domain.tables);
  }
}

/** The savepoint after a task's initial state, on {@link DomainRuntime.replayable} runtimes. */
const EPISODE_SAVEPOINT = 'SAVEPOINT sb_episode';

/** See {@link DomainRuntime.replayable} (the whole-table condition is checked by the caller). */
async function replayableSchema(db: SqlDb, tables: readonly TableInfo[]): Promise<boolean> {
  const [row] = await db.all(
    `SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'trigger') AS triggers,
            (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence') AS sequences`,
  );
  if (row?.triggers !== 0 || row?.sequences !== 0) return false;
  for (const t of tables) {
    if (t.rowid === undefined) return false;
    if (t.columns.some((c) => c.includes('"') || /^(?:rowid|oid|_rowid_)$/i.test(c))) return false;
    const actions = await db.all(
      `SELECT 1 FROM pragma_foreign_key_list(?) WHERE on_update NOT IN ('NO ACTION', 'RESTRICT') OR on_delete NOT IN ('NO ACTION', 'RESTRICT')`,
      [t.name],
    );
    if (actions.length > 0) return false;
  }
  return true;
}

/** Tables to compare whole: see {@link DomainRuntime.wholeTables}. */
async function readWholeTables(db: SqlDb, tables: readonly TableInfo[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const t of tables) {
    const [row] = await db.all(
      `SELECT (SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1) AS sql, (SELECT count(*) FROM pragma_table_xinfo(?1)) AS xcols`,
      [t.name],
    );
    const collate = /\bCOLLATE\b/i.test(String(row?.sql ?? ''));
    if (t.primaryKey.length === 0 || collate || row?.xcols !== t.columns.length) out.add(t.name);
  }
  return out;
}

/** Begin a transaction the write log joins ({@link JOIN_WRITE_LOG}). */
async function beginLogged(db: SqlDb): Promise<void> {
  await db.exec('BEGIN');
  await db.run(JOIN_WRITE_LOG);
}

/** The first generated column (`table.column`) of `tables`, or null when they have none. */
async function generatedColumn(db: SqlDb, tables: readonly TableInfo[]): Promise<string | null> {
  for (const t of tables) {
    const [col] = await db.all('SELECT name FROM pragma_table_xinfo(?) WHERE hidden IN (2, 3) LIMIT 1', [t.name]);
    if (col) return `${t.name}.${col.name as string}`;
  }
  return null;
}

async function readTables(db: SqlDb): Promise<TableInfo[]> {
  const names = await db.all(
    `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_sb\\_%' ESCAPE '\\' ORDER BY name`,
  );
  const out: TableInfo[] = [];
  for (const { name } of names) {
    const cols = await db.all(`SELECT name, pk FROM pragma_table_info(?) ORDER BY cid`, [name as string]);
    const [list] = await db.all(`SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?`, [
      name as string,
    ]);
    out.push({
      name: name as string,
      columns: cols.map((c) => c.name as string),
      primaryKey: cols
        .filter((c) => (c.pk as number) > 0)
        .sort((a, b) => (a.pk as number) - (b.pk as number))
        .map((c) => c.name as string),
      rowid: list?.wr === 1 ? 'none' : 'rowid',
    });
  }
  return out;
}

/**
 * Insert `rows` into `table`. Each row's columns and values are checked first
 * ({@link checkRowValues}); when the database refuses a row (a constraint), the row is found by
 * inserting them one by one and named.
 * @throws DomainFileError naming `where.row(i)` and the column or SQLite's message.
 */
async function insertRows(
  db: SqlDb,
  table: TableInfo,
  rows: readonly SqlRow[],
  verb: 'INSERT' | 'INSERT OR REPLACE',
  where: RowSource,
  affinities: ReadonlyMap<string, ReturnType<typeof typeAffinity>> | undefined,
): Promise<void> {
  if (rows.length === 0) return;
  const cols = new Set(table.columns);
  const statements = rows.map((row, i) => {
    const names = Object.keys(row);
    for (const n of names) {
      if (!cols.has(n))
        throw new DomainFileError(where.file, `${where.row(i)}.${n}`, `unknown column of table ${table.name}`);
    }
    return {
      sql: `${verb} INTO ${ident(table.name)} (${names.map(ident).join(', ')}) VALUES (${names.map(() => '?').join(', ')})`,
      params: names.map((n) => row[n] ?? null),
    };
  });
  checkRowValues(rows, table.name, affinities, where);
  await db.exec('SAVEPOINT sb_rows');
  try {
    await db.batch(statements);
  } catch (e) {
    await db.exec('ROLLBACK TO sb_rows');
    for (const [i, st] of statements.entries()) {
      try {
        await db.run(st.sql, st.params);
      } catch (one) {
        throw new DomainFileError(where.file, where.row(i), (one as Error).message);
      }
    }
    throw e;
  } finally {
    await db.exec('RELEASE sb_rows').catch(() => undefined);
  }
}

/** One episode's environment. Create with {@link DomainRuntime.open}. */
export class Environment {
  private lastSeq = 0;
  /** Last log `seq` of the initial-state setup: later log rows are the episode's writes. */
  private setupSeq = 0;
  /**
   * The episode's log rows with their images parsed, as {@link collectWrites} read them, up to
   * `seq` {@link parsedUpTo}: {@link changes} reads only the rows after it (usually none) instead
   * of reading and parsing the whole log again. The log only grows while the environment is
   * open (a failed call's rows are rolled back before they are read); `null` after a restore,
   * whose rows were not read this way: `changes` then reads the whole log.
   */
  private parsedLog: ParsedLogRow[] | null = [];
  private parsedUpTo = 0;
  private readonly log: WriteEntry[] = [];
  /**
   * Tables the episode has written since it started: the tables of the write-log rows it read
   * after its calls, or replayed in a restore. The database differs from the episode's starting
   * state only in these, unless {@link rawAccess}.
   */
  private written = new Set<string>();
  /**
   * True once the database was handed out raw ({@link db}, {@link query}, {@link reader}) or
   * replaced by an image ({@link restore}): writes may then have bypassed {@link written}, so
   * {@link RuleCheckContext.baseFact} computes afresh for the rest of the episode.
   */
  private rawAccess = false;
  /** Base facts of an episode whose initial state is its own (setup writes): not shared. */
  private ownFacts: Map<string, BaseFact> | undefined;
  private readonly byName = new Map<string, TableInfo>();
  private readonly toolDb: ToolDb;
  /**
   * True while the episode runs inside the transaction {@link DomainRuntime.open} began; then
   * `close()` rolls it back and returns the database to the runtime. `snapshot()` commits it
   * (an SQLite backup cannot read a database inside a write transaction) and `restore()`
   * replaces the database: either way the database is closed, not reused, at the end.
   */
  private pooled = true;
  /**
   * True while a transaction the write log joined is open: the one {@link DomainRuntime.open}
   * began, or the one begun again after an image snapshot or restore. Inside it a failed call's
   * ROLLBACK TO drops the call's log entries with its writes (outside, a call's SAVEPOINT would
   * open a transaction the log has not joined).
   */
  private inTransaction = true;
  private closed = false;
  /**
   * The database when it answers synchronously ({@link SyncSqlDb}: sql.js in this thread): the
   * call's own statements then run without a promise, and the tools' and rule checks' statements
   * with one promise each instead of one per async layer.
   */
  private readonly syncDb: SyncSqlDb | undefined;

  /** @internal use {@link DomainRuntime.open} */
  constructor(
    readonly runtime: DomainRuntime,
    private readonly database: SqlDb,
    private readonly nowMs: number,
  ) {
    for (const t of runtime.tables) this.byName.set(t.name, t);
    this.syncDb = syncSqlDb(database);
    this.toolDb = new EnvToolDb(this);
  }

  /** The policy clock as tools and rule checks receive it (one function per environment). */
  private readonly clock = (): number => this.nowMs;

  /** {@link RuleCheckContext.baseFact} of this environment (one function per environment). */
  private readonly baseFact = <T>(
    key: string,
    tables: readonly string[],
    compute: () => Promise<T>,
  ): T | Promise<T> => {
    if (this.rawAccess) return compute();
    for (const t of tables) if (this.written.has(t)) return compute();
    const facts = this.setupSeq === 0 ? this.runtime.baseFacts : (this.ownFacts ??= new Map());
    const hit = facts.get(key);
    if (hit instanceof SettledFact) return hit.value as T;
    if (hit) return hit as Promise<T>;
    const made = compute();
    facts.set(key, made);
    made.then(
      (value) => {
        if (facts.get(key) === made) facts.set(key, new SettledFact(value));
      },
      () => {
        if (facts.get(key) === made) facts.delete(key);
      },
    );
    return made;
  };

  /**
   * The episode database. Throws once the environment is closed: its database may already
   * serve another environment. Writes made through it are not calls of this environment, so
   * from then on its rule checks no longer share {@link RuleCheckContext.baseFact} values.
   */
  get db(): SqlDb {
    this.rawAccess = true;
    return this.connection;
  }

  /** @internal The episode database, for the environment's own work and its tools' handle. */
  get connection(): SqlDb {
    if (this.closed) throw new Error('environment is closed');
    return this.database;
  }

  /**
   * @internal The rows of a statement: at once when the database answers synchronously (its
   * failure thrown), else a promise of them.
   */
  rowsNow(sql: string, params?: SqlParams): SqlRow[] | Promise<SqlRow[]> {
    const db = this.connection;
    return this.syncDb ? this.syncDb.allSync(sql, params) : db.all(sql, params);
  }

  /**
   * @internal The rows of a statement as a promise, as {@link SqlDb.all} gives them (a failure is
   * a rejection), made with one promise when the database answers synchronously.
   */
  rowsLater(sql: string, params?: SqlParams): Promise<SqlRow[]> {
    const db = this.connection;
    if (!this.syncDb) return db.all(sql, params);
    try {
      return Promise.resolve(this.syncDb.allSync(sql, params));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * @internal The first row of a statement (undefined for none) as {@link rowsLater} gives its
   * rows: one promise when the database answers synchronously (an async `one` awaiting
   * `rowsLater` made two and a microtask hop).
   */
  firstRowLater(sql: string, params?: SqlParams): Promise<SqlRow | undefined> {
    const db = this.connection;
    if (!this.syncDb) return db.all(sql, params).then(firstRow);
    try {
      return Promise.resolve(this.syncDb.allSync(sql, params)[0]);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** @internal {@link SqlDb.run}'s count of changed rows, as {@link rowsLater} gives rows. */
  changesLater(sql: string, params?: SqlParams): Promise<number> {
    const db = this.connection;
    if (!this.syncDb) return db.run(sql, params).then((r) => r.changes);
    try {
      return Promise.resolve(this.syncDb.runSync(sql, params).changes);
    } catch (e) {
      return Promise.reject(e);
    }
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
    const rows = await this.connection.all(`SELECT max(seq) AS m FROM ${WRITE_LOG_TABLE}`);
    this.lastSeq = (rows[0]?.m as number | null) ?? 0;
    this.setupSeq = this.lastSeq;
    this.parsedLog = [];
    this.parsedUpTo = this.lastSeq;
  }

  /**
   * Run one tool call. Unknown tools, arguments that fail the tool's schema, {@link ToolError}s
   * and SQLite constraint failures ({@link constraintFailure}: the arguments broke a CHECK, NOT
   * NULL, UNIQUE, primary or foreign key, or a column type) become error outcomes (`Error: …`);
   * a failed write is rolled back. Any other exception is a bug in the tool or a sandbox fault
   * and is rethrown, as is an agent tool writing a `userSide` table.
   *
   * @param turn index of the tool turn in the trajectory, recorded on each write.
   * @param options `sync: false` skips the domain's `syncState` after the call (as tau2's gold
   *   replay does). `result: false`: only the failure and the writes matter (the gold replay), so
   *   the tool may skip building a successful result ({@link ToolContext.resultDiscarded}) and a
   *   successful outcome's `content` is then `''` or whatever the tool returned. `checks: false`:
   *   the domain's rule checks are not run (`violations` is empty); they only read, so the
   *   outcome is otherwise the same.
   */
  async call(
    call: ToolCall,
    actor: Requestor = 'assistant',
    turn = -1,
    options: { sync?: boolean; result?: boolean; checks?: boolean } = {},
  ): Promise<ToolOutcome> {
    const tool = toolNamed(this.domain, actor, call.name);
    if (!tool) {
      const other = toolsFor(this.domain, actor === 'user' ? 'assistant' : 'user').some((t) => t.name === call.name);
      const who = actor === 'user' ? 'the caller' : 'the agent';
      const own = this.domain.unknownToolError?.(call.name);
      return failed(
        own ?? (other ? `tool ${call.name} is not available to ${who}` : `unknown tool ${call.name}`),
        null,
      );
    }
    const argumentError = tool.argumentError?.(call.arguments ?? {});
    if (argumentError) return failed(argumentError, tool.kind);
    const parsed = tool.params.safeParse(call.arguments ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const where = issue.path.length ? `${issue.path.join('.')}: ` : '';
      return failed(`invalid arguments for ${tool.name}: ${where}${issue.message}`, tool.kind);
    }
    const guarded = tool.kind === 'write' || tool.kind === 'generic';
    const checks = actor === 'assistant' && options.checks !== false ? checksOf(this.domain, tool.name) : NO_CHECKS;
    // The `before` checks' reads, handed to the tool (see CheckedReads).
    const reads = checks.before.length > 0 && tool.kind === 'write' ? new MemoReader(this) : undefined;
    const before = reads ? this.checkRules(checks.before, tool.name, parsed.data, [], this.log.length, reads) : [];
    const early = Array.isArray(before) ? before : await before;
    // What the tool tells its `after` checks (ToolContext.tell), when any will run.
    let told = checks.after.length > 0 ? new Map<string, unknown>() : undefined;
    // `all`, not `run`: a cached statement without `run`'s change counting (two extra queries).
    if (guarded) {
      const done = this.rowsNow('SAVEPOINT sb_call');
      if (!Array.isArray(done)) await done;
    }
    let result: unknown;
    try {
      const db = reads?.used ? new CheckedReads(reads, this.toolDb) : this.toolDb;
      const ctx: ToolContext = { db, now: this.clock, actor, resultDiscarded: options.result === false };
      if (told) ctx.tell = (key, value) => void told!.set(key, value);
      result = await tool.run(ctx, parsed.data);
    } catch (e) {
      if (guarded) await this.connection.batch([{ sql: 'ROLLBACK TO sb_call' }, { sql: 'RELEASE sb_call' }]);
      const attempted = early.map((v) => ({ ...v, refused: true }));
      if (e instanceof ToolError) return failed(e.message, tool.kind, attempted);
      const refused = constraintFailure(e);
      if (refused) return failed(`${tool.name} was refused by the database: ${refused}`, tool.kind, attempted);
      throw e;
    }
    // Released at once. Leaving it open for the next call's SAVEPOINT to nest in (one statement
    // less) was measured: x0.96 per call on fresh environments, but x1.2-1.4 per call over
    // episodes of 60-200 calls (every open savepoint is looked at per page written).
    if (guarded) {
      const done = this.rowsNow('RELEASE sb_call');
      if (!Array.isArray(done)) await done;
    }
    const logBefore = this.log.length;
    const collected = this.collectWrites(turn, actor, tool.name);
    const writes = Array.isArray(collected) ? collected : await collected;
    if (actor === 'assistant' && writes.length > 0) {
      const userSide = userSideWrite(this.domain, writes);
      if (userSide)
        throw new Error(`agent tool ${tool.name} wrote the caller-side table ${userSide.table}: a bug in the domain`);
    }
    if (this.domain.syncState && options.sync !== false) {
      await this.domain.syncState(this.toolDb);
      const synced = this.collectWrites(turn, actor, tool.name);
      const more = Array.isArray(synced) ? synced : await synced;
      // The sync changed the state the tool told of.
      if (more.length > 0) told = undefined;
      writes.push(...more);
    }
    let violations = early;
    if (checks.after.length > 0 && writes.length > 0) {
      const after = this.checkRules(checks.after, tool.name, parsed.data, writes, logBefore, undefined, told);
      const found = Array.isArray(after) ? after : await after;
      violations = early.length === 0 ? found : [...early, ...found];
    }
    const content =
      typeof result === 'string' ? result : options.result === false ? '' : JSON.stringify(result ?? null);
    return { content, error: false, writes, violations, kind: tool.kind };
  }

  /**
   * The column writes of the log rows after {@link lastSeq} (a call's), appended to the episode's
   * log: at once when the database answers synchronously, else a promise of them.
   */
  private collectWrites(turn: number, actor: Requestor, tool: string): WriteEntry[] | Promise<WriteEntry[]> {
    const rows = this.rowsNow(WRITE_LOG_SINCE, [this.lastSeq]);
    return Array.isArray(rows)
      ? this.takeWrites(rows, turn, actor, tool)
      : rows.then((r) => this.takeWrites(r, turn, actor, tool));
  }

  /** {@link collectWrites} of the log text read ({@link WRITE_LOG_SINCE}). */
  private takeWrites(rows: SqlRow[], turn: number, actor: Requestor, tool: string): WriteEntry[] {
    const text = rows[0]!.log as string;
    // No entries: the text is `[]`.
    if (text.length === 2) return [];
    const images = parseLogText(text);
    const parsed = this.parsedLog && this.parsedUpTo === this.lastSeq ? this.parsedLog : null;
    const out: WriteEntry[] = [];
    const meta = { turn, actor, tool };
    for (const image of images) {
      parsed?.push(image);
      this.written.add(image.tbl);
      const info = this.byName.get(image.tbl);
      if (info) expandLogRow(image, info, meta, this.log.length + out.length + 1, out);
    }
    this.lastSeq += images.length;
    if (parsed) this.parsedUpTo = this.lastSeq;
    else this.parsedLog = null;
    this.log.push(...out);
    return out;
  }

  /**
   * Run rule checks of one phase that apply to `tool` ({@link checksOf}), in order: the
   * violations found, at once when every check returned its result at once
   * ({@link RuleCheck.check}), else their promise (a check's promise is awaited before the next
   * check runs). Not an `async` function, and no await of a result that is not a promise: the
   * after phase of book_reservation, whose three checks stay `async`, 6.3 -> 6.0 µs a call (same
   * process, calls alternating with the old loop, 20 pairs of 200, load 4.2). Measured and not done
   * (session 15): the log before the call copied only when a check reads it, for calls made after
   * their task's reference actions: through a getter in the context's object literal, whole calls
   * ×1.078 (update_reservation_flights) and ×1.088 (book_reservation), slower; through a context
   * class with a `log` getter, ×1.007 and ×0.978, within the noise (30 pairs of 100, load ~1).
   * @param logLength how much of the write log precedes the call (default: all of it).
   * @param reader the phase's reader (default: a new {@link memoReader}).
   * @param told what the tool told the `after` checks ({@link RuleCheckContext.told}; default none).
   */
  private checkRules(
    checks: readonly RuleCheck[],
    tool: string,
    args: Record<string, unknown>,
    writes: WriteEntry[],
    logLength = this.log.length,
    reader?: MemoReader,
    told: ReadonlyMap<string, unknown> = NOTHING_TOLD,
  ): RuleViolation[] | Promise<RuleViolation[]> {
    const out: RuleViolation[] = [];
    const log = logLength === this.log.length ? this.log : this.log.slice(0, logLength);
    const db = reader ?? this.memoReader();
    // One context for the phase's checks (they only read it).
    const ctx: RuleCheckContext = { db, tool, args, writes, log, now: this.clock, baseFact: this.baseFact, told };
    for (let i = 0; i < checks.length; i++) {
      const message = checks[i]!.check(ctx);
      // Anything but a message or null is the check's promise (or another thenable).
      if (typeof message === 'object' && message !== null) return checksAwaited(checks, i, message, ctx, out);
      if (message) out.push(violation(checks[i]!, message));
    }
    return out;
  }

  /**
   * A read-only handle for one phase of rule checks: checks read the same rows over and over
   * (the reservation a call names, its segments), and nothing writes while they run, so each
   * distinct query runs once and its rows are shared (checks must not change them; each caller
   * gets its own array).
   */
  private memoReader(): RuleCheckContext['db'] {
    return new MemoReader(this);
  }

  /** @internal The tools' database handle, for the domain's task setup ({@link DomainRuntime.open}). */
  get setupDb(): ToolDb {
    return this.toolDb;
  }

  /**
   * Read-only query helpers (for env assertions and rule checks); as with {@link query}, rule
   * checks stop sharing {@link RuleCheckContext.baseFact} values from here on.
   */
  get reader(): Pick<ToolDb, 'one' | 'all'> {
    this.rawAccess = true;
    return this.toolDb;
  }

  /**
   * Every domain table, rows ordered by primary key (by every column when there is none). Reads
   * the whole database (tau2-airline: about 53k rows, ~90 ms): use it for export, hashing and
   * tests; scoring compares {@link changes} instead.
   */
  async exportState(): Promise<DbState> {
    return this.exportTables(this.runtime.tables);
  }

  private async exportTables(tables: readonly TableInfo[]): Promise<DbState> {
    const statements = tables.map((t) => {
      const order = (t.primaryKey.length ? t.primaryKey : t.columns).map(ident).join(', ');
      return { sql: `SELECT * FROM ${ident(t.name)} ORDER BY ${order}` };
    });
    const results = statements.length ? await this.connection.batch(statements) : [];
    const state: DbState = {};
    tables.forEach((t, i) => {
      state[t.name] = results[i]!;
    });
    return state;
  }

  /**
   * What the episode changed since the environment was opened (the task's initial state is
   * not a change): every row written, by primary key, with its image at open and now, read from
   * the write log in one query; plus the rows of tables compared whole (see
   * {@link StateChanges}). Costs a few µs per log row, whatever the database size.
   */
  async changes(): Promise<StateChanges> {
    const known = this.parsedLog;
    const [tail] = await this.connection.all(WRITE_LOG_SINCE, [known ? this.parsedUpTo : this.setupSeq]);
    const read = parseLogText(tail!.log as string);
    const log = known ? (read.length ? [...known, ...read] : known) : read;
    const { rows, nullKeyTables } = collectChanges(log, this.runtime.tables, this.runtime.wholeTables);
    const whole = this.runtime.tables.filter((t) => this.runtime.wholeTables.has(t.name) || nullKeyTables.has(t.name));
    return { rows, whole: await this.exportTables(whole) };
  }

  /**
   * Save the database and the write log. On a {@link DomainRuntime.replayable} runtime the
   * database is kept as the episode's logged writes (a read of the log, O(writes)); otherwise as
   * a file image (O(database); the environment's database then leaves the runtime's pool).
   */
  async snapshot(): Promise<EnvSnapshot> {
    if (this.runtime.replayable && this.pooled) {
      const log = (await this.connection.all(
        `SELECT tbl, op, old, new, rid FROM ${WRITE_LOG_TABLE} WHERE seq > ? ORDER BY seq`,
        [this.setupSeq],
      )) as unknown as LoggedWrite[];
      return { log, writes: this.log.map((w) => ({ ...w })), lastSeq: this.lastSeq, setupSeq: this.setupSeq };
    }
    if (this.inTransaction) {
      await this.connection.exec('COMMIT');
      this.inTransaction = false;
    }
    this.pooled = false;
    const imageLog = (await this.connection.all(
      `SELECT tbl, op, old, new, rid FROM ${WRITE_LOG_TABLE} ORDER BY seq`,
    )) as unknown as LoggedWrite[];
    const image = await this.connection.snapshot();
    await this.beginAgain();
    return { image, imageLog, writes: this.log.map((w) => ({ ...w })), lastSeq: this.lastSeq, setupSeq: this.setupSeq };
  }

  /** Go on in a transaction the write log joins (after an image snapshot's COMMIT or a restore). */
  private async beginAgain(): Promise<void> {
    await beginLogged(this.connection);
    this.inTransaction = true;
  }

  /**
   * Return to a saved point (of an environment of the same runtime and task). A logged snapshot
   * rolls this environment back to the task's initial state and replays the saved writes
   * (O(writes)); an image replaces the database.
   * @throws Error when a logged snapshot was taken after another initial state (another task),
   *   or when its replay does not give back the saved log (a sandbox fault).
   */
  async restore(snap: EnvSnapshot): Promise<void> {
    if (snap.log) return this.replay(snap, snap.log);
    if (!snap.image) throw new Error('restore: the snapshot holds neither a write log nor a database image');
    if (this.pooled) {
      await this.connection.exec('ROLLBACK');
      this.pooled = false;
    }
    this.rawAccess = true;
    this.inTransaction = false;
    await this.connection.restore(snap.image);
    await this.connection.exec(CONNECTION_PRAGMAS);
    await this.beginAgain();
    if (snap.imageLog?.length)
      await this.connection.batch(
        snap.imageLog.map((w) => ({
          sql: APPEND_WRITE_LOG,
          params: { ':tbl': w.tbl, ':op': w.op, ':old': w.old, ':new': w.new, ':rid': w.rid },
        })),
      );
    this.parsedLog = null;
    this.log.length = 0;
    this.log.push(...snap.writes.map((w) => ({ ...w })));
    this.lastSeq = snap.lastSeq;
    if (snap.setupSeq !== undefined) this.setupSeq = snap.setupSeq;
  }

  private async replay(snap: EnvSnapshot, log: readonly LoggedWrite[]): Promise<void> {
    if (!this.runtime.replayable || !this.pooled)
      throw new Error('restore: a logged snapshot needs a fresh environment of a replayable runtime');
    if ((snap.setupSeq ?? 0) !== this.setupSeq)
      throw new Error('restore: the snapshot was taken after another initial state (another task)');
    const byName = this.byName;
    const statements = log.map((w) => {
      const table = byName.get(w.tbl);
      if (!table) throw new Error(`restore: the snapshot wrote table ${w.tbl}, which this domain lacks`);
      return replayStatement(table, w);
    });
    // Before the replay: if it fails part-way, the set still covers what it wrote.
    this.written = new Set(log.map((w) => w.tbl));
    await this.connection.batch([
      { sql: `ROLLBACK TO ${EPISODE_SAVEPOINT.slice('SAVEPOINT '.length)}` },
      ...statements,
    ]);
    const [row] = await this.connection.all(`SELECT count(*) AS n FROM ${WRITE_LOG_TABLE} WHERE seq > ?`, [
      this.setupSeq,
    ]);
    if (row?.n !== log.length)
      throw new Error(`restore: replaying ${log.length} logged writes logged ${String(row?.n)}: a sandbox fault`);
    this.parsedLog = null;
    this.log.length = 0;
    this.log.push(...snap.writes.map((w) => ({ ...w })));
    this.lastSeq = snap.lastSeq;
  }

  /**
   * Close the environment. Its database goes back to the runtime for reuse when the episode's
   * transaction rolls back to an empty write log (the pristine image); otherwise it is closed.
   * A second call is a no-op.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const db = this.database;
    if (this.pooled) {
      this.pooled = false;
      try {
        await db.exec('ROLLBACK');
        const [row] = await db.all(`SELECT EXISTS (SELECT 1 FROM ${WRITE_LOG_TABLE}) AS dirty`);
        if (row?.dirty === 0) return await this.runtime.release(db);
      } catch {
        // Not reusable (e.g. something ended the transaction): close it below.
      }
    }
    await db.close();
  }

  /**
   * Run a parameterized read query (tests and tooling). The SQL is not checked to be a read, so
   * rule checks stop sharing {@link RuleCheckContext.baseFact} values from here on.
   */
  async query(sql: string, params?: SqlParams): Promise<SqlRow[]> {
    this.rawAccess = true;
    return this.connection.all(sql, params);
  }
}

/**
 * The tools' {@link ToolDb} over an environment's database (methods on one object per
 * environment, not closures: they run on every statement of every tool call).
 */
class EnvToolDb implements ToolDb {
  constructor(private readonly env: Environment) {}
  one(sql: string, params?: SqlParams): Promise<SqlRow | undefined> {
    return this.env.firstRowLater(sql, params);
  }
  all(sql: string, params?: SqlParams): Promise<SqlRow[]> {
    return this.env.rowsLater(sql, params);
  }
  run(sql: string, params?: SqlParams): Promise<number> {
    return this.env.changesLater(sql, params);
  }
}

/** The first of `rows` (undefined for none). */
function firstRow(rows: SqlRow[]): SqlRow | undefined {
  return rows[0];
}

/**
 * A query's rows as a {@link MemoReader} keeps them: the rows themselves when the database
 * answered synchronously, else the promise of them (a failure: its rejection, kept as well).
 */
type MemoRows = SqlRow[] | Promise<SqlRow[]>;

/** {@link MemoReader}'s rows of one SQL text, by parameters. */
interface MemoBySql {
  /** Parameters that are one text (a row by its id, most reads): the text is the key. */
  text: Map<string, MemoRows>;
  /** Any other parameters (none: ''), by their JSON. */
  json: Map<string, MemoRows>;
}

/** The parameters when they are a list of one text, else undefined. */
function soleText(params: SqlParams | undefined): string | undefined {
  if (!Array.isArray(params) || params.length !== 1) return undefined;
  const p: unknown = params[0];
  return typeof p === 'string' ? p : undefined;
}

/**
 * See {@link Environment.memoReader}: each distinct query of one phase of rule checks runs once.
 * A lookup costs no JSON for a lone text parameter, and no promise until it is answered (the rows
 * of a synchronous database are kept as they are).
 */
class MemoReader {
  /**
   * Rows by SQL text, then by parameters: the SQL texts are the callers' constants, whose hashes
   * V8 keeps, so a lookup hashes only the short parameter text.
   */
  private readonly memo = new Map<string, MemoBySql>();
  constructor(private readonly env: Environment) {}
  /** True once a query ran through this reader. */
  get used(): boolean {
    return this.memo.size > 0;
  }
  /** Where the rows of `sql` with `params` are kept, and their key there. */
  private slot(sql: string, params: SqlParams | undefined, add: boolean) {
    let bySql = this.memo.get(sql);
    if (!bySql) {
      if (!add) return undefined;
      this.memo.set(sql, (bySql = { text: new Map(), json: new Map() }));
    }
    const text = soleText(params);
    return text === undefined
      ? { map: bySql.json, key: params === undefined ? '' : JSON.stringify(params) }
      : { map: bySql.text, key: text };
  }
  private rows(sql: string, params?: SqlParams): MemoRows {
    const { map, key } = this.slot(sql, params, true)!;
    let hit = map.get(key);
    if (hit === undefined) {
      try {
        hit = this.env.rowsNow(sql, params);
      } catch (e) {
        hit = Promise.reject(e);
      }
      map.set(key, hit);
    }
    return hit;
  }
  /**
   * The rows of a query that already ran through this reader, taken out of it (a later read of it
   * here runs the query again), or undefined. The rows are the ones the checks were given: the
   * caller must be the only one left to use them (the checks are done).
   */
  take(sql: string, params?: SqlParams): MemoRows | undefined {
    const slot = this.slot(sql, params, false);
    if (!slot) return undefined;
    const hit = slot.map.get(slot.key);
    if (hit !== undefined) slot.map.delete(slot.key);
    return hit;
  }
  one(sql: string, params?: SqlParams): Promise<SqlRow | undefined> {
    const rows = this.rows(sql, params);
    return Array.isArray(rows) ? Promise.resolve(rows[0]) : rows.then(firstRow);
  }
  all(sql: string, params?: SqlParams): Promise<SqlRow[]> {
    const rows = this.rows(sql, params);
    return Array.isArray(rows) ? Promise.resolve([...rows]) : rows.then((r) => [...r]);
  }
}

/** A base fact's value once its computation fulfilled ({@link RuleCheckContext.baseFact}). */
class SettledFact {
  constructor(readonly value: unknown) {}
}

/** A base fact kept: its computation's promise until it fulfils, then its value. */
type BaseFact = Promise<unknown> | SettledFact;

/** The violation of `rc` with `message`, as a call's outcome lists it. */
function violation(rc: RuleCheck, message: string): RuleViolation {
  return { rule: rc.rule, message, ...(rc.policy ? { policy: rc.policy } : {}) };
}

/**
 * {@link Environment.checkRules} from the check at `at`, whose result is `pending`: each later
 * check runs once the one before it has answered; `out` holds the violations found before `at`.
 */
async function checksAwaited(
  checks: readonly RuleCheck[],
  at: number,
  pending: PromiseLike<string | null>,
  ctx: RuleCheckContext,
  out: RuleViolation[],
): Promise<RuleViolation[]> {
  const first = await pending;
  if (first) out.push(violation(checks[at]!, first));
  for (let i = at + 1; i < checks.length; i++) {
    const result = checks[i]!.check(ctx);
    const message = typeof result === 'object' && result !== null ? await result : result;
    if (message) out.push(violation(checks[i]!, message));
  }
  return out;
}

/** {@link RuleCheckContext.told} when the tool told nothing (a `before` phase, or a sync that wrote). */
const NOTHING_TOLD: ReadonlyMap<string, unknown> = new Map();

/** The rule checks of one tool, by phase, in the domain's order (see {@link checksOf}). */
interface ToolChecks {
  before: readonly RuleCheck[];
  after: readonly RuleCheck[];
}

/** No rule checks (a call by the caller, or with `checks: false`). */
const NO_CHECKS: ToolChecks = { before: [], after: [] };

/** {@link checksOf} by domain, then by tool name. */
const checksByTool = new WeakMap<Domain, Map<string, ToolChecks>>();

/**
 * The domain's rule checks that apply to `tool`, split by phase ({@link RuleCheck.when}, default
 * `after`) in the domain's order: worked out once per domain and tool, so that a call whose tool
 * has no check of a phase skips that phase (no reader, no pass over every check).
 */
function checksOf(domain: Domain, tool: string): ToolChecks {
  let byTool = checksByTool.get(domain);
  if (!byTool) checksByTool.set(domain, (byTool = new Map()));
  let out = byTool.get(tool);
  if (!out) {
    const applies = (domain.ruleChecks ?? []).filter((rc) => !rc.tools || rc.tools.includes(tool));
    out = {
      before: applies.filter((rc) => rc.when === 'before'),
      after: applies.filter((rc) => (rc.when ?? 'after') === 'after'),
    };
    byTool.set(tool, out);
  }
  return out;
}

/** {@link toolNamed}'s tools by name, by tool list (a domain's `tools` or `userTools`). */
const toolsByName = new WeakMap<readonly ToolDefinition[], Map<string, ToolDefinition>>();

/** The tool `name` callable by `actor` in `domain` ({@link toolsFor}; the first of that name), or undefined. */
function toolNamed(domain: Domain, actor: Requestor, name: string): ToolDefinition | undefined {
  const list = toolsFor(domain, actor);
  let byName = toolsByName.get(list);
  if (!byName) {
    byName = new Map();
    for (const t of list) if (!byName.has(t.name)) byName.set(t.name, t);
    toolsByName.set(list, byName);
  }
  return byName.get(name);
}

/** The caller-side tables of a domain (table option `userSide`), by domain; null for none. */
const userSideByDomain = new WeakMap<Domain, ReadonlySet<string> | null>();

/** The first of `writes` to a caller-side table of `domain`, or undefined. */
function userSideWrite(domain: Domain, writes: readonly WriteEntry[]): WriteEntry | undefined {
  let tables = userSideByDomain.get(domain);
  if (tables === undefined) {
    const names = Object.entries(domain.tables ?? {})
      .filter(([, o]) => o?.userSide)
      .map(([name]) => name);
    tables = names.length > 0 ? new Set(names) : null;
    userSideByDomain.set(domain, tables);
  }
  if (tables === null) return undefined;
  for (const w of writes) if (tables.has(w.table)) return w;
  return undefined;
}

/** A statement that can only read: SQLite's SELECT never changes the database. */
const SELECT = /^\s*select\b/i;

/**
 * A write tool's database handle after its `before` rule checks: a read the checks made (the same
 * SQL and parameters) gives their rows instead of running again, as long as nothing but SELECTs
 * ran since the checks; the first other statement ends that (nothing else runs between the checks
 * and the tool but the call's SAVEPOINT). Saves a tool the reads its preconditions already made
 * (tau2-retail: the order, its items, the variants, the payment method).
 *
 * The rows are the checks' own, taken from their reader (the checks are done with them and keep
 * none): the tool may change them as it may a fresh read's, and the same read made again runs
 * the query. Copying every row handed over instead (and keys by JSON, a promise per lookup in the
 * reader) made tau2-retail's item swaps and cancel ~2-3% slower (x0.97-0.98, 300 pairs).
 */
class CheckedReads implements ToolDb {
  private live = true;
  constructor(
    private readonly reads: MemoReader,
    private readonly db: ToolDb,
  ) {}
  one(sql: string, params?: SqlParams): Promise<SqlRow | undefined> {
    const hit = this.take(sql, params);
    if (hit === undefined) return this.db.one(sql, params);
    return Array.isArray(hit) ? Promise.resolve(hit[0]) : hit.then(firstRow);
  }
  all(sql: string, params?: SqlParams): Promise<SqlRow[]> {
    const hit = this.take(sql, params);
    if (hit === undefined) return this.db.all(sql, params);
    return Array.isArray(hit) ? Promise.resolve(hit) : hit;
  }
  /** The checks' rows of this read while nothing but SELECTs ran since them (see the class), else undefined. */
  private take(sql: string, params?: SqlParams): MemoRows | undefined {
    if (!this.live) return undefined;
    const hit = this.reads.take(sql, params);
    if (hit === undefined && !SELECT.test(sql)) this.live = false;
    return hit;
  }
  async run(sql: string, params?: SqlParams): Promise<number> {
    this.live = false;
    return this.db.run(sql, params);
  }
}

/** SQLite's messages for a row the schema refuses (SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_TOOBIG). */
const CONSTRAINT_MESSAGE =
  /^(?:(?:CHECK|NOT NULL|UNIQUE|FOREIGN KEY|PRIMARY KEY) constraint failed|datatype mismatch|string or blob too big)\b/;

/**
 * The SQLite message when `e` is the database refusing a row (a constraint failure, a type
 * mismatch, a value too big), else null. Such a failure inside a tool comes from the values the
 * caller of the tool passed, so it is that caller's tool error, not a sandbox fault: the schema is
 * checked when the domain is admitted, and a tool runs only parameterized SQL.
 */
export function constraintFailure(e: unknown): string | null {
  const message = e instanceof Error ? e.message : typeof e === 'string' ? e : '';
  return CONSTRAINT_MESSAGE.test(message) ? message : null;
}

function failed(message: string, kind: ToolOutcome['kind'], violations: RuleViolation[] = []): ToolOutcome {
  return { content: `Error: ${message}`, error: true, writes: [], violations, kind };
}

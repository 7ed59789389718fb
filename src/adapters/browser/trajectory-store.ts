/**
 * Trajectories kept in IndexedDB (through `idb`), written as they happen: a call's record is
 * rewritten after every turn, so a closed tab loses at most the turn in flight. Completed
 * records hold the trajectory exactly as the CLI writes it to `trajectories.jsonl`.
 */
import { openDB, type IDBPDatabase } from 'idb';
import { unrunCallTurns } from '../../core/rollout/unrun-calls.ts';
import type { CallSpec, Trajectory, Turn } from './rollout-types.ts';

/** One stored call or batch rollout. */
export interface StoredRecord {
  /** Unique key of the record. */
  key: string;
  /** When the record was last written, ms since the epoch (wall clock). */
  savedAt: number;
  source: 'call' | 'batch';
  /** Batch id (one per batch run), for batch rollouts. */
  batch?: string;
  /**
   * `running` until the episode ended (`done`). A `running` record whose page is gone (the tab
   * was closed or reloaded mid-call) becomes `interrupted` on the next visit
   * ({@link markInterrupted}): its turns are kept and its trajectory is the invalid one of
   * {@link interruptedTrajectory}, so it is exported like any other.
   */
  status: 'running' | 'done' | 'interrupted';
  /** Id of the page load that writes a running record (see {@link markInterrupted}). */
  owner?: string;
  domain: string;
  task_id: string;
  seed: number;
  agent: string;
  user: string;
  /** Share settings of a call (never an API key). */
  spec?: CallSpec;
  /** Turns so far (while running) or of the trajectory. */
  turns: Turn[];
  /** The finished trajectory (scored when valid); null while running. */
  trajectory: Trajectory | null;
}

const DB_NAME = 'switchboard';
const STORE = 'trajectories';
const AUDIO = 'audio';

/** One stored WAV of a record: `name` is the reference in the trajectory (the CLI's relative path). */
export interface StoredAudio {
  key: string;
  record: string;
  name: string;
  bytes: Uint8Array;
}

/** The trajectory store. */
export interface TrajectoryStore {
  put(record: StoredRecord): Promise<void>;
  /** Records, newest first, at most `limit` (default 500). */
  list(limit?: number): Promise<StoredRecord[]>;
  get(key: string): Promise<StoredRecord | undefined>;
  clear(): Promise<void>;
  /** Keep a WAV of record `record` under `name`. */
  putAudio(record: string, name: string, bytes: Uint8Array): Promise<void>;
  /** The WAVs of a record: name → bytes. */
  audioOf(record: string): Promise<Map<string, Uint8Array>>;
}

let opened: Promise<IDBPDatabase> | undefined;

/** Open (and create on first use) the store. */
export function openTrajectoryStore(): TrajectoryStore {
  const db = (opened ??= openDB(DB_NAME, 2, {
    upgrade(d, oldVersion) {
      if (oldVersion < 1) {
        const s = d.createObjectStore(STORE, { keyPath: 'key' });
        s.createIndex('savedAt', 'savedAt');
      }
      if (oldVersion < 2) d.createObjectStore(AUDIO, { keyPath: 'key' }).createIndex('record', 'record');
    },
  }));
  return {
    async put(record) {
      await (await db).put(STORE, record);
    },
    async list(limit = 500) {
      const out: StoredRecord[] = [];
      let cursor = await (await db).transaction(STORE).store.index('savedAt').openCursor(null, 'prev');
      while (cursor && out.length < limit) {
        out.push(cursor.value as StoredRecord);
        cursor = await cursor.continue();
      }
      return out;
    },
    async get(key) {
      return (await (await db).get(STORE, key)) as StoredRecord | undefined;
    },
    async clear() {
      await (await db).clear(STORE);
      await (await db).clear(AUDIO);
    },
    async putAudio(record, name, bytes) {
      const a: StoredAudio = { key: `${record}|${name}`, record, name, bytes };
      await (await db).put(AUDIO, a);
    },
    async audioOf(record) {
      const all = (await (await db).getAllFromIndex(AUDIO, 'record', record)) as StoredAudio[];
      return new Map(all.map((a) => [a.name, a.bytes]));
    },
  };
}

/** `invalid_reason` of an interrupted call. */
export const INTERRUPTED_REASON =
  'interrupted: the page was closed or reloaded mid-call (turns kept up to the last stored one)';

/**
 * The trajectory of a call cut short by closing its page: invalid (a fault of the sandbox, not
 * the agent's: never scored, excluded from means like any invalid rollout) with termination
 * `infrastructure_error`, the turns stored so far, and the simulated times of the first and
 * last of them (0 when there are none). Calls of the last stored reply that have no stored result
 * are answered `not_run` (`core/rollout/unrun-calls.ts`), so the exported turns stay well-formed.
 */
export function interruptedTrajectory(record: StoredRecord): Trajectory {
  const times = record.turns.map((t) => t.t_ms);
  const unrun = unrunCallTurns(record.turns, 'infrastructure_error', INTERRUPTED_REASON);
  return {
    schema_version: 1,
    id: record.key,
    domain: record.domain,
    task_id: record.task_id,
    trial: 0,
    seed: record.seed,
    participants: { agent: record.agent, user: record.user },
    termination: 'infrastructure_error',
    valid: false,
    invalid_reason: INTERRUPTED_REASON,
    turns: unrun.length ? [...record.turns, ...unrun] : record.turns,
    started_at_ms: times[0] ?? 0,
    ended_at_ms: times.at(-1) ?? 0,
    reward_info: null,
  };
}

/**
 * Mark every `running` record whose page load is gone as `interrupted`, with its
 * {@link interruptedTrajectory}. `live(owner)` tells whether the page load that writes a record
 * is still open (another tab may be mid-call); a record without an owner is from an earlier
 * version and is interrupted. Returns the keys it marked.
 */
export async function markInterrupted(store: TrajectoryStore, live: (owner: string) => boolean): Promise<string[]> {
  const marked: string[] = [];
  for (const r of await store.list(Number.MAX_SAFE_INTEGER)) {
    if (r.status !== 'running' || (r.owner !== undefined && live(r.owner))) continue;
    await store.put({ ...r, status: 'interrupted', trajectory: interruptedTrajectory(r) });
    marked.push(r.key);
  }
  return marked;
}

/**
 * JSONL of the finished trajectories among `records` (interrupted calls included, as invalid
 * ones), one per line in the order given, in the CLI's `trajectories.jsonl` format
 * (`JSON.stringify` of each trajectory).
 */
export function trajectoriesJsonl(records: readonly StoredRecord[]): string {
  return records
    .filter((r) => r.trajectory)
    .map((r) => `${JSON.stringify(r.trajectory)}\n`)
    .join('');
}

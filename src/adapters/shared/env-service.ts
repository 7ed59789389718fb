/**
 * Whole tool calls served by the thread that holds a domain's tools and databases (issue 15,
 * item 2): one request runs one tool call there (argument check, the tool's SQL, write-log
 * collection, rule checks, the result's serialization) and the reply carries the outcome with its
 * writes. A tool call through a worker is then one message each way, where a {@link SqlDb} served
 * from a worker (`db-service.ts`) costs one per SQL statement.
 *
 * Platform-free: `src/adapters/node/worker-env.ts` serves it from a `worker_threads` Worker; a
 * browser Web Worker could serve it the same way. Requests and replies are plain data
 * (structured clones); a transport sends a call's writes packed ({@link packWrites}).
 */
import type { DomainRuntime, Environment, ToolOutcome } from '../../core/env/environment.ts';
import type { StateChanges } from '../../core/env/changes.ts';
import type { Requestor } from '../../core/schema/task.ts';
import type { ToolCall, WriteEntry } from '../../core/schema/trajectory.ts';

/**
 * A request to an {@link EnvService}. `env` is the handle an `open` request returned.
 * - `open`: a fresh environment for the task with id `taskId` (none: the pristine database), with
 *   the policy clock at `now` (ms since the Unix epoch; default the domain's `now`).
 * - `call`: one tool call, as {@link Environment.call} (`sync: false` skips the domain's
 *   `syncState`).
 * - `changes`: {@link Environment.changes}.
 * - `close`: {@link Environment.close}; the handle is forgotten.
 */
export type EnvRequest =
  | { op: 'open'; taskId?: string; now?: number }
  | { op: 'call'; env: number; call: ToolCall; actor: Requestor; turn: number; sync?: boolean }
  | { op: 'changes'; env: number }
  | { op: 'close'; env: number };

/**
 * A {@link ToolOutcome} as the service sends it: the same fields, with the writes packed
 * ({@link packWrites}; {@link unpackOutcome} gives the outcome back).
 */
export type PackedOutcome = Omit<ToolOutcome, 'writes'> & { writes: PackedWrites };

/**
 * Column writes as one flat array of scalars, a structured clone of which costs a fraction of
 * the {@link WriteEntry} objects' (tau2-airline's update_reservation_passengers, 10 entries:
 * ~20 µs of clone each way as objects, ~8 µs packed, packing included; measured with
 * `v8.serialize` + `deserialize`, which is what `postMessage` does). Entries of one written row
 * share their seq run, turn, actor, tool, table, op and key, so they go as one group:
 * `seq, turn, actor, tool, table, op, k, <k key columns>, <k key values>, m, <m × (column,
 * before, after)>`, groups one after another; `seq` is the first entry's, each next entry's one
 * more.
 */
export type PackedWrites = (string | number | null)[];

/**
 * Whether `b` can join the group `a` heads (consecutive seq `n` places on, same row and call);
 * `names` are the keys of `a.key`, in order.
 */
function sameGroup(a: WriteEntry, names: readonly string[], b: WriteEntry, n: number): boolean {
  if (b.seq !== a.seq + n || b.turn !== a.turn || b.actor !== a.actor || b.tool !== a.tool) return false;
  if (b.table !== a.table || b.op !== a.op) return false;
  if (b.key === a.key) return true;
  let i = 0;
  for (const k in b.key) if (k !== names[i++] || a.key[k] !== b.key[k]) return false;
  return i === names.length;
}

/** Pack column writes for the wire (see {@link PackedWrites}); {@link unpackWrites} inverts it. */
export function packWrites(writes: readonly WriteEntry[]): PackedWrites {
  const out: PackedWrites = [];
  let i = 0;
  while (i < writes.length) {
    const head = writes[i]!;
    const names = Object.keys(head.key);
    let m = 1;
    while (i + m < writes.length && sameGroup(head, names, writes[i + m]!, m)) m++;
    out.push(head.seq, head.turn, head.actor, head.tool, head.table, head.op, names.length);
    for (const n of names) out.push(n);
    for (const n of names) out.push(head.key[n]!);
    out.push(m);
    for (let j = i; j < i + m; j++) out.push(writes[j]!.column, writes[j]!.before, writes[j]!.after);
    i += m;
  }
  return out;
}

/**
 * The column writes {@link packWrites} packed, equal to the originals field by field and in the
 * same field order (as {@link Environment.call} builds them), each entry with its own key object
 * (a group's first built from the names, the others copies of it).
 */
export function unpackWrites(packed: PackedWrites): WriteEntry[] {
  const out: WriteEntry[] = [];
  let i = 0;
  while (i < packed.length) {
    let seq = packed[i++] as number;
    const turn = packed[i++] as number;
    const actor = packed[i++] as Requestor;
    const tool = packed[i++] as string;
    const table = packed[i++] as string;
    const op = packed[i++] as WriteEntry['op'];
    const k = packed[i++] as number;
    const first: WriteEntry['key'] = {};
    for (let c = 0; c < k; c++) first[packed[i + c] as string] = packed[i + k + c]!;
    i += 2 * k;
    const m = packed[i++] as number;
    for (let j = 0; j < m; j++) {
      const key = j === 0 ? first : { ...first };
      const column = packed[i++] as string;
      const before = packed[i++]!;
      const after = packed[i++]!;
      out.push({ seq: seq++, turn, actor, tool, table, op, key, column, before, after });
    }
  }
  return out;
}

/** The {@link ToolOutcome} of a {@link PackedOutcome}. */
export function unpackOutcome(packed: PackedOutcome): ToolOutcome {
  return { ...packed, writes: unpackWrites(packed.writes) };
}

/** The reply to each kind of {@link EnvRequest}. */
export interface EnvReplies {
  /** The new environment's handle (≥ 1). */
  open: number;
  /** The call's {@link ToolOutcome} (a transport packs its writes, {@link packWrites}). */
  call: ToolOutcome;
  changes: StateChanges;
  close: null;
}

/** Answers one request; rejects with an Error naming the problem (an unknown handle or task). */
export type EnvService = (request: EnvRequest) => Promise<EnvReplies[EnvRequest['op']]>;

/**
 * Serve the environments of one runtime, addressed by integer handles.
 * @throws (the returned service rejects) `Error("environment <n> is not open")` for a handle that
 *   was closed or never opened; `Error("<domain> has no task <id>")` for an unknown task id; and
 *   whatever {@link Environment.call} rethrows (a bug in a tool, a sandbox fault).
 */
export function createEnvService(runtime: DomainRuntime): EnvService {
  const envs = new Map<number, Environment>();
  let next = 1;
  const env = (handle: number): Environment => {
    const found = envs.get(handle);
    if (!found) throw new Error(`environment ${handle} is not open`);
    return found;
  };
  return async (request) => {
    switch (request.op) {
      case 'open': {
        const { taskId, now } = request;
        const task = taskId === undefined ? undefined : runtime.domain.tasks.find((t) => t.id === taskId);
        if (taskId !== undefined && !task) throw new Error(`${runtime.domain.name} has no task ${taskId}`);
        const handle = next++;
        envs.set(handle, await runtime.open(task, now === undefined ? {} : { now }));
        return handle;
      }
      case 'call':
        return env(request.env).call(
          request.call,
          request.actor,
          request.turn,
          request.sync === false ? { sync: false } : {},
        );
      case 'changes':
        return env(request.env).changes();
      case 'close': {
        const found = env(request.env);
        envs.delete(request.env);
        await found.close();
        return null;
      }
    }
  };
}

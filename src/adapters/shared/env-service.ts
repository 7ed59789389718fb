/**
 * Whole tool calls served by the thread that holds a domain's tools and databases (issue 15,
 * item 2): one request runs one tool call there (argument check, the tool's SQL, write-log
 * collection, rule checks, the result's serialization) and the reply carries the outcome with its
 * writes. A tool call through a worker is then one message each way, where a {@link SqlDb} served
 * from a worker (`db-service.ts`) costs one per SQL statement.
 *
 * Platform-free: `src/adapters/node/worker-env.ts` serves it from a `worker_threads` Worker; a
 * browser Web Worker could serve it the same way. Requests and replies are plain data
 * (structured clones).
 */
import type { DomainRuntime, Environment, ToolOutcome } from '../../core/env/environment.ts';
import type { StateChanges } from '../../core/env/changes.ts';
import type { Requestor } from '../../core/schema/task.ts';
import type { ToolCall } from '../../core/schema/trajectory.ts';

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

/** The reply to each kind of {@link EnvRequest}. */
export interface EnvReplies {
  /** The new environment's handle (≥ 1). */
  open: number;
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

/**
 * A pool of `worker_threads` Workers that run jobs (issue 15, item 5: rollouts on every core).
 *
 * The parent side ({@link startThreadPool}) starts `size` threads on a TypeScript module (through
 * `ts-worker.mjs`, which registers tsx in the thread, as for the database worker), waits until
 * each has set itself up, and sends each job to the thread with the fewest jobs in flight. The
 * thread side ({@link serveThreadJobs}) sets up once (e.g. a domain runtime with idle databases)
 * and then answers every job message with the handler's result; jobs run concurrently inside a
 * thread as far as the handler allows (awaiting a model endpoint, say).
 *
 * Messages are structured clones: inputs and results must be plain data.
 */
import { parentPort, Worker, workerData } from 'node:worker_threads';

/** Parent → thread: a job. */
interface JobMessage {
  id: number;
  input: unknown;
}
/** Thread → parent: set up (`ready`), or a job's result or error. */
type ReplyMessage =
  | { ready: true }
  | { ready: false; error: string }
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: string };

/** The parent's handle on a started pool. */
export interface ThreadPool<In, Out> {
  /** Threads in the pool. */
  readonly size: number;
  /**
   * Run one job on the least busy live thread. @throws (rejects) with the thread's error message,
   * or, once every thread has exited (a crash, or {@link close}), with why the first one did.
   */
  run(input: In): Promise<Out>;
  /** Stop every thread; jobs still in flight reject. */
  close(): Promise<void>;
}

interface Lane {
  worker: Worker;
  inFlight: Map<number, { resolve(v: unknown): void; reject(e: Error): void }>;
  /** Why the thread is gone (it exited, failed or was stopped); later jobs go to other lanes. */
  dead?: Error;
}

/**
 * Start `size` threads on `entry` (a `.ts` module that calls {@link serveThreadJobs}), each given
 * `data` as its `workerData.data`; resolves when all are set up.
 *
 * @throws (rejects) when a thread fails to set up (its error message), or exits.
 */
export async function startThreadPool<In, Out>(entry: URL, data: unknown, size: number): Promise<ThreadPool<In, Out>> {
  let next = 0;
  const lanes: Lane[] = [];
  const fail = (lane: Lane, error: Error) => {
    lane.dead ??= error;
    for (const job of lane.inFlight.values()) job.reject(error);
    lane.inFlight.clear();
  };
  const ready = Array.from({ length: size }, async () => {
    const worker = new Worker(new URL('./ts-worker.mjs', import.meta.url), {
      workerData: { entry: entry.href, data },
    });
    const lane: Lane = { worker, inFlight: new Map() };
    lanes.push(lane);
    await new Promise<void>((resolve, reject) => {
      worker.on('message', (m: ReplyMessage) => {
        if ('ready' in m) {
          if (m.ready) resolve();
          else reject(new Error(m.error));
          return;
        }
        const job = lane.inFlight.get(m.id);
        lane.inFlight.delete(m.id);
        if (m.ok) job?.resolve(m.value);
        else job?.reject(new Error(m.error));
      });
      worker.on('error', (e) => {
        const error = new Error(`rollout thread failed: ${e.message}`, { cause: e });
        reject(error);
        fail(lane, error);
      });
      worker.on('exit', (code) => {
        const error = new Error(`rollout thread exited with code ${code}`);
        reject(error);
        fail(lane, error);
      });
    });
  });
  const close = async () => {
    await Promise.all(lanes.map((l) => l.worker.terminate()));
  };
  try {
    await Promise.all(ready);
  } catch (e) {
    await close();
    throw e;
  }
  return {
    size,
    run(input: In): Promise<Out> {
      const live = lanes.filter((l) => !l.dead);
      // Every thread gone (crashed, or the pool closed): reject rather than wait for no reply.
      if (live.length === 0) return Promise.reject(lanes[0]!.dead);
      const lane = live.reduce((a, b) => (b.inFlight.size < a.inFlight.size ? b : a));
      const id = next++;
      return new Promise<Out>((resolve, reject) => {
        lane.inFlight.set(id, { resolve: resolve as (v: unknown) => void, reject });
        lane.worker.postMessage({ id, input } satisfies JobMessage);
      });
    },
    close,
  };
}

/**
 * In a pool's thread: set up with the pool's `data` once, then answer each job with
 * `handler(input)`. A setup failure is reported to the parent (which rejects the pool's start).
 */
export async function serveThreadJobs<Data, In, Out>(
  setup: (data: Data) => Promise<(input: In) => Promise<Out>>,
): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('serveThreadJobs: not in a worker thread');
  let handler: (input: In) => Promise<Out>;
  try {
    handler = await setup((workerData as { data: Data }).data);
  } catch (e) {
    port.postMessage({ ready: false, error: (e as Error).message } satisfies ReplyMessage);
    return;
  }
  port.on('message', (m: JobMessage) => {
    handler(m.input as In).then(
      (value) => port.postMessage({ id: m.id, ok: true, value } satisfies ReplyMessage),
      (e: unknown) =>
        port.postMessage({
          id: m.id,
          ok: false,
          error: e instanceof Error ? e.message : String(e),
        } satisfies ReplyMessage),
    );
  });
  port.postMessage({ ready: true } satisfies ReplyMessage);
}

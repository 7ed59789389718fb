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
 * With {@link ThreadPoolOptions.concurrency} the pool runs at most that many jobs at once, split
 * over the threads (each thread runs at most its share and keeps the rest in its own queue), and
 * the parent sends each thread {@link ThreadPoolOptions.ahead} jobs beyond its share, so that a
 * thread starts its next job as soon as one ends instead of idling for a round trip through
 * the parent (with one job per thread that round trip was ~5–15% of a ~2 ms scripted episode).
 * Jobs the threads cannot take yet wait in the parent, in order.
 *
 * What a job in a thread costs the parent (issue 15 item 5, measured in session 13: `run`'s pool
 * of one worker fed by `runBatch` while the CLI's thread ran no trial itself, carrier, 8 rounds of
 * 600–1,200 episodes, under load 2–3 on 2 vCPUs; CPU per thread from /proc/self/task): the CLI's
 * thread spent 66–115 µs of CPU per episode run in the worker (user 50–90, system 17–25), against
 * ~6 µs for the same batch's bookkeeping with each record handed back by `setImmediate` and a
 * `structuredClone` in one thread. So nearly all of it is one message each way per job (the
 * worker's reply, the next job's post, their dispatch as events): with 2 threads, the ~100 µs
 * more CPU per episode in the CLI's thread than alone (bench pool: 1071 → 1175 µs) is that, not
 * the cores' contention. Sending several jobs, and replies, per message is where to look next.
 *
 * Measured in session 14 and not done (issue 15 item 5, load 4–10 on 2 vCPUs): jobs posted
 * together at the end of a burst of callbacks (`process.nextTick`), results held in the thread
 * while more jobs than held results wait there (pulled in with `receiveMessageOnPort`) and
 * posted together, ~1.9 episodes a message. The message pair itself is small: jobs that do no
 * work (a digest returned at once, 3 jobs ahead) cost the parent 12.5–13.5 µs and the thread
 * 10.6–11.3 µs of CPU each, batched or not (3 alternating pairs); and the parent's CPU per
 * episode run in the thread (carrier, the parent running none) read 64, 77, 86 µs unbatched
 * and 63, 65, 64 µs batched, within the load's noise, so most of the parent's cost per worker
 * episode is handing each result on (deserialising it, the batch's bookkeeping, waking up),
 * not the number of messages.
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

/** How many jobs a pool runs at once (all optional: by default every job is sent at once). */
export interface ThreadPoolOptions {
  /**
   * Jobs running at once over all threads; thread i runs at most its share (⌊c / size⌋, one more
   * for the first c mod size threads). Default: no limit.
   */
  concurrency?: number;
  /** Jobs sent to a thread beyond its share, waiting in its queue (default 1 with a concurrency, else unused); at most this many. */
  ahead?: number;
  /**
   * How many of {@link ahead} to send now (read whenever a job is handed out; default all of
   * them): a caller whose jobs are quick asks for more, so that a thread never waits for the
   * parent's next job, and one whose jobs are slow for fewer, so that few wait in a thread when
   * the run stops.
   */
  aheadNow?: () => number;
  /**
   * How many jobs the pool's threads may be running right now (default `concurrency`): a caller
   * that also runs jobs elsewhere passes `concurrency` minus those, and calls {@link ThreadPool.pump}
   * when one of them ends. Jobs only queued in a thread do not count.
   */
  budget?: () => number;
  /** Stops a start in progress: the threads started so far are stopped, and the start rejects. */
  signal?: AbortSignal;
}

/** The parent's handle on a started pool. */
export interface ThreadPool<In, Out> {
  /** Threads in the pool. */
  readonly size: number;
  /** Jobs the pool holds at most (running and queued in the threads); more wait in the parent. */
  readonly slots: number;
  /** Jobs the threads are running now, at most (sent and not answered, up to each thread's share). */
  running(): number;
  /**
   * Run one job on the least busy live thread (or, with a concurrency, as soon as one has room).
   * @throws (rejects) with the thread's error message, or, once every thread has exited (a crash,
   * or {@link close}), with why the first one did.
   */
  run(input: In): Promise<Out>;
  /**
   * True when a job given to {@link run} now would be sent to a thread at once (to start, or to
   * wait in the thread within its {@link ThreadPoolOptions.ahead}), not held in the parent: a
   * caller with work of its own to hand out asks this first.
   */
  room(): boolean;
  /** Send waiting jobs to threads that have room again (after the {@link ThreadPoolOptions.budget} grew). */
  pump(): void;
  /**
   * Stop every thread; jobs still in flight or waiting reject. A thread's files opened with
   * `fs.open`/`openSync` are closed as it stops (Node's `trackUnmanagedFds`, on by default).
   */
  close(): Promise<void>;
}

interface Lane {
  worker: Worker;
  inFlight: Map<number, { resolve(v: unknown): void; reject(e: Error): void }>;
  /** Jobs this thread runs at once (Infinity without a concurrency). */
  share: number;
  /** Why the thread is gone (it exited, failed or was stopped); later jobs go to other lanes. */
  dead?: Error;
}

/** A job waiting in the parent for a thread with room. */
interface Waiting {
  input: unknown;
  resolve(v: unknown): void;
  reject(e: Error): void;
}

/** Thread i's share of `concurrency` jobs over `size` threads (see {@link ThreadPoolOptions.concurrency}). */
export function threadShare(concurrency: number, size: number, i: number): number {
  return Math.floor(concurrency / size) + (i < concurrency % size ? 1 : 0);
}

/**
 * Start `size` threads on `entry` (a `.ts` module that calls {@link serveThreadJobs}), each given
 * `data` as its `workerData.data`; resolves when all are set up.
 *
 * @throws (rejects) when a thread fails to set up (its error message), or exits, or
 * `options.signal` aborts the start (its reason); RangeError when `options.concurrency` is below
 * `size` (a thread would get no job).
 */
export async function startThreadPool<In, Out>(
  entry: URL,
  data: unknown,
  size: number,
  options: ThreadPoolOptions = {},
): Promise<ThreadPool<In, Out>> {
  const { concurrency } = options;
  if (concurrency !== undefined && !(concurrency >= size))
    throw new RangeError(`thread pool: concurrency ${concurrency} is below its ${size} threads`);
  const ahead = concurrency === undefined ? 0 : (options.ahead ?? 1);
  const budget = options.budget ?? (() => concurrency ?? Infinity);
  let next = 0;
  const lanes: Lane[] = [];
  const waiting: Waiting[] = [];
  const running = () => lanes.reduce((n, l) => n + (l.dead ? 0 : Math.min(l.inFlight.size, l.share)), 0);
  /** The live lane that should take the next job now, if any has room. */
  const laneWithRoom = (): Lane | undefined => {
    const room = running() < budget();
    const extra = Math.min(ahead, options.aheadNow?.() ?? ahead);
    // Fewest jobs beyond its share first (with no concurrency: fewest jobs).
    const load = (l: Lane) => l.inFlight.size - (Number.isFinite(l.share) ? l.share : 0);
    let best: Lane | undefined;
    for (const l of lanes) {
      if (l.dead) continue;
      // A job sent below the share starts at once (needs the budget); above it, it waits in the thread.
      const fits = l.inFlight.size < l.share ? room : l.inFlight.size < l.share + extra;
      if (fits && (!best || load(l) < load(best))) best = l;
    }
    return best;
  };
  const send = (lane: Lane, job: Waiting) => {
    const id = next++;
    lane.inFlight.set(id, { resolve: job.resolve, reject: job.reject });
    lane.worker.postMessage({ id, input: job.input } satisfies JobMessage);
  };
  const pump = () => {
    while (waiting.length > 0) {
      if (lanes.every((l) => l.dead)) {
        for (const job of waiting.splice(0)) job.reject(lanes[0]!.dead!);
        return;
      }
      const lane = laneWithRoom();
      if (!lane) return;
      send(lane, waiting.shift()!);
    }
  };
  const fail = (lane: Lane, error: Error) => {
    lane.dead ??= error;
    for (const job of lane.inFlight.values()) job.reject(error);
    lane.inFlight.clear();
    pump();
  };
  const ready = Array.from({ length: size }, async (_, i) => {
    const share = concurrency === undefined ? Infinity : threadShare(concurrency, size, i);
    const worker = new Worker(new URL('./ts-worker.mjs', import.meta.url), {
      workerData: { entry: entry.href, data, ...(Number.isFinite(share) ? { running: share } : {}) },
    });
    const lane: Lane = { worker, inFlight: new Map(), share };
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
        pump();
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
  const { signal } = options;
  const aborted = new Promise<never>((_, reject) => {
    if (!signal) return;
    const abort = () => reject(signal.reason ?? new Error('thread pool: start aborted'));
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
  });
  aborted.catch(() => {});
  try {
    await Promise.race([Promise.all(ready), aborted]);
  } catch (e) {
    await close();
    throw e;
  }
  return {
    size,
    slots: concurrency === undefined ? Infinity : concurrency + size * ahead,
    running,
    run(input: In): Promise<Out> {
      // Every thread gone (crashed, or the pool closed): reject rather than wait for no reply.
      if (lanes.every((l) => l.dead)) return Promise.reject(lanes[0]!.dead);
      return new Promise<Out>((resolve, reject) => {
        waiting.push({ input, resolve: resolve as (v: unknown) => void, reject });
        pump();
      });
    },
    room: () => lanes.some((l) => !l.dead) && laneWithRoom() !== undefined,
    pump,
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
  // The pool's share of its concurrency for this thread: jobs beyond it wait here, in order.
  const limit = (workerData as { running?: number }).running ?? Infinity;
  const queue: JobMessage[] = [];
  let active = 0;
  const start = (m: JobMessage) => {
    active++;
    handler(m.input as In)
      .then(
        (value) => port.postMessage({ id: m.id, ok: true, value } satisfies ReplyMessage),
        (e: unknown) =>
          port.postMessage({
            id: m.id,
            ok: false,
            error: e instanceof Error ? e.message : String(e),
          } satisfies ReplyMessage),
      )
      .finally(() => {
        active--;
        const queued = queue.shift();
        if (queued) start(queued);
      });
  };
  port.on('message', (m: JobMessage) => {
    if (active < limit) start(m);
    else queue.push(m);
  });
  port.postMessage({ ready: true } satisfies ReplyMessage);
}

/**
 * Environments whose tool calls run whole in a `worker_threads` Worker (issue 15, item 2). The
 * worker loads the domain itself (tool code cannot be sent to a thread), holds its runtime and
 * databases, and answers each tool call in one round trip ({@link EnvService}) through a
 * SharedArrayBuffer mailbox (`mailbox.ts`); the calling thread only sends the call and gets back
 * the outcome with its writes. Compare {@link
 * ./worker-db.ts}, where the tools run in the calling thread and every SQL statement is a message.
 *
 * The worker runs TypeScript through tsx (`ts-worker.mjs`), so it is for Node with the sources
 * (tests, `npm run bench`, library use), not the prebuilt CLI bundle.
 */
import type { StateChanges } from '../../core/env/changes.ts';
import type { Environment, ToolOutcome } from '../../core/env/environment.ts';
import type { Domain } from '../../core/schema/domain.ts';
import type { Task } from '../../core/schema/task.ts';
import type { WriteEntry } from '../../core/schema/trajectory.ts';
import { Worker } from 'node:worker_threads';
import { InfrastructureError } from '../../core/errors.ts';
import type { EnvReplies, EnvRequest } from '../shared/env-service.ts';
import { FreeCoreWatch } from './cpu-time.ts';
import { decodeOutcome, decodeValue, encodeRequest } from './env-wire.ts';
import { loadDomain } from './load-domain.ts';
import {
  MailboxCaller,
  type MailboxCounts,
  type MailboxEnds,
  type MailboxPayload,
  MAILBOX_DATA_BYTES,
  MAX_BLOCK_MS,
  MAX_SPIN_US,
  REPLY_SPIN_US,
  type SpinWindow,
} from './mailbox.ts';
import { TAU2_DOMAIN_NAMES, loadTau2Domain, type Tau2DomainName } from './tau2-loader.ts';

/** Where the worker loads its domain from (plain data, sent to the thread). */
export interface EnvWorkerSource {
  /** A built-in domain name, a domain folder, or `tau2-airline` / `tau2-retail` / `tau2-telecom`. */
  domain: string;
  /** tau2 domains: the tau2-bench data folder of the domain (`data/tau2/domains/<name>/`). */
  data?: string;
  /** tau2-telecom: the split whose tasks are loaded (default `base`). */
  split?: string;
}

/**
 * Load the domain of a {@link EnvWorkerSource} (in the worker; exported for it).
 * @throws Error when a tau2 domain has no `data` folder, or what the loaders throw.
 */
export async function loadEnvWorkerDomain(source: EnvWorkerSource): Promise<Domain> {
  if (!(TAU2_DOMAIN_NAMES as readonly string[]).includes(source.domain)) return loadDomain(source.domain);
  if (!source.data) throw new Error(`${source.domain}: the environment worker needs its tau2-bench data folder`);
  return loadTau2Domain(source.domain as Tau2DomainName, source.data, undefined, {
    ...(source.split ? { split: source.split } : {}),
  });
}

/** The environment thread's `workerData.data`: what to load, and its ends of the mailbox. */
export interface EnvThreadData {
  source: EnvWorkerSource;
  mailbox: MailboxEnds;
  /** The worker's spin for the next request after a reply, µs ({@link SpinWindow}). */
  spinUs: number;
  /** Whether the worker keeps spinning after a miss while the machine leaves it a core ({@link SpinWindow}). */
  spinWhileFree: boolean;
}

/** The environment thread's first message: set up, or why it could not. */
type ReadyMessage = { ready: true } | { ready: false; error: string };

/**
 * A started environment worker. {@link requests} counts the requests sent to it (each answered by
 * one reply), so a caller can check that a tool call costs one round trip.
 *
 * Requests and replies go through a SharedArrayBuffer mailbox (`mailbox.ts`), one at a time:
 * requests made while one is in flight wait their turn. The Worker keeps the process alive only
 * while a request is in flight, so a forgotten {@link close} does not hold the process at exit.
 *
 * What crosses the mailbox per tool call: the request, ~100–300 bytes of Latin-1 text (a header
 * line and the call's JSON), and the reply, the tool's content as is plus, for a write, the JSON
 * of its packed writes (0.7–1.6 KB for the tau2 bench's calls); each is copied once into the buffer
 * and once out. Hot, in one thread, both sides' encoding, copying and decoding cost ~2.5 µs for
 * tau2-airline's get_reservation_details and ~7 µs for update_reservation_passengers (its 10
 * writes packed, in JSON and unpacked: ~4.6 µs), a tenth of the in-process call; the rest of the
 * fixed cost is the threads' sleeps and wake-ups (`mailbox.ts`). Sending a close with the next open,
 * one request instead of two, was measured in the bench's write loop (load 6.3–6.6, 16 rounds):
 * the timed write ×1.01 (airline) and ×0.97 (retail), noise, the whole close/open/call ×0.84 and
 * ×0.87; the worker still slept before 93–99% of the timed writes. Not done: only that loop closes
 * and opens between calls.
 *
 * The worker's part of a call it spun for (session 14, timed inside each thread, with this process
 * given the CPUs by `chrt -r 1` so that neither thread was descheduled; airline read, 12–20
 * rounds of 100): the request is seen 0.2 µs after its post and the reply 0.2 µs after its;
 * the caller's encoding 1.3 µs and decoding 1.0 µs; the worker's handler (decode, tool call,
 * encode) 16.9–29.6 µs against 17.4–33.9 µs for the same handler in this thread, in-process call
 * 14.8–28.1 µs. The spread is between processes, not within one: each isolate settles at one of
 * two speeds (~15–18 or ~23–28 µs for this call), so the worker's handler ÷ in-process ranged
 * 0.74–1.84 over eight processes (0.74–1.23 in the four run with
 * `--max-inlined-bytecode-size-cumulative=460`: not a cure), and
 * a larger young generation for the worker (`maxYoungGenerationSizeMb` 48) changed nothing
 * (×1.04, two identical workers ×1.01). A bench run's worker ÷ in-process carries that luck.
 */
export class EnvWorker {
  private sent = 0;
  private closed = false;

  private constructor(
    private readonly worker: Worker,
    private readonly mailbox: MailboxCaller,
  ) {}

  /**
   * Start a worker and load `source`'s domain in it (tau2-airline: ~1–2 s).
   * @param options.mailboxBytes the mailbox's data area in bytes (default {@link MAILBOX_DATA_BYTES});
   *   larger requests and replies go over a message port instead.
   * @param options.spinUs the worker's spin for the next request after each reply before it
   *   sleeps, µs (default {@link MAX_SPIN_US}; 0: always sleep), see {@link SpinWindow}.
   * @param options.spinWhileFree whether the worker skips no spins after a miss while the
   *   machine leaves it a core (default true; false: it backs off after every miss), see
   *   {@link SpinWindow} and `FreeCoreWatch`; and whether this thread, while a core is free beside
   *   it, gives the awake worker 100 µs to take a request before it blocks (false:
   *   always 10 µs), see `MailboxCaller`.
   * @param options.replySpinUs this thread's spin for a reply while the worker works on it, µs
   *   (default {@link REPLY_SPIN_US}; 0: never spin).
   * @param options.blockMs how long, ms, this thread then blocks for the reply (as it would be
   *   busy running the call itself) before it awaits it (default {@link MAX_BLOCK_MS}; 0: never block).
   * @throws (rejects) with the worker's error message when the domain cannot be loaded, or
   *   {@link InfrastructureError} when the thread fails or exits before it is ready.
   */
  static async start(
    source: EnvWorkerSource,
    options: {
      mailboxBytes?: number;
      spinUs?: number;
      spinWhileFree?: boolean;
      replySpinUs?: number;
      blockMs?: number;
    } = {},
  ): Promise<EnvWorker> {
    const spinUs = options.spinUs ?? MAX_SPIN_US;
    let worker: Worker | undefined;
    // Whether a core is free beside this (the calling) thread: see MailboxCaller's coreFree.
    const watch = new FreeCoreWatch();
    const mailbox = new MailboxCaller(
      options.mailboxBytes ?? MAILBOX_DATA_BYTES,
      (busy) => (busy ? worker?.ref() : worker?.unref()),
      options.replySpinUs ?? REPLY_SPIN_US,
      options.blockMs ?? MAX_BLOCK_MS,
      (options.spinWhileFree ?? true) ? () => watch.free() : undefined,
    );
    const data: EnvThreadData = { source, mailbox: mailbox.ends, spinUs, spinWhileFree: options.spinWhileFree ?? true };
    worker = new Worker(new URL('./ts-worker.mjs', import.meta.url), {
      workerData: { entry: new URL('./env-thread.ts', import.meta.url).href, data },
      transferList: [mailbox.ends.port],
    });
    const started = worker;
    const envWorker = new EnvWorker(started, mailbox);
    try {
      await new Promise<void>((resolve, reject) => {
        started.once('message', (m: ReadyMessage) => (m.ready ? resolve() : reject(new Error(m.error))));
        started.on('error', (e) => {
          const error = new InfrastructureError(`environment worker failed: ${e.message}`, { cause: e });
          reject(error);
          mailbox.fail(error);
        });
        started.on('exit', (code) => {
          const error = envWorker.closed
            ? new Error('environment worker is closed')
            : new InfrastructureError(`environment worker exited with code ${code}`);
          reject(error);
          mailbox.fail(error);
        });
      });
    } catch (e) {
      await started.terminate();
      throw e;
    }
    started.unref();
    return envWorker;
  }

  /** Requests sent to the worker so far (each gets one reply). */
  get requests(): number {
    return this.sent;
  }

  /**
   * How often this thread and the worker slept waiting for each other so far
   * ({@link MailboxCaller.counts}): each such sleep costs a wake-up, the larger part of a call's
   * fixed cost when it happens.
   */
  counts(): MailboxCounts {
    return this.mailbox.counts();
  }

  /**
   * @internal one request, one reply.
   * @throws (rejects) `Error(<message>)` when the service rejected the request;
   *   {@link InfrastructureError} `environment worker exited with code <n>` or `environment worker
   *   failed: <message>` when the thread died before replying (a sandbox fault: the rollout is
   *   invalid); `Error("environment worker is closed")` after {@link close}.
   */
  request<Op extends EnvRequest['op']>(request: Extract<EnvRequest, { op: Op }>): Promise<EnvReplies[Op]> {
    try {
      const reply = this.send(request);
      return reply instanceof Promise ? reply : Promise.resolve(reply);
    } catch (e) {
      return Promise.reject(e as Error);
    }
  }

  /**
   * @internal {@link request}, with the reply as is when it came while this thread waited for it
   * ({@link MailboxCaller.send}): one promise fewer per call.
   * @throws (or rejects) as {@link request}.
   */
  send<Op extends EnvRequest['op']>(
    request: Extract<EnvRequest, { op: Op }>,
  ): EnvReplies[Op] | Promise<EnvReplies[Op]> {
    if (this.closed) throw new Error('environment worker is closed');
    this.sent++;
    const decode = (request.op === 'call' ? decodeOutcome : decodeValue) as (reply: MailboxPayload) => EnvReplies[Op];
    const reply = this.mailbox.send(encodeRequest(request));
    return reply instanceof Promise ? reply.then(decode) : decode(reply);
  }

  /**
   * A fresh environment in the worker for `task` (a task of the worker's domain, or its id; none:
   * the pristine database), as {@link DomainRuntime.open}.
   * @throws (rejects) when the domain has no such task or its initial state fails.
   */
  async open(task?: Task | string, options: { now?: number } = {}): Promise<RemoteEnvironment> {
    const taskId = typeof task === 'string' ? task : task?.id;
    const handle = await this.request({
      op: 'open',
      ...(taskId === undefined ? {} : { taskId }),
      ...(options.now === undefined ? {} : { now: options.now }),
    });
    return new RemoteEnvironment(this, handle);
  }

  /**
   * Stop the worker (also mid-call: a tool that never returns is stopped); its environments are
   * gone, the request in flight and queued ones reject with `Error("environment worker is
   * closed")`, and so do later ones.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.mailbox.fail(new Error('environment worker is closed'));
    await this.worker.terminate();
  }
}

/**
 * One environment held by an {@link EnvWorker}: the subset of {@link Environment} a tool-calling
 * loop needs, each method one round trip.
 */
export class RemoteEnvironment {
  private readonly log: WriteEntry[] = [];
  private closed = false;

  /** @internal use {@link EnvWorker.open} */
  constructor(
    private readonly worker: EnvWorker,
    /** The worker's handle of this environment. */
    readonly handle: number,
  ) {}

  /** Every write of the episode so far, in order (as the calls' outcomes returned them). */
  get writes(): readonly WriteEntry[] {
    return this.log;
  }

  /**
   * Run one tool call in the worker, as {@link Environment.call}: the same outcome, in one round
   * trip.
   * @throws (rejects) with the message of what {@link Environment.call} rethrows, or
   *   `Error("environment is closed")`.
   */
  call(...[call, actor = 'assistant', turn = -1, options = {}]: Parameters<Environment['call']>): Promise<ToolOutcome> {
    if (this.closed) return Promise.reject(new Error('environment is closed'));
    try {
      const request = { op: 'call', env: this.handle, call, actor, turn } as const;
      const reply = this.worker.send(options.sync === false ? { ...request, sync: false } : request);
      return reply instanceof Promise ? reply.then(this.logged) : Promise.resolve(this.logged(reply));
    } catch (e) {
      return Promise.reject(e as Error);
    }
  }

  /** `outcome`, its writes added to {@link writes}. */
  private readonly logged = (outcome: ToolOutcome): ToolOutcome => {
    for (const w of outcome.writes) this.log.push(w);
    return outcome;
  };

  /** {@link Environment.changes}, read in the worker. */
  changes(): Promise<StateChanges> {
    if (this.closed) return Promise.reject(new Error('environment is closed'));
    return this.worker.request({ op: 'changes', env: this.handle });
  }

  /** Close the environment in the worker; a second call is a no-op. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.worker.request({ op: 'close', env: this.handle });
  }
}

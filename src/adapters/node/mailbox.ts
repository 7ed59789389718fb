/**
 * A request/reply channel between a thread and the `worker_threads` Worker serving it, over a
 * SharedArrayBuffer mailbox (issue 15, item 2: the environment worker's tool call in one round
 * trip, without a message port's wake-ups and structured clones).
 *
 * The serving thread blocks in `Atomics.wait` until a request is posted, marks it taken, runs the
 * handler and posts the reply in the same buffer. The caller spins for the reply while the serving
 * thread is seen to work on it (a reply in time settles the request before `request` returns,
 * with no promise hop in between) and otherwise waits with `Atomics.waitAsync`, so its event loop
 * stays free. Payloads are text (written as UTF-8) or bytes, encoded by the user of the mailbox
 * (`env-wire.ts` for the environment worker). A payload larger than the mailbox's data area goes
 * over a `MessageChannel` instead and is taken off it synchronously (`receiveMessageOnPort`); the
 * mailbox then only carries the wake-up.
 *
 * One request at a time: the caller queues the others and sends each when the previous reply is
 * in. Measured on the 2-core VM under load, trivial handler, median round trip: ~5 µs, against
 * ~11 µs for a bare `postMessage` pair.
 *
 * Layout of the buffer: eight int32 slots ({@link STATE}, {@link LENGTH}, {@link STATUS},
 * {@link KIND}, {@link SLEEPING}, {@link ELAPSED}, two unused), then the data area.
 */
import { MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';

/** Slot: who holds the mailbox ({@link IDLE}, {@link REQUEST}, {@link RUNNING}, {@link REPLY}). */
const STATE = 0;
/** Slot: bytes of the payload in the data area, or {@link ON_PORT}. */
const LENGTH = 1;
/** Slot: a reply's status, {@link OK} or {@link FAILED} (its payload is then the error message). */
const STATUS = 2;
/** Slot: the payload's kind, {@link TEXT} or {@link BYTES}. */
const KIND = 3;
/** Slot: 1 while the serving thread sleeps in `Atomics.wait` (a request must wake it), else 0. */
const SLEEPING = 4;
/** Slot: with a reply, how long the serving thread took for the request, µs (rounded up). */
const ELAPSED = 5;
const HEADER_BYTES = 32;
/** The caller may post a request. */
const IDLE = 0;
/** A request is posted; the serving thread runs it. */
const REQUEST = 1;
/** The reply is posted; the caller reads it and sets {@link IDLE}. */
const REPLY = 2;
/** The serving thread has taken the request and runs it. */
const RUNNING = 3;
/** {@link LENGTH} of a payload sent over the message port (too large for the data area). */
const ON_PORT = -1;
const OK = 0;
const FAILED = 1;
const TEXT = 0;
const BYTES = 1;

/** `Atomics.waitAsync` (ES2024, in Node since 16; the project's TypeScript lib is ES2023). */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(
      view: Int32Array,
      index: number,
      value: number,
    ): { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
  }
).waitAsync;

/**
 * Longest spin, µs, of either side (the caller waiting for a reply, the serving thread for the
 * next request) before it sleeps. A spin is a busy loop on the mailbox's state: it saves the
 * sleeping thread's wake-up at the price of CPU. On the 2-core KVM guest this project is measured
 * on, an idle virtual CPU halts at once (cpuidle-haltpoll with `guest_halt_poll_ns` 0), so each
 * wake of a sleeping thread there costs a halted CPU's wake-up, tens of µs; a tau2 tool call runs
 * 17–60 µs in the worker, so 100 µs covers one (and mostly a sleeping worker's wake-up before it,
 * which the caller spins through rather than sleep and pay a second wake-up for the reply).
 */
export const MAX_SPIN_US = 100;

/**
 * When one side of a mailbox spins before it sleeps: after a spin that saw the answer it spins
 * again next time; after a miss (the serving thread: no request within its spin, as when an agent
 * thinks between calls; the caller: a serving thread that did not take the request or answer it
 * in time though the request itself took less than the spin, as on a loaded machine where the other
 * thread is not running and spinning only takes CPU from it) it skips the next 1, 2, 4, … 256 waits
 * (doubling with each miss in a row) before it tries again. A caller's spin that gave up on a
 * request that took longer than the spin (opening an environment) is neither.
 */
export class SpinWindow {
  private skip = 0;
  private backoff = 1;

  /** @param maxUs the spin when spinning, µs (0: never spin). */
  constructor(private readonly maxUs: number) {}

  /** The spin to try for this wait, µs (0: sleep at once). */
  next(): number {
    if (this.maxUs <= 0) return 0;
    if (this.skip > 0) {
      this.skip--;
      return 0;
    }
    return this.maxUs;
  }

  /** Record whether the spin {@link next} gave saw the answer. */
  spun(hit: boolean): void {
    if (hit) this.backoff = 1;
    else {
      this.skip = this.backoff;
      this.backoff = Math.min(256, this.backoff * 2);
    }
  }
}

/** Spin at most `us` µs until a request is posted ({@link REQUEST}); true when it is. */
function spinForRequest(state: Int32Array, us: number): boolean {
  const end = performance.now() + us / 1000;
  for (;;) {
    for (let i = 0; i < 64; i++) if (Atomics.load(state, STATE) === REQUEST) return true;
    if (performance.now() >= end) return false;
  }
}

/** What goes through a mailbox: text (sent as UTF-8) or bytes. */
export type MailboxPayload = string | Uint8Array;

/**
 * Default size of the data area: 64 KiB. tau2 tool calls are 0.2–6 KB encoded (airline's
 * get_reservation_details reply ~0.8 KB, retail's get_order_details ~1.6 KB); a rare larger one
 * (a test's 1 MB result) costs a structured clone through the port instead.
 */
export const MAILBOX_DATA_BYTES = 64 * 1024;

/** What the serving thread needs to answer a {@link MailboxCaller} (send it in `workerData`, the port in `transferList`). */
export interface MailboxEnds {
  buffer: SharedArrayBuffer;
  /** The serving thread's end of the channel for payloads larger than the data area. */
  port: MessagePort;
}

/** One side's view of the buffer. */
class Box {
  readonly state: Int32Array;
  private readonly data: Buffer;

  constructor(
    buffer: SharedArrayBuffer,
    private readonly port: MessagePort,
  ) {
    this.state = new Int32Array(buffer, 0, HEADER_BYTES / 4);
    this.data = Buffer.from(buffer, HEADER_BYTES);
  }

  /** Post `payload`: into the data area, or on the port when it does not fit. */
  put(payload: MailboxPayload): void {
    const { state, data } = this;
    state[KIND] = typeof payload === 'string' ? TEXT : BYTES;
    let length: number;
    if (typeof payload === 'string') {
      // At most 3 bytes of UTF-8 per UTF-16 unit: count the bytes first only when that bound is too large.
      length = payload.length * 3 <= data.length ? payload.length : Buffer.byteLength(payload);
      length = length <= data.length ? data.write(payload, 0) : ON_PORT;
    } else {
      length = payload.length <= data.length ? payload.length : ON_PORT;
      if (length !== ON_PORT) data.set(payload);
    }
    if (length === ON_PORT) this.port.postMessage(payload);
    state[LENGTH] = length;
  }

  /** The posted payload (a copy: the buffer is reused). */
  take(): MailboxPayload {
    const { state, data } = this;
    const length = state[LENGTH]!;
    if (length !== ON_PORT)
      return state[KIND] === TEXT ? data.toString('utf8', 0, length) : new Uint8Array(data.subarray(0, length));
    const got = receiveMessageOnPort(this.port);
    if (!got) throw new Error('mailbox: a payload announced on the port is not there');
    return got.message as MailboxPayload;
  }
}

interface Pending {
  request: MailboxPayload;
  resolve(reply: MailboxPayload): void;
  reject(error: Error): void;
}

/**
 * The calling side of a mailbox. {@link request} sends one request and resolves with the reply;
 * {@link fail} ends it (the Worker exited or was stopped), rejecting what is in flight or queued.
 */
export class MailboxCaller {
  /** The serving thread's ends, to send with the Worker. */
  readonly ends: MailboxEnds;
  private readonly box: Box;
  private readonly port: MessagePort;
  private readonly queue: Pending[] = [];
  /** A reply is awaited asynchronously (requests made meanwhile are queued). */
  private busy = false;
  private failure?: Error;
  private readonly spin: SpinWindow;
  /** The spin, µs, that gave up on the request in flight while the server ran it (0: none). */
  private overran = 0;

  /**
   * @param dataBytes size of the data area in bytes (default {@link MAILBOX_DATA_BYTES}).
   * @param onBusy told `true` when this thread starts waiting for a reply asynchronously and
   *   `false` when no request is left in flight or queued (to `ref`/`unref` the Worker: a pending
   *   `Atomics.waitAsync` does not keep Node's event loop alive). A reply seen while spinning
   *   needs neither.
   * @param spinUs the caller's spin for a reply, µs (default {@link MAX_SPIN_US}; 0: never), see
   *   {@link SpinWindow}. The event loop does not run during a spin, as it would not while the
   *   call ran in this thread.
   */
  constructor(
    dataBytes = MAILBOX_DATA_BYTES,
    private readonly onBusy: (busy: boolean) => void = () => {},
    spinUs = MAX_SPIN_US,
  ) {
    this.spin = new SpinWindow(spinUs);
    const buffer = new SharedArrayBuffer(HEADER_BYTES + dataBytes);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.box = new Box(buffer, port1);
    this.ends = { buffer, port: port2 };
  }

  /**
   * Send `request` and resolve with the handler's reply. When no reply is awaited, the request
   * goes out at once and a reply seen within this thread's spin settles the promise before this
   * returns; else the request waits its turn.
   * @throws (rejects) `Error(<message>)` when the handler threw or rejected; the {@link fail}
   *   error once the mailbox has failed.
   */
  request(request: MailboxPayload): Promise<MailboxPayload> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const p = { request, resolve, reject };
      if (this.busy) this.queue.push(p);
      else if (this.exchanged(p)) return;
      else void this.awaitReplies(p);
    });
  }

  /**
   * End the mailbox with `error`: the request in flight and every queued one reject with it, and
   * so do later ones. The first failure is kept.
   */
  fail(error: Error): void {
    this.failure ??= error;
    // Wake the wait of a request in flight; it sees the failure.
    Atomics.notify(this.box.state, STATE);
    for (const p of this.queue.splice(0)) p.reject(this.failure);
    this.port.close();
  }

  /** Post `p`'s request and spin for its reply: true when `p` is settled, false when the reply is still to come. */
  private exchanged(p: Pending): boolean {
    const { box, spin } = this;
    const { state } = box;
    box.put(p.request);
    Atomics.store(state, STATE, REQUEST);
    const asleep = Atomics.load(state, SLEEPING) === 1;
    Atomics.notify(state, STATE, 1);
    const us = spin.next();
    if (us <= 0) return false;
    // A sleeping server takes the request once woken; an awake one that does not take it at once is not running.
    if (spinForReply(state, us, asleep ? us : TAKE_US)) {
      spin.spun(true);
      this.settle(p);
      return true;
    }
    if (Atomics.load(state, STATE) === REQUEST) spin.spun(false);
    else this.overran = us;
    return false;
  }

  /** Take the posted reply into `p` and free the mailbox. */
  private settle(p: Pending): void {
    const { box } = this;
    const { state } = box;
    if (this.overran > 0) {
      // The spin gave up while the server ran the request: a miss only if the request took less than the spin.
      if (state[ELAPSED]! < this.overran) this.spin.spun(false);
      this.overran = 0;
    }
    let reply: MailboxPayload;
    try {
      reply = box.take();
    } catch (e) {
      Atomics.store(state, STATE, IDLE);
      p.reject(e as Error);
      return;
    }
    const failed = state[STATUS] === FAILED;
    Atomics.store(state, STATE, IDLE);
    if (failed) p.reject(new Error(String(reply)));
    else p.resolve(reply);
  }

  /** Wait asynchronously for `p`'s reply, then send the queued requests in turn. */
  private async awaitReplies(p: Pending): Promise<void> {
    this.busy = true;
    this.onBusy(true);
    const { state } = this.box;
    for (let next: Pending | undefined = p; next; ) {
      for (let now = Atomics.load(state, STATE); now !== REPLY && !this.failure; now = Atomics.load(state, STATE)) {
        const wait = waitAsync(state, STATE, now);
        if (wait.async) await wait.value;
      }
      if (this.failure) {
        next.reject(this.failure);
        break;
      }
      this.settle(next);
      next = this.queue.shift();
      while (next && !this.failure && this.exchanged(next)) next = this.queue.shift();
    }
    this.busy = false;
    this.onBusy(false);
  }
}

/**
 * How long, µs, a caller spinning for a reply waits for an awake serving thread to take the
 * request ({@link RUNNING}): one on a CPU takes it within a µs; one that has not in this time is
 * not running (a loaded machine), so the caller sleeps instead of holding a CPU it may need.
 */
const TAKE_US = 10;

/**
 * Spin at most `us` µs for a reply ({@link REPLY}), giving up after `takeUs` µs while the serving
 * thread has not taken the request; true when the reply is in.
 */
function spinForReply(state: Int32Array, us: number, takeUs: number): boolean {
  const start = performance.now();
  const end = start + us / 1000;
  const takeBy = start + takeUs / 1000;
  for (;;) {
    let now = IDLE;
    for (let i = 0; i < 64; i++) {
      now = Atomics.load(state, STATE);
      if (now === REPLY) return true;
    }
    const t = performance.now();
    if (t >= end || (now === REQUEST && t >= takeBy)) return false;
  }
}

/**
 * In the serving thread: answer each request posted to the mailbox with `handler(request)` (a
 * rejection becomes the caller's `Error` with the same message), one at a time, forever. Between
 * requests the thread blocks in `Atomics.wait` (its event loop does not run; timers and messages
 * wait for the next request's `await`). The Worker ends by being terminated.
 */
export async function serveMailbox(
  ends: MailboxEnds,
  handler: (request: MailboxPayload) => Promise<MailboxPayload>,
  spinUs = MAX_SPIN_US,
): Promise<never> {
  const box = new Box(ends.buffer, ends.port);
  const { state } = box;
  const spin = new SpinWindow(spinUs);
  for (;;) {
    if (Atomics.load(state, STATE) !== REQUEST) {
      const us = spin.next();
      if (us > 0) spin.spun(spinForRequest(state, us));
      for (let now = Atomics.load(state, STATE); now !== REQUEST; now = Atomics.load(state, STATE)) {
        Atomics.store(state, SLEEPING, 1);
        Atomics.wait(state, STATE, now);
        Atomics.store(state, SLEEPING, 0);
      }
    }
    Atomics.store(state, STATE, RUNNING);
    const start = performance.now();
    let status = OK;
    let reply: MailboxPayload;
    try {
      reply = await handler(box.take());
    } catch (e) {
      status = FAILED;
      reply = e instanceof Error ? e.message : String(e);
    }
    state[STATUS] = status;
    box.put(reply);
    state[ELAPSED] = Math.ceil((performance.now() - start) * 1000);
    Atomics.store(state, STATE, REPLY);
    Atomics.notify(state, STATE, 1);
  }
}

/**
 * A request/reply channel between a thread and the `worker_threads` Worker serving it, over a
 * SharedArrayBuffer mailbox (issue 15, item 2: the environment worker's tool call in one round
 * trip, without a message port's wake-ups and structured clones).
 *
 * The serving thread blocks in `Atomics.wait` until a request is posted, marks it taken, runs the
 * handler and posts the reply in the same buffer. The caller waits for the reply in its own
 * thread first, as if the call ran there: it spins while the serving thread is seen to work on it,
 * then blocks in `Atomics.wait` for at most {@link MAX_BLOCK_MS}; a reply in that time is returned
 * by `send` as is, with no promise in between. Only a longer request (or a dead serving thread) is
 * awaited with `Atomics.waitAsync`, which leaves the caller's event loop free. Payloads are text
 * (written as Latin-1 when every character fits a byte, else as UTF-8; a message may be text in
 * parts, written one after the other) or bytes, encoded by the user of the mailbox (`env-wire.ts`
 * for the environment worker). A payload larger than the mailbox's data area goes over a
 * `MessageChannel` instead and is taken off it synchronously (`receiveMessageOnPort`); the mailbox
 * then only carries the wake-up.
 *
 * One request at a time: the caller queues the others and sends each when the previous reply is
 * in. Measured on the 2-core VM under load, echo handler, 100-byte text, warm (200,000 round
 * trips), median round trip: ~1.3 µs (a bare spin on one int32 each way: ~0.25 µs), against ~11 µs
 * for a bare `postMessage` pair.
 *
 * Layout of the buffer: eight int32 slots ({@link STATE}, {@link LENGTH}, {@link STATUS},
 * {@link KIND}, {@link SLEEPING}, {@link WOKEN}, two unused), then the data area.
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
/** Slot: times the serving thread was woken from `Atomics.wait` by a request (it alone writes it). */
const WOKEN = 5;
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
/** Payload kinds: text as UTF-8, bytes, text as Latin-1 (one byte per UTF-16 unit: every unit ≤ U+00FF). */
const TEXT = 0;
const BYTES = 1;
const LATIN1 = 2;
/**
 * Matches a UTF-16 unit above U+00FF. V8 answers at once for a string stored one byte per
 * character (JSON text of ASCII or Latin-1 data, as tool results mostly are), which then goes as
 * Latin-1: a plain copy each way, where UTF-8 costs a validating decode of ~1 ns a byte.
 */
const WIDE = /[\u0100-\uffff]/;

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
 * The serving thread's spin for the next request, µs, before it sleeps (see {@link SpinWindow}).
 * A spin is a busy loop on the mailbox's state: it saves the sleeping thread's wake-up at the price
 * of CPU. On the 2-core KVM guests this project is measured on, waking a thread that sleeps in
 * `Atomics.wait` costs tens of µs: the waker's `Atomics.notify` (a futex wake, and an
 * inter-processor interrupt to a halted virtual CPU) measured 40–80 µs of the caller's own time
 * per request under load, and a blocked caller saw its reply ~70 µs after it was posted, against
 * ~1 µs to post to a spinning thread and ~0.3 µs for a spinning caller to see its reply. 200 µs
 * covers the caller's work between back-to-back calls (12–40 µs in the bench's loop, measured).
 */
export const MAX_SPIN_US = 200;

/**
 * The caller's spin for a reply, µs, while the serving thread works on its request, before it
 * blocks. A tau2 tool call runs 20–250 µs in the worker; blocking past it costs this thread a
 * wake-up (tens of µs, as above), while spinning holds a CPU for as long as the call would have
 * in this thread. A call longer than 1 ms pays the wake-up, then ≤ 10% of its time. (With a 100 µs
 * spin, an airline write, ~60–80 µs in the worker with its encoding, often outlasted it: the caller
 * slept, saw its reply late, and the worker's spin for the next request then missed and backed off.)
 */
export const REPLY_SPIN_US = 1000;

/**
 * Longest time, ms, a caller blocks in `Atomics.wait` for a reply once its spin gave up, before
 * it waits asynchronously. Blocking, the caller is woken by the reply's `Atomics.notify` alone; an
 * `Atomics.waitAsync` is resolved through the caller's event loop, a second wake-up. 2 ms covers
 * a tau2 tool call with room for the serving thread to be descheduled for a while on a loaded
 * machine; the caller's thread would be busy as long running the call itself.
 */
export const MAX_BLOCK_MS = 2;

/**
 * When the serving thread spins for the next request before it sleeps: after a spin that saw the
 * request it spins again next time; after a miss (no request within its spin, as when an agent
 * thinks between calls, or when the caller is not running on a loaded machine) it skips the next
 * 1, 2, 4, … 256 waits (doubling with each miss in a row) before it tries again — unless the
 * machine leaves a core free for it (`coreFree`, for the environment worker `FreeCoreWatch`: the
 * rest of the machine, its caller included, used at most `cores − 1 + 0.25` cores over the last
 * ≥ 250 ms). Then a miss costs a core nobody wanted, and the skips only made the worker sleep, and
 * run its next call cold: it skips nothing, and drops the skips left when a core frees up. The
 * back-off is for a loaded machine, where a spin holds the CPU the caller needs (below).
 * Measured (session 14, the 2-core VM shared with other helpers; same process, main's window and
 * this one alternating in rounds of 100 calls, medians of per-round ratios): while other processes
 * used 1.2–1.7 cores, one or two `node -e 'for(;;){}'` hogs beside them, `FreeCoreWatch` read
 * 1.96–2.01 cores besides the worker and the window backed off as before: this ÷ main 0.96–1.20
 * over 15 runs of 16–48 rounds, 0.97–1.02 in the three of 48 rounds (two identical workers:
 * 0.97–1.10). On a machine free for a moment (other processes 0.07 cores over the run), a worker
 * that kept spinning slept before 50 of 3,000 airline reads against main's 1,213, and its calls
 * took ×0.76 (1.42× in-process against 2.32×; that worker was forced to spin). But in 18 runs on
 * the idle machine (other processes ≤ 0.2 cores, load 1.8–3.9 from the runs themselves; 24 rounds
 * each, the four tau2 calls) main's window seldom backed off far: it slept before 4,053 of 43,200
 * calls, this one before 1,391 (÷2.9), and the median call was level, ×0.998 (0.948–1.050; CPU
 * ×1.01). Both read 1.0–2.3× in-process there (median 1.54×; see EnvWorker for the spread). So
 * this rule pays only
 * when main's window falls into runs of misses on an idle machine (the session's idle bench:
 * airline read, 754 sleeps in 1,000 calls, 3.81×), which these runs did not reproduce. Spinning
 * while the machine is loaded is what this rule avoids: forced on with other processes at 1.1–1.3
 * cores, ×1.16–1.46 (the worker slept 4–6× less, its spins held the CPU the caller needed), and
 * alike with the whole process at `nice -n -20` (other processes still 1.1–1.3 cores). In the tau2
 * bench's loop (its five ways of calling, in-process and threads alternating) the worker's watch
 * read its own process, less itself, at 0.62–0.93 cores over each span (traced with
 * `fs.writeSync`; other processes were then 0.94–1.22 cores), so on an idle machine it would call
 * the core free there. With the process under `chrt -r 1` (other processes ran only in its gaps)
 * neither window backed off: both slept before 6–104 of 1,000–2,400 calls and were level.
 *
 * Tried instead of the back-off: a
 * window that kept spinning unless two requests in a row came more than its spin after a reply
 * (A/B in one process, under load 6–7 on the 2-core VM): there the spinning worker was mostly not
 * running when a request came, the caller slept for the reply on 85% of the calls, and airline
 * read through the worker cost +93 µs over in-process against +58 µs with this window.
 *
 * Its skips are most of the worker's sleeps in the tau2 bench: in its write loop (a close, an open
 * and the timed call: three requests per timed call; load 4–5 on the 2-core VM), the spins missed
 * 41 times in 4,500 requests and the window skipped 3,694 waits, though the caller posted all but
 * ~3% of the requests within 200 µs of the reply's post (median 13–27 µs; no GC pause seen): the
 * misses are the caller not running, not its work between calls. Also tried under load 4–8, A/B in
 * one process against this window (medians of 12–30 per-round ratios, airline and retail, read and
 * write): spinning again as soon as one request comes in time, learnt also while asleep from the
 * caller's time between reply and request, 0.99–1.43× (7 of 8 1.14× or slower: the worker slept
 * less, the caller blocked 3× as often); that with the caller's take window 200 µs unless the
 * worker was seen spinning, 2.5–5.9×; the worker giving up its spin when its reply is not taken
 * within 20 µs (the caller not running), 0.96–1.04× (noise). See {@link WAKE_US} for why.
 *
 * Why the caller is not running (timelines of both threads in the bench's loops, four traces at
 * load 4.6–7.3 on the 2-core VM): with one CPU left to the two threads, the caller's
 * `Atomics.notify` to a sleeping worker lets the worker run on the caller's CPU at once, and the
 * notify returns only when the worker sleeps again, its reply in (59–82% of the timed calls). A
 * worker that spins after its reply holds that CPU, and the caller posts only after the spin ends:
 * each spin that missed in the timed rounds (3–13 per 1,020–3,020 requests) had the caller unable
 * to run, inside its notify or woken from its block only after the spin; in three traces every
 * spin tried missed, in one 102 of 115 hit. Their skips (1, 2, 4, … 256 waits) left the worker
 * asleep before 86–98% of the timed calls. Not the round boundaries, nor GC: the untimed warm-up's
 * misses had taken the window to its cap before the first timed round, and the misses came
 * mid-round. Such a hand-off call costs ~9–15 µs from post to the worker running, 6–8 µs from
 * reply to the caller seeing it, and the worker's part at 1.5–2× its time back to back in one
 * thread (cold: the tau2 bench's in-process side after a 100 µs sleep shows the same), the larger
 * part of the fixed cost under load. Tried on that finding (load 8–9.6, same process, in-process,
 * this window and the variant alternating in 24 rounds of 100): the worker sleeping at once,
 * without counting a miss, when at its reply the caller is inside its notify or blocked (a slot
 * the caller sets around both): variant ÷ this window, median of per-round ratios, 0.983 and 0.983
 * (airline read, two runs), 0.947 (airline write; mean 1.09), 1.003 (retail read), where two
 * identical workers gave 1.003–1.03: noise; the worker still slept before 92–100% of the calls.
 *
 * On a machine free for a moment (a trace taken when the 2-core VM was 99% idle over a second,
 * load average 4 and falling), the worker spun before 774 of the 1,020 timed requests and slept
 * before 197: 57 at the start (skips the untimed warm-up's misses had left) and the rest after 23
 * misses, each with the caller descheduled or blocked (woken 8–3,470 µs after the spin ended); a
 * run of 4 misses in a row doubled the skips to 8 and cost ~15 sleeps. Its part of the call took
 * 39 µs (median) after a spin, 70 µs after a wake-up (in-process 29 µs in that run): a spin also
 * keeps it warm. A thread spinning as the caller does (64 loads, then the clock) does not slow a
 * call on the other vCPU: in-process ×1.007 (airline read) and ×1.009 (retail), 35 rounds, load 2.6.
 * A lower cap on the skips, for a quicker recovery after such a run, costs under load (airline
 * read, same process, main's window and the variant alternating in 24 rounds of 100, load 3–3.5):
 * 8 skips at most, median ×1.37 and ×1.20, CPU ×1.31 and ×1.43 (the worker slept less, but its
 * spins held the CPU the caller needed); 32, median ×1.04, mean ×1.21, CPU ×1.20.
 */
export class SpinWindow {
  private skip = 0;
  private backoff = 1;

  /**
   * @param maxUs the spin when spinning, µs (0: never spin).
   * @param coreFree whether the machine leaves a core free for this thread (asked only after a
   *   miss and before a skipped wait, so its cost is never on a request's path; see
   *   `FreeCoreWatch`): while it says so, a miss is not followed by skips and skips left are
   *   dropped. Default: never.
   */
  constructor(
    private readonly maxUs: number,
    private readonly coreFree: () => boolean = () => false,
  ) {}

  /** The spin to try for this wait, µs (0: sleep at once). */
  next(): number {
    if (this.maxUs <= 0) return 0;
    if (this.skip > 0) {
      if (!this.coreFree()) {
        this.skip--;
        return 0;
      }
      this.skip = 0;
      this.backoff = 1;
    }
    return this.maxUs;
  }

  /** Record whether the spin {@link next} gave saw the request. */
  spun(hit: boolean): void {
    if (hit) this.backoff = 1;
    else if (!this.coreFree()) {
      this.skip = this.backoff;
      this.backoff = Math.min(MAX_SKIP, this.backoff * 2);
    }
  }
}

/** The most waits {@link SpinWindow} skips after misses in a row. */
const MAX_SKIP = 256;

/** Spin at most `us` µs until a request is posted ({@link REQUEST}); true when it is. */
function spinForRequest(state: Int32Array, us: number): boolean {
  const end = performance.now() + us / 1000;
  for (;;) {
    for (let i = 0; i < 64; i++) if (Atomics.load(state, STATE) === REQUEST) return true;
    if (performance.now() >= end) return false;
  }
}

/**
 * How often each side of a mailbox slept waiting for the other (see {@link MailboxCaller.counts}):
 * each sleep costs a wake-up, tens of µs on a KVM guest, where a spin that sees the message costs
 * ~1 µs.
 */
export interface MailboxCounts {
  /** Requests posted. */
  requests: number;
  /** Requests the serving thread was asleep for (woken from `Atomics.wait` by the request). */
  serverWoken: number;
  /** Replies this thread was asleep for (woken from a blocking `Atomics.wait` by the reply). */
  callerWoken: number;
  /** Replies this thread awaited asynchronously (`Atomics.waitAsync`: its spin and block gave up). */
  awaited: number;
}

/** What comes out of a mailbox: text or bytes. */
export type MailboxPayload = string | Uint8Array;

/**
 * What goes into a mailbox: text, bytes, or text in parts, received as their concatenation
 * (written one after the other, so a large part such as a tool result is not copied into a joined
 * string first).
 */
export type MailboxMessage = MailboxPayload | readonly string[];

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

  /** Post `message`: into the data area, or on the port when it does not fit. */
  put(message: MailboxMessage): void {
    const { state, data } = this;
    let length: number;
    if (message instanceof Uint8Array) {
      state[KIND] = BYTES;
      length = message.length <= data.length ? message.length : ON_PORT;
      if (length !== ON_PORT) data.set(message);
    } else {
      // Text parts are written one after the other: their concatenation would be copied once more to flatten it.
      const parts = typeof message === 'string' ? [message] : message;
      let units = 0;
      let wide = false;
      for (const part of parts) {
        units += part.length;
        wide ||= WIDE.test(part);
      }
      state[KIND] = wide ? TEXT : LATIN1;
      // UTF-8: at most 3 bytes per UTF-16 unit; the bytes are counted only when that bound is too large.
      if (wide && units * 3 > data.length) units = parts.reduce((n, part) => n + Buffer.byteLength(part), 0);
      length = 0;
      if (units > data.length) length = ON_PORT;
      else for (const part of parts) length += data.write(part, length, wide ? 'utf8' : 'latin1');
    }
    if (length === ON_PORT)
      this.port.postMessage(typeof message === 'string' || message instanceof Uint8Array ? message : message.join(''));
    state[LENGTH] = length;
  }

  /** The posted payload (a copy: the buffer is reused). */
  take(): MailboxPayload {
    const { state, data } = this;
    const length = state[LENGTH]!;
    if (length !== ON_PORT) {
      const kind = state[KIND];
      if (kind === LATIN1) return data.toString('latin1', 0, length);
      if (kind === TEXT) return data.toString('utf8', 0, length);
      return new Uint8Array(data.subarray(0, length));
    }
    const got = receiveMessageOnPort(this.port);
    if (!got) throw new Error('mailbox: a payload announced on the port is not there');
    return got.message as MailboxPayload;
  }
}

interface Pending {
  request: MailboxMessage;
  resolve(reply: MailboxPayload): void;
  reject(error: Error): void;
}

/**
 * The calling side of a mailbox. {@link send} sends one request and gives the reply (at once when
 * it came while this thread waited for it, else as a promise); {@link fail} ends it (the Worker
 * exited or was stopped), rejecting what is in flight or queued.
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
  private requests = 0;
  private callerWoken = 0;
  private awaited = 0;

  /**
   * @param dataBytes size of the data area in bytes (default {@link MAILBOX_DATA_BYTES}).
   * @param onBusy told `true` when this thread starts waiting for a reply asynchronously and
   *   `false` when no request is left in flight or queued (to `ref`/`unref` the Worker: a pending
   *   `Atomics.waitAsync` does not keep Node's event loop alive). A reply that came while this
   *   thread spun or blocked needs neither.
   * @param spinUs the caller's spin for a reply while the serving thread works on it, µs (default
   *   {@link REPLY_SPIN_US}; 0: never spin).
   * @param blockMs how long, ms, the caller then blocks in `Atomics.wait` for the reply before it
   *   waits asynchronously (default {@link MAX_BLOCK_MS}; 0: never block). The event loop does not
   *   run during a spin or a block, as it would not while the call ran in this thread.
   * @param coreFree whether the machine leaves a core free beside this thread (for the
   *   environment worker's caller `FreeCoreWatch`, read at most every 250 ms): while it says so,
   *   an awake serving thread gets {@link FREE_TAKE_US} to take a request instead of
   *   {@link TAKE_US}. Default: never.
   */
  constructor(
    dataBytes = MAILBOX_DATA_BYTES,
    private readonly onBusy: (busy: boolean) => void = () => {},
    private readonly spinUs = REPLY_SPIN_US,
    private readonly blockMs = MAX_BLOCK_MS,
    private readonly coreFree: () => boolean = () => false,
  ) {
    const buffer = new SharedArrayBuffer(HEADER_BYTES + dataBytes);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.box = new Box(buffer, port1);
    this.ends = { buffer, port: port2 };
  }

  /**
   * Send `request` and resolve with the handler's reply ({@link send} as a promise).
   * @throws (rejects) as {@link send}.
   */
  request(request: MailboxMessage): Promise<MailboxPayload> {
    try {
      const reply = this.send(request);
      return reply instanceof Promise ? reply : Promise.resolve(reply);
    } catch (e) {
      return Promise.reject(e as Error);
    }
  }

  /**
   * Send `request` and give the handler's reply. When no reply is awaited, the request goes out
   * at once and this thread spins, then blocks, for the reply: one that came in that time is
   * returned as is (or thrown); else, and when another request is in flight (this one then waits
   * its turn), a promise of it.
   * @throws (or rejects) `Error(<message>)` when the handler threw or rejected; the {@link fail}
   *   error once the mailbox has failed.
   */
  send(request: MailboxMessage): MailboxPayload | Promise<MailboxPayload> {
    if (this.failure) throw this.failure;
    if (this.busy) return new Promise((resolve, reject) => this.queue.push({ request, resolve, reject }));
    if (this.exchanged(request)) return this.take();
    return new Promise((resolve, reject) => void this.awaitReplies({ request, resolve, reject }));
  }

  /** How often each side slept waiting for the other so far (read from the mailbox, not clocked). */
  counts(): MailboxCounts {
    const { requests, callerWoken, awaited } = this;
    return { requests, serverWoken: Atomics.load(this.box.state, WOKEN), callerWoken, awaited };
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

  /** Post `request` and wait for its reply in this thread (spin, then block): true when the reply is in. */
  private exchanged(request: MailboxMessage): boolean {
    const { box, spinUs, blockMs } = this;
    const { state } = box;
    box.put(request);
    this.requests++;
    Atomics.store(state, STATE, REQUEST);
    const asleep = Atomics.load(state, SLEEPING) === 1;
    Atomics.notify(state, STATE, 1);
    // A sleeping server takes the request once woken; an awake one that does not take it at once is not running.
    if (spinUs > 0 && spinForReply(state, spinUs, takeWindowUs(asleep, this.coreFree))) return true;
    return blockMs > 0 && this.blockForReply(blockMs);
  }

  /** Block this thread in `Atomics.wait` at most `ms` ms for a reply ({@link REPLY}); true when it is in. */
  private blockForReply(ms: number): boolean {
    const { state } = this.box;
    const end = performance.now() + ms;
    for (let now = Atomics.load(state, STATE); now !== REPLY; now = Atomics.load(state, STATE)) {
      const left = end - performance.now();
      if (left <= 0) return false;
      if (Atomics.wait(state, STATE, now, left) === 'ok' && Atomics.load(state, STATE) === REPLY) this.callerWoken++;
    }
    return true;
  }

  /**
   * The posted reply; the mailbox is free again.
   * @throws `Error(<message>)` when the handler failed, or when a payload announced on the port is missing.
   */
  private take(): MailboxPayload {
    const { box } = this;
    const { state } = box;
    const failed = state[STATUS] === FAILED;
    let reply: MailboxPayload;
    try {
      reply = box.take();
    } finally {
      Atomics.store(state, STATE, IDLE);
    }
    if (failed) throw new Error(String(reply));
    return reply;
  }

  /** Settle `p` with the posted reply. */
  private settle(p: Pending): void {
    let reply: MailboxPayload;
    try {
      reply = this.take();
    } catch (e) {
      p.reject(e as Error);
      return;
    }
    p.resolve(reply);
  }

  /** Wait asynchronously for the reply to `p`'s posted request, then send the queued requests in turn. */
  private async awaitReplies(p: Pending): Promise<void> {
    this.busy = true;
    this.onBusy(true);
    const { state } = this.box;
    for (let next: Pending | undefined = p; next; ) {
      this.awaited++;
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
      while (next && !this.failure && this.exchanged(next.request)) {
        this.settle(next);
        next = this.queue.shift();
      }
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
 * {@link TAKE_US} while the machine leaves a core free beside the caller (`MailboxCaller`'s
 * `coreFree`): an awake serving thread that has not taken the request within 10 µs is then not
 * descheduled for another process but briefly busy or paused in its own thread, and sleeping costs
 * the caller a wake-up (tens of µs) where spinning on costs a core nobody wanted. Measured (session
 * 14, the 2-core VM otherwise idle, load 2–2.4; `npm run bench -- tau2` without tau2's side, this
 * and main alternating as whole runs; worker ÷ in-process, the median of the pairs' ratios, this ÷
 * main, 7 pairs: 4 with 100 µs for every awake take, 3 with it only while a core is free):
 * airline read ×0.92, airline write ×0.89, retail read ×0.75, retail write ×0.91 (the gated runs'
 * worker ÷ in-process 1.76–2.27, 1.72–1.93, 1.64–2.04, 1.96–2.36 against main's 1.54–2.89,
 * 2.01–2.41, 2.34–2.72, 1.87–2.16); the caller blocked for 50–215 of 1,000 timed replies against
 * main's 94–631. With a `for(;;)` process on one core (2 pairs): ×0.79–1.16, median ~×0.9, not
 * worse. Each process settles at one of two speeds (see `EnvWorker`), so single pairs swing ±30%.
 */
const FREE_TAKE_US = 100;

/**
 * How long, µs, a caller spinning for a reply waits for the serving thread to take its request
 * before it blocks: {@link WAKE_US} when the thread slept at the post, else {@link FREE_TAKE_US}
 * while `coreFree()` says a core is free beside the caller, else {@link TAKE_US}. `coreFree` is
 * asked only for an awake serving thread.
 */
export function takeWindowUs(asleep: boolean, coreFree: () => boolean): number {
  if (asleep) return WAKE_US;
  return coreFree() ? FREE_TAKE_US : TAKE_US;
}

/**
 * How long, µs, a caller spinning for a reply waits for a serving thread that slept to take the
 * request: a woken thread took it 10–50 µs after the post on the 2-core VM under load; one that
 * has not by then is not running, and the caller sleeps as above.
 *
 * Under heavier load the wake is bimodal, and the second mode is this spin: in probes at load 4–7,
 * of 1,188 requests to a sleeping worker 669 were taken within 20 µs, 138 more by 50 µs, 21
 * between 50 and 200 µs and 302 at 200–250 µs, just after the caller gave up (with 60 µs, the late
 * ones came at 60–100 µs). The only free CPU was then the caller's, and the woken worker ran when
 * the caller let it go (likewise a worker still in `Atomics.notify` for a caller that had blocked). 60 µs instead, A/B
 * under load 5–6 (20 rounds): CPU per call 0.76–0.82×, mean wall 0.72–1.04×, but median wall
 * 1.00–1.19× (the caller blocks more often, and a blocked caller's wake-up is a hand-off too).
 * Choosing 10 µs after a woken worker came late and 200 µs for every 16th such post (to see the
 * fast wakes again): 0.96–1.06× median, 0.92–0.99× CPU (load 8: noise).
 *
 * When the notify does not hand the caller's CPU to the worker (it was queued on a CPU another
 * process holds), this spin is paid in full: 317 of 932 timed airline reads at load 4.6 (the
 * median call is unaffected; see {@link SpinWindow} for the hand-off). The worker then ran ~6 µs
 * after the caller blocked, or once a time slice of another process later (636 µs).
 */
const WAKE_US = 200;

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
 * requests the thread spins, then blocks in `Atomics.wait`, as {@link SpinWindow} says (its event
 * loop does not run; timers and messages wait for the next request's `await`). The Worker ends by
 * being terminated.
 * @param spinUs the spin for the next request after each reply, µs ({@link SpinWindow}; 0: never spin).
 * @param coreFree whether the machine leaves a core free for this thread ({@link SpinWindow}'s;
 *   default: never, the window then backs off after every miss).
 */
export async function serveMailbox(
  ends: MailboxEnds,
  handler: (request: MailboxPayload) => Promise<MailboxMessage>,
  spinUs = MAX_SPIN_US,
  coreFree?: () => boolean,
): Promise<never> {
  const box = new Box(ends.buffer, ends.port);
  const { state } = box;
  const spin = new SpinWindow(spinUs, coreFree);
  for (;;) {
    if (Atomics.load(state, STATE) !== REQUEST) {
      const us = spin.next();
      let hit = false;
      if (us > 0) spin.spun((hit = spinForRequest(state, us)));
      if (!hit)
        for (let now = Atomics.load(state, STATE); now !== REQUEST; now = Atomics.load(state, STATE)) {
          Atomics.store(state, SLEEPING, 1);
          const woken = Atomics.wait(state, STATE, now) === 'ok';
          Atomics.store(state, SLEEPING, 0);
          if (woken && Atomics.load(state, STATE) === REQUEST) Atomics.store(state, WOKEN, state[WOKEN]! + 1);
        }
    }
    Atomics.store(state, STATE, RUNNING);
    let status = OK;
    let reply: MailboxMessage;
    try {
      reply = await handler(box.take());
    } catch (e) {
      status = FAILED;
      reply = e instanceof Error ? e.message : String(e);
    }
    state[STATUS] = status;
    box.put(reply);
    Atomics.store(state, STATE, REPLY);
    Atomics.notify(state, STATE, 1);
  }
}

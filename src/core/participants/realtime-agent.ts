/**
 * {@link RealtimeAgent}: bring your own voice agent. The agent under test is an
 * OpenAI-Realtime-compatible WebSocket server (gpt-realtime, open speech-to-speech servers,
 * Pipecat / LiveKit shims); it takes our calls, runs our tools and is scored like any agent.
 *
 * Per episode one session: `session.update` (instructions = the agent prompt, tools, PCM 24 kHz
 * audio both ways, no server turn detection: the episode decides turns), then per agent turn the
 * new caller turns (`input_audio_buffer.append` + `commit` of the degraded caller audio, or a
 * `conversation.item.create` text message without audio), the results of its tool calls
 * (`function_call_output` items) and `response.create`; the reply is collected from the
 * `response.*` events until `response.done`: the audio transcript (or text), the audio itself
 * (returned as a 16 kHz WAV part) and function calls. An interrupted reply (barge-in) is cut
 * back on the server too (`conversation.item.truncate` at the cut, dropped calls deleted).
 *
 * Event names of both dialects are read: the GA API (`response.output_audio.delta`,
 * `response.output_audio_transcript.*`, `response.output_text.*`) and the beta one many servers
 * still speak (`response.audio.delta`, `response.audio_transcript.*`, `response.text.*`); what is
 * sent follows {@link RealtimeAgentOptions.dialect}.
 *
 * Errors, by whose fault they are:
 * - the model's output (unknown tool names, argument text that is not a JSON object, missing
 *   names) goes back as given; the episode loop turns it into an `Error: …` tool message, which
 *   is sent to the server as the call's output, and goes on;
 * - frames that are not JSON events (no `type`) and events of unknown types are skipped, as a
 *   client of an evolving protocol must;
 * - a runaway response (a flood of deltas, endless events, huge events) is stopped at the first
 *   of the {@link RESPONSE_LIMITS} it passes: `response.cancel` is sent once, what arrived up to
 *   the limit is the agent's turn (marked `capped`, `QUALITY` fails it), and the call goes on.
 *   What the server sends after the cancel is read and dropped until its `response.done`, within
 *   the same limits again; a server that goes on past them, closes, or sends an `error` has its
 *   session closed, and the next turn opens a fresh one with the conversation replayed;
 * - frames sent while no reply is awaited (between turns) wait for the next reply and count
 *   towards its limits; unread frames past a response's limits plus the drain's (40,000 events
 *   or 32 MiB by default) close the session there, so memory stays bounded: that next reply is
 *   what was sent, cut at its first limit (`capped`, `ended: closed`), and the turn after it
 *   opens a fresh session;
 * - transport faults (cannot connect, the socket drops or the adapter's idle timeout ends it
 *   before a limit is reached, an `error` event, a response with status `failed`) reconnect and
 *   replay the conversation so far in a fresh session, `retries` times; then
 *   {@link ModelEndpointError}: the rollout is invalid and resampled, never the agent's 0.
 */
import { decodeWav, encodeWav, resample } from '../audio/wav.ts';
import { fromBase64, toBase64 } from '../channel/audio-store.ts';
import type { Timers } from '../ports/clock.ts';
import type { RealtimeConnect, RealtimeSocket } from '../ports/realtime.ts';
import { AGENT_PROMPT_VERSION, renderAgentPrompt } from '../prompts/agent.ts';
import type { OpenAiToolSchema } from '../schema/domain.ts';
import type { AssistantTurn, ParticipantCard, ReplyCap, ToolCall, Turn } from '../schema/trajectory.ts';
import type { TurnAudio } from './model-messages.ts';
import { ModelEndpointError } from './model-errors.ts';
import { cutAtCodePoint, MAX_AGENT_AUDIO_S, MAX_REPLY_CHARS } from '../rollout/limits.ts';
import { clip } from '../rollout/normalize.ts';
import type { Agent, EpisodeView, ParticipantReply } from './types.ts';

/** Which shape of `session.update` and history items to send. */
export type RealtimeDialect = 'ga' | 'beta';

/** The realtime API's PCM rate: 24 kHz, 16-bit little-endian mono. */
export const REALTIME_RATE_HZ = 24_000;
/** Caller audio per `input_audio_buffer.append`: 500 ms (24 kB of PCM). */
export const APPEND_CHUNK_MS = 500;

/** Options of {@link RealtimeAgent}. */
export interface RealtimeAgentOptions {
  /** ws: or wss: URL of the server, e.g. `wss://host/v1/realtime?model=gpt-realtime`. */
  url: string;
  /** Opens connections (platform adapter). */
  connect: RealtimeConnect;
  /** Wall-clock timers for the reply's time limit and the wait after a cancel (`realTimers` outside tests). */
  timers: Timers;
  /** The URL as it may be written down (credentials redacted); default `url`. */
  endpoint?: string;
  /** Default `ga`. */
  dialect?: RealtimeDialect;
  /** Output voice, when the server should use a particular one. */
  voice?: string;
  /** Caller audio (base64 WAV) for a caller turn; null or absent: its text is sent. */
  userAudio?: TurnAudio;
  /** Reconnects after a transport fault before the rollout is invalid. Default 2. */
  retries?: number;
  /** Agent audio per reply, s. Default {@link RESPONSE_LIMITS}`.audioS`. */
  maxAudioSeconds?: number;
  /** Server events per reply. Default {@link RESPONSE_LIMITS}`.events`. */
  maxEventsPerReply?: number;
  /** Characters of frames per reply. Default {@link RESPONSE_LIMITS}`.bytes`. */
  maxBytesPerReply?: number;
  /** Function calls per reply. Default {@link RESPONSE_LIMITS}`.calls`. */
  maxCallsPerReply?: number;
  /** Wall-clock seconds per reply. Default {@link RESPONSE_LIMITS}`.wallS`. */
  maxReplySeconds?: number;
}

/**
 * Limits of one response (a reply from `response.create` to `response.done`). Past the first one
 * reached the response is cancelled and cut there (see the module comment):
 * - `audioS`: 120 s of agent audio, {@link MAX_AGENT_AUDIO_S} (the longest agent audio placed on
 *   the timeline; about 300 spoken words, where a phone reply is a few seconds);
 * - `textChars`: 16,000 characters of transcript (or text), {@link MAX_REPLY_CHARS} (the longest
 *   reply text worked on);
 * - `events`: 20,000 server events. A 120 s reply in 10 ms audio deltas (the shortest frame of
 *   WebRTC's Opus; RTP telephony's default packet is 20 ms, RFC 3551 §4.5) is 12,000 events,
 *   plus about one transcript delta per word (some 300);
 * - `bytes`: 16 MiB of frames (counted as characters of the frame text: bytes for JSON's
 *   ASCII), twice the 7.68 MB of base64 that 120 s of 24 kHz 16-bit audio takes, leaving the
 *   rest for the events' JSON and the transcript. A single frame over it is refused by the Node
 *   transport (`ws`'s `maxPayload`) and counts as this limit too;
 * - `calls`: 20 function calls, more than the longest reference solution of any built-in or
 *   tau2-bench task makes in a whole call (19, tau2 airline; retail 13, telecom 12). The calls
 *   up to it run; each one past it that arrived before the cut is not run and gets an error tool
 *   message ({@link CALLS_LIMIT_REFUSAL});
 * - `wallS`: 180 s of wall-clock time from `response.create`: the longest audio a reply may
 *   have (120 s) streamed at real-time pace, as servers that speak through a streaming TTS do,
 *   plus 60 s, the wait for a first event that `--model-timeout` allows. Without it a server that
 *   sends one event a little more often than `--model-timeout` (one every 59 s) holds the call
 *   for ever: each event resets the silence timeout, and a trickle stays far under the other
 *   limits. Distinct from the 15 s open timeout (a server that never sends a frame) and
 *   `--model-timeout` (silence: an infrastructure fault, the rollout invalid): a reply that is
 *   still going after 180 s is the agent's, cut and scored like a flood.
 */
export const RESPONSE_LIMITS = {
  audioS: MAX_AGENT_AUDIO_S,
  textChars: MAX_REPLY_CHARS,
  events: 20_000,
  bytes: 16 * 1024 * 1024,
  calls: 20,
  wallS: 180,
} as const;

/**
 * Wall-clock time a server has, after our `response.cancel`, to end the response with its
 * `response.done`: 15 s, the open timeout (`webSocketConnect`), as a server honouring a cancel
 * answers at once. Past it the session is closed (`ended: ignored`) and the next turn opens a
 * fresh one; so a server that trickles events after the cancel cannot hold the call either.
 */
export const CANCEL_WAIT_MS = 15_000;

/**
 * Why a function call past the `calls` limit was not run, as the episode's error tool message
 * says it (`Error: <this>`); `max` is the limit.
 */
export const CALLS_LIMIT_REFUSAL = (max: number): string =>
  `not run: more than ${max} function calls in one reply (the realtime agent's calls limit)`;

/** A fault of the connection or the server (not of the model's output): reconnect, then invalid. */
class TransportFault extends Error {}

const str = (x: unknown): string | null => (typeof x === 'string' ? x : null);

/** A loosely typed server event. */
type ServerEvent = { type: string } & Record<string, unknown>;

/** One frame as received: its event (null when it is not a JSON object with a string `type`) and its length in characters. */
interface Frame {
  event: ServerEvent | null;
  chars: number;
}

/** Which limit ended a connection from our side: see {@link Inbox.overflow}. */
type Overflow = 'events' | 'bytes';

/**
 * Frames of one connection, in arrival order. Unread frames are bounded: a server that sends
 * more than `bound` of them before they are read (a flood while no reply is awaited, between
 * turns) ends the connection (`overflow`, `onOverflow` closes the socket) instead of filling
 * memory; the frames up to the bound stay readable.
 */
class Inbox {
  private items: Frame[] = [];
  private unreadChars = 0;
  private wake: (() => void) | null = null;
  closed: string | null = null;
  /**
   * The connection ended on the server's flood, not a fault: `events` / `bytes` when unread
   * frames passed the bound's count / characters, `bytes` for one frame over the transport's size
   * limit.
   */
  overflow: Overflow | null = null;
  /** Called once when unread frames pass the bound (the agent closes the socket). */
  onOverflow: () => void = () => undefined;
  /** Set by a reader's wall-clock timer: {@link next} returns null once the frames that came before are read. */
  private expired = false;
  /** Limits started so far (the latest one's number). */
  private limits = 0;

  /** @param bound most unread frames (`events`) and characters of them (`chars`) held. */
  constructor(private readonly bound: { events: number; chars: number }) {}

  push(data: string): void {
    if (this.closed !== null) return;
    let e: unknown = null;
    try {
      e = JSON.parse(data);
    } catch {
      // not JSON
    }
    const ok = typeof e === 'object' && e !== null && typeof (e as { type?: unknown }).type === 'string';
    this.items.push({ event: ok ? (e as ServerEvent) : null, chars: data.length });
    this.unreadChars += data.length;
    const over: Overflow | null =
      this.items.length > this.bound.events ? 'events' : this.unreadChars > this.bound.chars ? 'bytes' : null;
    if (over) {
      this.end(
        over === 'events'
          ? `more than ${this.bound.events} unread events from the server`
          : `more than ${this.bound.chars} characters of unread events from the server`,
        over,
      );
      this.onOverflow();
    }
    this.wake?.();
  }

  end(reason: string, overflow: Overflow | null = null): void {
    if (this.closed === null) this.overflow = overflow;
    this.closed ??= reason;
    this.wake?.();
  }

  /** Frames received and not read yet. */
  get unread(): number {
    return this.items.length;
  }

  /**
   * Start a wall-clock limit of `ms` on reading (replacing any before): once it has passed, {@link
   * next} returns null after the frames already received. Returns the function that ends it.
   */
  limit(timers: Timers, ms: number): () => void {
    const id = ++this.limits;
    this.expired = false;
    // Only the latest limit counts: an earlier one's timer firing late changes nothing.
    const cancel = timers.after(ms, () => {
      if (id !== this.limits) return;
      this.expired = true;
      this.wake?.();
    });
    return () => {
      cancel();
      if (id === this.limits) this.expired = false;
    };
  }

  /**
   * The next frame; null once the reading's time {@link limit} has passed (and every frame that
   * came before it was read); throws {@link TransportFault} once the connection has ended and
   * nothing is left.
   */
  async next(): Promise<Frame | null> {
    for (;;) {
      const f = this.items.shift();
      if (f) {
        this.unreadChars -= f.chars;
        return f;
      }
      if (this.expired) return null;
      if (this.closed !== null) throw new TransportFault(`connection closed: ${this.closed}`);
      await new Promise<void>((r) => {
        this.wake = r;
      });
      this.wake = null;
    }
  }
}

interface Session {
  socket: RealtimeSocket;
  inbox: Inbox;
  /** Turns of the episode the server's conversation already holds. */
  held: number;
  /** Server item ids of the last reply: its message, and its function calls by call id. */
  lastReply: { messageId: string | null; calls: Map<string, string>; audioMs: number } | null;
  /** `event_id`s of our `response.cancel` events: an `error` about one of them is no fault. */
  cancels: Set<string>;
  /**
   * Ids of responses that are over: ended (`response.done`) or announced while another was
   * awaited. Their later events are stale and skipped (a second `response.done`, the rest of a
   * response after its early `response.done`); the last {@link REMEMBERED_RESPONSES} are kept.
   */
  over: Set<string>;
  /** `response.create`s sent on this session (the last one's tag, {@link REQUEST_TAG}). */
  requests: number;
  /** Whether the server has echoed our {@link REQUEST_TAG} in a `response.created` on this session. */
  echoes: boolean;
}

/**
 * The key of the metadata our `response.create` carries (`response.metadata`, the request's
 * number on the session as a string). The Realtime API echoes a response's metadata in its
 * `response.created`, so the reply can be told from a response the server made on its own.
 */
export const REQUEST_TAG = 'switchboard_request';

/** Our `response.create` a reply answers: frames unread when it was sent, and its tag. */
interface ReplyRequest {
  queued: number;
  tag: string;
}

/**
 * Whether the `response.created` `e`, the `read`-th frame of the reply, announces a response
 * that does not answer our request (its events are then skipped, the reply's `finish_reason`
 * counts it as an unrequested response ignored): it was already waiting before we sent
 * `response.create`; it carries another {@link REQUEST_TAG}; or it carries none on a session
 * whose server echoes the tag. Otherwise the first response announced is the reply (a server
 * that drops the metadata cannot show which response answers us).
 */
function unrequested(s: Session, e: ServerEvent, read: number, request: ReplyRequest | undefined): boolean {
  if (!request) return false;
  if (read <= request.queued) return true;
  const tag = requestTag(e);
  if (tag !== null) s.echoes = true;
  return tag === null ? s.echoes : tag !== request.tag;
}

/** The {@link REQUEST_TAG} a `response.created` carries in its `response.metadata`, or null. */
function requestTag(e: ServerEvent): string | null {
  const meta = (e.response as { metadata?: unknown } | undefined)?.metadata;
  return typeof meta === 'object' && meta !== null ? str((meta as Record<string, unknown>)[REQUEST_TAG]) : null;
}

/** Where {@link RealtimeAgent}'s reading starts again on the tagged response (see `readReply`). */
interface Resume {
  responseId: string;
  others: Set<string>;
  ignored: number;
  stale: number;
}

/** Response ids a session remembers as over ({@link Session}`.over`). */
const REMEMBERED_RESPONSES = 1000;

/** The response an event belongs to: `response.id` of `response.created` / `response.done`, else its `response_id`; null when it names none. */
function responseOf(e: ServerEvent): string | null {
  return e.type === 'response.created' || e.type === 'response.done'
    ? str((e.response as { id?: unknown } | undefined)?.id)
    : str(e.response_id);
}

/**
 * Whether `e` belongs to a response other than `current` (the one this reply reads): one that is
 * over, one announced beside it (`others`), or a `response.created` / `response.done` naming
 * another id once `current` is known. Events that name no response, or a response never
 * announced, belong to the current one.
 */
function otherResponse(s: Session, e: ServerEvent, current: string | null, others: ReadonlySet<string>): boolean {
  const id = responseOf(e);
  if (id === null) return false;
  if (s.over.has(id) || others.has(id)) return true;
  return current !== null && id !== current && (e.type === 'response.created' || e.type === 'response.done');
}

/** `event_id` of our `session.update`: a server's `error` naming it refused the session's settings. */
const SESSION_UPDATE_EVENT_ID = 'switchboard_session_update';

/**
 * The reason of a server's `error` event: `server error[ answering session.update]: <message>
 * (code <code>, param <param>)`, each text clipped to 200 characters (a server's error text is
 * not ours to store whole).
 */
function serverError(e: ServerEvent): string {
  const err = (typeof e.error === 'object' && e.error !== null ? e.error : {}) as Record<string, unknown>;
  const code = str(err.code);
  const param = str(err.param);
  const details = [code && `code ${clip(code)}`, param && `param ${clip(param)}`].filter(Boolean).join(', ');
  return `server error${err.event_id === SESSION_UPDATE_EVENT_ID ? ' answering session.update' : ''}: ${clip(str(err.message) ?? 'no message')}${details ? ` (${details})` : ''}`;
}

/** Remember `id` as over, forgetting the oldest past {@link REMEMBERED_RESPONSES}. */
function markOver(s: Session, id: string): void {
  s.over.add(id);
  if (s.over.size > REMEMBERED_RESPONSES) s.over.delete(s.over.values().next().value as string);
}

/** One function call as the server sent it. */
interface WireCall {
  name: unknown;
  arguments: unknown;
}

/** The model's argument text as arguments: a JSON object when it parses to one, else the text itself (refused by the episode loop). */
function callArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw;
  try {
    const v: unknown = JSON.parse(raw);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : raw;
  } catch {
    return raw;
  }
}

/** 16-bit little-endian PCM bytes of float samples (rounded, clipped). */
function pcm16Bytes(x: Float32Array): Uint8Array {
  const out = new Uint8Array(x.length * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < x.length; i++) {
    const v = Math.round((x[i] as number) * 32768);
    view.setInt16(2 * i, Math.min(32767, Math.max(-32768, v)), true);
  }
  return out;
}

/** Float samples of 16-bit little-endian PCM bytes (an odd last byte is dropped). */
function pcm16Samples(bytes: Uint8Array): Float32Array {
  const n = bytes.length >> 1;
  const view = new DataView(bytes.buffer, bytes.byteOffset, n * 2);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = view.getInt16(2 * i, true) / 32768;
  return out;
}

/**
 * An agent behind an OpenAI-Realtime-compatible WebSocket server (see the module comment). One
 * instance per rollout; {@link close} ends its session.
 */
export class RealtimeAgent implements Agent {
  readonly id: string;
  private session: Session | null = null;
  private readonly dialect: RealtimeDialect;
  private readonly retries: number;
  private readonly maxAudioBytes: number;
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  private readonly maxCalls: number;
  private readonly maxReplyS: number;
  private readonly model: string | null;

  constructor(private readonly options: RealtimeAgentOptions) {
    this.dialect = options.dialect ?? 'ga';
    this.retries = options.retries ?? 2;
    this.maxAudioBytes = Math.round((options.maxAudioSeconds ?? RESPONSE_LIMITS.audioS) * REALTIME_RATE_HZ) * 2;
    this.maxEvents = options.maxEventsPerReply ?? RESPONSE_LIMITS.events;
    this.maxBytes = options.maxBytesPerReply ?? RESPONSE_LIMITS.bytes;
    this.maxCalls = options.maxCallsPerReply ?? RESPONSE_LIMITS.calls;
    this.maxReplyS = options.maxReplySeconds ?? RESPONSE_LIMITS.wallS;
    // The `model` query parameter, as realtime URLs name the model.
    const m = /[?&]model=([^&#]*)/.exec(options.url)?.[1];
    let model: string | null = null;
    try {
      model = m ? decodeURIComponent(m.replace(/\+/g, ' ')) : null;
    } catch {
      model = m ?? null;
    }
    this.model = model || null;
    this.id = `realtime:${model ?? options.endpoint ?? options.url}`;
  }

  /** Setup recorded in the trajectory (no sampling parameters: realtime servers choose their own). */
  get card(): ParticipantCard {
    return {
      kind: 'remote',
      flavor: this.dialect === 'ga' ? 'realtime' : 'realtime-beta',
      model: this.model,
      base_url: this.options.endpoint ?? this.options.url,
      sampling: null,
      prompt_version: AGENT_PROMPT_VERSION,
      teacher_guidance: null,
    };
  }

  async respond(view: EpisodeView): Promise<ParticipantReply> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(view);
      } catch (e) {
        if (!(e instanceof TransportFault)) throw e;
        this.drop();
        if (attempt > this.retries)
          throw new ModelEndpointError(
            `realtime agent at ${this.options.endpoint ?? this.options.url}: ${e.message} (${attempt} attempt${attempt === 1 ? '' : 's'})`,
            null,
            true,
            attempt,
          );
      }
    }
  }

  /** End the session (the episode is over). */
  async close(): Promise<void> {
    this.drop();
  }

  private drop(): void {
    const s = this.session;
    this.session = null;
    if (s) {
      s.inbox.end('closed by the agent');
      try {
        s.socket.close();
      } catch {
        // already closed
      }
    }
  }

  private async open(view: EpisodeView): Promise<Session> {
    // Unread frames held: what one response and the drain after its cancel may read.
    const inbox = new Inbox({
      events: this.maxEvents + RESPONSE_LIMITS.events,
      chars: this.maxBytes + RESPONSE_LIMITS.bytes,
    });
    let socket: RealtimeSocket;
    try {
      socket = await this.options.connect(this.options.url, {
        message: (d) => inbox.push(d),
        close: (r, oversize) => inbox.end(r, oversize ? 'bytes' : null),
      });
    } catch (e) {
      throw new TransportFault(`cannot connect: ${e instanceof Error ? e.message : String(e)}`);
    }
    inbox.onOverflow = () => socket.close();
    if (inbox.overflow) socket.close();
    const session: Session = {
      socket,
      inbox,
      held: 0,
      lastReply: null,
      cancels: new Set(),
      over: new Set(),
      requests: 0,
      echoes: false,
    };
    const instructions = renderAgentPrompt({ domain: view.domain, task: view.task, tools: view.tools, guidance: null });
    this.send(session, {
      type: 'session.update',
      event_id: SESSION_UPDATE_EVENT_ID,
      session: this.sessionConfig(instructions, view.tools),
    });
    return session;
  }

  private sessionConfig(instructions: string, tools: readonly OpenAiToolSchema[]): Record<string, unknown> {
    const wire = tools.map((t) => ({
      type: 'function',
      name: t.function.name,
      description: t.function.description,
      parameters: t.function.parameters,
    }));
    const voice = this.options.voice;
    if (this.dialect === 'beta') {
      return {
        modalities: ['text', 'audio'],
        instructions,
        ...(voice ? { voice } : {}),
        input_audio_format: 'pcm16',
        output_audio_format: 'pcm16',
        turn_detection: null,
        tools: wire,
        tool_choice: 'auto',
      };
    }
    const format = { type: 'audio/pcm', rate: REALTIME_RATE_HZ };
    return {
      type: 'realtime',
      output_modalities: ['audio'],
      instructions,
      audio: { input: { format, turn_detection: null }, output: { format, ...(voice ? { voice } : {}) } },
      tools: wire,
      tool_choice: 'auto',
    };
  }

  private send(s: Session, event: Record<string, unknown>): void {
    if (s.inbox.closed !== null) throw new TransportFault(`connection closed: ${s.inbox.closed}`);
    try {
      s.socket.send(JSON.stringify(event));
    } catch (e) {
      throw new TransportFault(`send failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private async attempt(view: EpisodeView): Promise<ParticipantReply> {
    this.session ??= await this.open(view);
    const s = this.session;
    if (s.inbox.overflow) {
      // The server flooded while no reply was awaited (between turns): what it sent is this
      // turn's reply, cut at the first limit; its session is closed, the next turn opens a fresh one.
      const reply = await this.collect(s);
      this.drop();
      return reply;
    }
    const turns = view.turns;
    // The reply the server made last time, as the episode kept it: cut back when interrupted.
    const mine = s.lastReply && s.held > 0 ? turns[s.held - 1] : undefined;
    if (mine?.role === 'assistant' && mine.interrupted && s.lastReply) this.cutBack(s, mine, s.lastReply);
    for (let i = s.held; i < turns.length; i++) this.sendTurn(s, turns[i]!, i);
    s.held = turns.length;
    s.lastReply = null;
    // Frames already waiting unread came before this request: no response among them answers it.
    const request = { queued: s.inbox.unread, tag: String(++s.requests) };
    this.send(s, { type: 'response.create', response: { metadata: { [REQUEST_TAG]: request.tag } } });
    s.socket.waiting(true);
    const reply = await this.collect(s, request);
    s.socket.waiting(false);
    // The server holds its own reply: the next turn of the episode.
    s.held = turns.length + 1;
    return reply;
  }

  /** Truncate the interrupted reply's message at the cut and delete its dropped calls. */
  private cutBack(s: Session, turn: AssistantTurn, last: NonNullable<Session['lastReply']>): void {
    const cut = turn.interrupted!;
    if (last.messageId && last.audioMs > 0)
      this.send(s, {
        type: 'conversation.item.truncate',
        item_id: last.messageId,
        content_index: 0,
        audio_end_ms: Math.max(0, Math.min(Math.round(cut.cut_ms ?? 0), Math.floor(last.audioMs))),
      });
    for (const call of cut.dropped_tool_calls) {
      const item = last.calls.get(call.id);
      if (item) this.send(s, { type: 'conversation.item.delete', item_id: item });
    }
  }

  private sendTurn(s: Session, t: Turn, index: number): void {
    if (t.role === 'user') {
      const wav = t.text ? (this.options.userAudio?.(t, index) ?? null) : null;
      if (wav !== null) this.sendAudio(s, wav);
      else if (t.text)
        this.send(s, {
          type: 'conversation.item.create',
          item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: t.text }] },
        });
    } else if (t.role === 'assistant') {
      // A turn the server did not make itself (a replayed history): its words and calls.
      if (t.text)
        this.send(s, {
          type: 'conversation.item.create',
          item: {
            type: 'message',
            role: 'assistant',
            content: [{ type: this.dialect === 'ga' ? 'output_text' : 'text', text: t.text }],
          },
        });
      for (const c of t.tool_calls)
        this.send(s, {
          type: 'conversation.item.create',
          item: {
            type: 'function_call',
            call_id: c.id,
            name: c.name,
            arguments: c.raw_arguments ?? JSON.stringify(c.arguments),
          },
        });
    } else if (t.requestor === 'assistant') {
      this.send(s, {
        type: 'conversation.item.create',
        item: { type: 'function_call_output', call_id: t.tool_call_id, output: t.content },
      });
    }
  }

  /** The caller's degraded WAV as 24 kHz PCM appends, then a commit. */
  private sendAudio(s: Session, wavBase64: string): void {
    const { samples, sampleRate } = decodeWav(fromBase64(wavBase64));
    const pcm = pcm16Bytes(sampleRate === REALTIME_RATE_HZ ? samples : resample(samples, sampleRate, REALTIME_RATE_HZ));
    const chunk = ((APPEND_CHUNK_MS * REALTIME_RATE_HZ) / 1000) * 2;
    for (let at = 0; at < pcm.length; at += chunk)
      this.send(s, { type: 'input_audio_buffer.append', audio: toBase64(pcm.subarray(at, at + chunk)) });
    this.send(s, { type: 'input_audio_buffer.commit' });
  }

  /**
   * Read events until `response.done`; the reply in our shape. Past a response limit the reply is
   * cut there, `response.cancel` sent once, and the rest drained ({@link drain}).
   */
  private async collect(s: Session, request?: ReplyRequest): Promise<ParticipantReply> {
    const end = s.inbox.limit(this.options.timers, this.maxReplyS * 1000);
    try {
      return await this.readReply(s, request);
    } finally {
      end();
    }
  }

  /**
   * {@link collect} within its time limit: a null frame is the limit passed. `resume`: read
   * again from the response that carries our request's tag, announced after an untagged one
   * was taken for the reply (that one is then dropped as unrequested).
   */
  private async readReply(s: Session, request?: ReplyRequest, resume?: Resume): Promise<ParticipantReply> {
    let skipped = 0;
    // Responses the server announced that do not answer our response.create ({@link unrequested}).
    let ignored = resume?.ignored ?? 0;
    let read = 0;
    // Whether the response read carries our request's tag, and events read since it was announced.
    let tagged = resume !== undefined;
    let since = 0;
    let transcript = '';
    let transcriptDone: string | null = null;
    let text = '';
    let textDone: string | null = null;
    const audio: Uint8Array[] = [];
    let audioBytes = 0;
    const calls = new Map<string, WireCall>();
    const order: string[] = [];
    const reply = { messageId: null as string | null, calls: new Map<string, string>(), audioMs: 0 };
    let responseId: string | null = resume?.responseId ?? null;
    // Responses announced while this one was read, and events of other responses skipped.
    const others = new Set<string>(resume?.others);
    let stale = resume?.stale ?? 0;
    // Calls past the calls limit: kept on the turn, refused (an error tool message), the reply capped.
    const refused = new Set<string>();
    const addCall = (callId: unknown, c: WireCall, itemId: unknown) => {
      const id = str(callId) ?? `call_${order.length}`;
      if (!calls.has(id)) {
        order.push(id);
        if (order.length > this.maxCalls) {
          refused.add(id);
          cap ??= { limit: 'calls', max: this.maxCalls };
        }
      }
      calls.set(id, { name: c.name ?? calls.get(id)?.name, arguments: c.arguments ?? calls.get(id)?.arguments });
      const item = str(itemId);
      if (item) reply.calls.set(id, item);
    };
    // Text kept per reply, up to the limit: past it the response is stopped.
    let cap: Omit<ReplyCap, 'ended'> | null = null;
    const keep = (acc: string, more: string) => {
      if (acc.length + more.length <= MAX_REPLY_CHARS) return acc + more;
      cap = { limit: 'text_chars', max: MAX_REPLY_CHARS };
      // On a code point boundary: a pair split across the limit is left out whole.
      return cutAtCodePoint(acc + more.slice(0, MAX_REPLY_CHARS - acc.length + 1), MAX_REPLY_CHARS);
    };
    /** The reply as received so far; `status` is how its response ended. */
    const finish = (status: string, capped: ReplyCap | null): ParticipantReply => {
      for (const id of responseId === null ? others : [responseId, ...others]) markOver(s, id);
      reply.audioMs = (audioBytes / 2 / REALTIME_RATE_HZ) * 1000;
      if (this.session === s) s.lastReply = reply;
      const spoken = transcriptDone ?? (transcript || (textDone ?? text));
      const toolCalls = order.map((id) => {
        const c = calls.get(id)!;
        return { id, name: c.name, arguments: callArguments(c.arguments) };
      });
      const pcm = new Uint8Array(audioBytes);
      let at = 0;
      for (const a of audio) {
        pcm.set(a, at);
        at += a.length;
      }
      const wav =
        audioBytes >= 2 ? toBase64(encodeWav(resample(pcm16Samples(pcm), REALTIME_RATE_HZ, 16_000), 16_000)) : null;
      return {
        text: spoken,
        // Names and arguments as the model sent them: the episode loop refuses bad ones.
        tool_calls: toolCalls as unknown as ToolCall[],
        ...(refused.size
          ? { refusals: order.map((id) => (refused.has(id) ? CALLS_LIMIT_REFUSAL(this.maxCalls) : null)) }
          : {}),
        ...(wav ? { parts: [{ type: 'audio' as const, base64: wav, ...(spoken ? { transcript: spoken } : {}) }] } : {}),
        generation: {
          model: this.model ?? 'realtime',
          token_ids: null,
          prompt_token_ids: null,
          logprobs: null,
          finish_reason: `${status}${capped ? `; cut at the ${capped.limit} limit` : ''}${skipped ? `; ${skipped} malformed frames skipped` : ''}${ignored ? `; ${ignored} unrequested response${ignored === 1 ? '' : 's'} ignored` : ''}${stale ? `; ${stale} event${stale === 1 ? '' : 's'} of other responses skipped` : ''}`,
          tool_call_source: toolCalls.length ? 'server' : 'none',
        },
        ...(capped ? { capped } : {}),
      };
    };
    let events = 0;
    let chars = 0;
    for (;;) {
      let frame: Frame | null;
      try {
        frame = await s.inbox.next();
      } catch (e) {
        // One frame over the transport's size limit, or unread frames past the inbox's bound:
        // the server's doing, the response's limit.
        const over = s.inbox.overflow;
        if (e instanceof TransportFault && over) {
          this.drop();
          return finish('closed', {
            limit: over,
            max: over === 'events' ? this.maxEvents : this.maxBytes,
            ended: 'closed',
          });
        }
        throw e;
      }
      const e = frame?.event ?? null;
      if (frame !== null) {
        read++;
        since++;
      }
      // Null: the reply's wall-clock limit passed; cut there, like a flood.
      if (frame === null) cap = { limit: 'wall_s', max: this.maxReplyS };
      else if (++events > this.maxEvents) cap = { limit: 'events', max: this.maxEvents };
      else if ((chars += frame.chars) > this.maxBytes) cap = { limit: 'bytes', max: this.maxBytes };
      else if (!e) skipped++;
      else if (
        e.type === 'response.created' &&
        request &&
        responseId !== null &&
        !tagged &&
        responseOf(e) !== null &&
        requestTag(e) === request.tag
      )
        // Our request's response, after an untagged one was taken for the reply: read it instead.
        return this.readReply(s, request, {
          responseId: responseOf(e)!,
          others: new Set([...others, responseId]),
          ignored: ignored + 1,
          // The dropped response's created and the events read since (`since` counts this frame too).
          stale: stale + since,
        });
      else if (e.type === 'response.created' && unrequested(s, e, read, request)) {
        ignored++;
        stale++;
        const id = responseOf(e);
        if (id !== null) others.add(id);
      } else if (otherResponse(s, e, responseId, others)) {
        stale++;
        const id = responseOf(e);
        if (e.type === 'response.created' && id !== null && !s.over.has(id)) others.add(id);
      } else
        switch (e.type) {
          case 'error':
            if (this.cancelError(s, e)) break;
            throw new TransportFault(serverError(e));
          case 'response.created':
            responseId = responseOf(e) ?? responseId;
            tagged = request !== undefined && requestTag(e) === request.tag;
            since = 0;
            break;
          case 'response.output_audio.delta':
          case 'response.audio.delta': {
            const delta = str(e.delta);
            if (!delta) break;
            let bytes: Uint8Array;
            try {
              bytes = fromBase64(delta);
            } catch {
              skipped++;
              break;
            }
            if (audioBytes + bytes.length > this.maxAudioBytes) {
              cap = { limit: 'audio_s', max: this.maxAudioBytes / 2 / REALTIME_RATE_HZ };
              bytes = bytes.subarray(0, this.maxAudioBytes - audioBytes);
            }
            if (bytes.length) {
              audio.push(bytes);
              audioBytes += bytes.length;
            }
            break;
          }
          case 'response.output_audio_transcript.delta':
          case 'response.audio_transcript.delta':
            transcript = keep(transcript, str(e.delta) ?? '');
            break;
          case 'response.output_audio_transcript.done':
          case 'response.audio_transcript.done':
            transcriptDone = str(e.transcript) ?? transcriptDone;
            break;
          case 'response.output_text.delta':
          case 'response.text.delta':
            text = keep(text, str(e.delta) ?? '');
            break;
          case 'response.output_text.done':
          case 'response.text.done':
            textDone = str(e.text) ?? textDone;
            break;
          case 'response.function_call_arguments.done':
            addCall(e.call_id, { name: e.name, arguments: e.arguments }, e.item_id);
            break;
          case 'response.output_item.added':
          case 'response.output_item.done': {
            const item = e.item as Record<string, unknown> | undefined;
            if (item?.type === 'message' && str(item.id)) reply.messageId = str(item.id);
            if (item?.type === 'function_call' && e.type === 'response.output_item.done')
              addCall(item.call_id, { name: item.name, arguments: item.arguments }, item.id);
            break;
          }
          case 'response.done': {
            const r = e.response as { status?: unknown; status_details?: unknown; output?: unknown } | undefined;
            if (r?.status === 'failed')
              throw new TransportFault(`response failed: ${JSON.stringify(r.status_details ?? null).slice(0, 300)}`);
            responseId = responseOf(e) ?? responseId;
            // Calls only listed in the final response (servers that send no per-call events).
            if (Array.isArray(r?.output))
              for (const item of r.output as Record<string, unknown>[])
                if (item?.type === 'function_call' && !calls.has(str(item.call_id) ?? ''))
                  addCall(item.call_id, { name: item.name, arguments: item.arguments }, item.id);
            // Calls past the limit listed here: the response is over, nothing to cancel.
            const over = cap as Omit<ReplyCap, 'ended'> | null;
            return finish(str(r?.status) ?? 'unknown', over ? { ...over, ended: 'done' } : null);
          }
          default:
            break;
        }
      if (cap) {
        // Unread frames passed the inbox's bound: the connection is closed, nothing to drain.
        if (s.inbox.overflow) {
          this.drop();
          return finish('closed', { ...(cap as Omit<ReplyCap, 'ended'>), ended: 'closed' });
        }
        const ended = await this.drain(s, responseId);
        return finish(ended.status, { ...(cap as Omit<ReplyCap, 'ended'>), ended: ended.ended });
      }
    }
  }

  /** An `error` event answering one of our `response.cancel`s (the response had already ended): no fault. */
  private cancelError(s: Session, e: ServerEvent): boolean {
    const err = e.error as { code?: unknown; event_id?: unknown } | undefined;
    return err?.code === 'response_cancel_not_active' || s.cancels.has(str(err?.event_id) ?? '');
  }

  /**
   * After a response limit: send `response.cancel` (once) and read the response's remaining
   * events, dropping them, until its `response.done`, within {@link RESPONSE_LIMITS}' events and
   * bytes again (a server that honours the cancel may have a whole response in flight by then,
   * whatever limits this agent keeps). The session is kept when `response.done` comes; it is
   * closed when the server goes on past those limits, closes, or sends an `error` (the next turn
   * opens a fresh one).
   * @returns the response's final status and how it ended ({@link ReplyCap}`.ended`).
   */
  private async drain(s: Session, responseId: string | null): Promise<{ status: string; ended: ReplyCap['ended'] }> {
    const eventId = `switchboard_cancel_${s.cancels.size + 1}`;
    s.cancels.add(eventId);
    try {
      this.send(s, { type: 'response.cancel', event_id: eventId, ...(responseId ? { response_id: responseId } : {}) });
    } catch {
      // The connection has ended: the next frame says so.
    }
    const end = s.inbox.limit(this.options.timers, CANCEL_WAIT_MS);
    try {
      return await this.dropRest(s, responseId);
    } finally {
      end();
    }
  }

  /** {@link drain} after the cancel, within {@link CANCEL_WAIT_MS}. */
  private async dropRest(s: Session, responseId: string | null): Promise<{ status: string; ended: ReplyCap['ended'] }> {
    let events = 0;
    let chars = 0;
    for (;;) {
      let frame: Frame | null;
      try {
        frame = await s.inbox.next();
      } catch (e) {
        if (!(e instanceof TransportFault)) throw e;
        this.drop();
        return { status: 'closed', ended: 'closed' };
      }
      if (frame === null) {
        this.drop();
        return { status: `no response.done within ${CANCEL_WAIT_MS} ms of the cancel`, ended: 'ignored' };
      }
      const e = frame.event;
      if (e?.type === 'response.done' && !otherResponse(s, e, responseId, new Set())) {
        const id = responseOf(e);
        if (id !== null) markOver(s, id);
        const status = str((e.response as { status?: unknown } | undefined)?.status) ?? 'unknown';
        return { status, ended: 'done' };
      }
      if (e?.type === 'error' && !this.cancelError(s, e)) {
        this.drop();
        return { status: 'error', ended: 'error' };
      }
      if (++events > RESPONSE_LIMITS.events || (chars += frame.chars) > RESPONSE_LIMITS.bytes) {
        this.drop();
        return { status: 'cancel ignored', ended: 'ignored' };
      }
    }
  }
}

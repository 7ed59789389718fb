/**
 * The transport of a realtime (speech-to-speech) agent: one WebSocket-like connection per
 * session, text frames of JSON events. Platform adapters implement {@link RealtimeConnect} (the
 * `ws` package in Node, the browser's `WebSocket` in the page; `adapters/shared/realtime-socket.ts`).
 */

/** What the connection reports to the agent. */
export interface RealtimeHandlers {
  /** A text frame from the server. */
  message(data: string): void;
  /**
   * The connection ended: closed by the server, a network failure, a frame over the adapter's
   * size limit (`oversize` true: the server sent it, so the agent counts it against its reply's
   * limits, not as a transport fault), or no frame for the adapter's idle timeout. Called once.
   */
  close(reason: string, oversize?: boolean): void;
}

/** An open connection. */
export interface RealtimeSocket {
  /** Send one text frame. */
  send(data: string): void;
  /** Close the connection (no further handler calls). */
  close(): void;
  /**
   * The agent awaits a reply (`true`, after `response.create`) or not (`false`, at
   * `response.done`): the adapter's idle timeout runs only while awaiting, so a session may sit
   * quiet between turns.
   */
  waiting(on: boolean): void;
}

/**
 * Open a connection to `url` (ws: or wss:). Resolves once open.
 * @throws anything when the server cannot be reached or refuses the upgrade (a transport fault).
 */
export type RealtimeConnect = (url: string, handlers: RealtimeHandlers) => Promise<RealtimeSocket>;

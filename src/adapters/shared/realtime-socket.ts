/**
 * {@link RealtimeConnect} over a WHATWG-style WebSocket: the browser's `WebSocket` in the page,
 * the `ws` package's in Node (`adapters/node/realtime-ws.ts`). One implementation for both; the
 * platform only supplies the constructor.
 */
import type { RealtimeConnect, RealtimeHandlers, RealtimeSocket } from '../../core/ports/realtime.ts';

/** The part of a WebSocket the adapter uses (browser `WebSocket`, `ws`'s `WebSocket`). */
export interface WebSocketLike {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(
    type: 'open' | 'close' | 'error',
    listener: (event: { reason?: string; code?: number; message?: string; error?: { code?: unknown } }) => void,
  ): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
}

/** Settings of {@link webSocketConnect}. */
export interface WebSocketConnectOptions {
  /**
   * The server must accept the connection within this time, ms, and, once a reply is awaited,
   * send its first frame within it too (a Realtime server sends `session.created` as soon as the
   * connection opens, so a server silent that long after opening is treated like one that never
   * opened). Default 15,000.
   */
  openTimeoutMs?: number;
  /**
   * While a reply is awaited ({@link RealtimeSocket.waiting}), the server must send a frame at
   * least this often, ms, once it has sent its first; else the connection is closed as timed
   * out. Default 60,000.
   */
  idleTimeoutMs?: number;
  /**
   * Whether an `error` event means a frame over the platform socket's size limit (Node's `ws`
   * with `maxPayload`; the browser's WebSocket has none). Such a close is reported with
   * `oversize` true. Default: never.
   */
  isOversizeError?: (event: { message?: string; error?: { code?: unknown } }) => boolean;
}

/**
 * Connections made by `create` (e.g. `(url) => new WebSocket(url)`). Text frames go to the
 * handler; a binary frame is handed on as text that is not JSON (the agent skips it as
 * malformed). The close reason names the close code, a network error or the timeout.
 */
export function webSocketConnect(
  create: (url: string) => WebSocketLike,
  options: WebSocketConnectOptions = {},
): RealtimeConnect {
  const openMs = options.openTimeoutMs ?? 15_000;
  const idleMs = options.idleTimeoutMs ?? 60_000;
  return (url: string, handlers: RealtimeHandlers) =>
    new Promise<RealtimeSocket>((resolve, reject) => {
      let ws: WebSocketLike;
      try {
        ws = create(url);
      } catch (e) {
        reject(e);
        return;
      }
      let open = false;
      let ended = false;
      let waiting = false;
      /** Whether the server has sent a frame on this connection. */
      let heard = false;
      let idle: ReturnType<typeof setTimeout> | undefined;
      const end = (reason: string, oversize = false) => {
        if (ended) return;
        ended = true;
        clearTimeout(idle);
        clearTimeout(opening);
        if (open) handlers.close(reason, oversize);
        else reject(new Error(reason));
      };
      const arm = () => {
        clearTimeout(idle);
        if (!waiting || ended) return;
        const ms = heard ? idleMs : Math.min(idleMs, openMs);
        idle = setTimeout(() => {
          end(
            heard
              ? `no event for ${idleMs} ms`
              : `no event in the ${ms} ms after the connection opened (not even session.created)`,
          );
          ws.close();
        }, ms);
      };
      const opening = setTimeout(() => {
        end(`not open after ${openMs} ms`);
        ws.close();
      }, openMs);
      ws.addEventListener('open', () => {
        clearTimeout(opening);
        open = true;
        resolve({
          send: (data) => ws.send(data),
          close: () => {
            ended = true;
            clearTimeout(idle);
            ws.close();
          },
          waiting: (on) => {
            waiting = on;
            arm();
          },
        });
      });
      ws.addEventListener('message', (event) => {
        if (ended) return;
        heard = true;
        arm();
        handlers.message(typeof event.data === 'string' ? event.data : '\u0000binary frame');
      });
      ws.addEventListener('error', (event) =>
        end(`socket error${event.message ? `: ${event.message}` : ''}`, options.isOversizeError?.(event) === true),
      );
      ws.addEventListener('close', (event) =>
        end(`closed by the server (code ${event.code ?? 'none'}${event.reason ? `, ${event.reason}` : ''})`),
      );
    });
}

/**
 * Realtime agents in Node: {@link webSocketConnect} over the `ws` package, with the API key as
 * a bearer token (`Authorization` header; the key is never written anywhere).
 */
import { createRequire } from 'node:module';
import type { WebSocket as WsSocket } from 'ws';
import { RESPONSE_LIMITS } from '../../core/participants/realtime-agent.ts';
import type { RealtimeConnect } from '../../core/ports/realtime.ts';
import { webSocketConnect, type WebSocketConnectOptions, type WebSocketLike } from '../shared/realtime-socket.ts';

/**
 * Largest frame accepted: a whole response's limit of frame bytes ({@link RESPONSE_LIMITS}`.bytes`,
 * 16 MiB). A larger frame is over that limit by itself; `ws` refuses it without buffering it
 * (`WS_ERR_UNSUPPORTED_MESSAGE_LENGTH`), and the agent counts it as the response's `bytes` limit.
 */
export const MAX_FRAME_BYTES = RESPONSE_LIMITS.bytes;

/**
 * The `ws` package's WebSocket, loaded at the first connection (`ws` is CommonJS, so `require`
 * loads it synchronously): importing it cost ~40 ms of every CLI start (issue 15 item 6), and
 * only a realtime agent uses it.
 */
let wsClass: typeof WsSocket | undefined;
function webSocketClass(): typeof WsSocket {
  wsClass ??= (createRequire(import.meta.url)('ws') as { WebSocket: typeof WsSocket }).WebSocket;
  return wsClass;
}

/** A {@link RealtimeConnect} for Node; `apiKey` (optional) goes in `Authorization: Bearer`. */
export function nodeRealtimeConnect(options: WebSocketConnectOptions & { apiKey?: string } = {}): RealtimeConnect {
  const headers: Record<string, string> = options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {};
  return webSocketConnect(
    (url) => new (webSocketClass())(url, { headers, maxPayload: MAX_FRAME_BYTES }) as unknown as WebSocketLike,
    { ...options, isOversizeError: (e) => e.error?.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' },
  );
}

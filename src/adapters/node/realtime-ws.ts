/**
 * Realtime agents in Node: {@link webSocketConnect} over the `ws` package, with the API key as
 * a bearer token (`Authorization` header; the key is never written anywhere).
 */
import { WebSocket } from 'ws';
import { RESPONSE_LIMITS } from '../../core/participants/realtime-agent.ts';
import type { RealtimeConnect } from '../../core/ports/realtime.ts';
import { webSocketConnect, type WebSocketConnectOptions, type WebSocketLike } from '../shared/realtime-socket.ts';

/**
 * Largest frame accepted: a whole response's limit of frame bytes ({@link RESPONSE_LIMITS}`.bytes`,
 * 16 MiB). A larger frame is over that limit by itself; `ws` refuses it without buffering it
 * (`WS_ERR_UNSUPPORTED_MESSAGE_LENGTH`), and the agent counts it as the response's `bytes` limit.
 */
export const MAX_FRAME_BYTES = RESPONSE_LIMITS.bytes;

/** A {@link RealtimeConnect} for Node; `apiKey` (optional) goes in `Authorization: Bearer`. */
export function nodeRealtimeConnect(options: WebSocketConnectOptions & { apiKey?: string } = {}): RealtimeConnect {
  const headers: Record<string, string> = options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {};
  return webSocketConnect(
    (url) => new WebSocket(url, { headers, maxPayload: MAX_FRAME_BYTES }) as unknown as WebSocketLike,
    { ...options, isOversizeError: (e) => e.error?.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' },
  );
}

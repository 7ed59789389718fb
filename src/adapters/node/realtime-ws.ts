/**
 * Realtime agents in Node: {@link webSocketConnect} over the `ws` package, with the API key as
 * a bearer token (`Authorization` header; the key is never written anywhere).
 */
import { WebSocket } from 'ws';
import type { RealtimeConnect } from '../../core/ports/realtime.ts';
import { webSocketConnect, type WebSocketConnectOptions, type WebSocketLike } from '../shared/realtime-socket.ts';

/** Largest frame accepted: 64 MiB (a reply's audio arrives in many small deltas; one frame this large is a fault). */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** A {@link RealtimeConnect} for Node; `apiKey` (optional) goes in `Authorization: Bearer`. */
export function nodeRealtimeConnect(options: WebSocketConnectOptions & { apiKey?: string } = {}): RealtimeConnect {
  const headers: Record<string, string> = options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {};
  return webSocketConnect(
    (url) => new WebSocket(url, { headers, maxPayload: MAX_FRAME_BYTES }) as unknown as WebSocketLike,
    options,
  );
}

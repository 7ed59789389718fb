/**
 * JSON over `node:http` for Switchboard's servers (`serve` in both protocols): read a bounded
 * request body, answer a JSON document, listen and stop.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request body that could not be taken: over the limit (413) or not JSON (400). */
export class BodyError extends Error {
  constructor(
    readonly status: 413 | 400,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The request body parsed as JSON (`{}` when empty). A body over `maxBytes` is drained (so the
 * answer reaches the client) but not kept.
 * @throws BodyError 413 over `maxBytes` bytes, 400 when the text is not JSON.
 */
export function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= maxBytes) chunks.push(c);
    });
    req.on('end', () => {
      if (size > maxBytes) return reject(new BodyError(413, `request body over ${maxBytes} bytes`));
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolveBody(text ? JSON.parse(text) : {});
      } catch (e) {
        reject(new BodyError(400, `body is not valid JSON (${(e as Error).message})`));
      }
    });
    req.on('error', reject);
  });
}

/** Answer `doc` as JSON with `status` and extra headers. */
export function sendJson(
  res: ServerResponse,
  status: number,
  doc: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(doc);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * Listen on `host:port` and give the base URL (`http://127.0.0.1:8700`; IPv6 in brackets).
 * @throws the listen error (e.g. `EADDRINUSE`).
 */
export async function listen(server: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      ok();
    });
  });
  const addr = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`;
}

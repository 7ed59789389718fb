"""A minimal OpenEnv client in the Python standard library (no pip installs).

Written from OpenEnv's published protocol only; it knows nothing of Switchboard and works with
any OpenEnv environment server:

* HTTP: ``GET /health``, ``GET /metadata``, ``GET /schema``, ``POST /reset``, ``POST /step``,
  ``GET /state``, ``POST /mcp`` (JSON-RPC 2.0).
* WebSocket ``/ws``: one environment session per connection; messages
  ``{"type": "reset" | "step" | "state" | "close" | "mcp", "data": ...}``, answers
  ``{"type": "observation" | "state" | "mcp" | "error", "data": ...}``.

A step answer is ``{"observation": {...}, "reward": float | None, "done": bool}``; errors arrive
as ``{"type": "error", "data": {"message", "code"}}`` on the WebSocket and as ``{"detail": ...}``
with a 4xx status over HTTP; both raise :class:`OpenEnvError` here.

Usage::

    with WSEnvClient("http://127.0.0.1:8700") as env:
        result = env.reset(seed=0)
        while not result.done:
            result = env.step({"content": "..."})   # the environment's action schema
"""

import base64
import hashlib
import json
import os
import socket
import struct
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Dict, Optional
from urllib.parse import urlparse

_WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455, section 1.3


class OpenEnvError(RuntimeError):
    """An error answer: ``status`` (HTTP) or ``code`` (WebSocket) and the server's details."""

    def __init__(self, message: str, status: Optional[int] = None, code: Optional[str] = None, data: Any = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.data = data


@dataclass
class StepResult:
    """What ``reset`` and ``step`` return, as OpenEnv's client does."""

    observation: Dict[str, Any]
    reward: Optional[float]
    done: bool


def _result(payload: Dict[str, Any]) -> StepResult:
    return StepResult(payload.get("observation", {}), payload.get("reward"), bool(payload.get("done", False)))


class HTTPEnvClient:
    """The HTTP routes. ``token`` is sent as ``Authorization: Bearer`` when given."""

    def __init__(self, base_url: str, token: Optional[str] = None, timeout_s: float = 60.0):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s

    def request(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
        req.add_header("content-type", "application/json")
        if self.token:
            req.add_header("authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as res:
                return json.loads(res.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            text = e.read().decode("utf-8")
            try:
                detail = json.loads(text).get("detail", text)
            except ValueError:
                detail = text
            raise OpenEnvError(f"HTTP {e.code}: {detail}", status=e.code, data=detail) from None

    def health(self) -> Dict[str, Any]:
        return self.request("GET", "/health")

    def metadata(self) -> Dict[str, Any]:
        return self.request("GET", "/metadata")

    def schema(self) -> Dict[str, Any]:
        return self.request("GET", "/schema")

    def reset(self, **kwargs: Any) -> StepResult:
        return _result(self.request("POST", "/reset", kwargs))

    def step(self, action: Dict[str, Any], **kwargs: Any) -> StepResult:
        return _result(self.request("POST", "/step", {"action": action, **kwargs}))

    def mcp(self, method: str, params: Optional[Dict[str, Any]] = None, rpc_id: int = 1) -> Dict[str, Any]:
        return self.request("POST", "/mcp", {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params or {}})


class _WebSocket:
    """A client WebSocket (RFC 6455) over a plain TCP socket: text frames, masking, fragments."""

    def __init__(self, url: str, headers: Dict[str, str], timeout_s: float):
        u = urlparse(url)
        if u.scheme not in ("ws", "http"):
            raise ValueError(f"only ws:// and http:// are supported here, got {url}")
        host, port = u.hostname or "127.0.0.1", u.port or 80
        self.sock = socket.create_connection((host, port), timeout=timeout_s)
        key = base64.b64encode(os.urandom(16)).decode("ascii")
        lines = [
            f"GET {u.path or '/'} HTTP/1.1",
            f"Host: {host}:{port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
        ] + [f"{k}: {v}" for k, v in headers.items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("ascii"))
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise OpenEnvError("connection closed during the WebSocket handshake")
            head += chunk
        head, self.buf = head.split(b"\r\n\r\n", 1)
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        if " 101 " not in status_line + " ":
            raise OpenEnvError(f"WebSocket upgrade refused: {status_line}", status=int(status_line.split()[1]))
        got = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in header_lines if ":" in h)}
        want = base64.b64encode(hashlib.sha1((key + _WS_GUID).encode("ascii")).digest()).decode("ascii")
        if got.get("sec-websocket-accept") != want:
            raise OpenEnvError("bad Sec-WebSocket-Accept in the handshake")

    def _read(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OpenEnvError("connection closed by the server")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send_text(self, text: str) -> None:
        self._send(0x1, text.encode("utf-8"))

    def _send(self, opcode: int, payload: bytes) -> None:
        n = len(payload)
        if n < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 1 << 16:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        mask = os.urandom(4)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + body)

    def recv_text(self) -> str:
        parts = []
        while True:
            b0, b1 = self._read(2)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                (n,) = struct.unpack("!H", self._read(2))
            elif n == 127:
                (n,) = struct.unpack("!Q", self._read(8))
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                raise OpenEnvError("connection closed by the server")
            if opcode == 0x9:
                self._send(0xA, payload)
                continue
            if opcode in (0x1, 0x0):
                parts.append(payload)
                if b0 & 0x80:
                    return b"".join(parts).decode("utf-8")

    def close(self) -> None:
        try:
            self._send(0x8, struct.pack("!H", 1000))
        except OSError:
            pass
        self.sock.close()


class WSEnvClient:
    """One OpenEnv session over ``/ws`` (as OpenEnv's ``EnvClient``)."""

    def __init__(self, base_url: str, token: Optional[str] = None, timeout_s: float = 60.0):
        self.url = base_url.rstrip("/").replace("https://", "wss://").replace("http://", "ws://") + "/ws"
        self.headers = {"Authorization": "Bearer " + token} if token else {}
        self.timeout_s = timeout_s
        self.ws: Optional[_WebSocket] = None

    def __enter__(self) -> "WSEnvClient":
        return self.connect()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def connect(self) -> "WSEnvClient":
        if self.ws is None:
            self.ws = _WebSocket(self.url, self.headers, self.timeout_s)
        return self

    def _call(self, message: Dict[str, Any]) -> Dict[str, Any]:
        self.connect()
        assert self.ws is not None
        self.ws.send_text(json.dumps(message))
        answer = json.loads(self.ws.recv_text())
        if answer.get("type") == "error":
            data = answer.get("data", {})
            raise OpenEnvError(
                f"Server error: {data.get('message', 'Unknown error')} (code: {data.get('code', 'UNKNOWN')})",
                code=data.get("code"),
                data=data,
            )
        return answer

    def reset(self, **kwargs: Any) -> StepResult:
        return _result(self._call({"type": "reset", "data": kwargs}).get("data", {}))

    def step(self, action: Dict[str, Any]) -> StepResult:
        return _result(self._call({"type": "step", "data": action}).get("data", {}))

    def state(self) -> Dict[str, Any]:
        return self._call({"type": "state"}).get("data", {})

    def mcp(self, method: str, params: Optional[Dict[str, Any]] = None, rpc_id: int = 1) -> Dict[str, Any]:
        rpc = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params or {}}
        return self._call({"type": "mcp", "data": rpc}).get("data", {})

    def close(self) -> None:
        if self.ws is not None:
            try:
                self.ws.send_text(json.dumps({"type": "close"}))
            except OSError:
                pass
            self.ws.close()
            self.ws = None

"""A tiny hostile HTTP server on 127.0.0.1 for the security tests.

``HostileServer(handler)`` runs ``handler(request) -> None`` for every POST or GET; the
handler writes raw bytes with ``request.wfile``. Every request's path and headers are kept
in ``server.seen``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class HostileServer:
    """Context manager: a threaded server whose every POST runs ``behaviour``."""

    def __init__(self, behaviour: Callable[[BaseHTTPRequestHandler], None]) -> None:
        seen: list[dict[str, Any]] = []
        self.seen = seen

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                seen.append({"path": self.path, "headers": dict(self.headers), "body": body})
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    behaviour(self)

            def do_GET(self) -> None:  # urllib turns a POST into a GET on 302
                seen.append({"path": self.path, "headers": dict(self.headers), "body": b""})
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    behaviour(self)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> HostileServer:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def reply_json(handler: BaseHTTPRequestHandler, body: bytes, status: int = 200) -> None:
    """A complete JSON reply."""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


OPENAI_OK = (b'{"choices": [{"message": {"role": "assistant", "content": "{\\"score\\": 5, '
             b'\\"rationale\\": \\"ok\\"}"}, "finish_reason": "stop"}], '
             b'"usage": {"prompt_tokens": 1, "completion_tokens": 1}}')

"""One bounded HTTP POST (stdlib ``http.client``), shared by the http/openai/anthropic
runners and the LLM judges.

What it promises (docs/security.md):

- **No redirects.** A 3xx reply is never followed (urllib re-sends every header, the API
  key included, to whatever host ``Location`` names); it is an error naming the Location.
- **Wall-clock deadline.** The whole call (connect, send, headers, body) ends within
  ``deadline_s``: a socket timeout alone bounds each read, so a server trickling a byte at a
  time could hold a call for hours. A timer shuts the socket down at the deadline.
- **Size cap.** At most ``max_bytes`` of body are read (a larger reply is an error, not a
  1 GB string in memory).
- **Header hygiene.** One trailing newline (``\n`` or ``\r\n``) of a header value is
  dropped: a key read from a secret file (``${OPENAI_API_KEY}`` set from ``key.txt``)
  keeps its newline, and refusing it made a valid key look like an auth failure (exit 3).
  A name or value still holding CR, LF or NUL is refused before anything is sent, and the
  error never quotes the value.

Proxies from ``HTTP(S)_PROXY`` / ``NO_PROXY`` are honoured as urllib does.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from email.message import Message
from typing import Literal

#: default cap on a reply body (bytes); ``execution.max_response_bytes`` overrides it
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
_CHUNK = 64 * 1024
_BAD_HEADER_CHARS = ("\r", "\n", "\0")

Problem = Literal["network", "deadline", "redirect", "too_large", "header", "url"]


class TransportError(Exception):
    """The call produced no usable HTTP reply; ``kind`` says why."""

    def __init__(self, kind: Problem, message: str) -> None:
        super().__init__(message)
        self.kind: Problem = kind

    @property
    def transient(self) -> bool:
        """Worth retrying (network trouble, a deadline overrun)."""
        return self.kind in ("network", "deadline")


@dataclass(frozen=True)
class RawReply:
    """A complete HTTP reply (any status but 3xx)."""

    status: int
    headers: Message
    body: bytes


def clean_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` with one trailing ``\n`` / ``\r\n`` dropped from each value."""
    out = {}
    for name, value in headers.items():
        text = str(value)
        out[name] = text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text
    return out


def check_headers(headers: Mapping[str, str]) -> None:
    """Refuse a header whose name or value holds CR/LF/NUL, naming the header only."""
    for name, value in headers.items():
        if any(c in str(name) for c in _BAD_HEADER_CHARS):
            raise TransportError("header", "a header name contains a line break or NUL")
        if any(c in str(value) for c in _BAD_HEADER_CHARS):
            raise TransportError(
                "header", f"header {name} contains a line break or NUL (an API key read "
                "with a trailing newline?); strip the value; nothing was sent")


def _connection(parts: urllib.parse.SplitResult,
                timeout: float) -> tuple[http.client.HTTPConnection, str]:
    """(connection, request target), through a proxy when the environment names one."""
    host = parts.hostname or ""
    port = parts.port
    target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        p = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        conn = http.client.HTTPConnection(p.hostname or "", p.port or 80, timeout=timeout)
        if parts.scheme == "https":
            conn = http.client.HTTPSConnection(p.hostname or "", p.port or 80, timeout=timeout,
                                               context=ssl.create_default_context())
            conn.set_tunnel(host, port or 443)
            return conn, target
        return conn, urllib.parse.urlunsplit(parts._replace(fragment=""))
    if parts.scheme == "https":
        return http.client.HTTPSConnection(host, port or 443, timeout=timeout,
                                           context=ssl.create_default_context()), target
    return http.client.HTTPConnection(host, port or 80, timeout=timeout), target


def _shutdown(conn: http.client.HTTPConnection, fired: threading.Event) -> None:
    fired.set()
    sock = conn.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in recv


def post(url: str, body: bytes, headers: Mapping[str, str], *, deadline_s: float,
         max_bytes: int = MAX_RESPONSE_BYTES) -> RawReply:
    """POST ``body``; the reply, or TransportError. Never follows a redirect."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TransportError("url", f"not an http(s) URL: {parts.scheme}://{parts.hostname}")
    headers = clean_headers(headers)
    check_headers(headers)
    start = time.monotonic()
    conn, target = _connection(parts, deadline_s)
    fired = threading.Event()
    timer = threading.Timer(deadline_s, _shutdown, args=(conn, fired))
    timer.daemon = True
    timer.start()
    try:
        conn.request("POST", target, body=body, headers=dict(headers))
        resp = conn.getresponse()
        if 300 <= resp.status < 400:
            where = (resp.getheader("Location") or "(no Location)")[:300]
            raise TransportError("redirect", f"HTTP {resp.status} redirect to {where!r} "
                                 "refused (requests carrying credentials are never re-sent); "
                                 "point the URL at the final address")
        length = resp.getheader("Content-Length")
        if length and length.isdigit() and int(length) > max_bytes:
            raise TransportError("too_large", f"reply of {int(length):,} bytes exceeds the "
                                 f"{max_bytes:,}-byte cap (execution.max_response_bytes)")
        chunks: list[bytes] = []
        total = 0
        while chunk := resp.read1(_CHUNK):
            total += len(chunk)
            if total > max_bytes:
                raise TransportError("too_large", f"reply exceeds the {max_bytes:,}-byte cap "
                                     "(execution.max_response_bytes)")
            chunks.append(chunk)
            if time.monotonic() - start > deadline_s:
                break
        if fired.is_set() or time.monotonic() - start > deadline_s:
            raise TransportError("deadline", f"no complete reply within {deadline_s:g} s")
        if length and length.isdigit() and total < int(length):  # the peer hung up early
            raise TransportError("network", f"network error: truncated reply ({total:,} of "
                                 f"{int(length):,} bytes)")
        return RawReply(resp.status, resp.headers, b"".join(chunks))
    except TransportError:
        raise
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if fired.is_set():
            raise TransportError("deadline",
                                 f"no complete reply within {deadline_s:g} s") from None
        raise TransportError("network", f"network error: {exc}") from None
    finally:
        timer.cancel()
        conn.close()

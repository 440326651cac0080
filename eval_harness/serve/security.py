"""The dashboard's guard (pure ASGI middleware), in front of every route.

- **Host**: a request whose ``Host`` header is not the bound address (or ``localhost`` /
  ``127.0.0.1`` / ``[::1]`` with the bound port) is refused with 421: a DNS-rebinding page
  that points its own name at 127.0.0.1 cannot read the dashboard. Bound to a wildcard
  address (``0.0.0.0``) any Host is accepted, which ``serve`` warns about.
- **Paths**: a request path with a ``..`` or ``.`` segment, a backslash, a NUL or an
  encoded slash (after percent-decoding) is refused with 400 before any route sees it;
  routes look names up in the catalog and never join them onto a path.
- **Writes** (any method but GET/HEAD): the ``Origin`` header must be this server
  (or, when absent, ``Sec-Fetch-Site: same-origin``), the body JSON, and the
  ``X-CSRF-Token`` header must equal HMAC-SHA256(server secret, session id), the session
  id being a random ``SameSite=Strict`` cookie set on the first page. A cross-site page
  can neither read the token nor send the header without a CORS preflight we never allow.
- **Headers** on every response: a strict Content-Security-Policy (scripts, styles,
  images, fetches from this origin only; no inline script or style), ``nosniff``,
  ``no-referrer``, framing denied.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import unquote

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
COOKIE = "eh_session"
TOKEN_HEADER = "x-csrf-token"
SAFE_METHODS = ("GET", "HEAD")
WILDCARDS = ("0.0.0.0", "::", "")
_SID = re.compile(r"^[A-Za-z0-9_-]{20,64}$")


def allowed_hosts(host: str, port: int) -> set[str] | None:
    """Host header values accepted for a server bound to ``host:port`` (None: any)."""
    if host in WILDCARDS:
        return None
    names = {host, "localhost", "127.0.0.1", "[::1]"} if host in (
        "127.0.0.1", "localhost", "::1") else {host}
    return {f"{n}:{port}".lower() for n in names} | ({n.lower() for n in names}
                                                     if port == 80 else set())


def bad_path(raw: str) -> bool:
    """True when a request path could name something outside the route's intent."""
    path = unquote(raw)
    if "\\" in path or "\x00" in path or "%2f" in raw.lower() or "%5c" in raw.lower():
        return True
    return any(seg in (".", "..") for seg in path.split("/"))


def session_token(secret: bytes, sid: str) -> str:
    """The write token of session ``sid``."""
    return hmac.new(secret, sid.encode(), hashlib.sha256).hexdigest()


def _cookie(headers: dict[str, str]) -> str | None:
    for part in headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE and _SID.match(value):
            return value
    return None


class Guard:
    """See the module docstring."""

    def __init__(self, app: ASGIApp, *, hosts: set[str] | None, secret: bytes) -> None:
        self.app, self.hosts, self.secret = app, hosts, secret
        self.dash: Any = None  #: the application's state (serve.app.Dashboard), for callers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        host = headers.get("host", "").lower()
        if self.hosts is not None and host not in self.hosts:
            await _refuse(send, 421, "refused: this dashboard answers only to its own address "
                                     "(Host header not accepted)")
            return
        raw = scope.get("raw_path", b"").decode("latin-1") or scope.get("path", "")
        if bad_path(raw.split("?", 1)[0]):
            await _refuse(send, 400, "refused: path traversal")
            return
        sid = _cookie(headers)
        new_sid = sid is None
        sid = sid or secrets.token_urlsafe(24)
        token = session_token(self.secret, sid)
        scope.setdefault("state", {})["csrf_token"] = token
        if scope["method"] not in SAFE_METHODS:
            problem = self._write_problem(headers, host, token, new_sid)
            if problem:
                await _refuse(send, 403, f"refused: {problem}")
                return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                # a route may set a narrower policy of its own (the SVG charts' styles)
                extra = [] if b"content-security-policy" in have else [
                    (b"content-security-policy", CSP.encode())]
                extra += [(b"x-content-type-options", b"nosniff"),
                         (b"referrer-policy", b"no-referrer"),
                         (b"x-frame-options", b"DENY"),
                         (b"cross-origin-resource-policy", b"same-origin")]
                if new_sid:
                    extra.append((b"set-cookie", f"{COOKIE}={sid}; Path=/; HttpOnly; "
                                                 "SameSite=Strict".encode()))
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _write_problem(self, headers: dict[str, str], host: str, token: str,
                       new_sid: bool) -> str | None:
        origin = headers.get("origin")
        if origin is not None:
            if origin.lower() != f"http://{host}":
                return "cross-origin write"
        elif headers.get("sec-fetch-site") != "same-origin":
            return "write without an Origin header"
        if not headers.get("content-type", "").startswith("application/json"):
            return "writes take application/json"
        if new_sid or not hmac.compare_digest(headers.get(TOKEN_HEADER, ""), token):
            return "missing or wrong session token (reload the page)"
        return None


async def _refuse(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"content-security-policy", CSP.encode()),
        (b"x-content-type-options", b"nosniff")]})
    await send({"type": "http.response.body", "body": body})

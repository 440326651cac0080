"""Drive headless Chromium over the DevTools protocol on a pipe (stdlib only).

Used to screenshot a report (docs/make_screenshot.py) and by the HTML tests to check that
a report renders without console errors, network requests or script execution.
Chromium reads protocol messages on fd 3 and writes them on fd 4 (``--remote-debugging-pipe``),
each a JSON object terminated by a NUL byte.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval_harness.errors import UsageError

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio",
         "--no-default-browser-check", "--remote-debugging-pipe"]
LOCAL_SCHEMES = ("file:", "data:", "about:")


def find_chromium() -> str | None:
    """Path of a Chromium/Chrome binary (``CHROMIUM`` env var first), or None."""
    for cand in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                 shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if cand and Path(cand).is_file():
            return cand
    return None


def _high_fd(fd: int) -> int:
    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return new


@dataclass
class PageLog:
    """What happened while a page was loaded."""

    console: list[str] = field(default_factory=list)  # console.* calls and error log entries
    exceptions: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # every request URL
    dialogs: list[str] = field(default_factory=list)  # alert/confirm/prompt messages

    @property
    def network(self) -> list[str]:
        """Requests that were not local (file:, data:, about:)."""
        return [u for u in self.requests if not u.startswith(LOCAL_SCHEMES)]


class Chromium:
    """One headless browser with one page; use as a context manager."""

    def __init__(self, binary: str | None = None, timeout: float = 30.0) -> None:
        binary = binary or find_chromium()
        if not binary:
            raise UsageError("chromium not found", hint="apt-get install chromium, or set CHROMIUM")
        self.timeout = timeout
        self._tmp = tempfile.TemporaryDirectory(prefix="eh-chromium-")
        cmd_r, self._cmd_w = os.pipe()
        self._out_r, out_w = os.pipe()
        # Move the child's ends above 9 so the redirections below never clobber them.
        cmd_r, out_w = (_high_fd(fd) for fd in (cmd_r, out_w))
        # bash (dash cannot redirect fds above 9) moves our pipe ends to fds 3 and 4 where Chromium expects them.
        script = f'exec "$0" "$@" 3<&{cmd_r} 4>&{out_w} {cmd_r}<&- {out_w}>&-'
        args = [*FLAGS, f"--user-data-dir={self._tmp.name}", "about:blank"]
        self.proc = subprocess.Popen([shutil.which("bash") or "/bin/bash", "-c", script, binary, *args],
                                     pass_fds=(cmd_r, out_w), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(cmd_r)
        os.close(out_w)
        self._buf = b""
        self._next = 0
        self._events: list[dict[str, Any]] = []
        self.session = ""
        self.log = PageLog()

    def __enter__(self) -> Chromium:
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=None)
        attached = self.call("Target.attachToTarget",
                             {"targetId": target["targetId"], "flatten": True}, session=None)
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the browser (TERM, then KILL) and remove its profile directory."""
        with contextlib.suppress(OSError):
            self._send({"id": -1, "method": "Browser.close"})
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for fd in (self._cmd_w, self._out_r):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._tmp.cleanup()

    def _send(self, msg: dict[str, Any]) -> None:
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            ready, _, _ = select.select([self._out_r], [], [], left)
            if ready:
                chunk = os.read(self._out_r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        msg: dict[str, Any] = json.loads(raw)
        if "method" in msg:
            self._record(msg)
        return msg

    def _record(self, msg: dict[str, Any]) -> None:
        self._events.append(msg)
        m, p = msg["method"], msg.get("params", {})
        if m == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            self.log.console.append(f"{p.get('type')}: {text}")
        elif m == "Runtime.exceptionThrown":
            self.log.exceptions.append(json.dumps(p.get("exceptionDetails", {}))[:500])
        elif m == "Log.entryAdded":
            entry = p.get("entry", {})
            if entry.get("level") in ("error", "warning"):
                self.log.console.append(f"{entry.get('level')}: {entry.get('text')}")
        elif m == "Network.requestWillBeSent":
            self.log.requests.append(p.get("request", {}).get("url", "")[:200])
        elif m == "Page.javascriptDialogOpening":
            self.log.dialogs.append(p.get("message", ""))
            self._send({"id": -2, "method": "Page.handleJavaScriptDialog",
                        "params": {"accept": True}, "sessionId": self.session})

    def call(self, method: str, params: dict[str, Any] | None = None,
             session: str | bool | None = True) -> dict[str, Any]:
        """Send a command (to the page session by default) and return its result."""
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session is True:
            msg["sessionId"] = self.session
        self._send(msg)
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result

    def wait_event(self, method: str) -> dict[str, Any]:
        """Block until the page emits ``method`` (or a previous one is pending)."""
        deadline = time.monotonic() + self.timeout
        for i, ev in enumerate(self._events):
            if ev["method"] == method:
                return self._events.pop(i)
        while True:
            msg = self._read(deadline)
            if msg.get("method") == method:
                self._events.remove(msg)
                return msg

    def open(self, path: Path, *, width: int = 1280, height: int = 900, dark: bool = False) -> None:
        """Load a local file and wait for its load event; ``log`` starts afresh."""
        self.log = PageLog()
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self.call("Emulation.setEmulatedMedia", {"features": [
            {"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})
        self.call("Page.navigate", {"url": Path(path).resolve().as_uri()})
        self.wait_event("Page.loadEventFired")

    def goto(self, url: str, *, width: int = 1280, height: int = 900) -> None:
        """Load ``url`` (e.g. a local dashboard page) and wait for its load event; ``log``
        starts afresh."""
        self.log = PageLog()
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1,
                   "mobile": width < 600})
        self.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """Evaluate a JavaScript expression in the page (DevTools bypasses the page's CSP)."""
        res = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return res.get("result", {}).get("value")

    def screenshot(self, out: Path, *, max_height: int = 4000, width: int = 1280) -> Path:
        """PNG of the page's top ``max_height`` CSS pixels, ``width`` pixels wide."""
        height = int(self.evaluate("document.documentElement.scrollHeight") or 900)
        clip = {"x": 0, "y": 0, "width": width, "height": min(height, max_height), "scale": 1}
        data = self.call("Page.captureScreenshot",
                         {"format": "png", "clip": clip, "captureBeyondViewport": True})["data"]
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(data))
        return out

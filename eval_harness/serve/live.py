"""Run the dashboard on a background thread (tests, the benchmark, the screenshot script).

``with background_server(roots) as url:`` binds 127.0.0.1 on a free port, serves until the
block ends, then stops the server and its analysis worker.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def background_server(roots: list[Path], *, baselines: list[Path] | None = None,
                      host: str = "127.0.0.1", wait_s: float = 1.5) -> Iterator[tuple[str, Any]]:
    """(base URL, the app) of a dashboard serving ``roots`` until the block ends."""
    import uvicorn

    from eval_harness.serve.app import create_app

    sock = socket.socket(socket.AF_INET)
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    app = create_app(roots, host=host, port=port, baselines=baselines, wait_s=wait_s)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False,
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    if not server.started:
        raise RuntimeError("the dashboard did not start")
    try:
        yield f"http://{host}:{port}", app
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        app.dash.cache.close()
        sock.close()

"""``orchestrate serve [RUNS ...] [--port N] [--host 127.0.0.1] [--baseline FILE]``: the
local dashboard (docs/dashboard.md). Needs the ``serve`` extra; without it, exit 2 with
the install hint."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from eval_harness.errors import UsageError

EXTRA_HINT = "pip install 'factorial-eval-harness[serve]' (starlette, uvicorn, jinja2)"


def build_parser() -> argparse.ArgumentParser:
    """Arguments of ``serve``."""
    p = argparse.ArgumentParser(prog="orchestrate serve",
                                description="Browse, compare and label runs in a local "
                                            "web dashboard.")
    p.add_argument("runs", nargs="*", metavar="RUNS",
                   help="run directories root(s) (default: $AGENT_EVAL_RUNS_DIR, else runs/)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1; anything else has no login)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free)")
    p.add_argument("--baseline", action="append", default=[], metavar="FILE",
                   help="a baseline file (--export) to compare against and plot; repeatable")
    p.add_argument("--aeh-errors", choices=["exclude", "zero"], default="exclude",
                   help="agent-eval-harness runs: a case where nothing could be scored is "
                        "excluded as errored (default) or scored 0, as --analyze-only "
                        "--aeh-errors does")
    p.add_argument("--debug", action="store_true", help="full tracebacks on errors")
    return p


def _check_extra() -> None:
    import importlib.util

    missing = [m for m in ("starlette", "uvicorn", "jinja2") if importlib.util.find_spec(m) is None]
    if missing:
        raise UsageError(f"`serve` needs {', '.join(missing)}, not installed", hint=EXTRA_HINT)


def main(argv: Sequence[str]) -> int:
    """Serve until interrupted (Ctrl-C: exit 130 through the CLI boundary)."""
    args = build_parser().parse_args(list(argv))
    roots = [Path(r) for r in (args.runs or [os.environ.get("AGENT_EVAL_RUNS_DIR", "runs")])]
    for root in roots:
        if not root.is_dir():
            raise UsageError(f"no such directory: {root}", hint="orchestrate serve runs/")
    for b in args.baseline:
        if not Path(b).is_file():
            raise UsageError(f"baseline file not found: {b}", hint="write one with --export FILE")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not a port", hint="use 1024-65535, or 0")
    _check_extra()
    import socket

    import uvicorn

    from eval_harness.serve.app import create_app
    from eval_harness.serve.security import WILDCARDS

    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: serving on {args.host}: anyone who can reach this address can read "
              "every run and add labels — there is no login"
              + ("; any Host header is accepted (no DNS-rebinding protection)"
                 if args.host in WILDCARDS else ""), file=sys.stderr)
    sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}",
                         hint="pick another --port") from None
    sock.listen(128)  # connections made after the line below queue until uvicorn accepts
    port = sock.getsockname()[1]
    from eval_harness.app.options import AnalysisOptions

    app = create_app(roots, host=args.host, port=port, baselines=[Path(b) for b in args.baseline],
                     options=AnalysisOptions(aeh_errors=args.aeh_errors))
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"serving {', '.join(map(str, roots))} on http://{shown}:{port}/ (Ctrl-C stops)",
          file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        app.dash.cache.close()
    return 0

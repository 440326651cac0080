"""CLI entry point and the one error boundary (error class -> exit code)."""

from __future__ import annotations

import errno
import json
import signal
import sys
import threading
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from eval_harness._util import redact
from eval_harness._util.safe_text import safe_text
from eval_harness.cli.prog import prog
from eval_harness.errors import (
    INTERNAL_ERROR_EXIT,
    INTERRUPTED_EXIT,
    TERMINATED_EXIT,
    EvalHarnessError,
    Terminated,
)

SUBCOMMANDS = ("schema", "report", "calibrate", "init", "runs", "show", "cache", "serve")
#: subcommands whose module has a ``main(argv) -> int``-style entry (imported only when used)
_ENTRIES = {"init": ("eval_harness.cli.init_cmd", "main"),
            "runs": ("eval_harness.cli.browse_cmd", "runs_main"),
            "show": ("eval_harness.cli.browse_cmd", "show_main"),
            "cache": ("eval_harness.cli.cache_cmd", "main"),
            "serve": ("eval_harness.cli.serve_cmd", "main")}


def _dispatch(argv: list[str]) -> int:
    import eval_harness.app  # noqa: F401  (registers the dialects and run formats, inside the error boundary)
    if argv and argv[0] in SUBCOMMANDS:
        name, rest = argv[0], argv[1:]
        if name in _ENTRIES:
            import importlib

            module, func = _ENTRIES[name]
            return int(getattr(importlib.import_module(module), func)(rest))
        if name == "schema":
            from eval_harness.cli.args import build_schema_parser
            from eval_harness.config.schema import eval_schema

            build_schema_parser().parse_args(rest)
            print(json.dumps(eval_schema(), indent=2))
            return 0
        if name == "report":
            from eval_harness.cli.report_cmd import main as report_main

            return report_main(rest)
        from eval_harness.cli.calibrate_cmd import main as calibrate_main

        return calibrate_main(rest)

    from eval_harness.cli.args import build_parser

    args = build_parser().parse_args(argv)
    if args.analyze_only:
        from eval_harness.cli.pipeline import analyze_only

        if args.rescore:  # never silently ignored: rescore, then analyse
            from eval_harness.cli.rescore_cmd import rescore_then_analyze

            return rescore_then_analyze(args)

        return analyze_only(args)
    if not args.config:
        from eval_harness.errors import UsageError

        raise UsageError("--config FILE is required", hint=f"{prog()} --config eval.yaml --dry-run")
    if args.print_config:
        from eval_harness.cli.dry_run import print_config

        return print_config(args)
    if args.lint:
        from eval_harness.cli.lint_cmd import lint

        return lint(args)
    if args.dry_run:
        from eval_harness.cli.dry_run import dry_run

        return dry_run(args)
    if args.rescore:
        from eval_harness.cli.rescore_cmd import rescore

        return rescore(args)
    from eval_harness.cli.run_cmd import run

    return run(args)


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated()


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While the CLI runs, SIGTERM raises :class:`Terminated` (a KeyboardInterrupt) in the
    main thread, so it takes Ctrl-C's path: stop launching, stop the agents in flight,
    keep finished work, mark the run directories aborted (exit 143)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code (0, 1, 2, 3, 4, 70, 130 or 143; see errors.py).

    Everything printed during the call passes through a stream that masks registered
    secrets (``eval_harness._util.redact``); credential-named environment variables are
    registered here, the config's own secrets when it is loaded."""
    redact.register(redact.env_secrets())
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = redact.RedactingStream(out), redact.RedactingStream(err)  # type: ignore[assignment]
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    finally:
        sys.stdout, sys.stderr = out, err


def _main(args: list[str]) -> int:
    debug = "--debug" in args
    try:
        with sigterm_as_interrupt():
            return _dispatch(args)
    except EvalHarnessError as exc:
        if debug:
            traceback.print_exc()
        print(f"error: {safe_text(exc.one_line(), newlines=False)}", file=sys.stderr)
        return exc.exit_code
    except Terminated:
        print("terminated (SIGTERM): agents in flight were stopped, finished work is kept; "
              "rerun the same command to resume", file=sys.stderr)
        return TERMINATED_EXIT
    except KeyboardInterrupt:
        print("interrupted: finished work is kept; rerun the same command to resume",
              file=sys.stderr)
        return INTERRUPTED_EXIT
    except BrokenPipeError:
        return 0
    except ModuleNotFoundError as exc:  # e.g. ./orchestrate.py run by a Python without the deps
        if debug:
            raise
        print(f"error: the module {exc.name or exc!s} is not installed in this Python "
              f"({sys.executable}) (hint: install the project first: python3 -m venv .venv && "
              ".venv/bin/pip install -e . — then run .venv/bin/orchestrate ...)", file=sys.stderr)
        return 2
    except OSError as exc:
        if exc.errno in _NOT_WRITABLE and exc.filename:  # the environment, not a bug
            if debug:
                traceback.print_exc()
            print(f"error: cannot write {safe_text(exc.filename, newlines=False)}: "
                  f"{exc.strerror} (hint: make it writable or choose another folder "
                  "(--runs-dir / --output / --cache-dir); finished work is kept)",
                  file=sys.stderr)
            return 2
        return _internal(exc, debug)
    except Exception as exc:  # a bug, not a user error: one line unless --debug
        return _internal(exc, debug)


#: errors of a folder or file we may not write: a usage error (exit 2), not a bug
_NOT_WRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)


def _internal(exc: BaseException, debug: bool) -> int:
    """A bug: one line (exit 70), the traceback with --debug."""
    if debug:  # printed here, not re-raised: the traceback passes through the mask
        traceback.print_exc()
        return INTERNAL_ERROR_EXIT
    print(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the "
          "traceback; finished work is kept)", file=sys.stderr)
    return INTERNAL_ERROR_EXIT


def entry() -> None:
    """Console-script wrapper."""
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    entry()

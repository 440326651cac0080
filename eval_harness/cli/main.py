"""CLI entry point and the one error boundary (error class -> exit code)."""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Sequence

from eval_harness.errors import EvalHarnessError

SUBCOMMANDS = ("schema", "report", "calibrate", "init", "runs", "show")
#: subcommands whose module has a ``main(argv) -> int``-style entry (imported only when used)
_ENTRIES = {"init": ("eval_harness.cli.init_cmd", "main"),
            "runs": ("eval_harness.cli.browse_cmd", "runs_main"),
            "show": ("eval_harness.cli.browse_cmd", "show_main")}


def _dispatch(argv: list[str]) -> int:
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

        return analyze_only(args)
    if not args.config:
        from eval_harness.errors import UsageError

        raise UsageError("--config FILE is required", hint="orchestrate.py --config eval.yaml --dry-run")
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code (0, 1, 2, 3 or 130)."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    try:
        return _dispatch(args)
    except EvalHarnessError as exc:
        if debug:
            traceback.print_exc()
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted: finished work is kept; rerun the same command to resume",
              file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except ModuleNotFoundError as exc:  # e.g. ./orchestrate.py run by a Python without the deps
        if debug:
            raise
        print(f"error: the module {exc.name or exc!s} is not installed in this Python "
              f"({sys.executable}) (hint: install the project first: python3 -m venv .venv && "
              ".venv/bin/pip install -e . — then run .venv/bin/orchestrate ...)", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug, not a user error: one line unless --debug
        if debug:
            raise
        print(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the "
              "traceback; finished work is kept)", file=sys.stderr)
        return 1


def entry() -> None:
    """Console-script wrapper."""
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    entry()

"""``orchestrate init [DIR]``: write a starter eval that runs offline with no API key."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence

from eval_harness.cli.prog import prog
from eval_harness.starter import scaffold


def build_parser() -> argparse.ArgumentParser:
    """Arguments of the ``init`` subcommand."""
    p = argparse.ArgumentParser(
        prog=f"{prog()} init",
        description="Scaffold a starter eval (eval.yaml with a 2x2 matrix, a small cli agent, "
        "10 cases, a check judge and a built-in scorer) that runs with no key and no network.")
    p.add_argument("dir", nargs="?", default=".", metavar="DIR",
                   help="folder to write into (created if missing; default: the current one)")
    p.add_argument("--force", action="store_true", help="overwrite existing starter files")
    p.add_argument("--debug", action="store_true", help="full tracebacks on errors")
    return p


def main(argv: Sequence[str]) -> int:
    """Write the files and say what to run next."""
    args = build_parser().parse_args(list(argv))
    written = scaffold(args.dir, force=args.force)
    for path in written:
        print(f"wrote {path}")
    config = shlex.quote(str(written[0]))
    print(f"next: orchestrate --config {config} --dry-run   (then without --dry-run to run it)")
    return 0

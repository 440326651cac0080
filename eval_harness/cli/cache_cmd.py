"""``orchestrate cache stats|clear``: look at or empty the model-call cache."""

from __future__ import annotations

import argparse
import json
import sqlite3
import time
from pathlib import Path

from eval_harness._util.durations import parse_duration
from eval_harness.cache.store import FILE_NAME, CallCache, default_dir
from eval_harness.errors import UsageError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="orchestrate cache",
                                description="Inspect or clear the model-call cache "
                                            "(docs/cost.md).")
    p.add_argument("action", choices=["stats", "clear"])
    p.add_argument("--cache-dir", metavar="DIR", help="cache directory (default: the user's)")
    p.add_argument("--older-than", metavar="AGE",
                   help="clear: only entries older than AGE (7d, 12h, 30m, 90s)")
    p.add_argument("--json", action="store_true", help="stats as JSON")
    p.add_argument("--debug", action="store_true")
    return p


def main(argv: list[str]) -> int:
    """Entry point; exit 0, or 2 on bad usage / an unreadable cache."""
    args = _parser().parse_args(argv)
    directory = Path(args.cache_dir).expanduser() if args.cache_dir else default_dir()
    older = None
    if args.older_than:
        try:
            older = parse_duration(args.older_than)
        except ValueError as exc:
            raise UsageError(f"--older-than: {exc}", hint="e.g. --older-than 7d") from None
    if not (directory / FILE_NAME).exists():
        if args.action == "stats":
            print(json.dumps({"path": str(directory / FILE_NAME), "entries": 0}) if args.json
                  else f"no model-call cache at {directory / FILE_NAME}")
        else:
            print(f"nothing to clear: no cache at {directory / FILE_NAME}")
        return 0
    try:
        # clearing everything also empties another version's database into this schema
        cache = CallCache(directory, reset_foreign_schema=args.action == "clear"
                          and older is None)
        if args.action == "clear":
            removed = cache.clear(older)
            what = f"older than {args.older_than}" if older is not None else "all"
            print(f"removed {removed} cached call(s) ({what}) from {cache.path}")
            return 0
        stats = cache.stats()
    except sqlite3.Error as exc:
        raise UsageError(f"cannot read the cache at {directory}: {exc}",
                         hint="`orchestrate cache clear` or delete the folder") from None
    if args.json:
        print(json.dumps(stats, indent=2))
        return 0
    age = ""
    if stats["oldest"] is not None:
        age = (f", oldest {(time.time() - stats['oldest']) / 86400:.1f} days, newest "
               f"{(time.time() - stats['newest']) / 86400:.1f} days")
    print(f"{stats['path']}: {stats['entries']} cached call(s), {stats['bytes'] / 1e6:.1f} MB, "
          f"${stats['stored_cost_usd']:,.2f} of calls stored{age}")
    for row in stats["by_model"]:
        print(f"  {row['kind']:6} {row['provider']}:{row['model']}: {row['entries']} "
              f"(${row['stored_cost_usd']:,.2f})")
    return 0

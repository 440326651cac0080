"""Progress: a rich bar on a terminal, periodic plain lines otherwise (CI logs).

Shows cells done / total, errored, elapsed, ETA, spend so far (known costs only) and, once
an endpoint rate-limited, the adaptive concurrency level (``status``: engine's limiters).
Both go to ``stream`` (stderr by default), never to stdout, where reports are printed.
The engine calls :meth:`Progress.advance` under its lock, so calls never overlap.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import IO, Any

PLAIN_EVERY_S = 10.0


class Progress:
    """Engine progress reporter; ``mode`` is ``rich``, ``plain`` or ``off``."""

    def __init__(self, total: int, *, mode: str = "auto", stream: IO[str] | None = None,
                 label: str = "cells", status: Callable[[], str] | None = None) -> None:
        self.stream = stream or sys.stderr
        self.status = status
        if mode == "auto":
            mode = "rich" if self.stream.isatty() else "plain"
        self.mode = mode
        self.total = total
        self.done = 0
        self.errored = 0
        self.spend = 0.0
        self.start = time.monotonic()
        self._last_plain = self.start
        self._bar: Any = None
        self._task: Any = None
        if mode == "rich" and total:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("errored {task.fields[errored]}"), TextColumn("${task.fields[spend]}"),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                transient=False, console=Console(file=self.stream),
            )
            self._bar.start()
            self._task = self._bar.add_task(label, total=total, errored=0, spend="0.00",
                                            status="")

    def advance(self, *, errored: bool, cost: float | None) -> None:
        """One cell finished."""
        self.done += 1
        self.errored += int(errored)
        if cost is not None:
            self.spend += cost
        if self._bar is not None:
            self._bar.update(self._task, advance=1, errored=self.errored,
                             spend=f"{self.spend:.2f}", status=self._status())
        elif self.mode == "plain":
            now = time.monotonic()
            if now - self._last_plain >= PLAIN_EVERY_S:
                self._last_plain = now
                self.stream.write(self.line() + "\n")
                self.stream.flush()

    def line(self) -> str:
        """One plain status line."""
        elapsed = time.monotonic() - self.start
        eta = ""
        if self.done and self.done < self.total:
            eta = f", ETA {elapsed / self.done * (self.total - self.done):.0f}s"
        status = self._status()
        return (f"[eval] {self.done}/{self.total} cells, {self.errored} errored, "
                f"${self.spend:.2f} spent, {elapsed:.0f}s elapsed{eta}"
                + (f", {status}" if status else ""))

    def _status(self) -> str:
        return self.status() if self.status is not None else ""

    def close(self) -> None:
        """Stop the bar; print a final plain line."""
        if self._bar is not None:
            self._bar.stop()
        elif self.mode == "plain" and self.total:
            self.stream.write(self.line() + "\n")
            self.stream.flush()

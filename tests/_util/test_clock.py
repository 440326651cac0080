"""The one clock (eval_harness/_util/clock.py): documents honour SOURCE_DATE_EPOCH, events
never do."""

from __future__ import annotations

import datetime as dt

import pytest

from eval_harness._util.clock import utc_date, utc_now_iso, utc_timestamp
from eval_harness._util.procs import pid_alive


def test_document_time_honours_source_date_epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert utc_now_iso() == "2023-11-14T22:13:20Z"
    # events are real times: resuming compares them
    assert utc_timestamp().startswith(str(dt.datetime.now(dt.timezone.utc).year))
    assert not utc_timestamp().startswith("2023-11-14T22:13:20")
    assert utc_date() == dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d")


def test_document_time_without_source_date_epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    got = dt.datetime.fromisoformat(utc_now_iso().replace("Z", "+00:00"))
    assert abs((dt.datetime.now(dt.timezone.utc) - got).total_seconds()) < 5
    assert utc_timestamp("seconds").endswith("+00:00")


def test_anova_and_report_use_the_one_clock() -> None:
    from eval_harness.analysis.anova import document as build
    from eval_harness.reports import report_files

    assert build.utc_now_iso is utc_now_iso and report_files.utc_now_iso is utc_now_iso


def test_pid_alive() -> None:
    import os

    assert pid_alive(os.getpid())
    assert not pid_alive(2 ** 22 + 12345)  # above the default pid_max

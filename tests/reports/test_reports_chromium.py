"""The HTML report in headless Chromium (DevTools protocol over a pipe, stdlib only).

Checks: it renders (charts laid out, screenshot taken in light and dark mode), no console
errors or exceptions, no network request (only the file itself and inline data: images),
and the answer ``<script>alert(1)</script>`` is shown as text and never executes.
A control page proves the probe does see console errors, requests and dialogs.
Without Chromium the test skips with the reason on a developer's machine (so the README's
test command passes on a fresh machine) but FAILS under CI (env ``CI=true``; ``.ci/run``
installs Chromium), so CI can never silently lose it.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
import report_fixture

from eval_harness.reports.chromium import Chromium, find_chromium


def missing_chromium() -> None:
    """Skip locally, fail in CI: the one decision for a machine without Chromium."""
    reason = ("chromium is not installed (apt-get install chromium, or set CHROMIUM=/path; "
              ".ci/run installs it) — the HTML report browser test needs it")
    if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
        pytest.fail(f"{reason}; under CI a missing browser is a failure, not a skip")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    if find_chromium() is None:
        missing_chromium()
    with Chromium(timeout=30) as b:
        yield b


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_report_renders_safely(browser: Chromium, written: dict[str, Path], tmp_path: Path) -> None:
    browser.open(written["html"])
    shot = browser.screenshot(tmp_path / "light.png")
    width, height = _png_size(shot)
    assert width == 1280 and height > 1500
    assert browser.evaluate("document.querySelectorAll('svg.chart').length") == 5
    widths = browser.evaluate("[...document.querySelectorAll('svg.chart')]"
                              ".map(s => s.getBoundingClientRect().width)")
    assert all(w > 200 for w in widths)
    # The XSS answer is text: no script element, no alert, visible in the drill-down text.
    assert browser.evaluate("document.scripts.length") == 0
    assert browser.evaluate("document.querySelectorAll('i').length") == 0
    assert browser.evaluate(f"document.body.textContent.includes({report_fixture.XSS!r})")
    assert browser.log.dialogs == []
    assert browser.log.console == [] and browser.log.exceptions == []
    assert browser.log.network == []
    assert browser.log.requests[0] == written["html"].resolve().as_uri()
    # Dark mode: the page background turns dark and chart text follows (currentColor).
    browser.open(written["html"], dark=True)
    browser.screenshot(tmp_path / "dark.png")
    bg = browser.evaluate("getComputedStyle(document.body).backgroundColor")
    text = browser.evaluate("getComputedStyle(document.querySelector('svg.chart text')).fill")
    assert bg == "rgb(13, 17, 23)" and text == "rgb(230, 237, 243)"
    assert browser.log.console == [] and browser.log.network == []


def test_probe_detects_errors_requests_and_dialogs(browser: Chromium, tmp_path: Path) -> None:
    page = tmp_path / "control.html"
    page.write_text("<!DOCTYPE html><img src='http://127.0.0.1:9/x.png'>"
                    "<script>console.error('boom'); alert('hi')</script>")
    browser.open(page)
    assert any("boom" in line for line in browser.log.console)
    assert browser.log.dialogs == ["hi"]
    assert "http://127.0.0.1:9/x.png" in browser.log.network


def test_missing_chromium_skips_locally_and_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="chromium is not installed"):
        missing_chromium()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="under CI a missing browser is a failure"):
        missing_chromium()

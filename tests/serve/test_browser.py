"""The dashboard in a real headless Chromium (DevTools protocol over a pipe, stdlib only;
``eval_harness.reports.chromium``), against a real server on a free loopback port.

One walk through the starter eval's runs: every page loads with zero console errors or
exceptions and zero requests outside the server; eval -> compare -> filter regressed ->
case; three verdicts labelled on the case page, the kappa shown changing after each, and
``orchestrate calibrate`` on those labels giving the textbook kappa; an answer holding
``<script>`` stays text; a run appearing while a page is open shows up by itself.
Without Chromium: skipped locally with the reason, a failure under CI=true (.ci/run
installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import time
from pathlib import Path

import pytest

from eval_harness.reports.chromium import Chromium, find_chromium

SCRIPT = '<script>alert("xss")</script>'


@pytest.fixture
def browser():
    if find_chromium() is None:
        reason = "chromium is not installed (apt-get install chromium; .ci/run installs it)"
        if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
            pytest.fail(f"{reason}; under CI a missing browser is a failure, not a skip")
        pytest.skip(reason)
    with Chromium(timeout=60) as b:
        yield b


def _clean(b: Chromium, base: str, where: str) -> None:
    assert b.log.console == [], (where, b.log.console)
    assert b.log.exceptions == [], (where, b.log.exceptions)
    assert b.log.dialogs == [], (where, b.log.dialogs)
    outside = [u for u in b.log.requests if not u.startswith(base + "/")]
    assert outside == [], (where, outside)


def _click(b: Chromium, selector: str) -> None:
    """Click the element and wait for the page it leads to (or the reload it causes)."""
    js = (f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
          " if (!e) return false; setTimeout(() => e.click(), 0); return true; })()")
    found = b.evaluate(js)
    assert found, f"nothing matches {selector} on {b.evaluate('location.href')}"
    b.wait_event("Page.loadEventFired")


def _kappa(b: Chromium) -> str:
    return str(b.evaluate("(document.querySelector('#calibration-table tr[data-judge=\"correct\"]"
                          " td.kappa') || {textContent: 'none'}).textContent.trim()"))


def _png_width(path: Path) -> int:
    return struct.unpack(">II", path.read_bytes()[16:24])[0]


def _targets(app) -> tuple[str, list[tuple[str, str]]]:
    """A case where judge `correct` said false in one run and true in two others, and
    those runs (label plan: right, wrong, right -> tn, fp, tp)."""
    data = app.dash.cache.cached("starter")
    rows = data.frame[data.frame["judge"].astype(str) == "correct"]
    for case, g in rows.groupby(rows["case_id"].astype(str), observed=True):
        no = g[g["value"] == 0]["run_id"].astype(str).tolist()
        yes = g[g["value"] == 1]["run_id"].astype(str).tolist()
        if no and len(yes) >= 2:
            return case, [(no[0], "right"), (yes[0], "wrong"), (yes[1], "right")]
    raise AssertionError("the starter runs have no case with mixed `correct` verdicts")


def test_dashboard_in_chromium(browser: Chromium, runs_copy: Path, tmp_path: Path, cli) -> None:
    from eval_harness.serve.live import background_server

    planted = sorted((runs_copy / "starter").glob("*/cases/add-01"))[0]
    outs = json.loads((planted / "outputs.json").read_text())
    outs["output"] = SCRIPT + " 4"
    (planted / "outputs.json").write_text(json.dumps(outs))
    with background_server([runs_copy], wait_s=120) as (base, app):
        for entry in app.dash.catalog.entries().values():
            assert app.dash.cache.lookup(entry, wait_s=120).data is not None
        data = app.dash.cache.cached("starter")
        b, a = data.condition_ids[-1], data.condition_ids[0]  # large·stepwise vs small·terse
        pages = ["/", "/e/starter", "/e/starter/trends", f"/e/starter/compare?a={a}&b={b}",
                 "/e/starter/case/add-01", "/e/starter/search?q=mul", "/e/starter/calibration"]
        for path in pages:
            for width in (1400, 400):
                browser.goto(base + path, width=width)
                _clean(browser, base, path)
                shot = browser.screenshot(tmp_path / f"{width}.png", width=width, max_height=1200)
                assert _png_width(shot) == width
                if width == 400:  # the page fits a phone: wide tables scroll inside a box
                    assert browser.evaluate("document.documentElement.scrollWidth") <= 400, path
        assert browser.evaluate("document.querySelectorAll('.charts img').length") == 0  # trends
        browser.goto(base + "/e/starter", width=1400)
        assert browser.evaluate("Array.from(document.images).every(i => i.complete && "
                                "i.naturalWidth > 0)"), "a chart did not render"
        assert browser.evaluate("document.querySelectorAll('#anova-table tbody tr').length") == 3

        # eval -> compare -> regressed only -> a case
        _click(browser, f'#matrix-table a[href*="b={b}"]')
        assert "/compare" in browser.evaluate("location.pathname")
        # swap: large·stepwise as the reference, small·terse the candidate (it regresses)
        browser.evaluate(f"document.querySelector('select[name=a]').value = '{b}'")
        browser.evaluate(f"document.querySelector('select[name=b]').value = '{a}'")
        _click(browser, "#compare-form button")
        _click(browser, '#categories a[data-category="regressed"]')
        cats = browser.evaluate("Array.from(document.querySelectorAll('#compare-table tbody tr'))"
                                ".map(r => r.dataset.category)")
        assert cats and set(cats) == {"regressed"}
        _click(browser, "#compare-table tbody tr a")
        assert "/case/" in browser.evaluate("location.pathname")
        _clean(browser, base, "compare -> case")

        # the answer with <script> is text, and never ran
        browser.goto(base + "/e/starter/case/add-01")
        assert browser.log.dialogs == []
        assert SCRIPT in browser.evaluate("Array.from(document.querySelectorAll('pre.answer'))"
                                          ".map(p => p.textContent).join('|')")

        case, plan = _targets(app)
        browser.goto(base + f"/e/starter/case/{case}", width=1400)
        browser.evaluate("(() => { const w = document.getElementById('who'); w.value = 'ana';"
                         " w.dispatchEvent(new Event('change')); })()")
        seen = [_kappa(browser)]
        for run, label in plan:
            _click(browser, f'td.labelling[data-run="{run}"][data-judge="correct"] '
                            f'button[data-label="{label}"]')
            _clean(browser, base, f"label {label}")
            seen.append(_kappa(browser))
        # no labels; one (κ undefined); tn + fp: κ = 0; tn + fp + tp: κ = 0.4
        assert seen[0] == "none" and seen[1].startswith("—") and seen[2].startswith("0 [")
        assert seen[3].startswith("0.4 ["), seen
        from eval_harness.store.labels import read_labels

        rows = read_labels(runs_copy / "starter" / "labels.jsonl")
        assert [(r.run, r.judge, r.label, r.who) for r in rows] == [
            (run, "correct", label, "ana") for run, label in plan]
        code, out, err = cli("calibrate", str(runs_copy), "--json")
        assert code == 0, err
        group = json.loads(out)["groups"][0]
        # by hand: po = 2/3, pe = (2*1 + 1*2)/9 = 4/9, kappa = (2/3 - 4/9)/(1 - 4/9) = 0.4
        assert group["judge"] == "correct" and group["confusion"] == {
            "tp": 1, "fn": 0, "fp": 1, "tn": 1}
        assert group["kappa"] == pytest.approx(0.4, abs=1e-12)

        # a run written while the page is open shows up without touching the browser
        browser.goto(base + "/")
        shutil.copytree(runs_copy / "starter", runs_copy / "second")
        deadline = time.monotonic() + 30
        while "second" not in str(browser.evaluate("document.body.innerText")):
            assert time.monotonic() < deadline, "the new eval never appeared"
            time.sleep(0.5)
        _clean(browser, base, "live reload")

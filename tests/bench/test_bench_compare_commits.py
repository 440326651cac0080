"""bench/bench_compare_commits.py at a tiny size (the benchmark itself runs by hand:
docs/performance.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import bench_compare_commits as bc


def test_one_child_cpu_seconds_are_its_own(tmp_path: Path) -> None:
    busy = [sys.executable, "-c", "import time\nt = time.process_time()\n"
            "while time.process_time() - t < 0.3: pass"]
    use = bc.run_child(busy, {}, tmp_path, tmp_path / "log")
    assert use.code == 0 and 0.25 <= use.cpu_s < 5 and use.peak_mib > 1


def test_documents_compare_exactly_except_generated_at(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, when, f in ((a, "2025-01-01T00:00:00Z", 1.0), (b, "2026-01-01T00:00:00Z", 1.0)):
        folder.mkdir()
        (folder / "anova.json").write_text(json.dumps(
            {"generated_at": when, "terms": {"x": {"F": f, "nested": {"generated_at": when}}}}))
    assert bc.document_differences(a, b) == ["anova.json.terms.x.nested.generated_at: "
                                             "'2025-01-01T00:00:00Z' vs '2026-01-01T00:00:00Z'"]
    (b / "anova.json").write_text((a / "anova.json").read_text().replace("1.0", "1"))
    assert bc.document_differences(a, b) == ["anova.json.terms.x.F: 1.0 vs 1"]
    (b / "report.json").write_text("{}")
    assert "report.json: written by one side only" in bc.document_differences(a, b)


def test_a_side_is_a_checkout_or_a_commit(tmp_path: Path) -> None:
    assert bc.resolve_side("after", str(ROOT), tmp_path).root == ROOT.resolve()
    with pytest.raises(bc.Failed, match="neither a directory nor a commit"):
        bc.resolve_side("before", "no-such-commit-xyz", tmp_path)
    with pytest.raises(bc.Failed, match="not a checkout"):
        bc.resolve_side("before", str(tmp_path), tmp_path)


def test_this_checkout_against_itself(capsys: pytest.CaptureFixture[str]) -> None:
    code = bc.main(["--before", str(ROOT), "--after", str(ROOT), "--size", "2x10x1",
                    "--repeat", "1", "--warmup", "0", "--tolerance", "100"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "round 1  before" in out and "round 1  after" in out
    assert "no slower than before" in out and "outputs: identical" in out

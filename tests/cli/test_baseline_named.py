"""Issue 37 friction: a regression against a baseline read "regressed: 6 · mathlib vs
6 · mathlib" (console, report.md and so the CI job summary); now the baseline is named:
"… vs baseline baseline.json (…)"."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_pass_rule_requirements import _eval, _run  # the bc-shaped calculator eval


def test_a_regression_names_the_baseline(tmp_path: Path, monkeypatch: object) -> None:
    base = tmp_path / "baseline.json"
    code, _, err = _run(_eval(tmp_path), tmp_path / "r1", tmp_path / "a1",
                        "--export", str(base), "--compact")
    assert code == 0, err
    broken = _eval(tmp_path, broken=8, name="broken.yaml", silent=True)
    code, stdout, err = _run(broken, tmp_path / "r2", tmp_path / "a2", "--baseline", str(base))
    assert code == 0, err
    md = (tmp_path / "a2" / "report.md").read_text().replace("\\_", "_")
    assert f"regressed: exact vs baseline {base} (exact)" in md  # the job summary's text too
    html = (tmp_path / "a2" / "report.html").read_text()
    assert f"regressed: exact vs baseline {base} (exact)" in html
    assert f"baseline={base}" in "".join(stdout.split())  # the console table, unwrapped

"""find_failures: counts and dead judges from boolean columns of the frame."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from eval_harness.analysis.failures import find_failures


def _frame() -> pd.DataFrame:
    rows = []
    for case, status in (("a", "ok"), ("b", "ok"), ("c", "errored")):
        err = status == "errored"
        rows += [
            # "flaky" errors on every sample it scored (c errored before judging: not seen)
            {"case_id": case, "judge": "flaky", "kind": "numeric", "value": np.nan,
             "errored": True, "case_status": status},
            {"case_id": case, "judge": "good", "kind": "boolean",
             "value": np.nan if err else 1.0, "errored": err, "case_status": status},
            {"case_id": case, "judge": "pair", "kind": "pairwise", "value": np.nan,
             "errored": True, "case_status": status},
            {"case_id": case, "judge": "composite", "kind": "composite",
             "value": np.nan if err else 0.5, "errored": err, "case_status": status},
        ]
    frame = pd.DataFrame(rows)
    frame["judge"] = frame["judge"].astype("str")
    return frame


def test_counts_samples_errored_runs_and_dead_judges(tmp_path: Path) -> None:
    out = find_failures(_frame(), [tmp_path])
    assert (out.n_samples, out.n_errored, out.scored) == (3, 1, True)
    # pairwise judges are not screened; "good" worked; "flaky" errored on the 2 ran samples
    assert list(out.dead_judges) == ["flaky"]
    n, reasons = out.dead_judges["flaky"]
    assert n == 2 and reasons == {"reason not recorded": 2}
    assert out.cell_reasons == {"reason not recorded (see the run directories)": 1}


def test_nothing_scored_and_missing_judge_names(tmp_path: Path) -> None:
    frame = _frame()
    frame.loc[frame["judge"] == "good", ["value", "errored"]] = [np.nan, True]
    frame.loc[frame["judge"] == "composite", "value"] = np.nan
    frame.loc[frame.index[0], "judge"] = None  # a row without a judge name is skipped
    out = find_failures(frame, [tmp_path])
    assert out.scored is False
    assert sorted(out.dead_judges) == ["flaky", "good"]
    assert out.dead_judges["flaky"][0] == 1 and out.dead_judges["good"][0] == 2

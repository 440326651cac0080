"""reports/html/drilldown.py: picking the shown cases' rows without a text copy of the
case column gives what ``astype(str).isin`` gives, for categoricals and plain columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from eval_harness.reports.html.drilldown import _text_isin

VALUES = ["c2", "c10", None, "c2", "x", "c1"]


@pytest.mark.parametrize("column", [
    pd.Series(pd.Categorical(VALUES)),
    pd.Series(VALUES, dtype=object),
    pd.Series([2, 10, 3, 2], dtype=np.int64),
])
def test_text_isin_matches_astype_str(column: pd.Series) -> None:
    wanted = {"c2", "c1", "2", "nope"}
    got = _text_isin(column, wanted)
    expected = column.astype(object).where(column.notna(), None).map(
        lambda v: v is not None and str(v) in wanted).to_numpy(dtype=bool)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == bool and len(got) == len(column)

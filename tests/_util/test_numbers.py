"""eval_harness/_util/numbers.py: the two readings of an untrusted number."""

from __future__ import annotations

import numpy as np
import pytest

from eval_harness._util.numbers import as_finite, run_number


@pytest.mark.parametrize(("value", "strict", "lenient"), [
    (3, 3.0, 3.0), (0.5, 0.5, 0.5), (True, None, 1.0), ("0.5", None, 0.5),
    (float("nan"), None, None), (float("inf"), None, None), (None, None, None),
    ("x", None, None), (np.int64(2), None, 2.0), (np.float64(1.5), 1.5, 1.5), (10**400, None, None),
])
def test_strict_and_lenient_readings(value: object, strict: float | None,
                                     lenient: float | None) -> None:
    assert run_number(value) == strict
    assert as_finite(value) == lenient

"""fft_convolve is the full linear convolution: equal to np.convolve up to FFT rounding, and
bitwise what scipy.signal.fftconvolve gave before it replaced that."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.signal import fftconvolve

from eval_harness.analysis.compare.fftconv import fft_convolve

RNG = np.random.default_rng(14)
SIZES = [(1, 1), (1, 7), (9, 1), (2, 2), (3, 500), (65, 65), (64, 1000), (997, 1009),
         (4096, 4097), (2310, 17)]


@pytest.mark.parametrize(("m", "n"), SIZES)
def test_equals_direct_convolution(m: int, n: int) -> None:
    a, b = RNG.random(m), RNG.random(n)
    want = np.convolve(a, b)
    got = fft_convolve(a, b)
    assert got.shape == want.shape
    # FFT rounding: a few ulp of the largest output value (both inputs are positive)
    assert_allclose(got, want, rtol=0, atol=1e-14 * want.max())


def test_pmfs_convolve_to_a_pmf() -> None:
    """The use in permutation.py: the law of a sum of independent lattice variables."""
    a = RNG.dirichlet(np.ones(300))
    b = RNG.dirichlet(np.ones(200))
    got = fft_convolve(a, b)
    assert got.sum() == pytest.approx(1.0, abs=1e-13)
    assert_allclose(got, np.convolve(a, b), rtol=0, atol=1e-16)


@pytest.mark.parametrize(("m", "n"), SIZES)
def test_bitwise_as_scipy_fftconvolve(m: int, n: int) -> None:
    a, b = RNG.random(m), RNG.random(n)
    assert_array_equal(fft_convolve(a, b), fftconvolve(a, b))


def test_empty_input_is_an_error() -> None:
    with pytest.raises(ValueError, match="empty"):
        fft_convolve(np.array([]), np.ones(3))

"""Full linear convolution of two real sequences through real FFTs.

(a ∗ b)[k] = Σ_j a[j]·b[k − j], k = 0 … len(a) + len(b) − 2, computed as
irfft(rfft(a, L)·rfft(b, L), L)[:len(a) + len(b) − 1] for a transform length
L ≥ len(a) + len(b) − 1 (zero padding makes the circular convolution linear; Oppenheim &
Schafer, *Discrete-Time Signal Processing*, §8.7). O(L log L) instead of np.convolve's
O(len(a)·len(b)); rounding error is ~1e-16 relative to the largest output value, so
small outputs may come out slightly negative.

What scipy.signal.fftconvolve does for 1-D real input (same L from
``scipy.fft.next_fast_len(n, real=True)``, the same pocketfft kernels, a length-1
factor as a plain product), so results match it bitwise; importing scipy.signal costs
~50 MiB of RSS (it pulls in scipy.stats, .optimize, .interpolate, .ndimage, ...), scipy.fft,
loaded here for the length only, ~1 MiB.
"""

from __future__ import annotations

import numpy as np
from scipy.fft import next_fast_len


def fft_convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.convolve(a, b)`` (mode "full") for 1-D real float arrays, via real FFTs."""
    if a.size == 0 or b.size == 0:
        raise ValueError("fft_convolve: empty input")
    if a.size == 1 or b.size == 1:  # no transform needed (fftconvolve does the same)
        return np.asarray(a * b, dtype=np.float64)
    n = a.size + b.size - 1
    size = next_fast_len(n, real=True)  # 2·3·5-smooth: pocketfft's fast real lengths
    spectrum = np.fft.rfft(a, size) * np.fft.rfft(b, size)
    return np.fft.irfft(spectrum, size)[:n]

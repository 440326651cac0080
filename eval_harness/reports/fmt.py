"""Number and text formatting shared by every renderer (console, Markdown, HTML).

All functions accept ``None`` (or NaN) and return ``"–"`` for it, so a missing optional
block never crashes a renderer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from eval_harness._util.numbers import run_number

DASH = "–"
NOT_AVAILABLE = "not available"


def is_num(x: Any) -> bool:
    """True for a finite real number (bools excluded)."""
    return run_number(x) is not None


def f3(x: Any, digits: int = 3) -> str:
    """Fixed-point number, or a dash."""
    return f"{x:.{digits}f}" if is_num(x) else DASH


def signed(x: Any, digits: int = 3) -> str:
    """Number with an explicit sign (differences)."""
    return f"{x:+.{digits}f}" if is_num(x) else DASH


def pval(p: Any) -> str:
    """p-value: 3 significant digits, ``<0.001`` below a thousandth."""
    if not is_num(p):
        return DASH
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def pct(x: Any) -> str:
    """Proportion as a percentage with no decimals."""
    return f"{100 * x:.0f}%" if is_num(x) else DASH


def ci(pair: Sequence[Any] | None, digits: int = 3, *, as_pct: bool = False) -> str:
    """``[lo, hi]``; a dash when either bound is missing."""
    if not pair or len(pair) != 2 or not all(is_num(v) for v in pair):
        return DASH
    lo, hi = pair
    if as_pct:
        return f"[{100 * lo:.0f}, {100 * hi:.0f}]%"
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def money(x: Any) -> str:
    """US dollars; 4 decimals below one cent so small per-run costs stay visible."""
    if not is_num(x):
        return DASH
    return f"${x:,.4f}" if abs(x) < 0.01 else f"${x:,.2f}"


def seconds(x: Any) -> str:
    """Latency in seconds."""
    return f"{x:.2f} s" if is_num(x) else DASH


def df_text(df_num: Any, df_den: Any) -> str:
    """``df_num, df_den`` with integers shown without decimals."""

    def one(v: Any) -> str:
        if not is_num(v):
            return DASH
        return f"{v:.0f}" if abs(v - round(v)) < 1e-9 else f"{v:.2f}"

    return f"{one(df_num)}, {one(df_den)}"


def yes_no(flag: Any) -> str:
    """Booleans as yes / no; anything else as a dash."""
    return DASH if not isinstance(flag, bool) else ("yes" if flag else "no")


def truncate(text: Any, limit: int) -> str:
    """``str(text)`` cut to ``limit`` characters with a visible marker of what was cut."""
    s = "" if text is None else str(text)
    if len(s) <= limit:
        return s
    return s[:limit] + f"… [{len(s) - limit:,} more characters]"


def one_line(text: Any, limit: int = 80) -> str:
    """Collapse whitespace to single spaces and truncate (table cells)."""
    s = " ".join(("" if text is None else str(text)).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def est_ci(est: Any, pair: Sequence[Any] | None, digits: int = 2, *, sign: bool = False) -> str:
    """``0.66 [0.57, 0.75]``: estimate and interval in one cell; a dash when missing."""
    head = signed(est, digits) if sign else f3(est, digits)
    interval = ci(pair, digits)
    return head if interval == DASH else f"{head} {interval}"


def est_pm(est: Any, pair: Sequence[Any] | None, digits: int = 2) -> str:
    """``+0.12 ±0.09`` for an interval symmetric about the estimate (paired t), else
    ``+0.12 [0.03, 0.21]``; the half-width is (hi − lo) / 2."""
    if not is_num(est):
        return DASH
    if not pair or len(pair) != 2 or not all(is_num(v) for v in pair):
        return signed(est, digits)
    lo, hi = pair
    # Symmetric to display precision: both half-widths round to the same text.
    if f"{hi - est:.{digits}f}" == f"{est - lo:.{digits}f}":
        return f"{signed(est, digits)} ±{(hi - lo) / 2:.{digits}f}"
    return f"{signed(est, digits)} {ci(pair, digits)}"


COMPACT_SEP = " · "
_PREFIX_ENDS = "-_/:. "


def level_display(levels: Mapping[str, Sequence[Any]]) -> dict[str, dict[str, str]]:
    """Per factor, level → compact text: the levels' common prefix is dropped when it ends
    at a separator (``-_/:.`` or space), e.g. ``example-small`` → ``small``, and only when
    the shortened levels stay distinct and non-empty (never ambiguous)."""
    out: dict[str, dict[str, str]] = {}
    for factor, vals in levels.items():
        names = [str(v) for v in vals]
        prefix = _common_prefix(names) if len(names) > 1 else ""
        short = [n[len(prefix):] for n in names]
        if not prefix or any(not x for x in short) or len(set(short)) != len(short):
            short = names
        out[str(factor)] = dict(zip(names, short, strict=True))
    return out


def _common_prefix(names: Sequence[str]) -> str:
    first = min(names)
    last = max(names)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    cut = max((i + 1 for i, ch in enumerate(first[:n]) if ch in _PREFIX_ENDS), default=0)
    return first[:cut]


def compact_label(levels: Mapping[str, Any] | None, display: Mapping[str, Mapping[str, str]]
                  | None = None, fallback: str = "") -> str:
    """``small · low · none``: level values only, in matrix factor order, shortened with
    :func:`level_display`; the fallback (a condition id) when there are no levels."""
    if not levels:
        return fallback
    disp = display or {}
    return COMPACT_SEP.join(disp.get(k, {}).get(str(v), str(v)) for k, v in levels.items())


def levels_label(levels: Mapping[str, Any] | None, fallback: str = "") -> str:
    """``model=m1, effort=low`` (matrix order), or the fallback (a condition id)."""
    if not levels:
        return fallback
    return ", ".join(f"{k}={v}" for k, v in levels.items())


def scalar_items(block: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """Flatten a small dict of scalars (power, variance components) to display pairs."""
    out: list[tuple[str, str]] = []
    for key, value in (block or {}).items():
        if isinstance(value, Mapping):
            for k2, v2 in value.items():
                if not isinstance(v2, (Mapping, list)):
                    out.append((f"{key}.{k2}", _scalar(v2)))
        elif isinstance(value, list):
            if all(not isinstance(v, (Mapping, list)) for v in value):
                out.append((key, ", ".join(_scalar(v) for v in value)))
        else:
            out.append((key, _scalar(value)))
    return out


def _scalar(v: Any) -> str:
    if v is None:
        return DASH
    if isinstance(v, bool):
        return yes_no(v)
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else DASH
    return str(v)


def cell_text(cell: dict[str, Any] | None) -> str:
    """``2/3 ~`` (passes/usable attempts, ``~`` flaky), ``E`` errored, blank when missing."""
    if not cell:
        return ""
    if cell["verdict"] == "errored":
        return "E"
    text = f"{cell['passes']}/{cell['attempts']}"
    if cell["verdict"] == "flaky":
        text += " ~"
    if cell.get("errored_attempts"):
        text += " !"
    return text

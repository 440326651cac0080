"""What the analysis reads from a config (and from the frame) beyond the judges.

One home for the CLI pipeline (``--analyze-only``, after a run) and ``orchestrate serve``,
so both analyse with the same factor levels, pass mark and leaderboard stratum.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from eval_harness.config.loader import LoadedConfig


def pass_mark(loaded: LoadedConfig | None) -> float | None:
    """One pass mark for comparisons and thresholds: matrix.analysis.pass_mark, else
    thresholds.pass_score, else None (the verdict rule's default, 0.5)."""
    if loaded is None:
        return None
    cfg = loaded.config
    if cfg.matrix is not None and cfg.matrix.analysis.pass_mark is not None:
        return cfg.matrix.analysis.pass_mark
    if cfg.thresholds is not None:
        return float(cfg.thresholds.pass_score)
    return None


def factor_levels(loaded: LoadedConfig | None) -> dict[str, list[Any]] | None:
    """{factor: configured level names, in config order}; None without a matrix."""
    if loaded is None or loaded.config.matrix is None:
        return None
    return {name: [getattr(level, "name", level) for level in levels]
            for name, levels in loaded.config.matrix.factors.items()}


def stratum(frame: Any) -> str | None:
    """The case tag the leaderboard is stratified by: tier, else difficulty, else domain
    (the first present in the cases' tags), else None."""
    tags = frame.attrs.get("case_tags") or {}
    keys = {k for t in tags.values() for k in (t or {})}
    for preferred in ("tier", "difficulty", "domain"):
        if preferred in keys:
            return preferred
    return None

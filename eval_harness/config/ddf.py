"""The denominator-df methods of the `mixed` analysis (setting ``matrix.analysis.ddf``, CLI
``--ddf``): their canonical names and the one spelling rule. Here, in the config layer, so
validating a config never imports the statistics stack (analysis/stats/slopes uses these)."""

from __future__ import annotations

#: denominator-df methods of `mixed`; the first is the default
DDF_METHODS = ("kenward-roger", "satterthwaite")
DDF_NAMES = {"kenward-roger": "Kenward–Roger df", "satterthwaite": "Satterthwaite df"}


def ddf_method(value: object) -> str | None:
    """`kenward-roger` or `satterthwaite` (case, `_` and spaces ignored); else None."""
    key = str(value).strip().lower().replace("_", "-").replace(" ", "-")
    if key in ("kr", "kenward-roger", "kenwardroger"):
        return "kenward-roger"
    return key if key == "satterthwaite" else None


def unknown_ddf(value: object) -> str:
    """The message for a value `ddf_method` does not know."""
    return f"unknown ddf {value!r}; choose one of {list(DDF_METHODS)}"

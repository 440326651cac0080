"""The ``--condition`` matcher: which conditions a spec names. One rule for running
(``matrix.experiment.select_conditions``), browsing (``runs``/``show``) and every other
place that picks conditions.

A spec is ``model=a,effort=low`` (levels, compared as text: every named factor must have
that level), or, without ``=``, a condition id prefix or a condition label
(``matrix.ids.condition_label``, e.g. ``a-effort-low``, as in run directory names).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from eval_harness.errors import UsageError
from eval_harness.matrix.ids import condition_label


def parse_condition_spec(spec: str) -> dict[str, str] | str:
    """``model=a,effort=low`` -> mapping; anything without ``=`` is an id prefix or a
    label."""
    if "=" not in spec:
        return spec.strip()
    out: dict[str, str] = {}
    for part in spec.split(","):
        if "=" not in part:
            raise UsageError(f"bad --condition part {part!r}", hint="write model=a,effort=low")
        key, _, value = part.partition("=")
        out[key.strip()] = value.strip()
    return out


def check_factors(parsed: dict[str, str] | str, factors: Iterable[str]) -> None:
    """A levels spec naming a factor not in ``factors`` is a usage error."""
    known = list(factors)
    if isinstance(parsed, dict) and (unknown := set(parsed) - set(known)):
        raise UsageError(f"--condition names unknown factor(s): {', '.join(sorted(unknown))}",
                         hint=f"factors are {', '.join(known)}")


def matches(parsed: dict[str, str] | str, condition_id: str, levels: Mapping[str, Any]) -> bool:
    """Whether the condition (its id and levels) matches the parsed spec."""
    if isinstance(parsed, str):
        return condition_id.startswith(parsed) or condition_label(levels) == parsed
    return all(k in levels and str(levels[k]) == v for k, v in parsed.items())


class HasCondition(Protocol):
    """A condition, or a run of one: its id and its levels."""

    @property
    def condition_id(self) -> str: ...

    @property
    def levels(self) -> Mapping[str, Any]: ...


C = TypeVar("C", bound=HasCondition)


def select_matching(items: Sequence[C], specs: Sequence[str], factors: Sequence[str] | None,
                    nothing: UsageError) -> list[C]:
    """The items matching any spec, each once, in spec order then item order. A levels spec
    naming a factor not in ``factors`` is a usage error (None: not checked); ``nothing`` is
    raised when no item matches."""
    chosen: list[C] = []
    for spec in specs:
        parsed = parse_condition_spec(spec)
        if factors is not None:
            check_factors(parsed, factors)
        for item in items:
            if matches(parsed, item.condition_id, item.levels) and item not in chosen:
                chosen.append(item)
    if not chosen:
        raise nothing
    return chosen

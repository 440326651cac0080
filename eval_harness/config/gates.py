"""Which judges are gates: the one rule, read by the scorer, the composite and the
verdict rule.

A judge is a gate when it says ``gate: true`` or the ``composite`` block lists it in
``composite.gates``. A false gate zeroes the composite; a sample passes only when every
gate judge is true (analysis.compare.verdicts).
"""

from __future__ import annotations

from typing import Any


def is_gate(name: str, gate: Any, composite: Any) -> bool:
    """Whether judge ``name`` (its own ``gate`` flag) is a gate under ``composite``."""
    return bool(gate) or bool(composite is not None and name in (composite.gates or ()))


def gate_judges(config: Any) -> tuple[str, ...]:
    """The config's gate judges: ``gate: true`` ones in config order, then any other name
    listed in ``composite.gates``."""
    if config is None:
        return ()
    comp = getattr(config, "composite", None)
    names = [j.name for j in getattr(config, "judges", None) or []
             if is_gate(j.name, getattr(j, "gate", False), None)]
    names += [g for g in (getattr(comp, "gates", None) or []) if g not in names]
    return tuple(names)

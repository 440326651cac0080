"""MatrixBuilder: expand the ``matrix`` block into conditions (DESIGN.md contract).

Factor names are sorted before the Cartesian expansion, so the order they are written in
changes nothing; each condition records its levels in the order written (for analysis
term names) and routes them: ``model`` -> model, ``effort`` -> effort, ``subagent`` /
``subagent_model`` -> subagent model (``subagent`` wins), anything else -> an input
override; a variant level's ``set`` -> config overrides.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from eval_harness.config.matrix_model import MatrixBlock, Variant
from eval_harness.config.yamlio import KeyPath
from eval_harness.errors import ConfigError
from eval_harness.matrix.ids import condition_id, condition_label

ROUTED = ("model", "effort", "subagent", "subagent_model")


@dataclass(frozen=True)
class Condition:
    """One combination of levels, with its routing."""

    condition_id: str
    levels: dict[str, Any]  # recorded levels (variant names), matrix writing order
    label: str
    model: Any = None
    effort: Any = None
    subagent_model: Any = None
    input_overrides: dict[str, Any] = field(default_factory=dict)
    config_overrides: dict[str, Any] = field(default_factory=dict)  # dotted path -> value

    def run_id(self, date: str, replication: int, replications: int) -> str:
        """``<date>-<label>`` plus ``-r<n>`` when there is more than one replication."""
        rid = f"{date}-{self.label}" if date else self.label
        return f"{rid}-r{replication}" if replications > 1 else rid


@dataclass(frozen=True)
class Matrix:
    """The expanded matrix."""

    factors: dict[str, list[Any]]  # writing order; variant levels are Variant objects
    replications: int
    block: MatrixBlock

    @property
    def factor_names(self) -> list[str]:
        """Factor names in writing order."""
        return list(self.factors)

    @property
    def n_conditions(self) -> int:
        """Number of conditions (product of level counts)."""
        n = 1
        for levels in self.factors.values():
            n *= len(levels)
        return n

    def conditions(self) -> Iterator[Condition]:
        """Every condition, in sorted-factor Cartesian order."""
        names = sorted(self.factors)
        for combo in itertools.product(*(self.factors[n] for n in names)):
            chosen = dict(zip(names, combo, strict=False))
            yield make_condition({n: chosen[n] for n in self.factors})

    def condition_list(self) -> list[Condition]:
        """All conditions as a list."""
        return list(self.conditions())


def _recorded(level: Any) -> Any:
    return level.name if isinstance(level, Variant) else level


def make_condition(chosen: Mapping[str, Any]) -> Condition:
    """Build a Condition from factor -> level (scalar or Variant)."""
    levels = {name: _recorded(level) for name, level in chosen.items()}
    overrides: dict[str, Any] = {}
    config_overrides: dict[str, Any] = {}
    for name, level in chosen.items():
        if isinstance(level, Variant):
            config_overrides.update(level.set)
        elif name not in ROUTED:
            overrides[name] = level
    subagent = levels.get("subagent", levels.get("subagent_model"))
    return Condition(
        condition_id=condition_id(levels),
        levels=levels,
        label=condition_label(levels),
        model=_scalar(chosen.get("model")),
        effort=_scalar(chosen.get("effort")),
        subagent_model=_scalar(chosen.get("subagent", chosen.get("subagent_model")))
        if subagent is not None else None,
        input_overrides=overrides,
        config_overrides=config_overrides,
    )


def _scalar(level: Any) -> Any:
    # A variant on a routed factor routes its name (and its `set` overrides apply).
    return level.name if isinstance(level, Variant) else level


class MatrixBuilder:
    """Validate a ``matrix`` block and expand it."""

    @staticmethod
    def from_yaml(
        block: Any, *, strict: bool = True, origins: Mapping[KeyPath, tuple[str, int]] | None = None,
        file: str = "eval.yaml",
    ) -> Matrix:
        """Validate ``block`` (the parsed YAML value of ``matrix``) and return a Matrix.

        ``strict`` (running) requires at least one factor; ``--analyze-only`` reads the
        block with ``strict=False``.
        """
        from eval_harness.config.loader import validation_to_config_error

        if not isinstance(block, (dict, MatrixBlock)):
            raise ConfigError(
                f"must be a mapping, got {type(block).__name__}", path="matrix", file=file,
                hint="write `matrix:` followed by an indented `factors:` mapping",
            )
        if isinstance(block, MatrixBlock):
            parsed = block
        else:
            try:
                parsed = MatrixBlock.model_validate(block)
            except ValidationError as exc:
                raise validation_to_config_error(
                    exc, origins or {}, file, prefix=("matrix",)
                ) from None
        if strict and not parsed.factors:
            raise ConfigError("at least one factor is required to run", path="matrix.factors",
                              file=file, hint="write name: [a, b]")
        return Matrix(factors=dict(parsed.factors), replications=parsed.replications, block=parsed)

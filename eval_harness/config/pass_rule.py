"""The pass rule of a sample, as a value: :class:`VerdictRule` (which rule, the pass mark,
the gate judges) and its one-line statement. Light (no numpy / pandas): ``--dry-run``
states the rule without the analysis stack. How the rule is applied to the tidy frame is
:mod:`eval_harness.analysis.compare.verdicts` (whose docstring defines the rules).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eval_harness.errors import UsageError

#: ``VerdictRule.rule`` values (``matrix.analysis.pass_rule``)
PASS_RULES = ("requirements", "composite", "aeh")
DEFAULT_PASS_RULE = "requirements"


@dataclass(frozen=True)
class VerdictRule:
    """How one sample is judged pass/fail (module docstring)."""

    pass_mark: float = 0.5  # threshold on the composite (or on each named judge), inclusive
    judges: tuple[str, ...] = ()  # per-judge rule: these judges instead of the composite
    gates: tuple[str, ...] = ()  # boolean gate judges that must also be true
    rule: str = DEFAULT_PASS_RULE  # requirements | composite | aeh (module docstring)
    aeh_reward: bool = False  # aeh rule: the composite is its reward (a `reward:` block)

    def __post_init__(self) -> None:
        if not (isinstance(self.pass_mark, (int, float)) and 0.0 <= self.pass_mark <= 1.0):
            raise UsageError(f"pass_mark must be a number in [0, 1], got {self.pass_mark!r}")
        if self.rule not in PASS_RULES:
            raise UsageError(f"unknown pass rule {self.rule!r}",
                             hint=f"use one of {', '.join(PASS_RULES)}")

    def text(self) -> str:
        """The rule in one line (every report, the gate and --dry-run print it)."""
        mark = f"{float(self.pass_mark):g}"
        if self.judges:
            core = f"every judge of {', '.join(self.judges)} reaches {mark} (normalised)"
            head = "per judge"
        elif self.rule == "composite":
            head = "composite"
            core = (f"its composite (the weighted mean of its judges) ≥ {mark}; a false "
                    "boolean judge counts only through the composite")
        elif self.rule == "aeh":
            head = "aeh, agent-eval-harness's"
            core = (f"its reward (the config's reward: block) ≥ {mark}" if self.aeh_reward
                    else f"every boolean judge is true and the mean of its numeric judges "
                         f"(normalised; 1 when only booleans scored) ≥ {mark}")
        else:
            head = "requirements"
            core = f"every boolean judge is true and its composite ≥ {mark}"
        gates = f"; gate judges: {', '.join(self.gates)}" if self.gates else ""
        return f"{head} — a sample passes when {core}{gates}"

    def describe(self) -> dict[str, object]:
        """JSON description written next to the results."""
        basis = "judges" if self.judges else "composite (else all boolean judges true)"
        return {"basis": basis, "rule": self.rule, "aeh_reward": self.aeh_reward,
                "pass_mark": float(self.pass_mark), "judges": list(self.judges),
                "gates": list(self.gates), "text": self.text()}

    @classmethod
    def from_record(cls, rec: Mapping[str, Any] | None) -> VerdictRule:
        """The rule a ``describe()`` record states; a record written before pass rules
        existed (no ``rule``) was the composite rule; no record: the default rule."""
        if not rec:
            return cls()
        rule = str(rec.get("rule") or "composite")
        return cls(pass_mark=float(rec.get("pass_mark", 0.5)),  # type: ignore[arg-type]
                   judges=tuple(rec.get("judges") or ()), gates=tuple(rec.get("gates") or ()),
                   rule=rule if rule in PASS_RULES else "composite",
                   aeh_reward=bool(rec.get("aeh_reward")))

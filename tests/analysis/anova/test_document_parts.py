"""parse_simple_effects: every documented form of ``--simple-effects`` / ``simple_effects=``."""

from __future__ import annotations

import pytest

from eval_harness.analysis.anova.document_parts import parse_simple_effects
from eval_harness.errors import UsageError

KEPT = ["model", "effort", "context"]
TERMS = {"model": {"significant": True}, "model:context": {"significant": True},
         "model:effort": {"significant": False}, "model:effort:context": {"significant": True}}


def test_pair_forms() -> None:
    assert parse_simple_effects("model:effort", KEPT, TERMS) == [("model", "effort")]
    assert parse_simple_effects(("model", "effort"), KEPT, TERMS) == [("model", "effort")]
    assert parse_simple_effects({"model": "context"}, KEPT, TERMS) == [("model", "context")]
    assert parse_simple_effects(["model|effort", "context:model"], KEPT, TERMS) == [
        ("model", "effort"), ("context", "model")]


def test_a_factor_alone_means_every_other_factor_within_its_levels() -> None:
    assert parse_simple_effects(["context"], KEPT, TERMS) == [("model", "context"),
                                                             ("effort", "context")]


def test_auto_alone_or_in_the_repeatable_flags_list() -> None:
    both = [("model", "context"), ("context", "model")]  # significant two-way terms only
    assert parse_simple_effects("auto", KEPT, TERMS) == both
    assert parse_simple_effects(["auto"], KEPT, TERMS) == both  # as argparse passes it
    assert parse_simple_effects(["AUTO", "model:context"], KEPT, TERMS) == both  # deduplicated
    assert parse_simple_effects(None, KEPT, TERMS) == []


@pytest.mark.parametrize("spec", ["model:model", "model:size", "size", ["model:"]])
def test_bad_specs_are_usage_errors(spec: object) -> None:
    with pytest.raises(UsageError, match="simple effects") as info:
        parse_simple_effects(spec, KEPT, TERMS)
    assert info.value.exit_code == 2 and "model:effort" in (info.value.hint or "")

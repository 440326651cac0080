"""Each DESIGN.md validation rule, asserting the key path and the hint."""

from __future__ import annotations

from typing import Any

import pytest

from eval_harness.errors import ConfigError
from eval_harness.matrix.builder import MatrixBuilder


def _err(block: Any, strict: bool = True) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        MatrixBuilder.from_yaml(block, strict=strict)
    return info.value


@pytest.mark.parametrize("levels", ["m1", 3, None, {"a": 1}])
def test_scalar_levels_rejected(levels: Any) -> None:
    err = _err({"factors": {"model": levels}})
    assert err.key_path == "matrix.factors.model"
    assert "write name: [a, b]" in err.one_line()


def test_empty_level_list_rejected() -> None:
    err = _err({"factors": {"model": []}})
    assert err.key_path == "matrix.factors.model"
    assert "non-empty" in err.message


@pytest.mark.parametrize("reps", [True, False, 0, -1, "3", 1.5, None])
def test_bad_replications(reps: Any) -> None:
    err = _err({"factors": {"model": ["a"]}, "replications": reps})
    assert err.key_path == "matrix.replications"


@pytest.mark.parametrize("corr", [None, 5, "bonferroni", True, ["holm"]])
def test_bad_correction(corr: Any) -> None:
    err = _err({"factors": {"model": ["a"]}, "analysis": {"correction": corr}})
    assert err.key_path == "matrix.analysis.correction"


@pytest.mark.parametrize("name,canonical", [("HOLM", "holm"), ("fdr_bh", "bh"), ("BH", "bh"),
                                            ("None", "none")])
def test_correction_any_case_and_alias(name: str, canonical: str) -> None:
    m = MatrixBuilder.from_yaml({"factors": {"model": ["a"]}, "analysis": {"correction": name}})
    assert m.block.analysis.correction == canonical


@pytest.mark.parametrize("value", ["false", "true", 0, 1, None])
def test_per_judge_must_be_real_boolean(value: Any) -> None:
    err = _err({"factors": {"model": ["a"]}, "analysis": {"per_judge": value}})
    assert err.key_path == "matrix.analysis.per_judge"


@pytest.mark.parametrize("method", ["RM", "Lmm", "Mixed", "AUTO"])
def test_method_any_case(method: str) -> None:
    m = MatrixBuilder.from_yaml({"factors": {"model": ["a"]}, "analysis": {"method": method}})
    assert m.block.analysis.method == method.lower()


@pytest.mark.parametrize("block,path", [
    (["model"], "matrix"),
    ("model", "matrix"),
    ({"factors": ["model"]}, "matrix.factors"),
    ({"factors": "model"}, "matrix.factors"),
    ({"factors": {"model": ["a"]}, "analysis": ["holm"]}, "matrix.analysis"),
    ({"factors": {"model": ["a"]}, "analysis": "holm"}, "matrix.analysis"),
])
def test_non_mapping_blocks(block: Any, path: str) -> None:
    assert _err(block).key_path == path


@pytest.mark.parametrize("block,path", [
    ({"factors": {"model": ["a"]}, "replication": 2}, "matrix.replication"),
    ({"factors": {"model": ["a"]}, "analysis": {"corection": "holm"}}, "matrix.analysis.corection"),
])
def test_unknown_keys(block: Any, path: str) -> None:
    err = _err(block)
    assert err.key_path == path
    assert "unknown key" in err.message


def test_running_requires_a_factor_but_analysis_does_not() -> None:
    assert _err({"factors": {}}).key_path == "matrix.factors"
    assert MatrixBuilder.from_yaml({"factors": {}}, strict=False).n_conditions == 1


def test_defaults() -> None:
    m = MatrixBuilder.from_yaml({"factors": {"model": ["a", "b"]}})
    assert m.replications == 1
    assert m.block.analysis.correction == "holm"
    assert m.block.analysis.per_judge is False
    assert m.block.analysis.method == "auto"  # rm when complete, else mixed (issue 15)


@pytest.mark.parametrize("value", ["bogus", "wald", 5, None, True])
def test_bad_ddf(value: Any) -> None:
    err = _err({"factors": {"model": ["a"]}, "analysis": {"ddf": value}})
    assert err.key_path == "matrix.analysis.ddf"
    assert "kenward-roger (default) or satterthwaite" in err.one_line()


@pytest.mark.parametrize("name,canonical", [("KR", "kenward-roger"), ("Kenward_Roger", "kenward-roger"),
                                            ("Satterthwaite", "satterthwaite")])
def test_ddf_any_case_and_alias(name: str, canonical: str) -> None:
    m = MatrixBuilder.from_yaml({"factors": {"model": ["a"]}, "analysis": {"ddf": name}})
    assert m.block.analysis.ddf == canonical
    assert MatrixBuilder.from_yaml({"factors": {"model": ["a"]}}).block.analysis.ddf == "kenward-roger"

"""``orchestrate schema``: the JSON Schema accepts every config the loader accepts,
including ``extends`` (resolved by the loader before the model validates)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from eval_harness.config.schema import eval_schema
from eval_harness.starter import template_text
from tests.conftest import ROOT, run_cli


def _validate(doc: object) -> None:
    jsonschema.validate(doc, eval_schema())


def test_cli_prints_the_schema() -> None:
    code, out, _ = run_cli("schema")
    assert code == 0 and json.loads(out) == eval_schema()


@pytest.mark.parametrize("extends", ["base.yaml", ["a.yaml", "b.yaml"]])
def test_extends_is_accepted(extends: object) -> None:
    _validate({"name": "x", "extends": extends})


def test_bad_extends_and_unknown_keys_are_rejected() -> None:
    with pytest.raises(jsonschema.ValidationError):
        _validate({"name": "x", "extends": 3})
    with pytest.raises(jsonschema.ValidationError):
        _validate({"name": "x", "extendz": "a.yaml"})


def test_shipped_configs_validate() -> None:
    _validate(yaml.safe_load((ROOT / "configs" / "example.yaml").read_text()))
    _validate(yaml.safe_load(template_text("eval.yaml")))


def test_a_profile_config_loads_and_validates(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("name: base\nexecution: {timeout: 5}\n")
    (tmp_path / "eval.yaml").write_text("extends: base.yaml\nname: child\n")
    _validate(yaml.safe_load((tmp_path / "eval.yaml").read_text()))
    code, out, err = run_cli("--config", str(tmp_path / "eval.yaml"), "--print-config", "--json")
    assert code == 0, err
    assert json.loads(out)["execution"]["timeout"] == 5


def test_empty_matrix_and_empty_levels_are_refused_by_schema_and_loader(tmp_path: Path) -> None:
    """Issue 22: `matrix:` with no value loaded as "no matrix", and the schema accepted an
    empty level list that the loader rejects."""
    from eval_harness.config.loader import load_config
    from eval_harness.errors import ConfigError

    for doc, match in (({"name": "x", "matrix": None}, "matrix must be a mapping"),
                       ({"name": "x", "matrix": {"factors": {"model": []}}}, "non-empty")):
        with pytest.raises(jsonschema.ValidationError):
            _validate(doc)
        path = tmp_path / "eval.yaml"
        path.write_text(yaml.safe_dump(doc))
        with pytest.raises(ConfigError, match=match):
            load_config(path, strict=False)
    _validate({"name": "x", "matrix": {"factors": {"model": ["a"]}}})
    _validate({"name": "x"})  # no matrix at all is fine

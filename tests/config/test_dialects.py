"""The config-dialect seam: the loader applies the dialects it is given (else the
registered ones), then this tool's own defaults (name, runner)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from eval_harness.config.defaults import apply_defaults, default_runner
from eval_harness.config.dialects import registered_dialects
from eval_harness.config.loader import load_config
from eval_harness.errors import ConfigError

NATIVE = "judges:\n  - {name: ok, check: 'return True'}\n"


def test_without_dialects_native_defaults_apply(tmp_path: Path) -> None:
    path = tmp_path / "my-eval.yaml"
    path.write_text(NATIVE)
    loaded = load_config(path, dialects=())
    assert loaded.config.name == "my-eval"
    assert loaded.raw["runner"] == {"type": "claude-code"}
    folder = tmp_path / "named"
    folder.mkdir()
    (folder / "eval.yaml").write_text(NATIVE)
    assert load_config(folder / "eval.yaml", dialects=()).config.name == "named"


def test_default_runner() -> None:
    assert default_runner(None) == {"type": "claude-code"}
    assert default_runner({"command": "./a.sh"}) == {"command": "./a.sh", "type": "cli"}
    assert default_runner({"type": "http", "url": "u"}) == {"type": "http", "url": "u"}
    assert default_runner(["not", "a", "block"]) == ["not", "a", "block"]
    assert apply_defaults({"name": "x", "runner": None}, Path("e.yaml"))["runner"] == {
        "type": "claude-code"}


def test_without_the_aeh_dialect_its_keys_are_unknown(tmp_path: Path) -> None:
    path = tmp_path / "eval.yaml"
    path.write_text(NATIVE + "permissions: {deny: [Bash]}\n")
    with pytest.raises(ConfigError, match="unknown key `permissions`"):
        load_config(path, dialects=())
    assert registered_dialects()  # the doors (and tests/conftest) register AEH's
    loaded = load_config(path)
    assert loaded.raw["runner"]["disallowed_tools"] == ["Bash"]


def test_given_dialects_apply_in_order_before_the_defaults(tmp_path: Path) -> None:
    seen: list[str] = []

    def rename(raw: dict[str, Any], path: Path, environ: Mapping[str, str]) -> dict[str, Any]:
        seen.append(path.name)
        out = dict(raw)
        out["judges"] = out.pop("checks")
        return out

    def title(raw: dict[str, Any], path: Path, environ: Mapping[str, str]) -> dict[str, Any]:
        assert "judges" in raw and "runner" not in raw  # after `rename`, before defaults
        return {**raw, "title": environ.get("TITLE", "none")}

    path = tmp_path / "other.yaml"
    path.write_text("checks:\n  - {name: ok, check: 'return True'}\n")
    loaded = load_config(path, env={"TITLE": "T"}, dialects=(rename, title))
    assert seen == ["other.yaml"]
    assert loaded.config.title == "T" and loaded.config.judges[0].name == "ok"

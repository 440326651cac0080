"""Issue 22: YAML 1.1 boolean words and levels that collide as text are load errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval_harness.config.loader import load_config
from eval_harness.config.yamlio import yaml11_booleans
from eval_harness.errors import ConfigError

BASE = "name: x\nrunner: {type: cli, command: 'echo {retrieval}'}\nmatrix:\n  factors:\n"


def _load(tmp: Path, factors: str) -> None:
    path = tmp / "eval.yaml"
    path.write_text(BASE + factors)
    load_config(path, strict=False)


def test_unquoted_boolean_words_as_levels_are_refused(tmp_path: Path) -> None:
    # main: [off, on] loaded as False/True without a word
    with pytest.raises(ConfigError, match=r"YAML 1\.1 boolean") as info:
        _load(tmp_path, "    retrieval: [off, on]\n")
    assert "matrix.factors.retrieval[0]" in str(info.value)
    assert 'quote it: retrieval: ["off"' in info.value.one_line()
    for words in ("[yes, no]", "[y, n]", "[On, OFF]"):
        with pytest.raises(ConfigError, match=r"YAML 1\.1 boolean"):
            _load(tmp_path, f"    retrieval: {words}\n")
    _load(tmp_path, '    retrieval: ["off", "on"]\n')  # quoted: text, accepted
    _load(tmp_path, "    retrieval: [true, false]\n")  # explicit booleans: accepted


def test_levels_colliding_as_text_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="same text '1'"):
        _load(tmp_path, "    retrieval: [1, '1']\n")
    with pytest.raises(ConfigError, match="same text 'True'"):
        _load(tmp_path, "    retrieval: [true, 'True']\n")


def test_boolean_words_elsewhere_are_listed_not_refused() -> None:
    found = yaml11_booleans("a: on\nb: 'on'\nc: [x, no]\n")
    assert sorted((p, w) for p, w, _ in found) == [(("a",), "on"), (("c", 1), "no")]

"""docs/security.md's list of the variables a child never sees is the code's list
(eval_harness/_util/child_env.py), not a copy kept by hand."""
from __future__ import annotations

import re

from eval_harness._util.child_env import CI_PREFIXES, CI_STEP_FILES, child_env, is_ci_channel
from tests.conftest import ROOT


def _doc_list() -> str:
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- child-env:start -->(.*?)<!-- child-env:end -->", text, re.S)
    assert found, "docs/security.md lost its child-env markers"
    return found.group(1)


def test_the_documented_child_env_list_is_the_codes() -> None:
    bullets = [b for b in re.split(r"\n\s*- ", _doc_list()) if b.strip()]
    assert len(bullets) == 2, bullets
    files = re.findall(r"`([A-Z_]+)`", bullets[0])
    assert tuple(files) == CI_STEP_FILES
    prefixes = re.findall(r"every `([A-Z_]+)\*` variable", bullets[1])
    assert tuple(prefixes) == CI_PREFIXES
    # and every example the doc names is one the code drops
    for name in re.findall(r"`([A-Z][A-Z_]+)`", bullets[1]):
        assert is_ci_channel(name), name
    assert not set(child_env({n: "x" for n in files}, base={})) & set(files)

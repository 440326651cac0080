"""Issue 34, attack 1: levels that differ only in what selects the account or back end
(``runner.headers``, ``runner.api_key``) never share cached replies, and no credential
reaches the cache file in clear."""
from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from json_http import JsonServer

KEYS = {"a": "sk-level-a-1111111111", "b": "sk-level-b-2222222222"}


def _answer(path: str, headers: dict[str, str], body: Any) -> tuple[int, Any, None]:
    """Reply with what selected the back end: the X-Backend header and the key's owner."""
    owner = next((k for k, v in KEYS.items() if headers.get("authorization") == f"Bearer {v}"),
                 "?")
    text = f"backend={headers.get('x-backend', '-')} key={owner}"
    return 200, {"choices": [{"message": {"role": "assistant", "content": text}}],
                 "usage": {"prompt_tokens": 10, "completion_tokens": 5}}, None


def _eval(tmp: Path, base: str, levels: list[dict[str, Any]]) -> Path:
    (tmp / "cases.yaml").write_text(yaml.safe_dump(
        [{"id": f"c{i}", "input": {"question": f"q{i}"}} for i in range(3)]))
    cfg = {"name": "ident",
           "matrix": {"factors": {"backend": levels}, "replications": 2},
           "runner": {"type": "openai", "base_url": base, "api_key": KEYS["a"]},
           "dataset": {"path": "cases.yaml"},
           "execution": {"timeout": 20, "retries": 0},
           "pricing": {"stub-model": {"input": 1.0, "output": 1.0}},
           "models": {"skill": "stub-model"},
           "judges": [{"name": "ok", "check": "return True, 'ok'"}]}
    path = tmp / "eval.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


@pytest.mark.parametrize("field,levels,want", [
    ("headers", [{"name": "a", "set": {"runner.headers": {"X-Backend": "a"}}},
                 {"name": "b", "set": {"runner.headers": {"X-Backend": "b"}}}],
     {"a": "backend=a key=a", "b": "backend=b key=a"}),
    ("api_key", [{"name": "a", "set": {"runner.api_key": KEYS["a"]}},
                 {"name": "b", "set": {"runner.api_key": KEYS["b"]}}],
     {"a": "backend=- key=a", "b": "backend=- key=b"}),
])
def test_levels_differing_only_in_headers_or_key_get_their_own_replies(
        tmp_path, cli, _private_call_cache, field, levels, want):
    with JsonServer(_answer) as stub:
        cfg = _eval(tmp_path, stub.openai_base, levels)
        for runs in ("r1", "r2"):  # the second run replays every cell from the cache
            code, _, err = cli("--config", str(cfg), "--runs-dir", str(tmp_path / runs),
                               "--no-analysis", "--concurrency", "1")
            assert code == 0, err
            recs = list((tmp_path / runs / "ident").glob("*/cases/*/record.json"))
            assert len(recs) == 2 * 3 * 2, recs
            for path in recs:
                rec = json.loads(path.read_text())
                output = json.loads((path.parent / "outputs.json").read_text())["output"]
                assert output == want[rec["levels"]["backend"]], (field, runs, rec)
                assert bool(rec.get("cache_hit")) is (runs == "r2"), (field, runs, rec)
    dump = "\n".join(sqlite3.connect(_private_call_cache / "calls.sqlite3").iterdump())
    assert KEYS["a"] not in dump and KEYS["b"] not in dump and "Bearer" not in dump

"""The mistakes corpus: 20 common mistakes a new user makes. Each ends with a non-zero exit
or an explicit warning line naming the cause; none ends silently with exit 0."""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import run_cli

AGENT = "import sys\nprint('Answer: ' + sys.argv[1])\n"
Run = Callable[[Path, pytest.MonkeyPatch], tuple[int, str, str]]


def _cfg(tmp: Path, *, runner: dict[str, Any] | None = None, judges: list[Any] | None = None,
         factors: dict[str, list[Any]] | None = None, cases: list[dict[str, Any]] | None = None,
         **extra: Any) -> Path:
    (tmp / "agent.py").write_text(AGENT)
    cases = cases or [{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "Answer: a"}}]
    (tmp / "cases.yaml").write_text(yaml.safe_dump(cases))
    cfg = {"name": "m", "matrix": {"factors": factors or {"model": ["a", "b"]}},
           "runner": runner or {"type": "cli", "command": f"{sys.executable} -S agent.py {{model}}"},
           "dataset": {"path": "cases.yaml"}, "execution": {"retries": 0},
           "judges": judges or [{"name": "ok", "exact_match": True}], **extra}
    (tmp / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return tmp / "eval.yaml"


def _run(tmp: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli("--config", str(tmp / "eval.yaml"), "--runs-dir", str(tmp / "runs"),
                   "--output", str(tmp / "out"), *extra)


def _dry(tmp: Path) -> tuple[int, str, str]:
    return run_cli("--config", str(tmp / "eval.yaml"), "--dry-run")


def agent_path_typo(tmp: Path, mp: pytest.MonkeyPatch) -> tuple[int, str, str]:
    _cfg(tmp, runner={"type": "cli", "command": f"{sys.executable} -S agnet.py {{model}}"})
    return _run(tmp)


def judge_option(spec: dict[str, Any]) -> Run:
    def run(tmp: Path, mp: pytest.MonkeyPatch) -> tuple[int, str, str]:
        _cfg(tmp, judges=[{"name": "j", **spec}])
        return _dry(tmp)
    return run


def check_judge(body: str, dry: bool) -> Run:
    def run(tmp: Path, mp: pytest.MonkeyPatch) -> tuple[int, str, str]:
        _cfg(tmp, judges=[{"name": "j", "check": body}])
        return _dry(tmp) if dry else _run(tmp)
    return run


def unconsumed_factor(tmp: Path, mp: pytest.MonkeyPatch) -> tuple[int, str, str]:
    _cfg(tmp, factors={"model": ["a", "b"], "temperature": [0, 1]})
    return _dry(tmp)


def prompt_input_field(tmp: Path, mp: pytest.MonkeyPatch) -> tuple[int, str, str]:
    _cfg(tmp, runner={"type": "cli", "command": "/bin/echo {model} {qestion}"})
    return _dry(tmp)


def changed_agent(tmp: Path, mp: pytest.MonkeyPatch) -> tuple[int, str, str]:
    _cfg(tmp)
    _run(tmp, "--no-analysis")
    (tmp / "agent.py").write_text(AGENT + "# edited\n")
    return _run(tmp, "--no-analysis")


def analyze_without_config(tmp: Path, mp: pytest.MonkeyPatch) -> tuple[int, str, str]:
    _cfg(tmp)
    _run(tmp, "--no-analysis")
    (tmp / "runs" / "m" / "eval_config.json").unlink()  # runs copied without it
    return run_cli("--analyze-only", str(tmp / "runs" / "m"), "--output", str(tmp / "a"))


def case_id(cid: str) -> Run:
    def run(tmp: Path, mp: pytest.MonkeyPatch) -> tuple[int, str, str]:
        _cfg(tmp, cases=[{"id": cid, "input": {"q": "x"}, "expected": {"answer": "a"}}])
        return _dry(tmp)
    return run


def python_runner(source: str, function: str = "agentmod:run") -> Run:
    def run(tmp: Path, mp: pytest.MonkeyPatch) -> tuple[int, str, str]:
        (tmp / "agentmod.py").write_text(source)
        _cfg(tmp, runner={"type": "python", "function": function})
        return _run(tmp)
    return run


def top_level_typo(tmp: Path, mp: pytest.MonkeyPatch) -> tuple[int, str, str]:
    path = _cfg(tmp)
    path.write_text(path.read_text().replace("judges:", "judgs:"))
    return _dry(tmp)


def parquet_without_engine(tmp: Path, mp: pytest.MonkeyPatch) -> tuple[int, str, str]:
    _cfg(tmp)
    _run(tmp, "--no-analysis")
    mp.setitem(sys.modules, "pyarrow", None)
    mp.setitem(sys.modules, "fastparquet", None)
    return _run(tmp, "--export-parquet", str(tmp / "f.parquet"))


def llm_judge_without_model(tmp: Path, mp: pytest.MonkeyPatch) -> tuple[int, str, str]:
    _cfg(tmp, judges=[{"name": "q", "prompt": "Rate {{ outputs.output }}", "score_range": [1, 5]}])
    return _dry(tmp)


def dataset_path_typo(tmp: Path, mp: pytest.MonkeyPatch) -> tuple[int, str, str]:
    path = _cfg(tmp)
    path.write_text(path.read_text().replace("path: cases.yaml", "path: case.yaml"))
    return _dry(tmp)


# (name, mistake, expected exit code, text that must name the cause)
CORPUS: list[tuple[str, Run, int, str]] = [
    ("agent path typo", agent_path_typo, 4, "can't open file"),
    ("contains option typo", judge_option({"contains": {"al": ["a"]}}), 2, "did you mean `all`"),
    ("exact_match option typo", judge_option({"exact_match": {"refrence": "a"}}), 2,
     "did you mean `reference`"),
    ("tool_calls option typo", judge_option({"tool_calls": {"mx": 3}}), 2, "did you mean `max`"),
    ("expected field missing", judge_option({"contains": "{{ expected.nope }}"}), 2,
     "`expected.nope`"),
    ("command field missing", prompt_input_field, 2, "`{qestion}`"),
    ("check without return", check_judge("ok = True\n", dry=True), 2, "never returns a value"),
    ("check failing on every sample", check_judge("return outputs['nope'], ''\n", dry=False), 4,
     "judge `j` errored on every sample"),
    ("check calling sys.exit", check_judge("import sys\nsys.exit(1)\nreturn 1\n", dry=False), 4,
     "SystemExit: 1"),
    ("factor nothing consumes", unconsumed_factor, 0,
     "warning: factor `temperature` is consumed by nothing"),
    ("changed agent", changed_agent, 0, "the agent changed since the last run: agent.py"),
    ("analyze-only without config", analyze_without_config, 0, "warning: no config"),
    ("case id with a leading dot", case_id(".hidden"), 2, "starts with a dot"),
    ("case id too long", case_id("x" * 300), 2, "300 bytes long"),
    ("reserved case id", case_id("CON"), 2, "reserved device name"),
    ("python function calling os._exit", python_runner(
        "import os\ndef run(i, c):\n    os._exit(3)\n"), 4, "ended its process (exit code 3"),
    ("python module missing", python_runner("", "nosuchmod:run"), 2, "cannot import nosuchmod"),
    ("top-level key typo", top_level_typo, 2, "did you mean `judges`"),
    ("parquet engine missing", parquet_without_engine, 2, "factorial-eval-harness[parquet]"),
    ("LLM judge without a model", llm_judge_without_model, 2, "an LLM judge needs a model"),
    ("dataset path typo", dataset_path_typo, 2, "case.yaml"),
]


@pytest.mark.parametrize("name, mistake, code, cause", CORPUS, ids=[c[0] for c in CORPUS])
def test_mistake_is_never_silent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
                                 mistake: Run, code: int, cause: str) -> None:
    got, out, err = mistake(tmp_path, monkeypatch)
    assert got == code, f"{name}: exit {got}\n{err}"
    text = out + err
    assert cause in text, f"{name}: the cause is not named\n{text}"
    if got == 0:  # then an explicit warning line must name the cause
        assert any(cause in line and ("warning" in line or "[eval]" in line)
                   for line in text.splitlines()), text


def test_the_corpus_has_twenty_mistakes() -> None:
    assert len(CORPUS) >= 20

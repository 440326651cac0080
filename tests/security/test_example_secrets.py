"""The bundled example, run with fake keys set and ``--verbose --debug``: no form of any
configured secret appears in any file the run and the analysis wrote, nor in captured
stdout/stderr (the agent, a check judge and an LLM judge all see or echo the keys)."""

from __future__ import annotations

import html
import json
import shutil
import sys
import urllib.parse
from pathlib import Path

import pytest
import yaml

from tests.conftest import FIXTURES, ROOT, run_cli

sys.path.insert(0, str(FIXTURES))
from llm_stub import LLMStub

SECRETS = {
    "OPENAI_API_KEY": "sk-fake-openai-0123456789abcdef",        # clean: the LLM judge uses it
    "ANTHROPIC_API_KEY": "sk-ant-fake-9876543210fedcba\n",      # `$(cat key.txt)` newline
    "EXAMPLE_API_KEY": "  ex-agent-key-5555aaaa\n",             # given to the agent via env
}

# a check judge (trusted code) that tries hard to leak: rationale, print to both streams
LEAKY_CHECK = """
import os, sys
keys = [os.environ.get(k, "") for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "EXAMPLE_API_KEY")]
print("check sees", keys)
print("check stderr", keys, file=sys.stderr)
return True, "keys: " + " | ".join(keys) + " " + repr(keys)
"""


def _forms(value: str) -> set[str]:
    out = set()
    for v in {value, value.strip()}:
        out |= {v, json.dumps(v)[1:-1], html.escape(v), urllib.parse.quote(v, safe=""),
                repr(v)[1:-1]}
    return {f for f in out if f.strip()}


def _small_example(tmp: Path, judge_url: str) -> Path:
    shutil.copytree(ROOT / "configs" / "example", tmp / "example")
    lines = (tmp / "example" / "cases.jsonl").read_text().splitlines()[:6]
    (tmp / "example" / "cases.jsonl").write_text("\n".join(lines) + "\n")
    cfg = yaml.safe_load((ROOT / "configs" / "example.yaml").read_text())
    cfg["matrix"]["factors"] = {"model": ["example-small", "example-large"],
                                "effort": ["low", "high"]}
    cfg["runner"]["command"] = cfg["runner"]["command"].replace("{context}", "none")
    cfg["matrix"]["replications"] = 1
    cfg["execution"]["env"] = {"EXAMPLE_API_KEY": "${EXAMPLE_API_KEY}"}
    cfg["models"] = {"judge": "openai:stub-judge"}
    cfg["judges"] += [
        {"name": "leaky", "description": "echoes the keys", "check": LEAKY_CHECK},
        {"name": "graded", "description": "an LLM judge", "prompt":
            "Grade {{ outputs.output }} against {{ expected }}", "score_range": [1, 5]},
    ]
    cfg["composite"]["weights"].update(leaky=1, graded=1)
    path = tmp / "eval.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def test_no_secret_form_in_any_file_or_stream(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    with LLMStub() as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.openai_base)
        cfg = _small_example(tmp_path, stub.openai_base)
        runs, out = tmp_path / "runs", tmp_path / "analysis"
        code, stdout, stderr = run_cli("--config", str(cfg), "--runs-dir", str(runs),
                                       "--output", str(out), "--verbose", "--debug",
                                       "--concurrency", "2")
        code2, stdout2, stderr2 = run_cli("--analyze-only", str(runs / "example"),
                                          "--output", str(tmp_path / "again"), "--verbose",
                                          "--debug", "--config", str(cfg))
        sent = [r["headers"] for r in stub.requests]
    assert code in (0, 1) and code2 in (0, 1), stderr + stderr2
    # the judge really received the key (so it was in play) and the agent ran
    assert any({k.lower(): v for k, v in h.items()}.get("authorization")
               == f"Bearer {SECRETS['OPENAI_API_KEY']}" for h in sent)
    files = [p for p in tmp_path.rglob("*") if p.is_file()
             and not p.is_relative_to(tmp_path / "example")]
    written = [p for p in files if p.suffix in (".json", ".log", ".md", ".html", ".jsonl")]
    assert any(p.name == "record.json" for p in written) and any(
        p.name == "report.html" for p in written) and any(p.name == "stderr.log" for p in written)
    assert "check stderr" in stderr or any(
        "check stderr" in p.read_text(errors="replace") for p in written)
    texts = {str(p): p.read_bytes().decode("utf-8", "replace") for p in files}
    texts.update(stdout=stdout, stderr=stderr, stdout2=stdout2, stderr2=stderr2)
    for name, value in SECRETS.items():
        for form in _forms(value):
            leaks = [where for where, text in texts.items() if form in text]
            assert not leaks, f"{name} form {form!r} found in {leaks}"

"""User code that ends its process (os._exit, sys.exit) in a python-runner function or a
`check` judge is an errored cell / sample with a reason, and the run goes on. It used to
end the whole run with exit 0, no message and no records. Run as a real process: before
the fix, the os._exit would have ended the test run itself."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import yaml

from eval_harness._util.isolated_calls import POOL, Pool

REPO = Path(__file__).resolve().parents[2]


def _write(tmp: Path, runner: dict[str, Any], judges: list[dict[str, Any]] | None = None,
           n_cases: int = 3, execution: dict[str, Any] | None = None) -> Path:
    (tmp / "cases.yaml").write_text(yaml.safe_dump(
        [{"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": "a"}}
         for i in range(n_cases)]))
    cfg = {"name": "iso", "matrix": {"factors": {"model": ["m1", "m2"]}}, "runner": runner,
           "dataset": {"path": "cases.yaml"}, "execution": {"retries": 0, **(execution or {})},
           "judges": judges or [{"name": "any", "regex": "."}]}
    (tmp / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return tmp / "eval.yaml"


def _orchestrate(tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "orchestrate.py"), "--config", str(tmp / "eval.yaml"),
         "--runs-dir", str(tmp / "runs"), "--output", str(tmp / "out"), *extra],
        cwd=tmp, capture_output=True, text=True, timeout=120)


def _records(tmp: Path) -> dict[tuple[str, str], dict[str, Any]]:
    out = {}
    for path in (tmp / "runs" / "iso").glob("*/cases/*/record.json"):
        rec = json.loads(path.read_text())
        out[(rec["levels"]["model"], rec["case_id"])] = rec
    return out


def test_python_runner_function_that_exits_errors_its_cell_and_the_run_goes_on(
        tmp_path: Path) -> None:
    (tmp_path / "agentmod.py").write_text(
        "import os, sys\n"
        "def run(input, context):\n"
        "    if input['q'] == 'q1':\n        os._exit(3)\n"
        "    if input['q'] == 'q2':\n        sys.exit('bye')\n"
        "    return 'answer ' + context['model']\n")
    _write(tmp_path, {"type": "python", "function": "agentmod:run"})
    proc = _orchestrate(tmp_path)
    assert proc.returncode == 0, proc.stderr  # 2 of 6 cells errored: a result, not a crash
    recs = _records(tmp_path)
    assert len(recs) == 6  # every cell has a record
    for model in ("m1", "m2"):
        assert recs[(model, "c0")]["status"] == "ok"
        died = recs[(model, "c1")]
        assert died["status"] == "errored"
        assert "ended its process (exit code 3" in died["reason"]
        assert recs[(model, "c2")]["status"] == "errored"
        assert recs[(model, "c2")]["reason"] == "SystemExit: bye"
    assert "errored:" in proc.stderr and "ended its process" in proc.stderr


def test_check_judge_that_exits_errors_its_sample_and_the_run_goes_on(tmp_path: Path) -> None:
    judges = [{"name": "quitter", "check": "import os\nif input['q'] == 'q1':\n"
               "    os._exit(4)\nreturn True, 'ok'\n"},
              {"name": "leaver", "check": "import sys\nif input['q'] == 'q2':\n"
               "    sys.exit(0)\nreturn True, 'ok'\n"}]
    _write(tmp_path, {"type": "cli", "command": "/bin/echo {model}"}, judges)
    proc = _orchestrate(tmp_path)
    assert proc.returncode == 0, proc.stderr
    recs = _records(tmp_path)
    assert len(recs) == 6 and all(r["status"] == "ok" for r in recs.values())
    for model in ("m1", "m2"):
        quit_score = recs[(model, "c1")]["scores"]["quitter"]
        assert quit_score["errored"] and "ended its process (exit code 4" in quit_score["error"]
        leave = recs[(model, "c2")]["scores"]["leaver"]
        assert leave["errored"] and leave["error"] == "SystemExit: 0"
        assert recs[(model, "c0")]["scores"]["quitter"]["value"] is True
    assert (tmp_path / "out" / "report.md").exists()


def test_a_timed_out_call_is_killed_not_left_running(tmp_path: Path) -> None:
    (tmp_path / "slowmod.py").write_text(
        "import os, time\n"
        "def run(input, context):\n"
        "    open(os.path.join(os.path.dirname(__file__), 'pid-' + str(os.getpid())), 'w')\n"
        "    time.sleep(30)\n")
    pool = Pool()
    try:
        start = time.monotonic()
        out = pool.call(("call", "slowmod", "run", str(tmp_path), ({}, {}), {}), 0.5)
        assert out.status == "timeout" and out.reason(0.5) == "timeout after 0.5s"
        assert time.monotonic() - start < 10
        [pid_file] = tmp_path.glob("pid-*")
        pid = int(pid_file.name[4:])
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()
    finally:
        pool.shutdown()


def test_cancel_stops_the_wait_and_the_child(tmp_path: Path) -> None:
    (tmp_path / "waitmod.py").write_text("import time\ndef run():\n    time.sleep(30)\n")
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    start = time.monotonic()
    out = POOL.call(("call", "waitmod", "run", str(tmp_path), (), {}), 60, cancel)
    assert out.status == "cancelled" and time.monotonic() - start < 10


def test_values_exceptions_and_prints_cross_cleanly(tmp_path: Path) -> None:
    (tmp_path / "valmod.py").write_text(
        "import sys\n"
        "class TransientError(Exception):\n    pass\n"
        "def ok(x):\n    print('noise on stdout'); sys.stdin.read()\n"
        "    return {'output': x, 'cost_usd': 0.5}\n"
        "def bad():\n    raise ValueError('nope')\n"
        "def later():\n    raise TransientError('busy')\n"
        "def unpicklable():\n    return lambda: 1\n")
    call = lambda fn, *a: POOL.call(("call", "valmod", fn, str(tmp_path), a, {}), 30)  # noqa: E731
    assert call("ok", "hi").value == {"output": "hi", "cost_usd": 0.5}
    bad = call("bad")
    assert (bad.status, bad.error_type, bad.last_line) == ("error", "ValueError",
                                                           "ValueError: nope")
    assert call("later").error_type == "TransientError"
    assert "cannot be sent back" in call("unpicklable").last_line
    assert call("ok", "again").value["output"] == "again"  # the child is still usable


def test_user_code_stderr_is_masked_on_the_console(tmp_path: Path) -> None:
    """Attack (issue 28): a check judge and a python-runner function print a key to
    stderr; under --verbose --debug it reached the console unmasked (the children wrote
    to the inherited fd 2, past the CLI's secret mask)."""
    secret = "sk-FAKE-0123456789abcdef"
    (tmp_path / "leaky.py").write_text(
        "import os, sys\n"
        "def answer(input, context=None):\n"
        "    print('runner sees', os.environ['LEAKY_API_KEY'], file=sys.stderr, flush=True)\n"
        "    return 'a'\n")
    check = ("import os, sys\nprint('check sees', os.environ['LEAKY_API_KEY'], file=sys.stderr)\n"
             "return True, 'ok'")
    _write(tmp_path, {"type": "python", "function": "leaky:answer"},
           [{"name": "leaky", "check": check}], n_cases=1)
    env = {**__import__("os").environ, "LEAKY_API_KEY": secret}
    proc = subprocess.run(
        [sys.executable, str(REPO / "orchestrate.py"), "--config", str(tmp_path / "eval.yaml"),
         "--runs-dir", str(tmp_path / "runs"), "--output", str(tmp_path / "out"),
         "--verbose", "--debug", "--no-analysis"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "check sees ***" in proc.stderr and "runner sees ***" in proc.stderr
    assert secret not in proc.stderr + proc.stdout

"""The ``python`` runner for real: user modules next to eval.yaml, called in threads."""
from __future__ import annotations

import json
import signal
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from runner_helpers import FakeScorer, options, records, write_eval

from eval_harness.errors import ConfigError
from eval_harness.matrix.experiment import prepare
from eval_harness.runner.contract import RunRequest
from eval_harness.runner.engine import execute
from eval_harness.runner.runner_types import build_runner
from eval_harness.trace.reader import read_trace

CALL_THREAD = "python-runner-call"  # the name pyfunc gives its call threads


@pytest.fixture
def user_module(tmp_path: Path):
    """``write(source) -> module name``: a uniquely named module in the config dir.

    Teardown sets the module's ``RELEASE`` event (if any) so no call thread lingers, checks
    that every call thread ended, and restores sys.path / sys.modules."""
    path_before = list(sys.path)
    names: list[str] = []

    def write(source: str) -> str:
        name = f"pyf_{uuid.uuid4().hex[:12]}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        names.append(name)
        return name

    yield write
    for name in names:
        release = getattr(sys.modules.get(name), "RELEASE", None)
        if release is not None:
            release.set()
    lingering = [t for t in threading.enumerate() if t.name == CALL_THREAD]
    for t in lingering:
        t.join(5)
    assert not [t for t in lingering if t.is_alive()], "a python-runner call thread lingers"
    for name in names:
        sys.modules.pop(name, None)
    sys.path[:] = path_before


def _eval(tmp_path: Path, module: str, *, factors: dict[str, list[Any]] | None = None,
          execution: dict[str, Any] | None = None, runner: dict[str, Any] | None = None,
          n_cases: int = 3) -> Path:
    # in-process (isolate: false): these tests read the module's state in this process;
    # the default, isolated mode is covered in test_pyfunc_isolated.py
    return write_eval(tmp_path, factors=factors or {"model": ["m1"]}, n_cases=n_cases,
                      runner={"type": "python", "function": f"{module}:run", "isolate": False,
                              **(runner or {})},
                      execution=execution)


def _case(eval_dir: Path, case_id: str) -> Path:
    [case] = eval_dir.glob(f"*/cases/{case_id}")
    return case


def _by_case(recs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["case_id"]: r for r in recs}


def test_str_answer_is_scored_and_context_is_complete(tmp_path: Path, user_module) -> None:
    mod = user_module("""
        import sys
        CALLS = []

        def run(input, context):
            CALLS.append((input, context, list(sys.path)))
            if context["case_id"] == "c02":
                return 42  # not a str: recorded as its text
            return "answer-" + context["case_id"]
        """)
    cfg = _eval(tmp_path, mod, factors={"model": ["m1"], "effort": ["high"],
                                        "subagent": ["sub-1"], "style": ["terse"]})
    scorer = FakeScorer()
    summary = execute(prepare(cfg), scorer, options(tmp_path / "runs"))
    recs = _by_case(records(summary.eval_dir))
    assert sorted(recs) == ["c00", "c01", "c02"] and summary.ok == 3
    assert recs["c00"]["composite"] == 1.0 and recs["c01"]["composite"] == 1.0
    assert recs["c02"]["status"] == "ok" and recs["c02"]["composite"] == 0.0
    assert {s.case_id: s.outputs["output"] for s in scorer.calls} == {
        "c00": "answer-c00", "c01": "answer-c01", "c02": "42"}
    assert all(r["cost_usd"] is None and r["tokens"] is None and r["tool_calls"] is None
               for r in recs.values())  # nothing stated, nothing invented
    calls = {ctx["case_id"]: (inp, ctx, path) for inp, ctx, path in sys.modules[mod].CALLS}
    inp, ctx, path = calls["c01"]
    assert inp == {"question": "q1", "style": "terse"}  # the override reaches the input
    assert str(tmp_path) in path  # the config dir is importable
    cid = recs["c01"]["condition_id"]
    assert ctx == {"model": "m1", "effort": "high", "subagent_model": "sub-1", "case_id": "c01",
                   "condition_id": cid, "levels": {"model": "m1", "effort": "high",
                                                   "subagent": "sub-1", "style": "terse"},
                   "replication": 1,
                   "output_dir": str(_case(summary.eval_dir, "c01") / "output")}


def test_mapping_reply_lands_in_record_and_outputs(tmp_path: Path, user_module) -> None:
    mod = user_module("""
        def run(input, context):
            if context["case_id"] == "c01":  # no cost stated: priced from runner.pricing
                return {"output": "answer-c01", "usage": {"input_tokens": 7, "output_tokens": 3}}
            return {"output": "answer-" + context["case_id"], "cost_usd": 0.25,
                    "usage": {"input_tokens": 100, "output_tokens": 20},
                    "steps": [{"tool": "search", "arguments": {"q": input["question"]}},
                              "calculator"]}
        """)
    cfg = _eval(tmp_path, mod, n_cases=2, runner={"pricing": {"m1": [1.0, 2.0]}})
    summary = execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs"))
    recs = _by_case(records(summary.eval_dir))
    r0, r1 = recs["c00"], recs["c01"]
    assert r0["status"] == "ok" and r0["composite"] == 1.0
    assert (r0["cost_usd"], r0["tokens"], r0["input_tokens"], r0["output_tokens"],
            r0["tool_calls"]) == (0.25, 120, 100, 20, 2)
    assert r1["cost_usd"] == pytest.approx((7 * 1.0 + 3 * 2.0) / 1e6)
    assert r1["tokens"] == 10 and r1["tool_calls"] is None
    out = json.loads((_case(summary.eval_dir, "c00") / "outputs.json").read_text())
    assert out["output"] == "answer-c00" and out["cost_usd"] == 0.25 and out["tokens"] == 120
    assert "trace" not in out  # it is trace.json
    trace = read_trace(_case(summary.eval_dir, "c00"))
    assert trace is not None and [(s.kind, s.name, s.input) for s in trace.steps] == [
        ("tool", "search", {"q": "q0"}), ("tool", "calculator", None)]
    assert out["reply"]["steps"][1] == "calculator" and out["failure"] == "none"
    assert out["attempts"] == 1 and out["error"] is None


def test_exception_errors_the_cell_never_a_score(tmp_path: Path, user_module) -> None:
    mod = user_module("""
        def run(input, context):
            if context["case_id"] == "c01":
                raise ValueError("bad input " + input["question"])
            return "answer-" + context["case_id"]
        """)
    cfg = _eval(tmp_path, mod, execution={"retries": 2})
    scorer = FakeScorer()
    summary = execute(prepare(cfg), scorer, options(tmp_path / "runs"))
    recs = _by_case(records(summary.eval_dir))
    bad = recs["c01"]
    assert bad["status"] == "errored" and bad["reason"] == "ValueError: bad input q1"
    assert bad["scores"] == {} and bad["composite"] is None
    assert bad["attempts"] == 1  # an ordinary exception is not retried
    assert summary.ok == 2 and summary.errored == 1
    assert sorted(s.case_id for s in scorer.calls) == ["c00", "c02"]
    out = json.loads((_case(summary.eval_dir, "c01") / "outputs.json").read_text())
    assert out["failure"] == "error" and out["error"] == "ValueError: bad input q1"


def test_transient_error_is_retried(tmp_path: Path, user_module) -> None:
    mod = user_module("""
        import threading
        from eval_harness.runner.pyfunc import TransientError
        SEEN = {}
        LOCK = threading.Lock()

        def run(input, context):
            case = context["case_id"]
            with LOCK:
                SEEN[case] = SEEN.get(case, 0) + 1
                n = SEEN[case]
            if case == "c01":
                raise TransientError("still overloaded")
            if n == 1:
                raise TransientError("overloaded")
            return "answer-" + case
        """)
    cfg = _eval(tmp_path, mod, n_cases=2, execution={"retries": 2})
    summary = execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs"))
    recs = _by_case(records(summary.eval_dir))
    assert recs["c00"]["status"] == "ok" and recs["c00"]["composite"] == 1.0
    assert recs["c00"]["attempts"] == 2
    assert recs["c01"]["status"] == "errored"
    assert recs["c01"]["reason"] == "transient: still overloaded"
    assert recs["c01"]["attempts"] == 3  # the first call plus 2 retries
    assert sys.modules[mod].SEEN == {"c00": 2, "c01": 3}


def test_timeout_ends_the_cell_and_the_engine_moves_on(tmp_path: Path, user_module) -> None:
    mod = user_module("""
        import threading
        RELEASE = threading.Event()
        LATE = []

        def run(input, context):
            if context["case_id"] == "c00":
                RELEASE.wait(3.0)  # far past the 0.3 s timeout (the test releases it)
                LATE.append(context["case_id"])
                return "answer-c00"
            return "answer-" + context["case_id"]
        """)
    cfg = _eval(tmp_path, mod, execution={"timeout": 0.3})
    start = time.monotonic()
    summary = execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs", concurrency=1))
    elapsed = time.monotonic() - start
    assert elapsed < 2.5  # did not wait out the 3 s call (generous slack for a slow box)
    recs = _by_case(records(summary.eval_dir))
    hung = recs["c00"]
    assert hung["status"] == "errored" and hung["reason"] == "timeout after 0.3s"
    assert 0.3 <= hung["latency_s"] < 2.5 and hung["scores"] == {} and hung["composite"] is None
    # one worker: the other cases still ran after the abandoned call
    assert recs["c01"]["status"] == "ok" and recs["c02"]["status"] == "ok"
    # the abandoned call finishes in the background; its late answer is discarded
    module = sys.modules[mod]
    module.RELEASE.set()
    for t in [t for t in threading.enumerate() if t.name == CALL_THREAD]:
        t.join(5)
    assert module.LATE == ["c00"]
    again = json.loads((_case(summary.eval_dir, "c00") / "record.json").read_text())
    assert again["status"] == "errored" and again["reason"] == "timeout after 0.3s"


def test_cancel_all_stops_the_wait(tmp_path: Path, user_module) -> None:
    mod = user_module("""
        import threading
        RELEASE = threading.Event()
        STARTED = threading.Event()

        def run(input, context):
            STARTED.set()
            RELEASE.wait(3.0)
            return "too late"
        """)
    cfg = _eval(tmp_path, mod, n_cases=1)
    exp = prepare(cfg)
    [cid] = exp.effective
    runner = build_runner(exp.effective[cid])
    runner.preflight(tmp_path)  # imports the module (as the engine does before running)
    case_dir = tmp_path / "case"
    case_dir.mkdir()
    request = RunRequest(case_id="c00", input={"question": "q0"}, condition_id=cid,
                         levels={"model": "m1"}, replication=1, model="m1", effort=None,
                         subagent_model=None, config=exp.effective[cid], config_dir=tmp_path,
                         case_dir=case_dir)
    results: list[Any] = []
    caller = threading.Thread(target=lambda: results.append(runner.run(request)))
    caller.start()
    assert sys.modules[mod].STARTED.wait(5)
    start = time.monotonic()
    runner.cancel_all()
    caller.join(5)
    assert not caller.is_alive() and time.monotonic() - start < 2.0
    [result] = results
    assert result.failure == "error" and result.reason == "cancelled" and result.output == ""


def test_ctrl_c_cancels_the_call_in_flight_and_records_nothing(
        tmp_path: Path, user_module, request: pytest.FixtureRequest) -> None:
    mod = user_module("""
        import _thread
        import threading
        import time
        RELEASE = threading.Event()

        def run(input, context):
            time.sleep(0.05)  # the main thread is in the engine's wait loop by now
            _thread.interrupt_main()  # as if Ctrl-C were pressed mid-call
            RELEASE.wait(3.0)
            return "too late"
        """)
    cfg = _eval(tmp_path, mod, n_cases=1)
    # a process started in the background by a non-interactive shell inherits SIGINT ignored,
    # and then interrupt_main() does nothing: install Python's own handler for this test
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        execute(prepare(cfg), FakeScorer(), options(tmp_path / "runs"))
    assert time.monotonic() - start < 2.5  # cancel_all stopped the wait for the 3 s call
    assert records(tmp_path / "runs" / "t") == []  # cancelled: left for the rerun
    [run_json] = (tmp_path / "runs" / "t").glob("*/run.json")
    assert json.loads(run_json.read_text())["status"] == "aborted"


@pytest.mark.parametrize("source, spec, message", [
    (None, "pyf_missing_{uid}:run", "cannot import pyf_missing_"),
    ("run = 42\n", "{mod}:run", "is not a function"),
    ("def other(input, context):\n    return 'x'\n", "{mod}:run", "is not a function"),
    ("raise RuntimeError('boom at import')\n", "{mod}:run", "RuntimeError: boom at import"),
])
def test_bad_function_is_a_config_error_exit_2(tmp_path: Path, user_module, cli,
                                               source: str | None, spec: str,
                                               message: str) -> None:
    mod = user_module(source) if source is not None else "unused"
    function = spec.format(mod=mod, uid=uuid.uuid4().hex[:12])
    cfg = write_eval(tmp_path, factors={"model": ["m1", "m2"]}, n_cases=2,
                     runner={"type": "python", "function": function})
    runs = tmp_path / "runs"
    code, _, err = cli("--config", str(cfg), "--runs-dir", str(runs), "--no-judge-check",
                       "--no-analysis")
    assert code == 2, err
    assert "runner.function" in err and message in err
    assert not list(runs.glob("t/*"))  # raised before anything ran: no run dir, no record
    with pytest.raises(ConfigError, match=r"runner\.function"):
        execute(prepare(cfg), None, options(runs))  # the same through the engine API

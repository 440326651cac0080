"""``--executor ray`` on a real local Ray cluster (2 CPUs: two cells at once, as on two
workers; bench/ray_cluster.py): the driver writes every record once, resumes after a
SIGKILL with nothing lost or duplicated, survives a worker process killed mid-cell, ships
the config folder to the workers (no shared filesystem needed for code), and without ray
installed says how to get it (exit 2); python functions run there too. Timeouts are
generous; nothing is timed."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from ray_cluster import ENV, LOOPBACK  # on sys.path: tests/runner/conftest.py

from eval_harness.matrix.experiment import prepare
from eval_harness.runner.engine import EngineOptions, execute
from tests.conftest import run_cli
from tests.runner.runner_helpers import REPO

pytest.importorskip("ray")  # the `ray` extra; .ci/run installs it, so CI never skips


def _scratch_left(worker_tmp: Path) -> list[str]:
    return sorted(p.name for p in worker_tmp.glob("eh-cell-*"))


def _eval(root: Path, cases: int, command: str, factors: dict | None = None,
          **runner: object) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "cases.yaml").write_text(yaml.safe_dump(
        [{"id": f"c{i:04d}", "input": {"q": f"q{i}"}} for i in range(cases)]))
    cfg = {"name": "ray", "matrix": {"factors": factors or {"m": ["a", "b"], "x": [1, 2]}},
           "runner": {"type": "cli", "command": command, **runner},
           "dataset": {"path": "cases.yaml"},
           "execution": {"timeout": 120, "retries": 1, "executor": "ray"}}
    (root / "eval.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return root / "eval.yaml"


def _records(runs: Path) -> Counter[tuple[str, int, str]]:
    seen: Counter[tuple[str, int, str]] = Counter()
    for path in runs.glob("ray/*/cases/*/record.json"):
        rec = json.loads(path.read_text())
        assert rec["status"] == "ok", rec
        seen[(rec["condition_id"], rec["replication"], rec["case_id"])] += 1
    return seen


def test_2000_cells_driver_sigkill_then_restart_completes_once(
        cluster: str, worker_tmp: Path, tmp_path: Path) -> None:
    config = _eval(tmp_path / "eval", 500, "/bin/echo answer-{case_id}")
    runs = tmp_path / "runs"
    argv = [sys.executable, str(REPO / "orchestrate.py"), "--config", str(config),
            "--ray-address", cluster, "--runs-dir", str(runs), "--no-analysis",
            "--no-judge-check", "--concurrency", "4"]
    env = {**os.environ, **ENV}
    rng = random.Random(os.getpid())
    with open(tmp_path / "first.log", "wb") as log:
        first = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
        # a random instant once cells are being recorded
        target = rng.randint(20, 1500)
        deadline = time.monotonic() + 600
        while first.poll() is None and time.monotonic() < deadline:
            if sum(_records(runs).values()) >= target:
                break
            time.sleep(0.2)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=60)
    before = _records(runs)
    assert all(n == 1 for n in before.values())
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900,
                          check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    after = _records(runs)
    assert len(after) == 2000 and set(after.values()) == {1}  # complete, none twice
    assert len(list((runs / "ray").glob("*/run.json"))) == 4  # one run dir per condition
    assert f"{len(before)} already complete" in done.stderr  # resumed, not redone
    stdout = next(runs.glob("ray/*/cases/c0007/stdout.log")).read_text()
    assert stdout.strip() == "answer-c0007"  # the worker's log, written by the driver
    # the workers the SIGKILL ended left their scratch folders; the next run's removed them
    assert _scratch_left(worker_tmp) == []


AGENT = """\
import os, sys, time
case, marker = sys.argv[1], sys.argv[2]
if case == "c0001" and not os.path.exists(marker):
    parent = os.getppid()  # the Ray worker process running this cell
    open(marker + ".tmp", "w").write(str(parent))
    os.replace(marker + ".tmp", marker)
    while os.getppid() == parent:  # until the test kills the worker
        time.sleep(0.05)
    sys.exit(9)
print("answer-" + case + " cwd=" + os.getcwd())
"""


def test_worker_killed_mid_cell_is_rerun_and_code_ships_as_working_dir(
        cluster: str, worker_tmp: Path, tmp_path: Path) -> None:
    root = tmp_path / "eval"
    root.mkdir()
    (root / "agent.py").write_text(AGENT)
    marker = tmp_path / "worker.pid"
    config = _eval(root, 4, f"{sys.executable} -S agent.py {{case_id}} {marker}",
                   factors={"m": ["a", "b"]})
    killed: list[int] = []

    def kill_the_worker() -> None:
        deadline = time.monotonic() + 600
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if marker.exists():
            pid = int(marker.read_text())
            killed.append(pid)
            os.kill(pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_the_worker, daemon=True)
    killer.start()
    exp = prepare(config)
    summary = execute(exp, None, EngineOptions(runs_dir=tmp_path / "runs", progress="off",
                                               concurrency=2, executor="ray",
                                               ray_address=cluster))
    killer.join(timeout=5)
    assert killed, "the agent never reported its worker"
    assert (summary.ok, summary.errored, summary.not_run) == (8, 0, 0)
    assert set(_records(tmp_path / "runs").values()) == {1}
    for path in (tmp_path / "runs").glob("ray/*/cases/c0001/outputs.json"):
        output = json.loads(path.read_text())["output"]
        assert output.startswith("answer-c0001 cwd=")
        # the command ran in the worker's copy of the config folder, not in the folder
        assert Path(output.split("cwd=", 1)[1]).resolve() != root.resolve()
    # the killed worker's scratch folder is removed by a later task (a new run's first)
    again = execute(prepare(_eval(tmp_path / "again", 1, "/bin/echo hi")), None, EngineOptions(
        runs_dir=tmp_path / "runs-again", progress="off", executor="ray", ray_address=cluster))
    assert again.ok == 4 and _scratch_left(worker_tmp) == []


def test_without_ray_installed_exit_2_with_the_extra(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    config = _eval(tmp_path, 2, "/bin/echo hi")
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    code, _, err = run_cli("--config", str(config), "--runs-dir", str(tmp_path / "runs"),
                           "--no-analysis", "--no-judge-check")
    assert code == 2 and "factorial-eval-harness[ray]" in err
    assert not (tmp_path / "runs" / "ray").exists()  # nothing was run


def test_python_function_runs_on_a_worker_from_the_shipped_folder(
        cluster: str, worker_tmp: Path, tmp_path: Path) -> None:
    root = tmp_path / "eval"
    root.mkdir()
    (root / "shipped_fn.py").write_text(
        "import os\n"
        "def answer(input, context):\n"
        "    return {'output': input['q'] + ' ' + str(os.getppid()) + ' ' + os.getcwd()}\n")
    config = _eval(root, 3, "unused", factors={"m": ["a", "b"]})
    cfg = yaml.safe_load(config.read_text())
    cfg["runner"] = {"type": "python", "function": "shipped_fn:answer"}
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    summary = execute(prepare(config), None, EngineOptions(
        runs_dir=tmp_path / "runs", progress="off", concurrency=2, executor="ray",
        ray_address=cluster))
    assert (summary.ok, summary.errored) == (6, 0), summary.reasons
    for path in (tmp_path / "runs").glob("ray/*/cases/*/outputs.json"):
        q, parent, cwd = json.loads(path.read_text())["output"].split(" ", 2)
        assert q.startswith("q") and int(parent) != os.getpid()  # not this driver
        assert Path(cwd).resolve() != root.resolve()  # the worker's copy of the folder
    assert _scratch_left(worker_tmp) == []  # each task removed its own


def _network_addresses() -> set[str]:
    """This machine's IPv4 addresses other than loopback: the one a connection out would
    use (what Ray picks; a UDP connect sends nothing) and the host name's."""
    found = set()
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("8.8.8.8", 80))
        found.add(s.getsockname()[0])
    with contextlib.suppress(OSError):
        found |= {str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None,
                                                                 socket.AF_INET)}
    return {a for a in found if not a.startswith("127.")}


def test_cluster_and_drivers_stay_on_loopback(cluster: str) -> None:
    import ray

    ray.init(address=cluster)
    try:
        nodes = [n for n in ray.nodes() if n["Alive"]]
        here = ray.util.get_node_ip_address()
    finally:
        ray.shutdown()
    assert here == LOOPBACK and {n["NodeManagerAddress"] for n in nodes} == {LOOPBACK}
    ports = [int(cluster.rsplit(":", 1)[1])] + [
        n[key] for n in nodes for key in ("NodeManagerPort", "ObjectManagerPort")]
    for port in ports:
        socket.create_connection((LOOPBACK, port), timeout=10).close()
        for address in _network_addresses():  # nothing of the cluster answers on the machine's network
            with pytest.raises(OSError):
                socket.create_connection((address, port), timeout=10).close()


def test_a_workers_logs_are_masked_and_it_never_sees_the_step_files(
        cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34 (attacks 4, 5) under Ray: the worker knows none of the driver's secrets, so
    the driver masks the logs it sends back; the agent there never sees $GITHUB_ENV."""
    key = "sk-ray-worker-leak-0123456789"
    monkeypatch.setenv("RAY_TEST_OPENAI_API_KEY", key)
    config = _eval(tmp_path / "eval", 2, "unused", factors={"m": ["a"]})
    cfg = yaml.safe_load(config.read_text())
    cfg["runner"] = {"type": "cli", "command": [
        "/bin/sh", "-c", 'echo "key=$OPENAI_API_KEY env=${GITHUB_ENV:-unset}"; echo "$OPENAI_API_KEY" >&2']}
    cfg["execution"]["env"] = {"OPENAI_API_KEY": "${RAY_TEST_OPENAI_API_KEY}",
                               "GITHUB_ENV": str(tmp_path / "github-env")}
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    code, _, err = run_cli("--config", str(config), "--runs-dir", str(tmp_path / "runs"),
                           "--ray-address", cluster, "--no-analysis", "--no-judge-check")
    assert code == 0, err
    logs = list((tmp_path / "runs").glob("ray/*/cases/*/std*.log"))
    assert len(logs) == 4
    for path in (tmp_path / "runs").rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path
    for path in (tmp_path / "runs").glob("ray/*/cases/*/stdout.log"):
        assert path.read_text().strip() == "key=*** env=unset"

"""A throwaway local Ray cluster for the Ray executor's tests and bench/bench_ray.py.

``ray start --head --block`` in its own process group (so every process of the cluster is
ended by that group's id, and nothing else), with its own temporary folder and free ports
(other Ray users on the machine are left alone), authentication off (a shared home's
``~/.ray/auth_token`` may be rewritten by another cluster), and 2 CPUs: two cells run at
once, as on two workers.

Loopback only: every process of the cluster listens on 127.0.0.1 and nothing on the
machine's network address. Ray rewrites a ``127.0.0.1`` node or GCS address to the address
of the default route's interface (``resolve_ip_for_localhost``) unless
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (then a node's address is 127.0.0.1), and reads that
variable once, when ``ray`` is imported. So :data:`ENV` must be in a driver's environment
before it imports ``ray``; a driver that imported it earlier would send
``127.0.0.1:<port>`` to ``<eth0>:<port>``, where nothing listens, and Ray ends it with
``SystemExit(15)`` after minutes of GCS connect timeouts. :func:`use_loopback` sets it
and refuses a process where that already happened.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

#: the variables a driver needs to join the cluster (set before ``import ray``: see above)
ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0",
       "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
LOOPBACK = "127.0.0.1"


def use_loopback() -> None:
    """Put :data:`ENV` in this process's environment (its drivers and their children);
    RuntimeError where ``ray`` was imported before with nodes on another address."""
    os.environ.update(ENV)
    if "ray" in sys.modules:
        import ray.util

        found = ray.util.get_node_ip_address()
        if found != LOOPBACK:
            raise RuntimeError(f"ray was imported before bench/ray_cluster.ENV was set: its "
                               f"nodes are on {found}, the cluster on {LOOPBACK} only; "
                               "call use_loopback() before importing ray")


def _free_ports(n: int) -> list[int]:
    """``n`` distinct free ports (all held open while picking, so none repeats)."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind((LOOPBACK, 0))
        return [int(s.getsockname()[1]) for s in socks]


def _ray_cli() -> str:
    found = Path(sys.executable).with_name("ray")
    return str(found) if found.exists() else (shutil.which("ray") or "ray")


@contextlib.contextmanager
def local_cluster(num_cpus: int = 2, start_timeout: float = 180.0,
                  worker_tmp: str | os.PathLike[str] | None = None) -> Iterator[str]:
    """Start the cluster; yield its address (``127.0.0.1:<port>``); stop it.
    ``worker_tmp``: the workers' temporary folder (``TMPDIR``), else the system's."""
    temp = tempfile.mkdtemp(prefix="ehray-", dir="/tmp")  # short: unix socket paths
    flags = ("--dashboard-port", "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port",
             "--runtime-env-agent-port", "--metrics-export-port", "--node-manager-port",
             "--object-manager-port")
    port, *others = _free_ports(len(flags) + 1)
    ports = {flag: str(p) for flag, p in zip(flags, others, strict=True)}
    argv = [_ray_cli(), "start", "--head", "--block", "--port", str(port),
            "--num-cpus", str(num_cpus), "--include-dashboard=false",
            "--disable-usage-stats", "--temp-dir", temp, "--node-ip-address", LOOPBACK,
            *[x for flag, value in ports.items() for x in (flag, value)]]
    tmp = {"TMPDIR": os.fspath(worker_tmp)} if worker_tmp is not None else {}
    log = open(os.path.join(temp, "ray-start.log"), "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, **ENV, **tmp}, start_new_session=True)
    address = f"{LOOPBACK}:{port}"
    try:
        deadline = time.monotonic() + start_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"ray start exited {proc.returncode}: "
                                   + Path(temp, "ray-start.log").read_text()[-2000:])
            text = Path(temp, "ray-start.log").read_text(errors="replace")
            if "Ray runtime started" in text or "--block" in text:
                break
            if time.monotonic() > deadline:
                raise RuntimeError("ray start did not come up: " + text[-2000:])
            time.sleep(0.5)
        yield address
    finally:
        _stop_group(proc)
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """TERM the cluster's process group (ours alone), then KILL what is left."""
    for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                proc.wait(timeout=5)
                return
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=0.2)
            time.sleep(0.2)

"""The local Ray cluster the Ray executor's tests share (bench/ray_cluster.py: 2 CPUs,
loopback only), started once, by the first test that asks for it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runner.runner_helpers import REPO

sys.path.insert(0, str(REPO / "bench"))
from ray_cluster import local_cluster, use_loopback

# this process is a driver too, and Ray reads the loopback switch when it is imported
use_loopback()


@pytest.fixture(scope="session")
def worker_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cluster workers' TMPDIR, where their scratch folders go (and must not stay)."""
    return tmp_path_factory.mktemp("ray-worker-tmp")


@pytest.fixture(scope="session")
def cluster(worker_tmp: Path) -> Iterator[str]:
    """The address (``127.0.0.1:<port>``) of a 2-CPU cluster, stopped after the session."""
    pytest.importorskip("ray")  # the `ray` extra; .ci/run installs it, so CI never skips
    with local_cluster(num_cpus=2, worker_tmp=worker_tmp) as address:
        yield address

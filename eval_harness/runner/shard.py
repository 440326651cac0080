"""``--shard K/N`` and ``--shard auto``.

``auto`` reads, in this order (K is 1-based in ``EVAL_SHARD``; every index variable below
is 0-based as the schedulers set it):

1. ``EVAL_SHARD=K/N`` — explicit, works anywhere.
2. ``EVAL_SHARD_INDEX`` + ``EVAL_SHARD_TOTAL`` — GitHub Actions: set them from the matrix
   context, ``EVAL_SHARD_INDEX: ${{ strategy.job-index }}`` and
   ``EVAL_SHARD_TOTAL: ${{ strategy.job-total }}`` (GitHub exports no such variable itself).
3. ``JOB_COMPLETION_INDEX`` (Kubernetes Indexed Job) + ``EVAL_SHARD_TOTAL`` (set it to the
   Job's ``completions`` in the pod template; Kubernetes does not export the total).
4. ``SLURM_ARRAY_TASK_ID`` (Slurm job array). The shard count must be the *original*
   array's size, which Slurm does not keep: a resubmit of some indexes (``sbatch
   --array=3``) is a new array whose ``SLURM_ARRAY_TASK_COUNT`` is 1. So:

   - ``EVAL_SHARD_TOTAL`` set (the safe form; put ``export EVAL_SHARD_TOTAL=8`` in the batch
     script): shard = ``SLURM_ARRAY_TASK_ID − EVAL_SHARD_BASE + 1`` of ``EVAL_SHARD_TOTAL``,
     with ``EVAL_SHARD_BASE`` the original array's first index (default 0). A resubmitted
     index keeps its shard.
   - otherwise the array itself is the only source: a one-task array (a resubmit, or
     ``--array=5``) is refused, since its shard cannot be known; a regular array
     (``MIN + (COUNT − 1)·STEP == MAX``) gives shard ``(ID − MIN)/STEP + 1`` of ``COUNT``,
     with a note saying a partial resubmit would change it.

``--shard K/N`` written out is always safe.

Shards are checked against :data:`GITHUB_MAX_JOBS` where GitHub runs the matrix
(:func:`check_github_limit`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from eval_harness.errors import UsageError


@dataclass(frozen=True)
class Shard:
    """Shard ``k`` (1-based) of ``n``."""

    k: int
    n: int
    #: printed by the CLI: how an ``auto`` shard was inferred, when that could be fragile
    note: str | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"


#: GitHub Actions runs at most this many jobs from one matrix
GITHUB_MAX_JOBS = 256


def _check(k: int, n: int, source: str, note: str | None = None) -> Shard:
    if n < 1 or not 1 <= k <= n:
        raise UsageError(f"bad shard {k}/{n} from {source}",
                         hint="K/N with 1 <= K <= N, e.g. --shard 2/4")
    return Shard(k, n, note)


def check_github_limit(shard: Shard | None, target: str | None,
                       env: Mapping[str, str] | None = None) -> None:
    """Refuse more shards than one GitHub Actions matrix can run (``target == "github"``,
    or ``GITHUB_ACTIONS=true`` in the environment): jobs past the limit would never start,
    and their cells would silently never run."""
    env = os.environ if env is None else env
    github = target == "github" or (target is None and env.get("GITHUB_ACTIONS") == "true")
    if shard is not None and github and shard.n > GITHUB_MAX_JOBS:
        raise UsageError(
            f"{shard.n} shards: a GitHub Actions matrix runs at most {GITHUB_MAX_JOBS} jobs, "
            f"so shards {GITHUB_MAX_JOBS + 1}-{shard.n} would never run",
            hint=f"use at most {GITHUB_MAX_JOBS} shards (each runs more cells), or split "
            "the fan-out over several workflows with --shard K/N each")


def _int(env: Mapping[str, str], name: str) -> int:
    try:
        return int(env[name])
    except ValueError:
        raise UsageError(f"{name}={env[name]!r} is not an integer", hint="--shard auto") from None


def parse_shard(spec: str | None, env: Mapping[str, str] | None = None) -> Shard | None:
    """``None`` (no sharding), ``K/N`` or ``auto`` (see the module doc)."""
    if spec is None:
        return None
    env = os.environ if env is None else env
    if spec.strip().lower() != "auto":
        k, sep, n = spec.partition("/")
        if not sep or not k.strip().isdigit() or not n.strip().isdigit():
            raise UsageError(f"bad --shard {spec!r}", hint="write --shard K/N (K 1-based) or auto")
        return _check(int(k), int(n), "--shard")
    if env.get("EVAL_SHARD"):
        return parse_shard(env["EVAL_SHARD"], env) if env["EVAL_SHARD"] != "auto" else None
    if "EVAL_SHARD_INDEX" in env and "EVAL_SHARD_TOTAL" in env:
        return _check(_int(env, "EVAL_SHARD_INDEX") + 1, _int(env, "EVAL_SHARD_TOTAL"),
                      "EVAL_SHARD_INDEX/EVAL_SHARD_TOTAL")
    if "JOB_COMPLETION_INDEX" in env:
        if "EVAL_SHARD_TOTAL" not in env:
            raise UsageError("JOB_COMPLETION_INDEX is set but EVAL_SHARD_TOTAL is not",
                             hint="set env EVAL_SHARD_TOTAL to the Job's completions")
        return _check(_int(env, "JOB_COMPLETION_INDEX") + 1, _int(env, "EVAL_SHARD_TOTAL"),
                      "JOB_COMPLETION_INDEX/EVAL_SHARD_TOTAL")
    if "SLURM_ARRAY_TASK_ID" in env:
        return _slurm(env)
    raise UsageError("--shard auto found no shard index in the environment",
                     hint="set EVAL_SHARD=K/N, EVAL_SHARD_INDEX/EVAL_SHARD_TOTAL, "
                     "JOB_COMPLETION_INDEX + EVAL_SHARD_TOTAL, or run in a Slurm array")


def _slurm(env: Mapping[str, str]) -> Shard:
    """The Slurm job-array case of the module doc."""
    task = _int(env, "SLURM_ARRAY_TASK_ID")
    if "EVAL_SHARD_TOTAL" in env:
        base = _int(env, "EVAL_SHARD_BASE") if "EVAL_SHARD_BASE" in env else 0
        return _check(task - base + 1, _int(env, "EVAL_SHARD_TOTAL"),
                      "SLURM_ARRAY_TASK_ID - EVAL_SHARD_BASE / EVAL_SHARD_TOTAL")
    safe = ("set EVAL_SHARD_TOTAL to the original array's size in the batch script "
            "(and EVAL_SHARD_BASE to its first index if not 0), or pass --shard K/N")
    if "SLURM_ARRAY_TASK_COUNT" not in env:
        raise UsageError("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not",
                         hint=safe)
    count = _int(env, "SLURM_ARRAY_TASK_COUNT")
    low = _int(env, "SLURM_ARRAY_TASK_MIN") if "SLURM_ARRAY_TASK_MIN" in env else 0
    # Slurm sets MAX and STEP too; without MAX the range cannot be checked
    high = (_int(env, "SLURM_ARRAY_TASK_MAX") if "SLURM_ARRAY_TASK_MAX" in env else None)
    step = _int(env, "SLURM_ARRAY_TASK_STEP") if "SLURM_ARRAY_TASK_STEP" in env else 1
    if count == 1:
        raise UsageError(
            f"Slurm array task {task} is the array's only task (a resubmitted index?): "
            "which shard of the original array it is cannot be known",
            hint=safe)
    step = step if step >= 1 else 1
    if (high is not None and low + (count - 1) * step != high) or (task - low) % step:
        raise UsageError(
            f"Slurm array {low}-{high} (step {step}, {count} tasks) is not a regular range: "
            "its shards cannot be read from it", hint=safe)
    return _check((task - low) // step + 1, count, "SLURM_ARRAY_TASK_ID/MIN/COUNT",
                  note=f"shard count {count} taken from this Slurm array's size; a resubmit "
                  "of some indexes would change it: set EVAL_SHARD_TOTAL (docs/ci-fanout.md)")

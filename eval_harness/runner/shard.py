"""``--shard K/N`` and ``--shard auto``.

``auto`` reads, in this order (K is 1-based in ``EVAL_SHARD``; every index variable below
is 0-based as the schedulers set it):

1. ``EVAL_SHARD=K/N`` — explicit, works anywhere.
2. ``EVAL_SHARD_INDEX`` + ``EVAL_SHARD_TOTAL`` — GitHub Actions: set them from the matrix
   context, ``EVAL_SHARD_INDEX: ${{ strategy.job-index }}`` and
   ``EVAL_SHARD_TOTAL: ${{ strategy.job-total }}`` (GitHub exports no such variable itself).
3. ``JOB_COMPLETION_INDEX`` (Kubernetes Indexed Job) + ``EVAL_SHARD_TOTAL`` (set it to the
   Job's ``completions`` in the pod template; Kubernetes does not export the total).
4. ``SLURM_ARRAY_TASK_ID`` − ``SLURM_ARRAY_TASK_MIN`` (0 if unset) + ``SLURM_ARRAY_TASK_COUNT``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from eval_harness.errors import UsageError


@dataclass(frozen=True)
class Shard:
    """Shard ``k`` (1-based) of ``n``."""

    k: int
    n: int

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"


def _check(k: int, n: int, source: str) -> Shard:
    if n < 1 or not 1 <= k <= n:
        raise UsageError(f"bad shard {k}/{n} from {source}",
                         hint="K/N with 1 <= K <= N, e.g. --shard 2/4")
    return Shard(k, n)


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
    if "SLURM_ARRAY_TASK_ID" in env and "SLURM_ARRAY_TASK_COUNT" in env:
        low = _int(env, "SLURM_ARRAY_TASK_MIN") if "SLURM_ARRAY_TASK_MIN" in env else 0
        return _check(_int(env, "SLURM_ARRAY_TASK_ID") - low + 1,
                      _int(env, "SLURM_ARRAY_TASK_COUNT"), "SLURM_ARRAY_TASK_ID/COUNT")
    raise UsageError("--shard auto found no shard index in the environment",
                     hint="set EVAL_SHARD=K/N, EVAL_SHARD_INDEX/EVAL_SHARD_TOTAL, "
                     "JOB_COMPLETION_INDEX + EVAL_SHARD_TOTAL, or run in a Slurm array")

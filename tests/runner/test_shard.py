"""``--shard auto`` under Slurm (the original array's size, a resubmitted index keeps its
shard) and the GitHub matrix limit. The environments are what Slurm sets for
``sbatch --array=...`` (SLURM_ARRAY_TASK_ID/MIN/MAX/COUNT/STEP)."""

from __future__ import annotations

import pytest

from eval_harness.errors import UsageError
from eval_harness.runner.shard import GITHUB_MAX_JOBS, Shard, check_github_limit, parse_shard


def _slurm(task: int, low: int, high: int, count: int, step: int = 1,
           **extra: str) -> dict[str, str]:
    env = {"SLURM_ARRAY_JOB_ID": "4242", "SLURM_ARRAY_TASK_ID": str(task),
           "SLURM_ARRAY_TASK_MIN": str(low), "SLURM_ARRAY_TASK_MAX": str(high),
           "SLURM_ARRAY_TASK_COUNT": str(count), "SLURM_ARRAY_TASK_STEP": str(step)}
    return {**env, **extra}


def test_resubmitted_index_keeps_its_shard_with_the_total_in_the_script() -> None:
    # the script: #SBATCH --array=0-7 and export EVAL_SHARD_TOTAL=8
    first = [parse_shard("auto", _slurm(t, 0, 7, 8, EVAL_SHARD_TOTAL="8")) for t in range(8)]
    assert first == [Shard(k, 8) for k in range(1, 9)]
    # `sbatch --array=3 job.sh`: a new one-task array; still shard 4/8, not 1/1
    again = parse_shard("auto", _slurm(3, 3, 3, 1, EVAL_SHARD_TOTAL="8"))
    assert again == Shard(4, 8) and again.note is None
    # `sbatch --array=2,5`
    assert parse_shard("auto", _slurm(5, 2, 5, 2, step=3, EVAL_SHARD_TOTAL="8")) == Shard(6, 8)


def test_one_based_array_with_its_base() -> None:
    env = _slurm(8, 1, 8, 8, EVAL_SHARD_TOTAL="8", EVAL_SHARD_BASE="1")
    assert parse_shard("auto", env) == Shard(8, 8)
    assert parse_shard("auto", _slurm(3, 3, 3, 1, EVAL_SHARD_TOTAL="8",
                                      EVAL_SHARD_BASE="1")) == Shard(3, 8)
    with pytest.raises(UsageError, match="bad shard 9/8"):  # base forgotten: told, not guessed
        parse_shard("auto", _slurm(8, 1, 8, 8, EVAL_SHARD_TOTAL="8"))


def test_resubmitted_index_without_the_total_is_refused_not_run_as_the_whole_matrix() -> None:
    with pytest.raises(UsageError) as err:
        parse_shard("auto", _slurm(3, 3, 3, 1))
    assert "only task" in err.value.message and "EVAL_SHARD_TOTAL" in (err.value.hint or "")


def test_original_array_without_the_total_works_with_a_note() -> None:
    shard = parse_shard("auto", _slurm(5, 1, 8, 8))
    assert shard == Shard(5, 8)
    assert shard is not None and "EVAL_SHARD_TOTAL" in (shard.note or "")
    assert parse_shard("auto", _slurm(5, 1, 7, 4, step=2)) == Shard(3, 4)  # --array=1-7:2
    with pytest.raises(UsageError, match="not a regular range"):  # --array=1,2,7
        parse_shard("auto", _slurm(7, 1, 7, 3))


def test_github_matrix_limit() -> None:
    check_github_limit(Shard(1, GITHUB_MAX_JOBS), "github")
    check_github_limit(Shard(1, 1000), None, {})  # not on GitHub: any count
    for target, env in (("github", {}), (None, {"GITHUB_ACTIONS": "true"})):
        with pytest.raises(UsageError) as err:
            check_github_limit(Shard(3, 300), target, env)
        assert "at most 256 jobs" in err.value.message
    check_github_limit(Shard(3, 300), "none", {"GITHUB_ACTIONS": "true"})  # said otherwise

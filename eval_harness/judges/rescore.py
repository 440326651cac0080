"""Re-run the judges over existing run directories, without re-running the agent.

For every ``<eval-dir>/<run>/cases/<case>/`` with a ``record.json`` of status ``ok`` and an
``outputs.json``, the sample is rebuilt (input from ``input.json``, expected and annotations
from the current dataset, levels from ``run.json``) and scored by the *current* judges; the
record is rewritten atomically (temp file + ``os.replace``) with new ``scores``,
``composite``, ``composite_errored`` and ``rescored_at``; every other field is kept as
written. LLM verdicts go through the verdict cache (``<eval-dir>/judge_cache.jsonl``), so
re-scoring with unchanged judges pays for nothing. Runs whose condition is not in the
current matrix, and cases no longer in the dataset, are skipped and listed.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from eval_harness._util.clock import utc_timestamp
from eval_harness._util.json_text import write_text_atomic
from eval_harness._util.redact import redact
from eval_harness.judges.interface import Sample
from eval_harness.judges.scorer import JudgeScorer
from eval_harness.trace.reader import read_trace

OUTPUT_DEFAULTS: dict[str, Any] = {"exit_code": None, "stdout": "", "stderr": "", "output": "", "files": {},
                   "latency_s": None, "cost_usd": None, "tokens": None, "tool_calls": None,
                   "trace": None}


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def write_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write JSON through a temp file in the same folder, then rename over the target."""
    write_text_atomic(path, redact(json.dumps(data, indent=2, ensure_ascii=False,
                                              default=str)))


LOG_CAP = 8 * 1024 * 1024


def _outputs(case_dir: Path, record: dict[str, Any]) -> dict[str, Any]:
    outputs = dict(OUTPUT_DEFAULTS)
    outputs.update({k: record.get(k) for k in ("exit_code", "latency_s", "cost_usd", "tokens",
                                               "tool_calls") if record.get(k) is not None})
    outputs.update(_read(case_dir / "outputs.json"))
    if outputs.get("trace") is None:  # older runs kept it inline in outputs.json
        trace = read_trace(case_dir)
        outputs["trace"] = [] if trace is None else trace.to_json()["steps"]
    # stdout/stderr live in their log files, not in outputs.json: give judges the same text
    # they saw during the run (the engine keeps at most LOG_CAP bytes in memory too).
    for key in ("stdout", "stderr"):
        log = case_dir / f"{key}.log"
        if not outputs.get(key) and log.is_file():
            with log.open("rb") as fh:
                outputs[key] = fh.read(LOG_CAP).decode("utf-8", errors="replace")
    return outputs


def _rescore_case(scorer: JudgeScorer, case_dir: Path, run: dict[str, Any],
                  case: Any) -> dict[str, Any]:
    record = _read(case_dir / "record.json")
    input_file = case_dir / "input.json"
    sample = Sample(
        case_id=case_dir.name,
        input=_read(input_file) if input_file.exists() else dict(case.input),
        expected=case.expected, annotations=dict(case.annotations),
        outputs=_outputs(case_dir, record), levels=run.get("levels", {}),
        condition_id=run["condition_id"], replication=int(record.get("replication", 1)),
    )
    result = scorer.score(sample)
    record["scores"] = {k: v.model_dump(mode="json") for k, v in result.scores.items()}
    record["composite"] = result.composite
    record["composite_errored"] = result.composite_errored
    record["judges_digest"] = result.judges_digest
    record["judge_digests"] = scorer.judge_digests(run["condition_id"])
    record["rescored_at"] = utc_timestamp("seconds")  # an event: real time
    write_atomic(case_dir / "record.json", record)
    return {"errored_judges": sum(1 for s in result.scores.values() if s.errored)}


def rescore_cases(scorer: JudgeScorer, jobs: list[tuple[Path, dict[str, Any], Any]], *,
                  concurrency: int = 4) -> list[dict[str, Any]]:
    """Rescore the given (case dir, run.json data, dataset case) jobs concurrently."""
    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        return list(pool.map(lambda job: _rescore_case(scorer, *job), jobs))


def rescore_stale_judges(scorer: JudgeScorer, cells: list[tuple[Any, Path]], *,
                         concurrency: int = 4) -> int:
    """Rescore complete cells whose record was scored by other judges (``Plan.rejudge``:
    (cell, case dir)) with the current ones, without an agent call; return how many."""
    jobs = [(case_dir, {"condition_id": cell.condition.condition_id,
                        "levels": cell.condition.levels}, cell.case)
            for cell, case_dir in cells if (case_dir / "outputs.json").is_file()]
    return len(rescore_cases(scorer, jobs, concurrency=concurrency))


def rescore_runs(exp: Any, eval_dir: Path, scorer: JudgeScorer, *,
                 concurrency: int = 4) -> dict[str, Any]:
    """Rescore every complete ok case under ``eval_dir``; return a summary."""
    known = {c.condition_id for c in exp.conditions}
    cases = {c.case_id: c for c in exp.cases}
    jobs: list[tuple[Path, dict[str, Any], Any]] = []
    skipped: list[dict[str, str]] = []
    for run_json in sorted(eval_dir.glob("*/run.json")):
        run = _read(run_json)
        if run.get("condition_id") not in known:
            skipped.append({"run": run_json.parent.name, "reason": "condition not selected or "
                            "not in the current matrix"})
            continue
        for case_dir in sorted((run_json.parent / "cases").glob("*/")):
            if not (case_dir / "record.json").exists() or not (case_dir / "outputs.json").exists():
                continue
            if _read(case_dir / "record.json").get("status") != "ok":
                continue
            if case_dir.name not in cases:
                skipped.append({"run": run_json.parent.name, "case": case_dir.name,
                                "reason": "case not in the dataset (or not selected)"})
                continue
            jobs.append((case_dir, run, cases[case_dir.name]))
    done = rescore_cases(scorer, jobs, concurrency=concurrency)
    return {"eval_dir": str(eval_dir), "rescored": len(done),
            "samples_with_errored_judges": sum(1 for d in done if d["errored_judges"]),
            "cache_hits": scorer.cache.hits, "cache_misses": scorer.cache.misses,
            "skipped": skipped}

"""Run sets of the "outputs unchanged" test (tests/analysis/test_outputs_unchanged.py).

- ``write_example``: the bundled example's real runs (configs/example.yaml, 8 conditions ×
  32 cases × 2 replications, 4 judges, tier/domain tags), rebuilt from the compact capture
  tests/fixtures/golden/example_runs.jsonl (line 1: runs, judge specs, case tags; then one
  record per line).
- ``write_tagged``: a deterministic synthetic run set (``random.Random``, stable across
  Python versions): model × prompt (2 × 3), 60 cases, 3 replications, a boolean gate judge,
  two numeric judges (one sometimes errored), whole-case errors, a case missing from one
  condition, a modified case, and tier / domain / cluster tags on every case.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden"

TAGGED_CONFIG = """\
name: tagged
matrix:
  factors:
    model: [small, large]
    prompt: [plain, cot, tools]
  replications: 3
  analysis:
    per_judge: true
    method: rm
judges:
  - name: ok
    check: 'return True, ""'
    gate: true
  - name: quality
    check: 'return 3, ""'
    score_range: [1, 5]
  - name: style
    check: 'return 5, ""'
    score_range: [0, 10]
    weight: 2
"""


def _dump(path: Path, doc: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def write_example(root: Path) -> Path:
    """Rebuild the example's run directories under ``root``; returns the eval directory."""
    lines = (GOLDEN / "example_runs.jsonl").read_text().splitlines()
    head = json.loads(lines[0])
    runs = {r["run_id"]: r for r in head["runs"]}
    eval_dir = root / "example"
    for run in runs.values():
        rdir = eval_dir / run["run_id"]
        _dump(rdir / "run.json", {"schema_version": 1, "status": "complete", **run})
        _dump(rdir / "condition.json",
              {"condition_id": run["condition_id"], "levels": run["levels"]})
    for line in lines[1:]:
        (run_id, case, rep, case_hash, status, latency, cost, tokens, tools, comp, comp_err,
         scores) = json.loads(line)
        run = runs[run_id]
        rec = {
            "schema_version": 1, "case_id": case, "condition_id": run["condition_id"],
            "replication": rep, "case_hash": case_hash, "status": status, "latency_s": latency,
            "cost_usd": cost, "tokens": tokens, "tool_calls": tools, "tags": head["tags"][case],
            "composite": comp, "composite_errored": comp_err, "finished_at": run["finished_at"],
            "run_id": run_id, "levels": run["levels"],
            "scores": {j: {"value": v, "normalized": n, "errored": e, **head["judges"][j]}
                       for j, v, n, e in scores},
        }
        _dump(eval_dir / run_id / "cases" / case / "record.json", rec)
    return eval_dir


def _cid(levels: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(levels, sort_keys=True, default=str).encode()).hexdigest()[:12]


def write_tagged(root: Path) -> Path:
    """Write the synthetic tagged run set under ``root``; returns the eval directory."""
    rng = random.Random(20261201)
    eval_dir = root / "tagged"
    cases = [f"case-{i:03d}" for i in range(60)]
    tiers = ("easy", "medium", "hard")
    tags = {c: {"tier": tiers[i % 3], "domain": f"d{i % 4}", "cluster": f"g{i % 8}"}
            for i, c in enumerate(cases)}
    ease = {c: rng.gauss(0.0, 0.8) for c in cases}
    for mi, model in enumerate(("small", "large")):
        for pi, prompt in enumerate(("plain", "cot", "tools")):
            levels = {"model": model, "prompt": prompt}
            cid = _cid(levels)
            for rep in (1, 2, 3):
                run_id = f"2026-12-01-{model}-{prompt}-r{rep}"
                rdir = eval_dir / run_id
                _dump(rdir / "run.json", {
                    "schema_version": 1, "eval": "tagged", "run_id": run_id, "condition_id": cid,
                    "levels": levels, "replication": rep, "status": "complete",
                    "finished_at": "2026-12-01T00:00:00Z"})
                _dump(rdir / "condition.json", {"condition_id": cid, "levels": levels})
                for ci, case in enumerate(cases):
                    if case == "case-007" and (mi, pi) == (1, 2):
                        continue  # never answered by one condition: an incomplete case
                    _dump(rdir / "cases" / case / "record.json",
                          _tagged_record(rng, case, ci, cid, rep, mi, pi, ease[case], tags[case]))
    return eval_dir


def _tagged_record(rng: random.Random, case: str, ci: int, cid: str, rep: int, mi: int, pi: int,
                   ease: float, tags: dict[str, str]) -> dict[str, Any]:
    case_hash = f"h{ci:04d}" + ("x" if case == "case-011" and mi == 1 else "")
    rec: dict[str, Any] = {
        "schema_version": 1, "case_id": case, "condition_id": cid, "replication": rep,
        "case_hash": case_hash, "status": "ok", "latency_s": round(rng.uniform(0.5, 4.0), 3),
        "cost_usd": round(0.001 * (1 + mi) * (1 + pi) + rng.uniform(0, 0.001), 6),
        "tokens": rng.randint(100, 900), "tool_calls": rng.randint(0, 5 * pi),
        "tags": tags, "finished_at": "2026-12-01T00:00:00Z",
    }
    if rng.random() < 0.03:
        rec.update(status="errored", reason="runner failed", scores={}, composite=None,
                   composite_errored=False)
        return rec
    latent = ease + 0.4 * mi + 0.25 * pi - 0.3 * mi * (pi == 2) + rng.gauss(0.0, 0.6)
    ok = latent > -0.6
    quality = min(5, max(1, round(3 + latent)))
    style_err = rng.random() < 0.04
    style = min(10, max(0, round(5 + 2 * latent + rng.gauss(0, 1))))
    scores = {
        "ok": {"value": ok, "kind": "boolean", "normalized": float(ok), "score_range": None,
               "errored": False, "gate": True, "weight": 1.0},
        "quality": {"value": quality, "kind": "numeric", "normalized": (quality - 1) / 4,
                    "score_range": [1, 5], "errored": False, "gate": False, "weight": 1.0},
        "style": ({"value": None, "kind": "numeric", "normalized": None, "score_range": [0, 10],
                   "errored": True, "error": "judge failed", "gate": False, "weight": 2.0}
                  if style_err else
                  {"value": style, "kind": "numeric", "normalized": style / 10,
                   "score_range": [0, 10], "errored": False, "gate": False, "weight": 2.0}),
    }
    rec["scores"] = scores
    if style_err:
        rec.update(composite=None, composite_errored=True)
    elif not ok:
        rec.update(composite=0.0, composite_errored=False)
    else:
        total = 1.0 * scores["ok"]["normalized"] + 1.0 * scores["quality"]["normalized"] \
            + 2.0 * scores["style"]["normalized"]
        rec.update(composite=total / 4.0, composite_errored=False)
    return rec

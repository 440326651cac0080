"""After the matrix (or ``--analyze-only``): analyse, compare, report, gate.

One path for both entry points: load the tidy frame -> anova.json -> comparisons.json
(+ leaderboard) -> thresholds -> reports (console, Markdown, JSON, HTML) -> baseline
export -> exit code (1 when a threshold or the regression gate fails).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval_harness.config.loader import LoadedConfig, load_config
from eval_harness.errors import AnalysisError, UsageError


def _options(args: argparse.Namespace, loaded: LoadedConfig | None) -> dict[str, Any]:
    """Analysis options; precedence flag > config > default."""
    analysis = None
    if loaded is not None and loaded.config.matrix is not None:
        analysis = loaded.config.matrix.analysis
    method = args.method or (analysis.method if analysis else "rm")
    correction = args.correction or (analysis.correction if analysis else "holm")
    if correction == "fdr_bh":
        correction = "bh"
    per_judge = bool(args.per_judge or (analysis.per_judge if analysis else False))
    keep = bool(args.keep_incomplete or (analysis.keep_incomplete if analysis else False))
    if keep and method != "lmm":
        raise UsageError("--keep-incomplete needs the fitted mixed model",
                         hint="add --method lmm (rm drops incomplete cases)")
    return {
        "method": method, "correction": correction, "per_judge": per_judge,
        "keep_incomplete": keep, "alpha": analysis.alpha if analysis else 0.05,
        "simple_effects": args.simple_effects,
        "pass_mark": _pass_mark(loaded),
    }


def _pass_mark(loaded: LoadedConfig | None) -> float | None:
    """One pass mark for comparisons and thresholds: matrix.analysis.pass_mark, else
    thresholds.pass_score, else the default (0.5)."""
    if loaded is None:
        return None
    cfg = loaded.config
    if cfg.matrix is not None and cfg.matrix.analysis.pass_mark is not None:
        return cfg.matrix.analysis.pass_mark
    if cfg.thresholds is not None:
        return float(cfg.thresholds.pass_score)
    return None


def _factor_levels(loaded: LoadedConfig | None) -> dict[str, list[Any]] | None:
    if loaded is None or loaded.config.matrix is None:
        return None
    return {name: [getattr(level, "name", level) for level in levels]
            for name, levels in loaded.config.matrix.factors.items()}


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str, allow_nan=False) + "\n")
    tmp.replace(path)


def _eval_name(frame: Any, loaded: LoadedConfig | None, paths: Sequence[Path]) -> str:
    if loaded is not None:
        return loaded.config.name
    names = sorted({str(x) for x in frame["eval"].dropna().unique()}) if "eval" in frame else []
    if len(names) == 1 and names[0]:
        return names[0]
    return paths[0].resolve().name or "eval"


def run_analysis(
    args: argparse.Namespace, paths: Sequence[Path], loaded: LoadedConfig | None,
    *, exp: Any = None, eval_dir: Path | None = None,
) -> int:
    """Analyse run directories under ``paths``; write outputs; return the exit code."""
    from eval_harness.analysis.build import build_anova
    from eval_harness.analysis.compare.baseline import export_baseline, load_baseline
    from eval_harness.analysis.compare.build import build_comparisons, parse_reference
    from eval_harness.analysis.compare.gate import gate
    from eval_harness.analysis.compare.leaderboard import build_leaderboard
    from eval_harness.analysis.compare.verdicts import VerdictRule, verdict_tables
    from eval_harness.analysis.loader import load_runs

    frame = load_runs(list(paths), judge_specs=loaded.config if loaded else None,
                      factor_levels=_factor_levels(loaded))
    if frame.empty:
        raise AnalysisError(f"no runs with recorded levels under {', '.join(map(str, paths))}",
                            hint="point --analyze-only at runs/<eval>/")
    opts = _options(args, loaded)
    name = _eval_name(frame, loaded, paths)
    out_dir = Path(args.output) if args.output else Path("analysis") / name
    if args.export_parquet:
        frame.to_parquet(args.export_parquet)
    per_judge = opts["per_judge"]
    rows = frame[frame["judge"] == "composite"] if "judge" in frame else frame.iloc[:0]
    if not per_judge and not rows["value"].notna().any():
        if len(rows) and rows["errored"].all():
            # nothing was scored at all: say so, instead of blaming judge ranges
            print(f"note: every sample errored ({len(rows)}); there is nothing to analyse "
                  "(see errored_samples in anova.json)", file=sys.stderr)
        else:
            # No composite can be formed (e.g. imported runs with a numeric judge of unknown
            # range and no --config): screen each judge rather than report nothing.
            per_judge = True
            print("note: no composite could be formed (pass --config for judge score ranges); "
                  "screening each judge instead (--per-judge)", file=sys.stderr)
    anova = build_anova(
        frame, method=opts["method"], correction=opts["correction"], alpha=opts["alpha"],
        per_judge=per_judge, keep_incomplete=opts["keep_incomplete"],
        simple_effects=opts["simple_effects"], judge_specs=loaded.config if loaded else None,
    )
    rule = VerdictRule(pass_mark=opts["pass_mark"]) if opts["pass_mark"] is not None else None
    reference = parse_reference(args.reference) if args.reference else None
    baseline = load_baseline(args.baseline) if args.baseline else None
    # verdict tables built once, shared by comparisons, leaderboard and reports
    tables = verdict_tables(frame, rule)
    comparisons = build_comparisons(frame, reference, baseline, opts["alpha"], rule=rule,
                                    cases=tables[1])
    leaderboard = build_leaderboard(frame, alpha=opts["alpha"], rule=rule,
                                    stratify_by=_stratum(frame), cases=tables[1])
    thresholds: list[dict[str, Any]] = []
    if loaded is not None:
        from eval_harness.judges.thresholds import evaluate_thresholds

        thresholds = evaluate_thresholds(frame, loaded.config)
    pairwise = _pairwise(exp, eval_dir, paths)
    _write_json(out_dir / "anova.json", anova)
    _write_json(out_dir / "comparisons.json", comparisons)
    _write_json(out_dir / "leaderboard.json", leaderboard)
    _write_json(out_dir / "thresholds.json", {"results": thresholds})
    from eval_harness.reports.model import build_report
    from eval_harness.reports.writer import now_iso, write_reports

    # the report model is built once, for the files and the console; reports use the
    # default verdict rule (reuse the tables only when the configured rule is that one)
    report = build_report(anova=anova, frame=frame, comparisons=comparisons,
                          leaderboard=leaderboard, thresholds=thresholds, pairwise=pairwise,
                          generated_at=now_iso(),
                          tables=tables if rule in (None, VerdictRule()) else None)
    written = write_reports(out_dir, anova=anova, frame=frame, comparisons=comparisons,
                            leaderboard=leaderboard, thresholds=thresholds, pairwise=pairwise,
                            runs_root=list(paths), report=report)
    if args.export:
        from eval_harness import __version__

        export_baseline(frame, args.export, compact=args.compact, runs_root=paths[0],
                        tool_version=__version__)
    if args.json:
        print(json.dumps(anova, indent=2, default=str))
    else:
        from rich.console import Console

        from eval_harness.reports.console import print_console

        print_console(Console(highlight=False), anova=anova, frame=frame, comparisons=comparisons,
                      leaderboard=leaderboard, thresholds=thresholds, pairwise=pairwise,
                      report=report)
        files = ", ".join(str(p) for p in [out_dir / "anova.json", *written.values()])
        print(f"wrote {files}")
    code = 0
    failed = [t for t in thresholds if not t.get("passed", True)]
    for t in failed:
        value = t.get("value")
        shown = "unknown (no usable sample: fails closed)" if value is None else f"{value:.4g}"
        levels = ", ".join(f"{k}={v}" for k, v in (t.get("levels") or {}).items()) or "all"
        print(f"threshold failed: {t.get('target')} {t.get('metric')} = {shown}, needs >= "
              f"{t.get('threshold')} ({levels})", file=sys.stderr)
        code = 1
    if args.fail_on_regression:
        bad, reasons = gate(comparisons, True, args.significant_only)
        for reason in reasons:
            print(f"regression: {reason}", file=sys.stderr)
        if bad:
            code = 1
    return code


def _stratum(frame: Any) -> str | None:
    tags = frame.attrs.get("case_tags") or {}
    keys = {k for t in tags.values() for k in (t or {})}
    for preferred in ("tier", "difficulty", "domain"):
        if preferred in keys:
            return preferred
    return None


def _pairwise(exp: Any, eval_dir: Path | None, paths: Sequence[Path]) -> dict[str, Any] | None:
    if exp is not None and eval_dir is not None:
        from eval_harness.judges.pairwise import run_pairwise

        return run_pairwise(exp, eval_dir) or None
    for root in paths:
        found = Path(root) / "pairwise.json"
        if found.is_file():
            return json.loads(found.read_text())
    return None


def analyze_and_report(args: argparse.Namespace, exp: Any, eval_dir: Path) -> int:
    """After a run: analyse ``eval_dir`` with the run's config."""
    return run_analysis(args, [Path(eval_dir)], exp.loaded, exp=exp, eval_dir=Path(eval_dir))


def analyze_only(args: argparse.Namespace) -> int:
    """``--analyze-only DIR...``: analyse existing runs, with or without ``--config``."""
    paths = [Path(p) for p in args.analyze_only]
    for p in paths:
        if not p.exists():
            raise UsageError(f"no such directory: {p}", hint="point at runs/<eval>/")
    loaded = load_config(args.config, strict=False) if args.config else None
    return run_analysis(args, paths, loaded)

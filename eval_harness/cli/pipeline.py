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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval_harness.analysis.settings import factor_levels, pass_mark, stratum
from eval_harness.config.dataset import CASE_ID
from eval_harness.config.loader import LoadedConfig, load_config
from eval_harness.errors import AnalysisError, NoUsableResults, UsageError
from eval_harness.redact import redact
from eval_harness.textsafe import safe_text
from eval_harness.timing import phase, recording


def _options(args: argparse.Namespace, loaded: LoadedConfig | None) -> dict[str, Any]:
    """Analysis options; precedence flag > config > default."""
    analysis = None
    if loaded is not None and loaded.config.matrix is not None:
        analysis = loaded.config.matrix.analysis
    method = args.method or (analysis.method if analysis else "auto")
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
        "ddf": args.ddf or (analysis.ddf if analysis else "kenward-roger"),
        "simple_effects": args.simple_effects,
        "pass_mark": pass_mark(loaded),
    }


def _gate_judges(loaded: LoadedConfig | None) -> tuple[str, ...]:
    """The config's boolean gate judges (``gate: true`` and ``composite.gates``)."""
    if loaded is None:
        return ()
    cfg = loaded.config
    names = [j.name for j in cfg.judges or [] if getattr(j, "gate", False)]
    comp = getattr(cfg, "composite", None)
    names += [g for g in (getattr(comp, "gates", None) or []) if g not in names]
    return tuple(names)


def _write_json(path: Path, data: Any) -> None:
    from eval_harness.jsonfile import json_text, write_text_atomic

    # indented when small, compact (C encoder) when large: docs/reports.md
    write_text_atomic(path, redact(json_text(data)))


def _safe_name(name: str) -> str | None:
    """``name`` when it can name one folder (validated like a case id), else None."""
    return name if CASE_ID.match(name) and name not in (".", "..") else None


def _eval_name(frame: Any, loaded: LoadedConfig | None, paths: Sequence[Path]) -> str:
    """The eval's name for ``analysis/<name>/``. Names read from run data are untrusted
    (``../../x`` or ``/etc`` in a run.json): only a valid folder name is used, else the
    runs folder's own name, else ``eval``."""
    if loaded is not None:
        return loaded.config.name  # validated by the config model
    names = sorted({str(x) for x in frame["eval"].dropna().unique()}) if "eval" in frame else []
    if len(names) == 1 and _safe_name(names[0]):
        return names[0]
    return _safe_name(paths[0].resolve().name) or "eval"


def _default_output(name: str) -> Path:
    """``analysis/<name>``, refusing anything that would leave ``analysis/``."""
    root = Path("analysis").resolve()
    out = (root / name).resolve()
    if out.parent != root:
        raise UsageError(f"eval name {name!r} does not name one folder under analysis/",
                         hint="pass --output DIR")
    return Path("analysis") / name


@dataclass
class AnalysisOutputs:
    """Everything one analysis computed and wrote (the Python API returns it as is)."""

    frame: Any  #: the tidy DataFrame (one row per run, case and judge, plus composite)
    anova: dict[str, Any]
    comparisons: dict[str, Any]
    leaderboard: dict[str, Any]
    thresholds: list[dict[str, Any]]
    pairwise: dict[str, Any] | None
    out_dir: Path
    files: dict[str, Path] = field(default_factory=dict)  #: name -> file written
    exported: Path | None = None  #: the --export baseline file, when written
    export_note: str = ""  #: one line saying what --export wrote
    failures: list[str] = field(default_factory=list)  #: threshold / regression gate lines
    #: judges that errored on every sample they saw (named, with reasons, on stderr)
    errored_judges: list[str] = field(default_factory=list)
    #: the report model the files were rendered from (the console prints the same one)
    report: dict[str, Any] | None = None

    @property
    def exit_code(self) -> int:
        """1 when a threshold or the regression gate failed, else 0."""
        return 1 if self.failures else 0


def compute_analysis(
    args: argparse.Namespace, paths: Sequence[Path], loaded: LoadedConfig | None,
    *, exp: Any = None, eval_dir: Path | None = None,
) -> AnalysisOutputs:
    """Analyse run directories under ``paths`` and write the output files; print nothing
    but notes on stderr. The files are written as one set (reports/outset.py): a reader
    never sees two analyses mixed, a killed analysis leaves the previous set whole."""
    from eval_harness.reports.outset import staged_outputs

    with staged_outputs() as staged:
        return _compute_analysis(args, paths, loaded, staged, exp=exp, eval_dir=eval_dir)


def _compute_analysis(
    args: argparse.Namespace, paths: Sequence[Path], loaded: LoadedConfig | None,
    staged: list[Any], *, exp: Any = None, eval_dir: Path | None = None,
) -> AnalysisOutputs:
    from eval_harness import malloc

    malloc.tune()  # freed row-sized arrays go back to the system (eval_harness/malloc.py)
    with phase("imports"):  # pandas, numpy, scipy: seconds on a cold start
        from eval_harness.aeh import format_options
        from eval_harness.analysis.build import build_anova
        from eval_harness.analysis.compare.baseline import export_baseline, load_baseline
        from eval_harness.analysis.compare.build import build_comparisons, parse_reference
        from eval_harness.analysis.compare.gate import gate
        from eval_harness.analysis.compare.leaderboard import build_leaderboard
        from eval_harness.analysis.compare.verdicts import VerdictRule, verdict_tables
        from eval_harness.analysis.failures import find_failures
        from eval_harness.analysis.loading.loader import load_runs

    if loaded is not None and loaded.config.mlflow is not None:
        from eval_harness.reports.mlflow_log import require_mlflow

        require_mlflow()  # exit 2 with the install hint before any work
    with phase("load"):
        frame = load_runs(list(paths), judge_specs=loaded.config if loaded else None,
                          factor_levels=factor_levels(loaded),
                          format_options=format_options(getattr(args, "aeh_errors", "exclude")))
    for issue in frame.attrs.get("issues", []):
        if issue.get("kind") == "assumed_range":  # the numbers depend on it: say so once
            print(f"warning: {issue['detail']}", file=sys.stderr)
    malloc.trim()  # the loader's transients (parsed chunks, codes) are gone now
    from eval_harness.analysis.configured import restrict_to_configured

    frame, excluded_conditions = restrict_to_configured(frame, factor_levels(loaded))
    if excluded_conditions and frame.empty:
        raise AnalysisError(f"no condition in the runs is in the configured matrix "
                            f"({len(excluded_conditions)} left out; first: "
                            f"{excluded_conditions[0]['reason']})",
                            hint="analyse with the config the runs used (levels and their "
                                 "types must match: 1 is not \"1\")")
    if excluded_conditions:
        print(f"note: {len(excluded_conditions)} condition(s) in the runs are not in the "
              "configured matrix (a level renamed or removed): left out, listed in "
              "anova.json excluded_conditions", file=sys.stderr)
    if frame.empty:
        raise AnalysisError(f"no runs with recorded levels under {', '.join(map(str, paths))}",
                            hint="point --analyze-only at runs/<eval>/")
    opts = _options(args, loaded)
    name = _eval_name(frame, loaded, paths)
    from eval_harness.reports.outset import OutputSet

    final_dir = Path(args.output) if args.output else _default_output(name)
    staged.append(OutputSet(final_dir))
    out_dir = staged[0].path  # every file below goes here; committed as a set at the end
    if args.export_parquet:
        _export_parquet(frame, args.export_parquet)
    failures = find_failures(frame, paths)
    _print_failures(failures)
    dropped: list[str] = []
    if failures.dead_judges and getattr(args, "allow_errored_judges", False):
        frame, dropped = _drop_dead_judges(frame, failures, loaded)
    if not failures.scored:  # a valid (empty) anova.json, and reports saying why
        empty = build_anova(frame, method=opts["method"], correction=opts["correction"],
                            alpha=opts["alpha"], per_judge=False,
                            keep_incomplete=opts["keep_incomplete"],
                            judge_specs=loaded.config if loaded else None)
        _no_scored_samples(staged[0], name, failures, empty)
    per_judge = opts["per_judge"]
    rows = frame[frame["judge"] == "composite"] if "judge" in frame else frame.iloc[:0]
    if not per_judge and not rows["value"].notna().any():
        # No composite can be formed (e.g. imported runs with a numeric judge of unknown
        # range and no --config): screen each judge rather than report nothing.
        per_judge = True
        why = ("judges errored (above)" if failures.dead_judges
               else "pass --config for judge score ranges")
        print(f"note: no composite could be formed ({why}); screening each judge instead "
              "(--per-judge)", file=sys.stderr)
    with phase("anova"):
        anova = build_anova(
            frame, method=opts["method"], correction=opts["correction"], alpha=opts["alpha"],
            per_judge=per_judge, keep_incomplete=opts["keep_incomplete"], ddf=opts["ddf"],
            simple_effects=opts["simple_effects"], judge_specs=loaded.config if loaded else None,
        )
    for note in anova.get("notes", []):
        if note.startswith("method auto → "):  # the automatic choice is printed, not only recorded
            print(f"note: {note}", file=sys.stderr)
    anova["excluded_conditions"] = excluded_conditions
    anova["dropped_judges"] = [{"judge": j, "reason": "errored on every sample "
                                "(--allow-errored-judges): left out of the composite, the "
                                "other weights renormalised"} for j in dropped]
    from eval_harness.aeh.export import aeh_fields

    anova = aeh_fields(anova, frame)  # what agent-eval-harness's consumers read, beside ours
    # one pass rule for comparisons, leaderboard, thresholds, reports and the gate
    rule = VerdictRule(pass_mark=0.5 if opts["pass_mark"] is None else opts["pass_mark"],
                       gates=_gate_judges(loaded))
    reference = parse_reference(args.reference) if args.reference else None
    baseline = load_baseline(args.baseline) if args.baseline else None
    malloc.trim()  # after each large phase: its freed transients leave the resident set
    # verdict tables built once, shared by comparisons, leaderboard and reports
    with phase("verdicts"):
        tables = verdict_tables(frame, rule)
    malloc.trim()
    with phase("comparisons"):
        # per-case rows as columns (built on access): ~85 MB less at 16 × 5,000
        comparisons = build_comparisons(frame, reference, baseline, opts["alpha"], rule=rule,
                                        cases=tables[1], row_columns=True)
    with phase("leaderboard"):
        leaderboard = build_leaderboard(frame, alpha=opts["alpha"], rule=rule,
                                        stratify_by=stratum(frame), cases=tables[1])
    malloc.trim()
    thresholds: list[dict[str, Any]] = []
    pairwise = _pairwise(exp, eval_dir, paths)
    if loaded is not None:
        from eval_harness.judges.thresholds import evaluate_thresholds

        thresholds = evaluate_thresholds(frame, loaded.config, pairwise, samples=tables[0])
    with phase("anova.json"):
        _write_json(out_dir / "anova.json", anova)
        for beside in aeh_artifact_paths(args, frame, paths, eval_dir, out_dir):
            try:  # where its report.py / compare.py look
                _write_json(beside, anova)
            except OSError as exc:  # a read-only runs tree: the analysis still stands
                print(f"warning: could not write {beside} ({exc.strerror}); anova.json is "
                      f"in {out_dir}", file=sys.stderr)
    from eval_harness.analysis.compare.files import write_comparisons

    # summary JSON + per-case rows as JSON Lines (docs/reports.md, "comparisons")
    with phase("comparisons.json"):
        write_comparisons(out_dir, comparisons, clean=redact)
    with phase("leaderboard.json"):
        _write_json(out_dir / "leaderboard.json", leaderboard)
    _write_json(out_dir / "thresholds.json", {"results": thresholds})
    from eval_harness.reports.model import build_report
    from eval_harness.reports.writer import now_iso, write_reports

    # the report model is built once, for the files and the console, from the same
    # verdict tables (the configured pass rule) as the comparisons
    written: dict[str, Path] = {}
    report = None
    if not getattr(args, "no_report", False):
        with phase("report model"):
            report = build_report(title=loaded.config.title if loaded else None,
                                  anova=anova, frame=frame, comparisons=comparisons,
                                  leaderboard=leaderboard, thresholds=thresholds,
                                  pairwise=pairwise, generated_at=now_iso(),
                                  tables=tables)
        written = write_reports(out_dir, anova=anova, frame=frame, comparisons=comparisons,
                                leaderboard=leaderboard, thresholds=thresholds,
                                pairwise=pairwise, runs_root=list(paths), report=report)
    files = {name: final_dir / name for name in
             ("anova.json", "comparisons.json", "comparisons.cases.jsonl", "leaderboard.json",
              "thresholds.json")}
    files.update({f"report.{kind}": final_dir / path.name for kind, path in written.items()})
    if "json" in written and (out_dir / "report.cases.jsonl").is_file():  # large case grid
        files["report.cases.jsonl"] = final_dir / "report.cases.jsonl"
    staged[0].commit()
    out = AnalysisOutputs(frame=frame, anova=anova, comparisons=comparisons,
                          leaderboard=leaderboard, thresholds=thresholds, pairwise=pairwise,
                          out_dir=final_dir, files=files,
                          errored_judges=list(failures.dead_judges), report=report)
    if loaded is not None and loaded.config.mlflow is not None:
        from eval_harness.reports.mlflow_log import log_analysis, tracking_uri

        with phase("mlflow"):
            run_id = log_analysis(loaded.config.mlflow, name, anova, frame, files)
        print(f"mlflow: logged {name} to {tracking_uri(loaded.config.mlflow)} (parent run "
              f"{run_id})", file=sys.stderr)
    if args.export:
        from eval_harness import __version__

        doc = export_baseline(frame, args.export, compact=args.compact, runs_root=paths[0],
                              tool_version=__version__)
        out.exported = Path(args.export)
        out.export_note = _export_note(out.exported, doc)
    for t in thresholds:
        if t.get("passed", True):
            continue
        value = t.get("value")
        shown = "unknown (no usable sample: fails closed)" if value is None else f"{value:.4g}"
        levels = ", ".join(f"{k}={v}" for k, v in (t.get("levels") or {}).items()) or "all"
        out.failures.append(f"threshold failed: {t.get('target')} {t.get('metric')} = {shown}, "
                            f"needs {'<=' if t.get('metric') == 'max_error_rate' else '>='} "
                            f"{t.get('threshold')} ({levels})")
    if args.fail_on_regression:
        bad, reasons = gate(comparisons, True, rule=gate_rule(args), alpha=opts["alpha"])
        if bad:
            out.failures += [f"regression: {reason}" for reason in reasons]
    return out


def _drop_dead_judges(frame: Any, failures: Any,
                      loaded: LoadedConfig | None) -> tuple[Any, list[str]]:
    """``--allow-errored-judges``: the composite without the judges that errored on every
    sample (analysis.recompose), said on stderr."""
    from eval_harness.analysis.composite import coerce_judge_specs
    from eval_harness.analysis.recompose import drop_from_composite

    dead = sorted(failures.dead_judges)
    if loaded is not None and loaded.config.reward is not None:
        print(f"note: judge(s) {', '.join(dead)} errored on every sample; the `reward` "
              "block's composite is kept as recorded", file=sys.stderr)
        return frame, []
    specs = coerce_judge_specs(loaded.config if loaded else None)
    out = drop_from_composite(frame, dead, specs)
    print(f"note: judge(s) {', '.join(f'`{j}`' for j in dead)} errored on every sample: "
          "dropped from the composite (--allow-errored-judges; the other judges' weights "
          "renormalised)", file=sys.stderr)
    return out, dead


def gate_rule(args: argparse.Namespace) -> str:
    """``--gate`` (``--significant-only`` is the older spelling of ``--gate cases``)."""
    chosen = getattr(args, "gate", None)
    if getattr(args, "significant_only", False):
        if chosen not in (None, "cases"):
            raise UsageError(f"--significant-only means --gate cases, not --gate {chosen}",
                             hint="pass only --gate")
        return "cases"
    return chosen or "overall"


def _export_note(path: Path, doc: dict[str, Any]) -> str:
    """What ``--export`` wrote, in one line: kind, runs, conditions, samples, size."""
    runs = doc.get("runs") or []
    conditions = {r.get("condition_id") for r in runs}
    samples = sum(len(r.get("samples") or []) for r in runs)
    kind = "compact (ids, case hashes, statuses, judge values, latency, cost)" if doc.get(
        "compact") else "full (with each case's input and outputs)"
    size = path.stat().st_size if path.exists() else 0
    return (f"exported baseline {path}: {kind}; {len(runs)} run(s), {len(conditions)} "
            f"condition(s), {samples} sample(s), {size / 1024:.0f} KiB — compare later runs "
            f"with --baseline {path}")


def run_analysis(
    args: argparse.Namespace, paths: Sequence[Path], loaded: LoadedConfig | None,
    *, exp: Any = None, eval_dir: Path | None = None,
) -> int:
    """Analyse run directories under ``paths``; write outputs; return the exit code.
    ``--timings``: the cost of each phase on stderr and in ``<output>/timings.json``."""
    with recording(bool(getattr(args, "timings", False))) as timings:
        out = compute_analysis(args, paths, loaded, exp=exp, eval_dir=eval_dir)
        with phase("console"):
            _print_results(args, out)
    if timings is not None:
        timings.write_json(out.out_dir / "timings.json")
        timings.print_table()
        print(f"wrote {out.out_dir / 'timings.json'}", file=sys.stderr)
    if out.export_note:
        print(out.export_note, file=sys.stderr)
    for line in out.failures:
        print(line, file=sys.stderr)
    if out.errored_judges and not getattr(args, "allow_errored_judges", False):
        names = ", ".join(f"`{j}`" for j in out.errored_judges)
        raise NoUsableResults(f"judge(s) {names} errored on every sample (reasons above), "
                              "so every composite that includes them is errored",
                              hint="fix the judge, then `--rescore`; or pass "
                                   "--allow-errored-judges to drop it from the composite "
                                   "(the other weights renormalised) and analyse the rest")
    return out.exit_code


def _print_results(args: argparse.Namespace, out: AnalysisOutputs) -> None:
    """The results on stdout: anova.json with ``--json``, else the console report."""
    if args.json:
        print(json.dumps(out.anova, indent=2, default=str))
        return
    from rich.console import Console

    from eval_harness.reports.console import print_console

    print_console(Console(highlight=False), anova=out.anova, frame=out.frame,
                  comparisons=out.comparisons, leaderboard=out.leaderboard,
                  thresholds=out.thresholds, pairwise=out.pairwise, report=out.report)
    shown = [out.files["anova.json"], *(p for k, p in out.files.items() if k.startswith("report."))]
    print(f"wrote {', '.join(map(str, shown))}")


def _print_failures(failures: Any) -> None:
    """The first few distinct reasons of errored runs and of judges that never worked."""
    from eval_harness.analysis.failures import format_reasons

    if failures.n_errored:
        print(safe_text(f"errored: {failures.n_errored} of {failures.n_samples} samples: "
                        f"{format_reasons(failures.cell_reasons)}"), file=sys.stderr)
    for judge, (n, reasons) in failures.dead_judges.items():
        print(safe_text(f"judge `{judge}` errored on every sample ({n}): "
                        f"{format_reasons(reasons)}"), file=sys.stderr)


def _no_scored_samples(outset: Any, name: str, failures: Any, anova: dict[str, Any]) -> None:
    """Write reports saying there is nothing to analyse, then stop (exit 4)."""
    from eval_harness.reports.no_results import no_results_document, write_no_results

    if failures.all_errored:
        headline = (f"every sample errored ({failures.n_errored} of {failures.n_samples}): "
                    "nothing was scored")
        hint = "fix the cause above (try one case: --limit 1 -v), then rerun with --retry-errors"
    else:
        headline = (f"no judge produced a value on any of the {failures.n_samples} samples "
                    f"({failures.n_errored} errored runs)")
        hint = "fix the judges, then `--rescore`"
    doc = no_results_document(name, headline, failures.n_errored, dict(failures.cell_reasons),
                              failures.dead_judges)
    written = write_no_results(outset.path, doc, anova)
    outset.commit()
    print(f"wrote {', '.join(str(outset.target / p.name) for p in written)} (no scored "
          "samples)", file=sys.stderr)
    raise NoUsableResults(f"no scored samples: {headline}", hint=hint)


def _export_parquet(frame: Any, path: str) -> None:
    """``--export-parquet``: pandas needs an optional engine (pyarrow or fastparquet); a
    missing one is a usage error with the install hint, not an internal error."""
    import pandas as pd

    # text columns as plain strings: the file's schema does not depend on the frame's
    # in-memory encoding (categoricals, docs/api.md)
    plain = {c: frame[c].cat.categories.dtype for c in frame.columns
             if isinstance(frame[c].dtype, pd.CategoricalDtype)}
    try:
        frame.astype(plain).to_parquet(path)
    except ImportError as exc:
        raise UsageError(f"--export-parquet needs pyarrow or fastparquet ({exc})".replace("\n", " "),
                         hint="pip install 'factorial-eval-harness[parquet]'") from None


def aeh_artifact_paths(args: argparse.Namespace, frame: Any, paths: Sequence[Path],
                       eval_dir: Path | None, out_dir: Path) -> list[Path]:
    """Where agent-eval-harness keeps anova.json (``<runs>/<eval>/anova.json``, beside the
    run directories): for its run directories, or with ``--format aeh``."""
    aeh = "agent-eval-harness" in (frame.attrs.get("formats") or [])
    if not aeh and getattr(args, "output_format", None) != "aeh":
        return []
    roots = [eval_dir] if eval_dir is not None else list(paths)
    out = [Path(r) / "anova.json" for r in roots if Path(r).is_dir()]
    return [p for p in out if p.resolve() != (out_dir / "anova.json").resolve()]


def _pairwise(exp: Any, eval_dir: Path | None, paths: Sequence[Path]) -> dict[str, Any] | None:
    if exp is not None and eval_dir is not None:
        from eval_harness.judges.pairwise import run_pairwise

        return run_pairwise(exp, eval_dir) or None
    from eval_harness.analysis.pairwise_doc import read_pairwise

    for root in paths:
        found = Path(root) / "pairwise.json"
        if found.exists():
            doc, note = read_pairwise(found)  # untrusted: any shape, never a crash
            if note:
                print(f"warning: {note}", file=sys.stderr)
            return doc
    return None


def analyze_and_report(args: argparse.Namespace, exp: Any, eval_dir: Path) -> int:
    """After a run: analyse ``eval_dir`` with the run's config."""
    return run_analysis(args, [Path(eval_dir)], exp.loaded, exp=exp, eval_dir=Path(eval_dir))


def resolve_paths(roots: Sequence[str | Path]) -> list[Path]:
    """The ``--analyze-only`` roots as paths; a missing one is a usage error (exit 2)."""
    paths = [Path(p) for p in roots]
    for p in paths:
        if not p.exists():
            raise UsageError(f"no such directory: {p}", hint="point at runs/<eval>/")
    return paths


def analysis_config(config: str | None, paths: Sequence[Path]) -> LoadedConfig | None:
    """The config ``--analyze-only`` uses, said on stderr: ``--config``; else the one
    recorded in the runs directory at run time (factor and level order, reference, judge
    ranges, pass mark); else none (levels in the order found: the reference condition may
    not be the one the run used)."""
    from eval_harness.config.recorded import find_recorded, load_recorded

    if config:
        print(f"config: {config} (--config)", file=sys.stderr)
        return load_config(config, strict=False)
    recorded = find_recorded(paths)
    for path in recorded:
        loaded, source = load_recorded(path)
        if loaded is None:
            print(f"warning: {source}; ignoring it", file=sys.stderr)
            continue
        others = [str(p) for p in recorded if p != path]
        print(f"config: recorded at run time in {path} (from {source}); pass --config to "
              "use another" + (f"; also found {', '.join(others)}, not used" if others else ""),
              file=sys.stderr)
        return loaded
    print("warning: no config (no --config, no recorded eval_config.json in the runs "
          "directory): factor levels are taken in the order found, so the reference "
          "condition may differ from the run's; pass --config eval.yaml", file=sys.stderr)
    return None


def analyze_only(args: argparse.Namespace) -> int:
    """``--analyze-only DIR...``: analyse existing runs, with ``--config``, the config
    recorded at run time, or none (see :func:`analysis_config`)."""
    paths = resolve_paths(args.analyze_only)
    loaded = analysis_config(args.config, paths)
    if loaded is not None:
        from eval_harness.analysis.judge_drift import config_digests, drift_warning, judge_drift

        warning = drift_warning(judge_drift(paths, *config_digests(loaded)))
        if warning:
            print(warning, file=sys.stderr)
    return run_analysis(args, paths, loaded)

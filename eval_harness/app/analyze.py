"""``analyze``: run directories -> anova.json, comparisons, leaderboard, thresholds,
reports; one path for every door (``--analyze-only``, after a run, the Python API, the
dashboard, the GitHub Action).

The steps, in order: load the tidy frame (:func:`load_frame`, the one call of the loader)
-> keep the configured conditions -> failures and errored judges -> anova.json
(:func:`_anova`) -> the verdict rule and its tables -> comparisons and leaderboard ->
thresholds (:func:`_documents`) -> files (:func:`_write_documents`), the report model
(:func:`_report`) and the reports (:func:`_write_reports`; no file is written with
``write=False``) -> baseline export and the gate lines (:func:`_finish`).
Notes go to ``say`` (stderr by default), one line each, exactly as the CLI prints them.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from eval_harness._util.phase_timings import phase
from eval_harness._util.redact import redact
from eval_harness._util.safe_text import safe_text
from eval_harness.app.options import AnalysisOptions, AnalysisSettings, resolve_settings
from eval_harness.config.dataset import CASE_ID
from eval_harness.config.loader import LoadedConfig, load_config
from eval_harness.errors import AnalysisError, NoUsableResults, UsageError
from eval_harness.reports.documents import AnalysisDocuments

Say = Callable[[str], None]
_Doc = TypeVar("_Doc")
#: the analysis modules (pandas, numpy, scipy), imported in the ``imports`` phase
_HEAVY = ("eval_harness.analysis.anova.document", "eval_harness.analysis.compare.baseline",
          "eval_harness.analysis.compare.build", "eval_harness.analysis.compare.gate",
          "eval_harness.analysis.compare.leaderboard", "eval_harness.analysis.compare.verdicts",
          "eval_harness.analysis.failures", "eval_harness.analysis.loading.tidy_frame")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def _built(doc: _Doc | None, name: str) -> _Doc:
    """A document the analysis always builds (only a regenerated report may lack it)."""
    if doc is None:
        raise AnalysisError(f"the analysis built no {name}")
    return doc


@dataclass
class AnalysisOutputs:
    """Everything one analysis computed (and wrote); the Python API returns it as is."""

    frame: Any  #: the tidy DataFrame (one row per run, case and judge, plus composite)
    documents: AnalysisDocuments
    out_dir: Path  #: where the files are (or would be, with ``write=False``)
    #: the verdict rule (pass mark, gate judges) every document was computed with
    rule: Any = None
    #: (samples, cases) verdict tables under ``rule`` (one row per (run, case) and per
    #: (condition, case))
    tables: tuple[Any, Any] | None = None
    files: dict[str, Path] = field(default_factory=dict)  #: name -> file written
    exported: Path | None = None  #: the --export baseline file, when written
    export_note: str = ""  #: one line saying what --export wrote
    failures: list[str] = field(default_factory=list)  #: threshold / regression gate lines
    #: judges that errored on every sample they saw (named, with reasons, on stderr)
    errored_judges: list[str] = field(default_factory=list)

    @property
    def anova(self) -> dict[str, Any]:
        """anova.json."""
        return self.documents.anova

    @property
    def comparisons(self) -> dict[str, Any]:
        """comparisons.json."""
        return _built(self.documents.comparisons, "comparisons.json")

    @property
    def leaderboard(self) -> dict[str, Any]:
        """leaderboard.json."""
        return _built(self.documents.leaderboard, "leaderboard.json")

    @property
    def thresholds(self) -> list[dict[str, Any]]:
        """thresholds.json ``results``."""
        return _built(self.documents.thresholds, "thresholds.json")

    @property
    def pairwise(self) -> dict[str, Any] | None:
        """pairwise.json, when there is one."""
        return self.documents.pairwise

    @property
    def report(self) -> dict[str, Any] | None:
        """The report model the files were rendered from (the console prints the same)."""
        return self.documents.report

    @property
    def exit_code(self) -> int:
        """1 when a threshold or the regression gate failed, else 0."""
        return 1 if self.failures else 0


# --- paths and config -------------------------------------------------------------------

def resolve_paths(roots: Sequence[str | Path]) -> list[Path]:
    """The ``--analyze-only`` roots as paths; a missing one is a usage error (exit 2)."""
    paths = [Path(p) for p in roots]
    for p in paths:
        if not p.exists():
            raise UsageError(f"no such directory: {p}", hint="point at runs/<eval>/")
    return paths


def analysis_config(config: str | None, paths: Sequence[Path],
                    say: Say = _stderr) -> LoadedConfig | None:
    """The config ``--analyze-only`` uses, said on stderr: ``--config``; else the one
    recorded in the runs directory at run time (factor and level order, reference, judge
    ranges, pass mark); else none (levels in the order found: the reference condition may
    not be the one the run used)."""
    from eval_harness.config.recorded import find_recorded, load_recorded

    if config:
        say(f"config: {config} (--config)")
        return load_config(config, strict=False)
    recorded = find_recorded(paths)
    for path in recorded:
        loaded, source = load_recorded(path)
        if loaded is None:
            say(f"warning: {source}; ignoring it")
            continue
        others = [str(p) for p in recorded if p != path]
        say(f"config: recorded at run time in {path} (from {source}); pass --config to "
            "use another" + (f"; also found {', '.join(others)}, not used" if others else ""))
        return loaded
    say("warning: no config (no --config, no recorded eval_config.json in the runs "
        "directory): factor levels are taken in the order found, so the reference "
        "condition may differ from the run's; pass --config eval.yaml")
    return None


def recorded_config(paths: Sequence[Path]) -> LoadedConfig | None:
    """The config recorded at run time in ``paths`` (the first readable one), said
    nowhere: the dashboard's choice."""
    from eval_harness.config.recorded import find_recorded, load_recorded

    for path in find_recorded(paths):
        loaded, _ = load_recorded(path)
        if loaded is not None:
            return loaded
    return None


def drift_note(paths: Sequence[Path], loaded: LoadedConfig) -> str | None:
    """The warning when the runs were scored by judges other than ``loaded``'s."""
    from eval_harness.analysis.judge_drift import config_digests, drift_warning, judge_drift

    return drift_warning(judge_drift(paths, *config_digests(loaded)))


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


def analysis_root(runs_dir: str | None) -> Path:
    """Where the analyses of ``runs_dir`` go: ``analysis/`` for the default ``runs``
    (and when unknown), else ``<runs-dir>-analysis/`` beside it — one folder per runs
    directory, so two of them never overwrite each other's report."""
    if runs_dir is None:
        return Path("analysis")
    runs = Path(runs_dir)
    if runs.resolve() == Path("runs").resolve():
        return Path("analysis")
    return runs.parent / f"{runs.resolve().name or 'runs'}-analysis"


def _default_output(name: str, runs_dir: str | None = None) -> Path:
    """``<analysis root>/<name>`` (:func:`analysis_root`), refusing anything that would
    leave that root."""
    base = analysis_root(runs_dir)
    root = base.resolve()
    out = (root / name).resolve()
    if out.parent != root:
        raise UsageError(f"eval name {name!r} does not name one folder under {base}/",
                         hint="pass --output DIR")
    return base / name


# --- the steps ----------------------------------------------------------------------------

def load_frame(paths: Sequence[Path], loaded: LoadedConfig | None,
               options: AnalysisOptions) -> Any:
    """The tidy frame of the runs under ``paths`` (the one call of the loader)."""
    from eval_harness.aeh import format_options
    from eval_harness.analysis.config_settings import factor_levels
    from eval_harness.analysis.loading.tidy_frame import load_runs

    return load_runs(list(paths), judge_specs=loaded.config if loaded else None,
                     factor_levels=factor_levels(loaded),
                     format_options=format_options(options.aeh_errors))


def _configured(frame: Any, loaded: LoadedConfig | None, paths: Sequence[Path],
                say: Say) -> tuple[Any, list[dict[str, Any]]]:
    """The frame without the conditions the config does not have (said on stderr)."""
    from eval_harness.analysis.config_settings import factor_levels
    from eval_harness.analysis.configured import restrict_to_configured

    frame, excluded = restrict_to_configured(frame, factor_levels(loaded))
    if excluded and frame.empty:
        raise AnalysisError(f"no condition in the runs is in the configured matrix "
                            f"({len(excluded)} left out; first: "
                            f"{excluded[0]['reason']})",
                            hint="analyse with the config the runs used (levels and their "
                                 "types must match: 1 is not \"1\")")
    if excluded:
        say(f"note: {len(excluded)} condition(s) in the runs are not in the "
            "configured matrix (a level renamed or removed): left out, listed in "
            "anova.json excluded_conditions")
    if frame.empty:
        raise AnalysisError(f"no runs with recorded levels under {', '.join(map(str, paths))}",
                            hint="point --analyze-only at runs/<eval>/")
    return frame, excluded


def _print_failures(failures: Any, say: Say) -> None:
    """The first few distinct reasons of errored runs and of judges that never worked."""
    from eval_harness.analysis.failures import format_reasons

    if failures.n_errored:
        say(safe_text(f"errored: {failures.n_errored} of {failures.n_samples} samples: "
                      f"{format_reasons(failures.cell_reasons)}"))
    for judge, (n, reasons) in failures.dead_judges.items():
        say(safe_text(f"judge `{judge}` errored on every sample ({n}): "
                      f"{format_reasons(reasons)}"))


def _drop_dead_judges(frame: Any, failures: Any, loaded: LoadedConfig | None,
                      say: Say) -> tuple[Any, list[str]]:
    """``allow_errored_judges``: the composite without the judges that errored on every
    sample (analysis.recompose), said on stderr."""
    from eval_harness.analysis.recompose import drop_from_composite
    from eval_harness.judges.composite import coerce_judge_specs

    dead = sorted(failures.dead_judges)
    if loaded is not None and loaded.config.reward is not None:
        say(f"note: judge(s) {', '.join(dead)} errored on every sample; the `reward` "
            "block's composite is kept as recorded")
        return frame, []
    specs = coerce_judge_specs(loaded.config if loaded else None)
    out = drop_from_composite(frame, dead, specs)
    say(f"note: judge(s) {', '.join(f'`{j}`' for j in dead)} errored on every sample: "
        "dropped from the composite (--allow-errored-judges; the other judges' weights "
        "renormalised)")
    return out, dead


def _no_scored_samples(outset: Any, name: str, failures: Any, anova: dict[str, Any],
                       say: Say) -> None:
    """Write reports saying there is nothing to analyse (unless ``outset`` is None), then
    stop (exit 4)."""
    from eval_harness.reports.no_results import no_results_document, write_no_results

    if failures.all_errored:
        headline = (f"every sample errored ({failures.n_errored} of {failures.n_samples}): "
                    "nothing was scored")
        hint = "fix the cause above (try one case: --limit 1 -v), then rerun with --retry-errors"
    else:
        headline = (f"no judge produced a value on any of the {failures.n_samples} samples "
                    f"({failures.n_errored} errored runs)")
        hint = "fix the judges, then `--rescore`"
    if outset is not None:
        doc = no_results_document(name, headline, failures.n_errored,
                                  dict(failures.cell_reasons), failures.dead_judges)
        written = write_no_results(outset.path, doc, anova)
        outset.commit()
        say(f"wrote {', '.join(str(outset.target / p.name) for p in written)} (no scored "
            "samples)")
    raise NoUsableResults(f"no scored samples: {headline}", hint=hint)


def _anova(frame: Any, loaded: LoadedConfig | None, settings: AnalysisSettings,
           failures: Any, excluded: list[dict[str, Any]], dropped: list[str],
           say: Say) -> dict[str, Any]:
    """anova.json: the screen (per judge when no composite can be formed), the excluded
    conditions, the dropped judges and agent-eval-harness's fields."""
    from eval_harness.aeh.export import aeh_fields
    from eval_harness.analysis.anova.document import build_anova

    per_judge = settings.per_judge
    rows = frame[frame["judge"] == "composite"] if "judge" in frame else frame.iloc[:0]
    if not per_judge and not rows["value"].notna().any():
        # No composite can be formed (e.g. imported runs with a numeric judge of unknown
        # range and no --config): screen each judge rather than report nothing.
        per_judge = True
        why = ("judges errored (above)" if failures.dead_judges
               else "pass --config for judge score ranges")
        say(f"note: no composite could be formed ({why}); screening each judge instead "
            "(--per-judge)")
    with phase("anova"):
        anova = build_anova(
            frame, method=settings.method, correction=settings.correction,
            alpha=settings.alpha, per_judge=per_judge,
            keep_incomplete=settings.keep_incomplete, ddf=settings.ddf,
            simple_effects=settings.simple_effects,
            judge_specs=loaded.config if loaded else None,
        )
    for note in anova.get("notes", []):
        if note.startswith("method auto → "):  # the automatic choice is printed, not only recorded
            say(f"note: {note}")
    anova["excluded_conditions"] = excluded
    anova["dropped_judges"] = [{"judge": j, "reason": "errored on every sample "
                                "(--allow-errored-judges): left out of the composite, the "
                                "other weights renormalised"} for j in dropped]
    return aeh_fields(anova, frame)  # what agent-eval-harness's consumers read, beside ours


def _pairwise(exp: Any, eval_dir: Path | None, paths: Sequence[Path],
              say: Say) -> dict[str, Any] | None:
    if exp is not None and eval_dir is not None:
        from eval_harness.judges.pairwise import run_pairwise

        return run_pairwise(exp, eval_dir) or None
    from eval_harness.analysis.pairwise_doc import read_pairwise

    for root in paths:
        found = Path(root) / "pairwise.json"
        if found.exists():
            doc, note = read_pairwise(found)  # untrusted: any shape, never a crash
            if note:
                say(f"warning: {note}")
            return doc
    return None


def _documents(frame: Any, anova: dict[str, Any], loaded: LoadedConfig | None,
               options: AnalysisOptions, settings: AnalysisSettings,
               pairwise_of: Callable[[], dict[str, Any] | None],
               ) -> tuple[AnalysisDocuments, Any, tuple[Any, Any]]:
    """(documents, verdict rule, verdict tables): one pass rule for comparisons,
    leaderboard, thresholds, reports and the gate."""
    from eval_harness._util import malloc_trim
    from eval_harness.analysis.compare.baseline import load_baseline
    from eval_harness.analysis.compare.build import build_comparisons, parse_reference
    from eval_harness.analysis.compare.leaderboard import build_leaderboard
    from eval_harness.analysis.compare.verdicts import verdict_tables
    from eval_harness.analysis.config_settings import stratum

    rule = settings.verdict_rule()
    reference = parse_reference(options.reference) if options.reference else None
    baseline = load_baseline(options.baseline) if options.baseline else None
    malloc_trim.trim()  # after each large phase: its freed transients leave the resident set
    # verdict tables built once, shared by comparisons, leaderboard and reports
    with phase("verdicts"):
        tables = verdict_tables(frame, rule)
    malloc_trim.trim()
    with phase("comparisons"):
        # per-case rows as columns (built on access): ~85 MB less at 16 × 5,000
        comparisons = build_comparisons(frame, reference, baseline, settings.alpha, rule=rule,
                                        cases=tables[1], row_columns=True)
    with phase("leaderboard"):
        leaderboard = build_leaderboard(frame, alpha=settings.alpha, rule=rule,
                                        stratify_by=stratum(frame), cases=tables[1])
    malloc_trim.trim()
    thresholds: list[dict[str, Any]] = []
    pairwise = pairwise_of()  # after a run: the pairwise judges run here
    if loaded is not None:
        from eval_harness.judges.thresholds import evaluate_thresholds

        thresholds = evaluate_thresholds(frame, loaded.config, pairwise, samples=tables[0])
    docs = AnalysisDocuments(anova=anova, comparisons=comparisons, leaderboard=leaderboard,
                             thresholds=thresholds, pairwise=pairwise, report=None)
    return docs, rule, tables


def _report(docs: AnalysisDocuments, frame: Any, loaded: LoadedConfig | None,
            tables: tuple[Any, Any]) -> AnalysisDocuments:
    """The documents with the report model, built once for the files, the console and
    the dashboard from the same verdict tables (the configured pass rule)."""
    from dataclasses import replace

    from eval_harness._util.clock import utc_now_iso
    from eval_harness.reports.report_model import build_report

    with phase("report model"):
        report = build_report(docs, frame, title=loaded.config.title if loaded else None,
                              generated_at=utc_now_iso(), tables=tables)
    return replace(docs, report=report)


def _write_json(path: Path, data: Any) -> None:
    from eval_harness._util.json_text import json_text, write_text_atomic

    # indented when small, compact (C encoder) when large: docs/reports.md
    write_text_atomic(path, redact(json_text(data)))


def aeh_artifact_paths(options: AnalysisOptions, frame: Any, paths: Sequence[Path],
                       eval_dir: Path | None, out_dir: Path) -> list[Path]:
    """Where agent-eval-harness keeps anova.json (``<runs>/<eval>/anova.json``, beside the
    run directories): for its run directories, or with ``output_format="aeh"``."""
    aeh = "agent-eval-harness" in (frame.attrs.get("formats") or [])
    if not aeh and options.output_format != "aeh":
        return []
    roots = [eval_dir] if eval_dir is not None else list(paths)
    out = [Path(r) / "anova.json" for r in roots if Path(r).is_dir()]
    return [p for p in out if p.resolve() != (out_dir / "anova.json").resolve()]


def _write_documents(out_dir: Path, docs: AnalysisDocuments, frame: Any,
                     options: AnalysisOptions, paths: Sequence[Path], eval_dir: Path | None,
                     say: Say) -> None:
    """anova.json (also beside agent-eval-harness runs), comparisons, leaderboard and
    thresholds into the staged output folder ``out_dir``."""
    from eval_harness.analysis.compare.files import write_comparisons

    with phase("anova.json"):
        _write_json(out_dir / "anova.json", docs.anova)
        for beside in aeh_artifact_paths(options, frame, paths, eval_dir, out_dir):
            try:  # where its report.py / compare.py look
                _write_json(beside, docs.anova)
            except OSError as exc:  # a read-only runs tree: the analysis still stands
                say(f"warning: could not write {beside} ({exc.strerror}); anova.json is "
                    f"in {out_dir}")
    # summary JSON + per-case rows as JSON Lines (docs/reports.md, "comparisons")
    with phase("comparisons.json"):
        write_comparisons(out_dir, _built(docs.comparisons, "comparisons.json"),
                          clean=redact)
    with phase("leaderboard.json"):
        _write_json(out_dir / "leaderboard.json", docs.leaderboard)
    _write_json(out_dir / "thresholds.json", {"results": docs.thresholds})


def _write_reports(outset: Any, final_dir: Path, docs: AnalysisDocuments, frame: Any,
                   paths: Sequence[Path]) -> dict[str, Path]:
    """The reports (unless there is no report model); commit the output set; return
    name -> final path of every file."""
    from eval_harness.reports.report_files import write_reports

    out_dir = outset.path
    written: dict[str, Path] = {}
    if docs.report is not None:
        written = write_reports(out_dir, docs, frame, runs_root=list(paths))
    files = {name: final_dir / name for name in
             ("anova.json", "comparisons.json", "comparisons.cases.jsonl", "leaderboard.json",
              "thresholds.json")}
    files.update({f"report.{kind}": final_dir / path.name for kind, path in written.items()})
    if "json" in written and (out_dir / "report.cases.jsonl").is_file():  # large case grid
        files["report.cases.jsonl"] = final_dir / "report.cases.jsonl"
    outset.commit()
    return files


def _export_parquet(frame: Any, path: str) -> None:
    """``export_parquet``: pandas needs an optional engine (pyarrow or fastparquet); a
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


def _export_note(path: Path, doc: dict[str, Any]) -> str:
    """What ``export`` wrote, in one line: kind, runs, conditions, samples, size."""
    runs = doc.get("runs") or []
    conditions = {r.get("condition_id") for r in runs}
    samples = sum(len(r.get("samples") or []) for r in runs)
    kind = "compact (ids, case hashes, statuses, judge values, latency, cost)" if doc.get(
        "compact") else "full (with each case's input and outputs)"
    size = path.stat().st_size if path.exists() else 0
    return (f"exported baseline {path}: {kind}; {len(runs)} run(s), {len(conditions)} "
            f"condition(s), {samples} sample(s), {size / 1024:.0f} KiB — compare later runs "
            f"with --baseline {path}")


def _threshold_failures(thresholds: list[dict[str, Any]]) -> list[str]:
    """One line per failed threshold."""
    out = []
    for t in thresholds:
        if t.get("passed", True):
            continue
        value = t.get("value")
        shown = "unknown (no usable sample: fails closed)" if value is None else f"{value:.4g}"
        levels = ", ".join(f"{k}={v}" for k, v in (t.get("levels") or {}).items()) or "all"
        out.append(f"threshold failed: {t.get('target')} {t.get('metric')} = {shown}, "
                   f"needs {'<=' if t.get('metric') == 'max_error_rate' else '>='} "
                   f"{t.get('threshold')} ({levels})")
    return out


def _finish(out: AnalysisOutputs, name: str, loaded: LoadedConfig | None,
            options: AnalysisOptions, settings: AnalysisSettings, paths: Sequence[Path],
            write: bool, say: Say) -> AnalysisOutputs:
    """MLflow, the baseline export and the failure lines (thresholds, the gate)."""
    if write and loaded is not None and loaded.config.mlflow is not None:
        from eval_harness._util.redact import mask_url_credentials
        from eval_harness.reports.mlflow_log import log_analysis, tracking_uri

        with phase("mlflow"):
            run_id = log_analysis(loaded.config.mlflow, name, out.anova, out.frame, out.files,
                                  samples=out.tables[0] if out.tables else None)
        say(f"mlflow: logged {name} to {mask_url_credentials(tracking_uri(loaded.config.mlflow))} (parent run "
            f"{run_id})")
    if write and options.export:
        from eval_harness._version import __version__
        from eval_harness.analysis.compare.baseline import export_baseline

        doc = export_baseline(out.frame, options.export, compact=options.compact,
                              runs_root=paths[0], tool_version=__version__)
        out.exported = Path(options.export)
        out.export_note = _export_note(out.exported, doc)
    out.failures += _threshold_failures(out.thresholds)
    if options.fail_on_regression:
        from eval_harness.analysis.compare.gate import gate

        bad, reasons = gate(out.comparisons, True, rule=options.gate_rule(),
                            alpha=settings.alpha)
        if bad:
            out.failures += [f"regression: {reason}" for reason in reasons]
            out.failures.append(f"regression: verdicts by the pass rule: "
                                f"{settings.verdict_rule().text()}")
    return out


# --- the command --------------------------------------------------------------------------

def analyze(
    paths: Sequence[Path], options: AnalysisOptions, loaded: LoadedConfig | None = None,
    *, exp: Any = None, eval_dir: Path | None = None, write: bool = True,
    say: Say = _stderr,
) -> AnalysisOutputs:
    """Analyse run directories under ``paths`` with ``loaded``'s config (None: no config).

    ``write``: write the output files as one set (reports/outset.py: a reader never sees
    two analyses mixed, a killed analysis leaves the previous set whole), the baseline
    export, the Parquet export, agent-eval-harness's anova.json beside its runs, and log
    to MLflow; ``write=False`` computes the same documents in memory and writes nothing
    (the dashboard). Prints nothing but notes, through ``say``. ``exp``/``eval_dir``:
    after a run, the experiment (its pairwise judges run here)."""
    from eval_harness.reports.outset import staged_outputs

    if not write:
        return _analyze(paths, options, loaded, None, exp=exp, eval_dir=eval_dir, say=say)
    with staged_outputs() as staged:
        return _analyze(paths, options, loaded, staged, exp=exp, eval_dir=eval_dir, say=say)


def _analyze(
    paths: Sequence[Path], options: AnalysisOptions, loaded: LoadedConfig | None,
    staged: list[Any] | None, *, exp: Any, eval_dir: Path | None, say: Say,
) -> AnalysisOutputs:
    from eval_harness._util import malloc_trim

    malloc_trim.tune()  # freed row-sized arrays go back to the system (eval_harness/_util/malloc_trim.py)
    with phase("imports"):  # pandas, numpy, scipy: seconds on a cold start
        for module in _HEAVY:
            importlib.import_module(module)
    if staged is not None and loaded is not None and loaded.config.mlflow is not None:
        from eval_harness.reports.mlflow_log import require_mlflow

        require_mlflow()  # exit 2 with the install hint before any work
    with phase("load"):
        frame = load_frame(paths, loaded, options)
    for issue in frame.attrs.get("issues", []):
        if issue.get("kind") == "assumed_range":  # the numbers depend on it: say so once
            say(f"warning: {issue['detail']}")
    malloc_trim.trim()  # the loader's transients (parsed chunks, codes) are gone now
    frame, excluded = _configured(frame, loaded, paths, say)
    settings = resolve_settings(options, loaded)
    name = _eval_name(frame, loaded, paths)
    final_dir = Path(options.output) if options.output else _default_output(name,
                                                                          options.runs_dir)
    outset = None
    if staged is not None:
        from eval_harness.reports.outset import OutputSet

        staged.append(OutputSet(final_dir))
        outset = staged[0]  # every file below goes here; committed as a set at the end
        if options.export_parquet:
            _export_parquet(frame, options.export_parquet)
    from eval_harness.analysis.failures import find_failures

    failures = find_failures(frame, paths)
    _print_failures(failures, say)
    dropped: list[str] = []
    if failures.dead_judges and options.allow_errored_judges:
        frame, dropped = _drop_dead_judges(frame, failures, loaded, say)
    if not failures.scored:  # a valid (empty) anova.json, and reports saying why
        from eval_harness.analysis.anova.document import build_anova

        empty = build_anova(frame, method=settings.method, correction=settings.correction,
                            alpha=settings.alpha, per_judge=False,
                            keep_incomplete=settings.keep_incomplete,
                            judge_specs=loaded.config if loaded else None)
        _no_scored_samples(outset, name, failures, empty, say)
    anova = _anova(frame, loaded, settings, failures, excluded, dropped, say)
    docs, rule, tables = _documents(frame, anova, loaded, options, settings,
                                    lambda: _pairwise(exp, eval_dir, paths, say))
    if outset is not None:
        _write_documents(outset.path, docs, frame, options, paths, eval_dir, say)
    if not options.no_report:
        docs = _report(docs, frame, loaded, tables)
    files = {} if outset is None else _write_reports(outset, final_dir, docs, frame, paths)
    out = AnalysisOutputs(frame=frame, documents=docs, out_dir=final_dir, rule=rule,
                          tables=tables, files=files,
                          errored_judges=list(failures.dead_judges))
    return _finish(out, name, loaded, options, settings, paths, outset is not None, say)

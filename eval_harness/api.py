"""The Python API: run an experiment and analyse runs from a script or a notebook.

``run(config_or_path, **overrides) -> Result`` is ``orchestrate --config ...``;
``analyze(runs, ...) -> Analysis`` is ``orchestrate --analyze-only ...``. Overrides are the
CLI's long flags in snake_case (``runs_dir="runs"``, ``correction="bh"``,
``condition=["model=a"]``). Both write the same files as the CLI; neither prints the
console report unless ``console=True``. Errors are the CLI's exceptions
(:class:`eval_harness.errors.ConfigError` and friends; ``.exit_code`` says what the CLI
would exit with). See docs/api.md.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import eval_harness.app  # noqa: F401  (the application layer: its dialects and run formats)
from eval_harness.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from eval_harness.app.analyze import AnalysisOutputs

PathLike = str | os.PathLike[str]
#: flags that take a list on the command line: a single string is accepted too
_LISTS = ("cases", "condition", "simple_effects", "analyze_only")
#: API-only keywords (not CLI flags)
_API_ONLY = ("console", "analyze", "judge_check")
#: the CLI's flags that are neither run nor analysis options (its modes and output
#: switches): accepted as keywords, as they always were, and ignored
_IGNORED = ("config", "json", "debug", "dry_run", "print_config", "lint", "avg_cost_per_run",
            "ci", "no_analysis", "analyze_only", "timings", "rescore")


@dataclass(frozen=True)
class Analysis:
    """One analysis: the JSON documents as dicts, the tidy frame, and tables as DataFrames.

    ``anova`` is exactly ``anova.json``; ``comparisons`` is the full comparisons document,
    per-case rows included (on disk they sit in ``comparisons.cases.jsonl`` beside the
    ``comparisons.json`` summary; ``analysis.compare.files.read_comparisons`` joins them).
    docs/statistics.md and docs/reports.md list every field.
    """

    anova: dict[str, Any]
    comparisons: dict[str, Any]
    leaderboard: dict[str, Any]
    thresholds: list[dict[str, Any]]
    frame: pd.DataFrame  #: one row per (run, case, judge) plus a ``composite`` row per sample
    output_dir: Path  #: where anova.json, comparisons.json and the reports were written
    files: dict[str, Path]  #: file name (``anova.json``, ``report.html``, ...) -> path
    failures: list[str]  #: failed thresholds / regression gate lines (empty when it passed)
    exported: Path | None = None  #: the baseline file written by ``export=...``
    #: judges that errored on every sample (only with ``allow_errored_judges=True``; without
    #: it such judges raise NoUsableResults, as the CLI exits 4)
    errored_judges: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """What the CLI would exit with: 1 when a threshold or the regression gate failed."""
        return 1 if self.failures else 0

    @property
    def passed(self) -> bool:
        """True when no threshold and no regression gate failed."""
        return not self.failures

    def terms(self) -> pd.DataFrame:
        """The ANOVA table: one row per term (index ``term``): F, df_num, df_den, gg_epsilon,
        p_raw, p_adjusted, significant, partial_eta_sq."""
        import pandas as pd

        rows = [{"term": t, **{k: v for k, v in r.items() if not isinstance(v, (dict, list))}}
                for t, r in self.anova.get("terms", {}).items()]
        return pd.DataFrame(rows, columns=_columns(rows, "term")).set_index("term")

    def contrasts(self) -> pd.DataFrame:
        """Pairwise contrasts of marginal means, one row per (factor, a, b); plus the simple
        effects (``by`` and ``at`` set) when they were requested."""
        import pandas as pd

        rows: list[dict[str, Any]] = []
        for factor, block in (self.anova.get("contrasts") or {}).items():
            rows += [_pair_row(factor, None, None, p) for p in block.get("pairs", [])]
        for block in self.anova.get("simple_effects") or []:
            rows += [_pair_row(block["factor"], block["by"], block["at"], p)
                     for p in block.get("pairs", [])]
        return pd.DataFrame(rows, columns=_columns(rows, "factor"))

    def conditions(self) -> pd.DataFrame:
        """Per-condition summary: levels as columns, mean composite with its 95% CI, n,
        errored samples, cost and latency."""
        import pandas as pd

        rows = []
        for s in self.anova.get("condition_summaries") or []:
            ci = s.get("ci") or [None, None]
            rest = {k: v for k, v in s.items() if k not in ("levels", "ci")}
            rows.append({**(s.get("levels") or {}), **rest, "ci_low": ci[0], "ci_high": ci[1]})
        return pd.DataFrame(rows, columns=_columns(rows, "condition_id"))

    def comparison_table(self) -> pd.DataFrame:
        """One row per comparison (each condition against the reference, or against the
        baseline): verdict, composite difference with CI and p, pass-rate test, case lists."""
        import pandas as pd

        rows = []
        for c in self.comparisons.get("comparisons") or []:
            comp, overall = c.get("composite") or {}, c.get("overall") or {}
            ci = comp.get("ci") or [None, None]
            rows.append({
                "kind": c.get("kind"), "reference": c["reference"].get("label"),
                "candidate": c["candidate"].get("label"), "verdict": c.get("verdict"),
                "n_cases": c.get("n_cases_compared"), "composite_diff": comp.get("estimate"),
                "composite_ci_low": ci[0], "composite_ci_high": ci[1], "composite_p": comp.get("p"),
                "pass_rate_diff": overall.get("statistic"), "pass_rate_p": overall.get("p"),
                "significant_drop": c.get("significant_drop"), "regressed": c.get("regressed"),
                "improved": c.get("improved"), "errored": c.get("errored_candidate"),
            })
        return pd.DataFrame(rows, columns=_columns(rows, "kind"))


def _columns(rows: list[dict[str, Any]], first: str) -> list[str]:
    cols = [first]
    for r in rows:
        cols += [k for k in r if k not in cols]
    return cols


def _pair_row(factor: str, by: str | None, at: Any, p: Mapping[str, Any]) -> dict[str, Any]:
    ci = p.get("ci") or [None, None]
    rest = {k: v for k, v in p.items() if k not in ("a", "b", "ci")}
    return {"factor": factor, "by": by, "at": at, "a": p.get("a"), "b": p.get("b"), **rest,
            "ci_low": ci[0], "ci_high": ci[1]}


@dataclass(frozen=True)
class Result:
    """One ``run``: where the runs are, what ran, and the analysis (None with
    ``analyze=False``)."""

    name: str  #: the eval's name
    eval_dir: Path  #: runs/<eval>/ (pass it to :func:`analyze` or ``orchestrate show``)
    cells: int  #: conditions x cases x replications selected
    ran: int  #: cells run this time (the rest were complete already)
    ok: int  #: cells that ran and finished ok
    errored: int  #: cells that ran and errored (recorded with a reason, never scored 0)
    skipped_complete: int  #: cells already complete (resumed)
    spend_usd: float  #: known spend of this run
    analysis: Analysis | None

    @property
    def exit_code(self) -> int:
        """What the CLI would exit with (0, or 1 when a gate failed)."""
        return self.analysis.exit_code if self.analysis is not None else 0


def _options(**overrides: Any) -> dict[str, Any]:
    """``overrides`` checked against the CLI's long flags in snake_case (unknown names are
    an error), single strings of list options as one-item lists, paths as strings."""
    known = _known()
    for key in overrides:
        if key not in known:
            close = sorted(k for k in known if k.split("_")[0] == key.split("_")[0])
            raise UsageError(f"unknown option {key!r}",
                             hint=f"did you mean {', '.join(close)}?" if close else
                             "the options are the CLI's long flags in snake_case (docs/api.md)")
    values = dict(overrides)
    for key, value in overrides.items():
        if key in _LISTS and isinstance(value, (str, os.PathLike)):
            value = [value]
        if key in ("runs_dir", "output", "export", "baseline", "export_parquet") and value is not None:
            value = os.fspath(value)
        values[key] = value
    return values


def _known() -> set[str]:
    """Every keyword ``run``/``analyze`` accept as an override: the options of the two
    commands (the CLI's long flags) and the CLI's other flags, accepted and ignored."""
    from eval_harness.app.options import AnalysisOptions, RunOptions

    return (set(AnalysisOptions.names()) | set(RunOptions.names()) | set(_IGNORED)) - {"quiet"}


@contextlib.contextmanager
def _config_path(config: PathLike | Mapping[str, Any], base_dir: PathLike | None) -> Iterator[Path]:
    """A path to the config: as given, or a mapping written to a temporary YAML file in
    ``base_dir`` (relative paths in it, e.g. ``dataset.path``, resolve against that)."""
    if not isinstance(config, Mapping):
        yield Path(config)
        return
    import yaml

    folder = Path(base_dir) if base_dir is not None else Path.cwd()
    fd, name = tempfile.mkstemp(dir=folder, prefix=".eval-api-", suffix=".yaml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            yaml.safe_dump(dict(config), fh, sort_keys=False)
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)


def _analysis(out: AnalysisOutputs, console: bool, allow_errored_judges: bool) -> Analysis:
    if out.errored_judges and not allow_errored_judges:
        from eval_harness.errors import NoUsableResults

        names = ", ".join(f"`{j}`" for j in out.errored_judges)
        raise NoUsableResults(f"judge(s) {names} errored on every sample; reports were written "
                              f"to {out.out_dir} without them",
                              hint="fix the judge, then rescore; or pass "
                                   "allow_errored_judges=True to accept")
    if console:
        from rich.console import Console

        from eval_harness.reports.console import print_console

        print_console(Console(highlight=False), out.documents, out.frame)
    from eval_harness.analysis.compare.rows import plain_comparisons

    # per-case rows as plain lists of dicts (json.dumps-able), built only for API callers
    return Analysis(anova=out.anova, comparisons=plain_comparisons(out.comparisons),
                    leaderboard=out.leaderboard,
                    thresholds=out.thresholds, frame=out.frame, output_dir=out.out_dir,
                    files=dict(out.files), failures=list(out.failures), exported=out.exported,
                    errored_judges=list(out.errored_judges))


def run(
    config_or_path: PathLike | Mapping[str, Any], *, base_dir: PathLike | None = None,
    console: bool = False, analyze: bool = True, judge_check: bool = True, **overrides: Any,
) -> Result:
    """Run the matrix of an eval.yaml (resumable), then analyse it, as
    ``orchestrate --config FILE [flags]`` does.

    ``config_or_path``: a path to an eval.yaml, or the same content as a mapping (written to a
    temporary file in ``base_dir``, default the current directory, so relative paths in it
    resolve there). ``overrides``: any CLI flag in snake_case, e.g. ``runs_dir``,
    ``output``, ``cases``, ``limit``, ``condition``, ``concurrency``, ``force``,
    ``retry_errors``, ``shard``, ``seed``, ``method``, ``correction``, ``per_judge``,
    ``simple_effects``, ``reference``, ``baseline``, ``export``, ``compact``,
    ``fail_on_regression``. ``analyze=False`` runs only; ``console=True`` prints the console
    report; ``judge_check=False`` skips the LLM judges' pre-flight call.

    Raises the CLI's errors: ``ConfigError`` (exit 2; nothing ran), ``QuotaExhausted``
    (exit 3; finished work kept), ``NoUsableResults`` (exit 4: every sample errored, or a
    judge errored on every sample unless ``allow_errored_judges=True``; the reports saying
    so are written), ``KeyboardInterrupt``.
    """
    from eval_harness.app.analyze import analyze as analyze_runs
    from eval_harness.app.options import AnalysisOptions, RunOptions
    from eval_harness.app.run import run as run_cells

    values = _options(**overrides)
    options = AnalysisOptions.pick(values)
    with _config_path(config_or_path, base_dir) as path:
        done = run_cells(RunOptions.pick(values, config=str(path), quiet=not console,
                                         no_judge_check=not judge_check))
        exp, summary, info = done.exp, done.summary, done.info
        analysis = None
        if analyze:
            out = analyze_runs([summary.eval_dir], options, exp.loaded, exp=exp,
                               eval_dir=summary.eval_dir)
            analysis = _analysis(out, console, options.allow_errored_judges)
    return Result(name=exp.name, eval_dir=Path(summary.eval_dir), cells=int(info["cells"]),
                  ran=int(info["ran"]), ok=int(info["ok"]), errored=int(info["errored"]),
                  skipped_complete=int(info["skipped_complete"]),
                  spend_usd=float(info["spend_usd"]), analysis=analysis)


def analyze(
    runs: PathLike | Sequence[PathLike], *, config: PathLike | None = None,
    console: bool = False, **overrides: Any,
) -> Analysis:
    """Analyse existing run directories, as ``orchestrate --analyze-only RUNS`` does.

    ``runs``: one root or several (this tool's runs, merged CI shards, agent-eval-harness
    runs). ``config``: an eval.yaml for judge score ranges, factor order and thresholds
    (optional). ``overrides``: ``output``, ``method`` (``"rm"`` | ``"lmm"``),
    ``correction`` (``"holm"`` | ``"bh"`` | ``"none"``), ``per_judge``,
    ``keep_incomplete``, ``simple_effects`` (``"model:effort"`` or ``"auto"``),
    ``reference``, ``baseline``, ``export``, ``compact``, ``fail_on_regression``, ...
    """
    from eval_harness.app.analyze import analysis_config, resolve_paths
    from eval_harness.app.analyze import analyze as analyze_runs
    from eval_harness.app.options import AnalysisOptions

    roots = [runs] if isinstance(runs, (str, os.PathLike)) else list(runs)
    options = AnalysisOptions.pick(_options(**overrides))
    paths = resolve_paths([os.fspath(r) for r in roots])
    # --config, else the recorded one
    loaded = analysis_config(None if config is None else os.fspath(config), paths)
    return _analysis(analyze_runs(paths, options, loaded), console,
                     options.allow_errored_judges)


def load_runs(path: Any, **kwargs: Any) -> pd.DataFrame:
    """Load run directories under ``path`` into one tidy DataFrame: one row per (run, case,
    judge) plus a ``composite`` row per sample (see docs/statistics.md).

    ``aeh_errors`` (``exclude`` or ``zero``) is agent-eval-harness's format option
    ``errors`` (:mod:`eval_harness.aeh.run_format`)."""
    from eval_harness.aeh import format_options
    from eval_harness.analysis.loading.tidy_frame import load_runs as _load

    if "aeh_errors" in kwargs:
        chosen = dict(kwargs.pop("format_options", None) or {})
        chosen.update(format_options(kwargs.pop("aeh_errors")))
        kwargs["format_options"] = chosen
    return _load(path, **kwargs)

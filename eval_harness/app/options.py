"""The options of the two application commands, as frozen typed values (no argparse).

:class:`AnalysisOptions` is every setting :func:`eval_harness.app.analyze.analyze` reads;
:class:`RunOptions` every setting :func:`eval_harness.app.run.run` reads. The doors fill
them: the CLI from its flags (field names are the long flags in snake_case), the Python
API from keyword arguments of the same names, the dashboard from its own few options.
Precedence for the analysis settings that a config can also give (``method``,
``correction``, ``per_judge``, ``keep_incomplete``, ``ddf``): option > config > default,
resolved once by :func:`resolve_settings`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from eval_harness.errors import UsageError

if TYPE_CHECKING:
    from eval_harness.config.loader import LoadedConfig


@dataclass(frozen=True)
class AnalysisOptions:
    """How to analyse run directories (``--analyze-only``, after a run, the API, serve)."""

    output: str | None = None  #: output folder (default ``analysis/<eval>/``, see runs_dir)
    #: the runs directory the analysed runs belong to (``--runs-dir``): the default ``runs``
    #: writes ``analysis/<eval>/``, another one ``<runs-dir>-analysis/<eval>/`` beside it,
    #: so two runs directories never overwrite each other's report
    runs_dir: str | None = None
    method: str | None = None  #: auto | rm | mixed | lmm (default: config, else auto)
    correction: str | None = None  #: holm | bh | fdr_bh | none (default: config, else holm)
    ddf: str | None = None  #: kenward-roger | satterthwaite (default: config, else KR)
    per_judge: bool = False  #: also screen each judge (or the config's per_judge)
    keep_incomplete: bool = False  #: lmm: keep incomplete cases (or the config's)
    #: ``A:B``, ``B`` or ``auto`` specs (a list: a tuple is one (factor, by) pair)
    simple_effects: Sequence[str] | None = None
    reference: str | None = None  #: reference condition, e.g. ``model=m1,effort=low``
    baseline: str | None = None  #: a baseline file (``--export``) to compare against
    export: str | None = None  #: write a portable baseline file here
    compact: bool = False  #: with ``export``: ids, hashes and scores only
    export_parquet: str | None = None  #: write the tidy frame as Parquet here
    fail_on_regression: bool = False  #: a failed gate (``gate``) is a failure (exit 1)
    gate: str | None = None  #: overall | cases | strict (default overall)
    significant_only: bool = False  #: older spelling of ``gate="cases"``
    allow_errored_judges: bool = False  #: drop judges that errored on every sample
    no_report: bool = False  #: write no report.md/.json/.html (and build no report model)
    output_format: str | None = None  #: ``aeh``: also write anova.json beside the runs
    aeh_errors: str = "exclude"  #: agent-eval-harness runs: unscorable case excluded | zero

    def gate_rule(self) -> str:
        """The gate rule: ``gate``, with ``significant_only`` resolved (the one place the
        alias is read; analysis.compare.gate.gate_rule_of says what it means)."""
        from eval_harness.analysis.compare.gate import gate_rule_of

        return gate_rule_of(self.gate, self.significant_only)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names (the CLI's long flags in snake_case)."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def pick(cls, values: Mapping[str, Any]) -> AnalysisOptions:
        """The options among ``values`` (other names are ignored): how a door whose
        names are the option names (the CLI's parsed flags, the API's keywords) fills
        them."""
        return cls(**{k: values[k] for k in cls.names() if k in values})


@dataclass(frozen=True)
class RunOptions:
    """How to run the matrix of an eval.yaml (``orchestrate --config``, ``api.run``)."""

    config: str  #: the eval.yaml
    runs_dir: str = "runs"  #: run directories root
    model: str | None = None  #: sets models.skill (conditions without a `model` factor)
    input_override: Sequence[str] | None = None  #: ``NAME=VALUE`` merged into every input
    cases: Sequence[str] | None = None  #: only these case ids
    limit: int | None = None  #: only the first N cases
    condition: Sequence[str] | None = None  #: only matching conditions (levels, id, label)
    concurrency: int | None = None  #: cells in flight (default: config, else 4)
    force: bool = False  #: rerun complete cells
    retry_errors: bool = False  #: rerun only errored cells
    shard: str | None = None  #: ``K/N`` or ``auto``
    executor: str | None = None  #: local | ray (default: config, else local)
    ray_address: str | None = None  #: with the ray executor
    order: str = "random"  #: random | grid
    seed: int = 0  #: seed of the cell order
    verbose: bool = False  #: tee agent output live
    quiet: bool = False  #: no progress display (the CLI's ``--json``, the API)
    no_trace: bool = False  #: store no trace.json per case
    no_judge_check: bool = False  #: skip the judge models' pre-flight call
    cache_dir: str | None = None  #: model-call cache directory
    no_cache: bool = False  #: neither read nor write the model-call cache
    cache_refresh: bool = False  #: make every model call again
    max_spend: float | None = None  #: stop launching cells past this spend (USD)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names (the CLI's long flags in snake_case, plus ``quiet``)."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def pick(cls, values: Mapping[str, Any], **extra: Any) -> RunOptions:
        """The options among ``values`` (other names ignored), then ``extra``."""
        return cls(**{**{k: values[k] for k in cls.names() if k in values}, **extra})

    def config_overrides(self) -> dict[str, object]:
        """Config keys set by options (``model`` -> models.skill)."""
        return {"models": {"skill": self.model}} if self.model else {}

    def input_overrides(self) -> dict[str, str]:
        """``input_override`` pairs (values stay strings, as agent-eval-harness)."""
        out: dict[str, str] = {}
        for item in self.input_override or []:
            name, sep, value = item.partition("=")
            if not sep or not name.strip():
                raise UsageError(f"--input-override {item!r}: expected NAME=VALUE",
                                 hint="e.g. --input-override context=none")
            out[name.strip()] = value
        return out


def effective_concurrency(flag: int | None, config: Any) -> int:
    """--concurrency, else ``execution.parallelism`` (agent-eval-harness), else 4."""
    if flag is not None:
        return int(flag)
    return config.execution.parallelism or 4


@dataclass(frozen=True)
class AnalysisSettings:
    """The analysis settings after option > config > default (:func:`resolve_settings`)."""

    method: str
    correction: str
    per_judge: bool
    keep_incomplete: bool
    alpha: float
    ddf: str
    simple_effects: Sequence[str] | None
    pass_mark: float | None  #: the config's pass mark (None: the verdict rule's default)
    gates: tuple[str, ...] = field(default=())  #: the config's gate judges
    pass_rule: str = "requirements"  #: requirements | composite | aeh (:func:`pass_rule`)
    aeh_reward: bool = False  #: aeh rule with a ``reward:`` block (the composite is its reward)

    def verdict_rule(self) -> Any:
        """The one pass rule of this analysis (``VerdictRule``) for comparisons,
        leaderboard, thresholds, reports, the gate and the dashboard."""
        from eval_harness.config.pass_rule import VerdictRule

        return VerdictRule(pass_mark=0.5 if self.pass_mark is None else self.pass_mark,
                           gates=self.gates, rule=self.pass_rule,
                           aeh_reward=self.aeh_reward and self.pass_rule == "aeh")


def pass_rule(loaded: LoadedConfig | None) -> str:
    """``matrix.analysis.pass_rule`` when written; else ``aeh`` for a config written in
    agent-eval-harness's dialect or carrying its ``reward:`` block (its rule: a false
    boolean judge makes the case 0), else ``requirements`` (every boolean judge true and
    the composite at the pass mark)."""
    if loaded is None:
        return "requirements"
    matrix = loaded.config.matrix
    if matrix is not None and matrix.analysis.pass_rule:
        return str(matrix.analysis.pass_rule)
    if "agent-eval-harness" in loaded.dialects or _aeh_reward(loaded):
        return "aeh"
    return "requirements"


def verdict_rule_of(loaded: LoadedConfig | None) -> Any:
    """The pass rule (``VerdictRule``) a config's analysis uses (``--dry-run`` states it)."""
    from eval_harness.analysis.config_settings import pass_mark
    from eval_harness.config.gates import gate_judges
    from eval_harness.config.pass_rule import VerdictRule

    mark = pass_mark(loaded)
    return VerdictRule(pass_mark=0.5 if mark is None else mark,
                       gates=gate_judges(loaded.config) if loaded is not None else (),
                       rule=pass_rule(loaded),
                       aeh_reward=_aeh_reward(loaded) and pass_rule(loaded) == "aeh")


def _aeh_reward(loaded: LoadedConfig | None) -> bool:
    return loaded is not None and getattr(loaded.config, "reward", None) is not None


def resolve_settings(options: AnalysisOptions, loaded: LoadedConfig | None) -> AnalysisSettings:
    """Analysis settings; precedence option > config > default."""
    from eval_harness.analysis.config_settings import pass_mark
    from eval_harness.config.gates import gate_judges

    analysis = None
    if loaded is not None and loaded.config.matrix is not None:
        analysis = loaded.config.matrix.analysis
    method = options.method or (analysis.method if analysis else "auto")
    correction = options.correction or (analysis.correction if analysis else "holm")
    if correction == "fdr_bh":
        correction = "bh"
    per_judge = bool(options.per_judge or (analysis.per_judge if analysis else False))
    keep = bool(options.keep_incomplete or (analysis.keep_incomplete if analysis else False))
    if keep and method != "lmm":
        raise UsageError("--keep-incomplete needs the fitted mixed model",
                         hint="add --method lmm (rm drops incomplete cases)")
    return AnalysisSettings(
        method=method, correction=correction, per_judge=per_judge, keep_incomplete=keep,
        alpha=analysis.alpha if analysis else 0.05,
        ddf=options.ddf or (analysis.ddf if analysis else "kenward-roger"),
        simple_effects=options.simple_effects, pass_mark=pass_mark(loaded),
        gates=gate_judges(loaded.config) if loaded is not None else (),
        pass_rule=pass_rule(loaded),
                       aeh_reward=_aeh_reward(loaded) and pass_rule(loaded) == "aeh")

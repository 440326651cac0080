"""An experiment ready to plan: config + matrix + dataset + per-condition effective config."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from eval_harness.config.dataset import Case, load_dataset
from eval_harness.config.loader import LoadedConfig, load_config
from eval_harness.config.matrix_model import MatrixBlock
from eval_harness.config.models import EvalConfig
from eval_harness.errors import ConfigError, UsageError
from eval_harness.matrix.builder import Condition, Matrix, MatrixBuilder
from eval_harness.matrix.effective import config_digest, effective_config
from eval_harness.matrix.fingerprint import agent_fingerprint
from eval_harness.matrix.select import select_matching


@dataclass(frozen=True)
class Experiment:
    """Everything needed to plan and run cells."""

    loaded: LoadedConfig
    matrix: Matrix
    conditions: list[Condition]
    cases: list[Case]
    digests: dict[str, str]  # condition_id -> config digest
    effective: dict[str, EvalConfig]  # condition_id -> effective config
    #: the agent's files and their content hashes (all conditions), see matrix/fingerprint
    fingerprint: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """Eval name."""
        return self.loaded.config.name

    @property
    def replications(self) -> int:
        """Replications per (condition, case)."""
        return self.matrix.replications

    @property
    def total_runs(self) -> int:
        """conditions x cases x replications."""
        return len(self.conditions) * len(self.cases) * self.replications


def select_conditions(conditions: Sequence[Condition], specs: Sequence[str] | None) -> list[Condition]:
    """Conditions matching any ``--condition`` spec (levels compared as text)."""
    if not specs:
        return list(conditions)
    return select_matching(conditions, specs, list(conditions[0].levels) if conditions else None,
                           UsageError(f"no condition matches {', '.join(specs)}",
                                      hint="see the grid with --dry-run"))


def runner_uses_model(cfg: EvalConfig) -> bool:
    """Whether the runner needs a model (so a missing one is an error)."""
    runner = cfg.runner
    if runner is None:
        return False
    if runner.type in ("openai", "anthropic", "claude-code"):
        return True
    if runner.type == "cli":
        command = runner.command if isinstance(runner.command, str) else " ".join(runner.command or [])
        return "{model}" in command
    return False


def prepare(
    config_path: str | Path, *, cases: Sequence[str] | None = None, limit: int | None = None,
    condition_specs: Sequence[str] | None = None, env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    input_overrides: Mapping[str, Any] | None = None,
) -> Experiment:
    """Load, validate and expand; raise ConfigError (exit 2) on anything wrong.

    ``overrides`` (flags such as ``--model``) are merged over the file's keys;
    ``input_overrides`` (``--input-override``) into every case's input."""
    loaded = load_config(config_path, env, overrides=overrides)
    cfg = loaded.config
    raw_matrix: Any = loaded.raw.get("matrix")
    block: Any = cfg.matrix
    if raw_matrix is None:
        # agent-eval-harness runs a config without `matrix` as one run of models.skill
        if not cfg.models.skill:
            raise ConfigError("no `matrix` block and no models.skill: nothing says what to run",
                              path="matrix", file=str(loaded.path),
                              hint="write matrix: {factors: {model: [a, b]}}, set models.skill "
                              "or pass --model")
        block = MatrixBlock.model_validate({"factors": {"model": [cfg.models.skill]}})
    matrix = MatrixBuilder.from_yaml(block, strict=True, origins=loaded.origins,
                                     file=str(loaded.path))
    if cfg.dataset is None:
        raise ConfigError("a `dataset` block is required", path="dataset", file=str(loaded.path),
                          hint="dataset: {path: cases/}")
    dataset_path = (loaded.base_dir / cfg.dataset.path)
    case_list = load_dataset(dataset_path, only=cases, limit=limit)
    if input_overrides:
        case_list = [replace(c, input={**c.input, **input_overrides}) for c in case_list]
    conditions = select_conditions(matrix.condition_list(), condition_specs)
    effective = {c.condition_id: effective_config(loaded, c, env) for c in conditions}
    for cond in conditions:
        eff = effective[cond.condition_id]
        if cond.model is None and eff.models.skill is None and runner_uses_model(eff):
            raise ConfigError(
                f"condition {cond.label} has no model: no `model` factor and no models.skill",
                path="models.skill", file=str(loaded.path),
                hint="add a `model` factor or set models.skill",
            )
    files_of: dict[int, dict[str, str]] = {}  # per distinct effective config: hash once
    for eff in effective.values():
        if id(eff) not in files_of:
            files_of[id(eff)] = agent_fingerprint(eff, loaded.base_dir)
    digests = {c.condition_id: config_digest(loaded.raw, c, files_of[id(effective[c.condition_id])])
               for c in conditions}
    fingerprint = {k: v for files in files_of.values() for k, v in files.items()}
    return Experiment(loaded, matrix, conditions, case_list, digests, effective,
                      dict(sorted(fingerprint.items())))

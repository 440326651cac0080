"""The typed eval.yaml (pydantic). Unknown keys anywhere are errors with their key path."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from eval_harness.config.blocks import HooksBlock, MlflowBlock, WorkspaceFiles
from eval_harness.config.cost_model import CacheBlock, PriceBlock
from eval_harness.config.judge_model import CompositeBlock, JudgeBlock, ThresholdsBlock
from eval_harness.config.matrix_model import MatrixBlock
from eval_harness.config.reward_model import RewardBlock
from eval_harness.config.runner_model import ExecutionBlock, RunnerBlock
from eval_harness.config.strict_block import Block


class ModelsBlock(Block):
    """``models``: default model under test, judge model, subagent model."""

    skill: str | None = Field(None, description="Model used when no `model` factor sets one.")
    judge: str | None = Field(None, description="Default LLM judge model, `provider:model`.")
    judge_base_url: str | None = Field(None, description="Default API base URL of LLM judges "
                                       "(else OPENAI_BASE_URL / ANTHROPIC_BASE_URL).")
    judge_api_key: str | None = Field(None, description="Default key of LLM judges, as "
                                      "${VAR} only (else OPENAI_API_KEY / ANTHROPIC_API_KEY).")
    subagent: str | None = Field(None, description="Default subagent model.")


class DatasetBlock(Block):
    """``dataset``: where the cases are."""

    path: str = Field(description="Directory of case folders, or a .yaml/.yml/.jsonl file.")
    schema_: dict[str, Any] | str | None = Field(
        None, alias="schema", description="Required input fields (a mapping), or a prose "
        "description of the cases (agent-eval-harness; documentation only).")
    workspace: WorkspaceFiles | None = Field(None, description="Case files copied into each "
                                             "workspace (agent-eval-harness).")


class OutputsBlock(Block):
    """``outputs``: files collected from the run's output directory."""

    collect: list[str] = Field(default_factory=lambda: ["**/*"], description="Glob patterns.")
    max_file_bytes: int = Field(1_000_000, ge=0, description="Larger files are truncated.")
    paths: list[str] = Field(
        default_factory=list, description="Directories of {workspace} whose files are "
        "collected as `<path>/<file>` (agent-eval-harness `outputs: [{path}]`); then "
        "{output_dir} is {workspace}/output, as there.")


class EvalConfig(Block):
    """A whole eval.yaml after `extends` merging."""

    name: str = Field(description="Eval name: the runs/<name>/ folder.")
    description: str | None = Field(None, description="Free text.")
    title: str | None = Field(None, description="Report title (default: the eval name).")
    mlflow: MlflowBlock | None = Field(None, description="Log each analysis to MLflow "
                                       "(the `mlflow` extra).")
    hooks: HooksBlock | None = Field(None, description="Shell hooks around the run.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Free-form metadata "
                                     "kept with the config (agent-eval-harness `generation`, "
                                     "`outputs[].types`); never read by the run.")
    matrix: MatrixBlock | None = Field(None, description="Factors and levels (a mapping; "
                                       "leave the key out for no matrix).")
    execution: ExecutionBlock = Field(default_factory=ExecutionBlock,  # type: ignore[arg-type]
                                      description="Prompt, timeouts, retries.")
    runner: RunnerBlock | None = Field(None, description="How to run one cell.")
    models: ModelsBlock = Field(default_factory=ModelsBlock,  # type: ignore[arg-type]
                                description="Models.")
    dataset: DatasetBlock | None = Field(None, description="Cases.")
    outputs: OutputsBlock = Field(default_factory=OutputsBlock,  # type: ignore[arg-type]
                                  description="Output files collected.")
    judges: list[JudgeBlock] = Field(default_factory=list, description="Judges.")
    composite: CompositeBlock | None = Field(None, description="Composite override.")
    thresholds: ThresholdsBlock | None = Field(None, description="Thresholds (exit 1 on failure).")
    fingerprint: list[str] | None = Field(
        None, description="Paths / globs (relative to the config) of files that make up the "
        "agent; their content enters the config digest, so editing them reruns the cells "
        "(a cli command's script and a python runner's module are included automatically).")
    reward: RewardBlock | None = Field(None, description="agent-eval-harness composite "
                                       "(judge, weighted or formula); replaces the default.")
    cache: CacheBlock | None = Field(None, description="Model-call cache (docs/cost.md).")
    pricing: dict[str, PriceBlock] = Field(
        default_factory=dict, description="model -> prices per 1M tokens; overrides the "
        "shipped price table (docs/cost.md).")

    @field_validator("matrix", mode="before")
    @classmethod
    def _matrix_mapping(cls, value: Any) -> Any:
        # `matrix:` with nothing after it is YAML null: a mistake, never "no matrix"
        if value is None:
            raise ValueError("matrix must be a mapping with `factors` (it is empty here); "
                             "write matrix: {factors: {name: [a, b]}} or delete the key")
        return value

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        import re

        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*\Z", value):  # `$` passes "x\n"
            raise ValueError("name must use letters, digits, `.`, `_`, `-` (it names a folder)")
        return value

    @field_validator("judges")
    @classmethod
    def _unique(cls, value: list[JudgeBlock]) -> list[JudgeBlock]:
        names = [j.name for j in value]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"duplicate judge names: {', '.join(dup)}")
        return value

    @model_validator(mode="after")
    def _judge_steps(self) -> EvalConfig:
        ids = {s.id for s in self.execution.steps}
        for judge in self.judges:
            if judge.step is not None and judge.step not in ids:
                raise ValueError(f"judge {judge.name!r}: step {judge.step!r} is not an "
                                 f"execution.steps id ({', '.join(sorted(ids)) or 'no steps'})")
        return self

    @model_validator(mode="after")
    def _reward(self) -> EvalConfig:
        if self.reward is None:
            return self
        if self.composite is not None:
            raise ValueError("give `reward` or `composite`, not both")
        names = {j.name for j in self.judges}
        # a weight naming no judge contributes nothing (agent-eval-harness's meaning: its
        # value is missing on every sample); the reward judge itself must exist
        if self.reward.judge and self.reward.judge not in names:
            raise ValueError(f"reward.judge names unknown judge: {self.reward.judge}")
        return self

"""Config blocks for MLflow logging, shell hooks and workspace files: ``mlflow``, ``hooks``,
``dataset.workspace`` (first written for agent-eval-harness's configs, whose keys these
are; the meaning of each is in docs/migrating-from-agent-eval-harness.md)."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Literal

from pydantic import Field, StrictInt, StrictStr, field_validator

from eval_harness.config.strict_block import Block


class MlflowBlock(Block):
    """``mlflow``: where each analysis is logged (needs the ``mlflow`` extra)."""

    experiment: StrictStr | None = Field(None, description="Experiment name (default: the "
                                         "eval name).")
    tracking_uri: StrictStr | None = Field(None, description="Tracking URI (default: "
                                           "MLFLOW_TRACKING_URI, else the local ./mlruns).")
    tags: dict[str, str] = Field(default_factory=dict, description="Tags set on every run.")


class HookEntry(Block):
    """One shell hook (run with ``bash -c`` in the config directory)."""

    command: StrictStr = Field(description="Shell command.")
    timeout: StrictInt = Field(120, gt=0, description="Seconds; then TERM, grace, KILL.")
    description: StrictStr = Field("", description="Label in messages.")
    on_failure: Literal["fail", "continue"] = Field(
        "fail", description="fail: a non-zero exit stops the run (before_*) or errors the "
        "cell (before_each); continue: logged and ignored.")
    condition: StrictStr = Field("", description="Shell test; the hook runs when it exits 0.")


class HooksBlock(Block):
    """``hooks``: shell commands at points of the run (agent-eval-harness phases)."""

    before_all: list[HookEntry] = Field(default_factory=list, description="Once, before any cell.")
    before_each: list[HookEntry] = Field(default_factory=list, description="Before each cell.")
    after_each: list[HookEntry] = Field(default_factory=list, description="After each cell.")
    before_scoring: list[HookEntry] = Field(default_factory=list,
                                            description="Before each cell's judges run.")
    after_all: list[HookEntry] = Field(default_factory=list, description="Once, after the run.")

    def any(self) -> bool:
        """Whether a hook is configured."""
        return bool(self.before_all or self.before_each or self.after_each
                    or self.before_scoring or self.after_all)


class WorkspaceFiles(Block):
    """``dataset.workspace``: case files staged into each cell's workspace."""

    files: list[StrictStr] = Field(default_factory=list, description="Paths relative to the "
                                   "case folder, copied into {workspace} (directories recursively).")

    @field_validator("files")
    @classmethod
    def _relative(cls, value: list[str]) -> list[str]:
        for entry in value:
            parts = PurePosixPath(entry).parts
            if not entry or entry.startswith("/") or ".." in parts:
                raise ValueError(f"workspace files are relative paths inside the case folder "
                                 f"(got {entry!r})")
        return [entry.rstrip("/") for entry in value]

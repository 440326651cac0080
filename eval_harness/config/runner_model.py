"""The ``runner`` and ``execution`` blocks: how one cell reaches the user's application."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr, model_validator

from eval_harness.config.strict_block import Block

RunnerType = Literal["cli", "http", "openai", "anthropic", "claude-code", "python"]
PermissionMode = Literal["default", "acceptEdits", "plan", "auto", "dontAsk",
                         "bypassPermissions"]


#: the efforts Claude Code accepts
CLAUDE_CODE_EFFORTS = ("low", "medium", "high", "xhigh", "max")


#: the longest timeout / grace accepted (a week): larger values overflowed the timers
#: (`timeout: 1e308` was an OverflowError at run time)
MAX_SECONDS = 7 * 24 * 3600.0

class RunnerBlock(Block):
    """``runner``: which runner executes a cell, and its settings."""

    type: RunnerType = Field("cli", description="cli | http | openai | anthropic | claude-code | python.")
    command: str | list[str] | None = Field(
        None, description="cli: command template ({model}, {effort}, {workspace}, input fields...)."
    )
    shell: StrictBool = Field(False, description="cli: run the command through a shell.")
    output_format: Literal["text", "json", "stream-json"] = Field(
        "text", description="cli: stdout is the answer text, or a JSON object {output, cost_usd, "
        "usage, steps}; claude-code: stream-json records the session's steps as the trace."
    )
    output_file: str | None = Field(None, description="cli: read the answer from this file in {output_dir}.")
    url: str | None = Field(None, description="http: endpoint receiving POST {input}.")
    headers: dict[str, str] = Field(default_factory=dict, description="http/openai/anthropic: extra headers.")
    base_url: str | None = Field(None, description="openai/anthropic: API base URL (default from env).")
    api_key: str | None = Field(None, description="openai/anthropic: key (use ${VAR}).")
    system: str | None = Field(None, description="openai/anthropic: system prompt.")
    temperature: float | None = Field(None, ge=0, le=100, allow_inf_nan=False, description="openai/anthropic: sampling temperature.")
    max_tokens: int | None = Field(None, ge=1, le=10**9, description="openai/anthropic: output token limit.")
    function: str | None = Field(None, description="python: `module:function`.")
    isolate: StrictBool = Field(
        True, description="python: call the function in a child process (default), so "
        "os._exit / sys.exit / a crash is an errored cell and a timeout kills the call; "
        "false calls it in this process (shared module state, but an os._exit ends the run).")
    max_budget_usd: float | None = Field(None, ge=0, le=1e9, allow_inf_nan=False, description="claude-code: --max-budget-usd per run.")
    extra_args: list[str] = Field(default_factory=list, description="claude-code/cli: extra argv.")
    pricing: dict[str, list[float]] | None = Field(
        None, description="model -> [usd per 1M input tokens, usd per 1M output tokens]."
    )
    effort: StrictStr | None = Field(
        None, description="Effort of conditions without an `effort` factor (agent-eval-harness "
        "runner.effort); claude-code: low | medium | high | xhigh | max.")
    system_prompt: StrictStr | None = Field(
        None, description="claude-code: --append-system-prompt.")
    permission_mode: PermissionMode | None = Field(
        None, description="claude-code: --permission-mode.")
    plugin_dirs: list[str] = Field(
        default_factory=list, description="claude-code: plugin directories (relative to the "
        "config), copied into each workspace and passed as --plugin-dir.")
    settings: dict[str, Any] = Field(
        default_factory=dict, description="claude-code: Claude Code settings written to a "
        "per-case settings file passed as --settings (permissions merged in).")
    allowed_tools: list[str] = Field(
        default_factory=list, description="claude-code: tool patterns allowed (compiled from "
        "agent-eval-harness `permissions.allow`).")
    disallowed_tools: list[str] = Field(
        default_factory=list, description="claude-code: tool patterns denied (compiled from "
        "agent-eval-harness `permissions.deny`).")
    workspace_mode: Literal["repo"] | None = Field(
        None, description="claude-code / cli: `repo` runs in the directory orchestrate was "
        "started in (the repository) instead of a per-case workspace.")

    @model_validator(mode="after")
    def _required(self) -> RunnerBlock:
        need = {"cli": "command", "http": "url", "python": "function"}.get(self.type)
        if need and getattr(self, need) in (None, "", []):
            raise ValueError(f"runner type {self.type!r} needs `{need}`")
        if self.output_format == "stream-json" and self.type != "claude-code":
            raise ValueError("output_format: stream-json is for runner type claude-code")
        if self.type == "python" and self.function and ":" not in self.function:
            raise ValueError("`function` must be `module:function`")
        if self.type == "claude-code" and self.effort is not None \
                and self.effort not in CLAUDE_CODE_EFFORTS:
            raise ValueError(f"claude-code effort must be one of {', '.join(CLAUDE_CODE_EFFORTS)}")
        return self


class StepBlock(Block):
    """One step of ``execution.steps`` (agent-eval-harness): one agent call in the case's
    shared workspace, after the steps before it."""

    id: StrictStr = Field(description="Unique step id (a folder name: steps/<id>/).")
    name: StrictStr = Field("", description="Label.")
    skill: StrictStr | None = Field(None, description="Skill of this step (xor prompt).")
    prompt: StrictStr | None = Field(None, description="Prompt template of this step.")
    arguments: StrictStr | None = Field(None, description="Arguments ({field} placeholders).")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment.")
    timeout: float | None = Field(None, gt=0, description="Seconds (default execution.timeout).")
    max_budget_usd: float | None = Field(None, ge=0, description="claude-code budget cap.")
    on_failure: Literal["fail", "continue"] = Field(
        "fail", description="fail: a failed step errors the cell and skips the rest; "
        "continue: the next step runs.")

    @model_validator(mode="after")
    def _one_target(self) -> StepBlock:
        import re

        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", self.id):
            raise ValueError(f"step id {self.id!r} must be a plain folder name")
        if bool((self.skill or "").strip()) == bool((self.prompt or "").strip()):
            raise ValueError(f"step {self.id!r} needs exactly one of skill or prompt")
        return self


class ExecutionBlock(Block):
    """``execution``: what is sent, time limits and retries (runtime knobs never enter ids)."""

    mode: Literal["case"] | None = Field(None, description="`case` (agent-eval-harness): one "
                                         "invocation per case, the only mode.")
    skill: str | None = Field(None, description="Skill invoked per case (agent-eval-harness): "
                              "claude-code sends `/<skill> <arguments>`; cli sees {agent}.")
    prompt: str | None = Field(None, description="Prompt template ({{ input.field }}).")
    arguments: dict[str, Any] | str | None = Field(
        None, description="Arguments template; a string takes {field} / {field?} input "
        "placeholders (agent-eval-harness) and is {args} in a cli command.")
    timeout: float = Field(600.0, gt=0, le=MAX_SECONDS, allow_inf_nan=False, description="Per-case timeout, seconds (HTTP runners: "
                           "a wall-clock deadline for the whole request).")
    max_log_bytes: int = Field(64 * 1024 * 1024, ge=1024, le=2**40, description="cli runners: stdout.log "
                               "and stderr.log are each cut to this size when the cell ends "
                               "(the record notes it).")
    max_response_bytes: int = Field(32 * 1024 * 1024, ge=1024, le=2**40, description="HTTP runners and "
                                    "LLM judges: largest reply body read; larger is an error.")
    kill_grace: float = Field(5.0, ge=0, le=MAX_SECONDS, allow_inf_nan=False, description="Seconds between TERM and KILL.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment for the runner.")
    max_budget_usd: float | None = Field(None, ge=0, le=1e9, allow_inf_nan=False, description="Budget cap per run (cost upper bound).")
    retries: int = Field(3, ge=0, le=1000, description="Retries for transient failures.")
    max_spend: float | None = Field(None, gt=0, description="USD this invocation may spend "
                                    "(as --max-spend): no new cell launches past it; exit 3.")
    max_tokens_per_cell: int | None = Field(None, ge=1, description="API runners: a cell "
                                            "whose call used more tokens is errored.")
    max_cost_per_cell: float | None = Field(None, gt=0, description="API runners: a cell "
                                            "whose call cost more (USD) is errored.")
    transient_exit_codes: list[int] = Field(
        default_factory=list, description="cli exit codes treated as transient (retried)."
    )
    quota_exit_codes: list[int] = Field(
        default_factory=list, description="cli exit codes meaning quota/auth failure (fail fast)."
    )
    executor: Literal["local", "ray"] = Field(
        "local", description="Where cells run: `local` (threads of this process) or `ray` "
        "(tasks on a Ray cluster's workers; needs the `ray` extra). --executor overrides it.")
    ray_address: str | None = Field(
        None, description="executor ray: the cluster (`auto`, `host:6379`, "
        "`ray://host:10001`); unset starts a local one. --ray-address overrides it.")
    steps: list[StepBlock] = Field(
        default_factory=list, description="Multi-step pipeline (agent-eval-harness): each "
        "step one call in the case's shared workspace; replaces skill / prompt.")
    runs_mode: Literal["private", "shared"] = Field(
        "private", description="Permissions of what a run creates under the runs directory: "
        "`private` (folders 0700, files 0600: other users of the machine read nothing) or "
        "`shared` (your umask decides, for a shared runs folder).")
    parallelism: StrictInt | None = Field(
        None, ge=1, description="Cells in flight when --concurrency is not given "
        "(agent-eval-harness execution.parallelism).")

    @model_validator(mode="after")
    def _steps(self) -> ExecutionBlock:
        if not self.steps:
            return self
        if (self.skill or "").strip() or (self.prompt or "").strip():
            raise ValueError("execution.steps excludes execution.skill / execution.prompt: "
                             "put each call in its own step")
        ids = [s.id for s in self.steps]
        if len(set(ids)) != len(ids):
            raise ValueError(f"execution.steps: step ids must be unique (got {ids})")
        return self

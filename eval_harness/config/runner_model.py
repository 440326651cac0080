"""The ``runner`` and ``execution`` blocks: how one cell reaches the user's application."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictBool, model_validator

from eval_harness.config.base import Block

RunnerType = Literal["cli", "http", "openai", "anthropic", "claude-code", "python"]


class RunnerBlock(Block):
    """``runner``: which runner executes a cell, and its settings."""

    type: RunnerType = Field("cli", description="cli | http | openai | anthropic | claude-code | python.")
    command: str | list[str] | None = Field(
        None, description="cli: command template ({model}, {effort}, {workspace}, input fields...)."
    )
    shell: StrictBool = Field(False, description="cli: run the command through a shell.")
    output_format: Literal["text", "json"] = Field(
        "text", description="cli: stdout is the answer text, or a JSON object {output, cost_usd, usage, steps}."
    )
    output_file: str | None = Field(None, description="cli: read the answer from this file in {output_dir}.")
    url: str | None = Field(None, description="http: endpoint receiving POST {input}.")
    headers: dict[str, str] = Field(default_factory=dict, description="http/openai/anthropic: extra headers.")
    base_url: str | None = Field(None, description="openai/anthropic: API base URL (default from env).")
    api_key: str | None = Field(None, description="openai/anthropic: key (use ${VAR}).")
    system: str | None = Field(None, description="openai/anthropic: system prompt.")
    temperature: float | None = Field(None, description="openai/anthropic: sampling temperature.")
    max_tokens: int | None = Field(None, ge=1, description="openai/anthropic: output token limit.")
    function: str | None = Field(None, description="python: `module:function`.")
    isolate: StrictBool = Field(
        True, description="python: call the function in a child process (default), so "
        "os._exit / sys.exit / a crash is an errored cell and a timeout kills the call; "
        "false calls it in this process (shared module state, but an os._exit ends the run).")
    max_budget_usd: float | None = Field(None, ge=0, description="claude-code: --max-budget-usd per run.")
    extra_args: list[str] = Field(default_factory=list, description="claude-code/cli: extra argv.")
    pricing: dict[str, list[float]] | None = Field(
        None, description="model -> [usd per 1M input tokens, usd per 1M output tokens]."
    )

    @model_validator(mode="after")
    def _required(self) -> RunnerBlock:
        need = {"cli": "command", "http": "url", "python": "function"}.get(self.type)
        if need and getattr(self, need) in (None, "", []):
            raise ValueError(f"runner type {self.type!r} needs `{need}`")
        if self.type == "python" and self.function and ":" not in self.function:
            raise ValueError("`function` must be `module:function`")
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
    timeout: float = Field(600.0, gt=0, description="Per-case timeout, seconds (HTTP runners: "
                           "a wall-clock deadline for the whole request).")
    max_log_bytes: int = Field(64 * 1024 * 1024, ge=1024, description="cli runners: stdout.log "
                               "and stderr.log are each cut to this size when the cell ends "
                               "(the record notes it).")
    max_response_bytes: int = Field(32 * 1024 * 1024, ge=1024, description="HTTP runners and "
                                    "LLM judges: largest reply body read; larger is an error.")
    kill_grace: float = Field(5.0, ge=0, description="Seconds between TERM and KILL.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment for the runner.")
    max_budget_usd: float | None = Field(None, ge=0, description="Budget cap per run (cost upper bound).")
    retries: int = Field(3, ge=0, description="Retries for transient failures.")
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

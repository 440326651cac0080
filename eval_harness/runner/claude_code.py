"""``claude-code`` runner: ``claude -p <prompt> --output-format json`` per cell.

argv: ``claude -p <prompt> --output-format json --model <model>`` plus ``--effort <effort>``,
``--max-budget-usd <runner.max_budget_usd>`` when set, and ``runner.extra_args``; the
subagent model goes in ``CLAUDE_CODE_SUBAGENT_MODEL``. The agent-eval-harness runner keys
(``system_prompt``, ``permission_mode``, ``plugin_dirs``, ``settings``, ``workspace_mode``,
compiled ``permissions``) become flags as :mod:`eval_harness.runner.claude_settings` says. ``runner.command`` (a string or
list) replaces the ``claude`` executable (e.g. a wrapper script). The run's workspace
(``cases/<id>/workspace``) is the working directory. The JSON reply's ``result``,
``total_cost_usd`` (Claude Code states the cost, so it is recorded), ``usage`` and
``is_error`` are read; ``is_error: true`` ends the cell errored with its ``subtype``.
``runner.output_format: stream-json`` runs ``--output-format stream-json --verbose``
instead: the same final result, plus every tool call and message as the case's trace
(:mod:`eval_harness.runner.stream_json`).
Files the run creates or changes in the workspace are the judges' ``outputs.modified_files``.
Its runs are cached like API calls (``cache_spec``; docs/cost.md): a hit rewrites the logs
and gives the judges the recorded files, but does not recreate them in the workspace.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from eval_harness._util.child_env import child_env
from eval_harness._util.file_modes import make_dirs
from eval_harness.config.models import EvalConfig
from eval_harness.runner.claude_settings import (
    agent_flags,
    check_plugin_dirs,
    stage_agent_files,
)
from eval_harness.runner.cli import classify_exit, context_env, fill_from_reply, parse_json_reply
from eval_harness.runner.contract import RunRequest, RunResult, register, tee_prefix
from eval_harness.runner.llm import user_message
from eval_harness.runner.process import ProcessGroup
from eval_harness.runner.stream_json import trace_from_stream
from eval_harness.runner.workspace import copy_case_files, modified_files, snapshot

#: inherited variables that choose claude's account or back end (in the cache key, hashed)
ACCOUNT_ENV_PREFIXES = ("ANTHROPIC_", "CLAUDE_CODE_")


class ClaudeCodeRunner:
    """Headless Claude Code."""

    def __init__(self, config: EvalConfig) -> None:
        self.config = config
        self.procs = ProcessGroup()
        command = config.runner.command if config.runner else None
        if isinstance(command, list):
            self.exe = [str(c) for c in command]
        else:
            self.exe = shlex.split(command) if command else ["claude"]
        self.stream = bool(config.runner and config.runner.output_format == "stream-json")

    def cancel_all(self) -> None:
        """Stop every process in flight."""
        self.procs.cancel_all(self.config.execution.kill_grace)

    def preflight(self, config_dir: Path) -> None:
        """Before any cell: every ``plugin_dirs`` folder is copyable (no link inside)."""
        if self.config.runner is not None:
            check_plugin_dirs(self.config.runner, config_dir)

    def build_argv(self, request: RunRequest) -> list[str]:
        """The claude argv for one cell."""
        runner = self.config.runner
        fmt = ["stream-json", "--verbose"] if self.stream else ["json"]
        argv = [*self.exe, "-p", user_message(self.config, request), "--output-format", *fmt]
        if request.model is not None:
            argv += ["--model", str(request.model)]
        if request.effort is not None:
            argv += ["--effort", str(request.effort)]
        budget = runner.max_budget_usd if runner else None
        if budget is None:  # (not `or`: a runner budget of 0 is a budget)
            budget = self.config.execution.max_budget_usd
        if budget is not None:
            argv += ["--max-budget-usd", f"{budget:g}"]
        if runner is not None:
            argv += agent_flags(runner, request.case_dir)
        return argv + list(runner.extra_args if runner else [])

    def reply_bound(self, request: RunRequest) -> tuple[float, None] | None:
        """(``max_budget_usd``, no token limit) for the spend cap (runner/budget.py): the
        budget Claude Code enforces itself; None without one (the cost is unbounded)."""
        runner = self.config.runner
        budget = runner.max_budget_usd if runner else None
        if budget is None:
            budget = self.config.execution.max_budget_usd
        return (float(budget), None) if budget is not None else None

    def cache_spec(self, request: RunRequest) -> dict[str, Any]:
        """What identifies this cell's run for the model-call cache: the argv (the prompt
        in it), and the environment the agent is given beyond the inherited one, secrets
        masked; and, as keyed hashes (eval_harness.cache.keys), the raw argv, that
        environment unmasked and the inherited ``ANTHROPIC_*`` / ``CLAUDE_CODE_*``
        variables (key, base URL, back end: they select the account)."""
        import json

        from eval_harness._util.redact import MASK, redact
        from eval_harness.config.masking import mask_argv

        secrets = set(request.secrets)
        argv = self.build_argv(request)
        env = {**self.config.execution.env, **context_env(request)}
        if request.subagent_model is not None:
            env["CLAUDE_CODE_SUBAGENT_MODEL"] = str(request.subagent_model)
        private = {f"env:{k}": v for k, v in os.environ.items()
                   if k.startswith(ACCOUNT_ENV_PREFIXES)}
        private.update({f"env:{k}": v for k, v in env.items()})
        private["argv"] = json.dumps(argv)
        return {"provider": "claude-code", "endpoint": "claude-code",
                "model": str(request.model),
                "request": {"argv": mask_argv(argv, list(secrets)),
                            "env": {k: MASK if v in secrets else redact(v)
                                    for k, v in sorted(env.items())}},
                "private": private}

    def run(self, request: RunRequest) -> RunResult:
        """Run claude; parse its JSON result."""
        from eval_harness.config.masking import mask_argv

        cfg = self.config
        workspace = request.case_dir / "workspace"
        make_dirs(workspace)
        if cfg.runner is not None:
            stage_agent_files(cfg.runner, request.config_dir, request.case_dir, workspace)
        if cfg.dataset is not None and cfg.dataset.workspace is not None:
            copy_case_files(workspace, request.case_files, cfg.dataset.workspace.files)
        before = snapshot(workspace)
        argv = self.build_argv(request)
        env = child_env(cfg.execution.env, context_env(request))
        if request.subagent_model is not None:
            env["CLAUDE_CODE_SUBAGENT_MODEL"] = str(request.subagent_model)
        outcome = self.procs.run(
            argv, cwd=workspace, env=env, timeout=cfg.execution.timeout,
            grace=cfg.execution.kill_grace, stdout_path=request.case_dir / "stdout.log",
            stderr_path=request.case_dir / "stderr.log",
            tee_prefix=tee_prefix(request), max_log_bytes=cfg.execution.max_log_bytes,
        )
        result = RunResult(exit_code=outcome.exit_code, stdout=outcome.stdout,
                           stderr=outcome.stderr, latency_s=outcome.latency_s,
                           argv=mask_argv(argv, list(request.secrets)),
                           notes=list(outcome.log_notes))
        result.modified_files = modified_files(workspace, before, cfg.outputs.max_file_bytes)
        reply = parse_json_reply(outcome.stdout, outcome.stdout_tail)
        classify_exit(outcome, cfg, result)
        if reply is not None:
            fill_from_reply(result, reply, cfg.runner.pricing if cfg.runner else None,
                            request.model, cfg.pricing)
            if self.stream:
                result.trace = trace_from_stream(outcome.stdout)
            # claude's own account beats a bare exit code (it often exits 1 with is_error);
            # quota/transient exit codes, timeouts and crashes keep their classification
            plain_exit = result.failure == "error" and (result.reason or "").startswith("exit code")
            if reply.get("is_error") and (result.failure == "none" or plain_exit):
                result.failure = "error"
                result.reason = f"claude reported an error: {reply.get('subtype', 'unknown')}"
                if outcome.exit_code:
                    result.reason += f" (exit code {outcome.exit_code})"
        elif result.failure == "none":
            result.failure, result.reason = "error", "malformed output: no JSON result from claude"
        return result


@register("claude-code")
def _factory(config: EvalConfig) -> ClaudeCodeRunner:
    return ClaudeCodeRunner(config)

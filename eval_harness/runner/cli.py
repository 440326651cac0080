"""``cli`` runner: the user's program as a subprocess, argv built from a template.

The command is split with :func:`shlex.split` *before* placeholders are rendered, so a
placeholder stays exactly one argv element whatever its value (spaces, quotes, ``;``);
no shell is involved unless ``runner.shell: true`` (then values are shell-quoted).
Placeholders: ``{model} {effort} {subagent_model} {workspace} {output_dir} {timeout}
{config_dir} {input_json} {input_file} {case_id} {replication} {condition_id}``, ``{agent}``
(``execution.skill``) and ``{args}`` (``execution.arguments`` rendered, agent-eval-harness
style), and every field of the resolved case input. The rendered ``execution.prompt`` (if
any) goes to stdin. The working directory is ``{config_dir}``; ``{workspace}`` and
``{output_dir}`` are absolute per-case folders created only when the command (or
``runner.output_file``) uses them; ``{workspace}`` holds ``input.yaml`` as agent-eval-harness
lays it out (:mod:`eval_harness.runner.workspace`).

``output_format: text`` — stdout (stripped) is the answer. ``json`` — stdout is one JSON
object ``{output, cost_usd?, usage?: {input_tokens, output_tokens}, steps?: [step...]}``
(a step is ``{kind, name, input, output, started, duration, children}`` or the older
``{tool, arguments}``; see :mod:`eval_harness.trace.model`); when other lines precede it,
the last line holding a JSON object is used.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
from dataclasses import replace
from pathlib import Path
from typing import Any

from eval_harness._util.child_env import child_env
from eval_harness._util.file_modes import make_dirs
from eval_harness._util.numbers import run_number
from eval_harness._util.untrusted_json import loads_reply
from eval_harness.config.models import EvalConfig
from eval_harness.config.template_syntax import (
    BUILTIN_PLACEHOLDERS,
    render_arguments,
    render_braces,
    render_value,
)
from eval_harness.runner.contract import (
    RunRequest,
    RunResult,
    register,
    tee_prefix,
    usage_tokens,
)
from eval_harness.runner.process import ProcessGroup, ProcessOutcome
from eval_harness.runner.workspace import (
    Snapshot,
    collect_paths,
    copy_case_files,
    modified_files,
    snapshot,
    stage_workspace,
)
from eval_harness.trace.model import build_trace

#: a ``{name}`` placeholder (as render_braces reads it; ``{{`` / ``}}`` are literal)
_PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})")
_CONTEXT_KEYS = frozenset(k.encode() for k in (
    "EVAL_CASE_ID", "EVAL_CONDITION_ID", "EVAL_REPLICATION", "EVAL_MODEL", "EVAL_EFFORT",
    "EVAL_SUBAGENT_MODEL"))


def command_template(config: EvalConfig) -> list[str]:
    """The command split into argv elements (not yet rendered)."""
    command = config.runner.command if config.runner else None
    if isinstance(command, list):
        return [str(c) for c in command]
    return shlex.split(command or "")


def context_env(request: RunRequest) -> dict[str, str]:
    """EVAL_* variables describing the cell (handy for agents that read the environment)."""
    env = {"EVAL_CASE_ID": request.case_id, "EVAL_CONDITION_ID": request.condition_id,
           "EVAL_REPLICATION": str(request.replication)}
    for key, value in (("EVAL_MODEL", request.model), ("EVAL_EFFORT", request.effort),
                       ("EVAL_SUBAGENT_MODEL", request.subagent_model)):
        if value is not None:
            env[key] = str(value)
    return env


def parse_json_reply(text: str, tail: str = "") -> dict[str, Any] | None:
    """The reply object: the whole stdout, else the last line that is a JSON object."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            value = loads_reply(stripped)
            if isinstance(value, dict):
                return value
        except ValueError:
            pass
    for line in reversed((tail or text).splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                value = loads_reply(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return None


def fill_from_reply(result: RunResult, reply: dict[str, Any], pricing: Any, model: Any,
                    price_block: Any = None) -> None:
    """Copy output, cost, usage and steps from a reply object into ``result``; an unstated
    cost is priced from ``price_block`` (the eval's ``pricing:``), ``pricing``
    (``runner.pricing``) or the shipped table (:mod:`eval_harness.pricing.table`)."""
    out = reply.get("output", reply.get("result", ""))
    result.output = out if isinstance(out, str) else json.dumps(out, default=str)
    cost = reply.get("cost_usd", reply.get("total_cost_usd"))
    known = run_number(cost)
    if known is not None and known >= 0:  # NaN, Infinity or a negative cost is not a known cost
        result.cost_usd, result.cost_source = known, "reported"
    result.input_tokens, result.output_tokens, result.tokens = usage_tokens(reply.get("usage"))
    steps = reply.get("steps", reply.get("tool_calls"))
    if isinstance(steps, list):
        result.trace = build_trace(steps)
    if result.cost_usd is None:
        from eval_harness.pricing.table import price_usage

        result.cost_usd, result.cost_source = price_usage(model, reply.get("usage"),
                                                          price_block, pricing)
    result.raw = reply


def classify_exit(outcome: ProcessOutcome, config: EvalConfig, result: RunResult) -> None:
    """Set ``failure`` / ``reason`` from how the process ended."""
    ex = config.execution
    code = outcome.exit_code
    if outcome.start_error:
        result.failure, result.reason = "error", outcome.start_error
    elif outcome.cancelled:
        result.failure, result.reason = "error", "cancelled"
    elif outcome.timed_out:
        result.failure, result.reason = "error", f"timeout after {ex.timeout:g}s"
    elif code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        result.failure, result.reason = "error", f"crashed: killed by {name}"
    elif code in ex.quota_exit_codes:
        result.failure, result.reason = "quota", f"exit code {code} (quota/auth)"
    elif code in ex.transient_exit_codes:
        result.failure, result.reason = "transient", f"exit code {code} (transient)"
    elif code:
        last = next((ln for ln in reversed(outcome.stderr.splitlines()) if ln.strip()), "")
        result.failure = "error"
        result.reason = f"exit code {code}" + (f": {last.strip()[:200]}" if last else "")


def collect_files(output_dir: Path, patterns: list[str], max_bytes: int) -> dict[str, str]:
    """Files under ``output_dir`` matching the globs, path -> text (truncated)."""
    found: dict[str, str] = {}
    if not output_dir.is_dir():
        return found
    for pattern in patterns:
        for path in sorted(output_dir.glob(pattern)):
            rel = path.relative_to(output_dir).as_posix()
            if path.is_file() and rel not in found:
                with path.open("rb") as fh:
                    found[rel] = fh.read(max_bytes).decode("utf-8", "replace")
    return found


class CliRunner:
    """Runs the configured command once per cell."""

    def __init__(self, config: EvalConfig) -> None:
        self.config = config
        self.template = command_template(config)
        text = " ".join(self.template)
        runner = config.runner
        self.output_paths = list(config.outputs.paths)
        ws = config.dataset.workspace if config.dataset else None
        self.case_files = list(ws.files) if ws else []
        self.needs_workspace = "{workspace}" in text or bool(self.output_paths or self.case_files)
        self.needs_output = "{output_dir}" in text or bool(runner and runner.output_file)
        self.procs = ProcessGroup()
        # pre-encoded once: Popen would otherwise fsencode every variable for every cell
        self.base_env = {os.fsencode(k): os.fsencode(v)
                         for k, v in child_env(config.execution.env).items()}
        # the same as b"K=V" entries, minus the per-cell EVAL_* keys (merged per cell)
        self._base_list = [k + b"=" + v for k, v in self.base_env.items()
                           if k not in _CONTEXT_KEYS]
        self._base_context = {k: v for k, v in self.base_env.items() if k in _CONTEXT_KEYS}
        # builtin placeholders the command uses: only those are computed per cell
        self.used = {m for t in self.template for m in _PLACEHOLDER.findall(t)}
        if runner is not None and runner.shell:
            self.used.update(BUILTIN_PLACEHOLDERS)  # cheap insurance: shell mode quotes all
        self._exe_cache: dict[str, str | None] = {}

    def cancel_all(self) -> None:
        """Stop every process in flight."""
        self.procs.cancel_all(self.config.execution.kill_grace)

    def _values(self, request: RunRequest, case_dir: str) -> dict[str, Any]:
        values: dict[str, Any] = dict(request.input)
        used = self.used
        builtins: dict[str, Any] = {
            "model": request.model, "effort": request.effort,
            "subagent_model": request.subagent_model, "timeout": self.config.execution.timeout,
            "case_id": request.case_id, "replication": request.replication,
            "condition_id": request.condition_id,
        }
        if "workspace" in used:
            builtins["workspace"] = os.path.join(case_dir, "workspace")
        if "output_dir" in used:
            builtins["output_dir"] = self._output_dir(case_dir)
        if "agent" in used:
            builtins["agent"] = self.config.execution.skill or ""
        if "args" in used:
            builtins["args"] = render_arguments(self.config.execution.arguments, request.input)
        if "config_dir" in used:
            builtins["config_dir"] = str(request.config_dir)
        if "input_json" in used:
            builtins["input_json"] = json.dumps(request.input, ensure_ascii=False, default=str)
        if "input_file" in used:
            builtins["input_file"] = os.path.join(case_dir, "input.json")
        values.update(builtins)
        return values

    def _output_dir(self, case_dir: str) -> str:
        """``{output_dir}``: ``{workspace}/output`` with agent-eval-harness outputs, else
        ``cases/<id>/output``."""
        if self.output_paths:
            return os.path.join(case_dir, "workspace", "output")
        return os.path.join(case_dir, "output")

    def _executable(self, argv: list[str] | str, env: dict[bytes, bytes]) -> str | None:
        """argv[0] resolved on the run's PATH once per runner (Popen would search the PATH
        for every cell); None lets Popen search (and report a missing program) itself."""
        if isinstance(argv, str) or not argv or os.sep in argv[0]:
            return None
        name = argv[0]
        if name not in self._exe_cache:
            path = env.get(b"PATH")
            found = shutil.which(name, path=os.fsdecode(path) if path is not None else os.defpath)
            # a relative PATH entry resolves against the child's cwd: leave that to Popen
            self._exe_cache[name] = found if found and os.path.isabs(found) else None
        return self._exe_cache[name]

    def build_argv(self, request: RunRequest) -> list[str] | str:
        """The argv (or shell string) for one cell."""
        values = self._values(request, str(request.case_dir))
        runner = self.config.runner
        if runner is not None and runner.shell:
            quoted = {k: shlex.quote(v if isinstance(v, str) else json.dumps(v, default=str))
                      for k, v in values.items()}
            parts = [render_braces(t, quoted, where="runner.command") for t in self.template]
            return " ".join(parts + [shlex.quote(a) for a in runner.extra_args])
        argv = [render_braces(t, values, where="runner.command") for t in self.template]
        return argv + list(runner.extra_args if runner else [])

    def run(self, request: RunRequest) -> RunResult:
        """Run the command; parse its reply."""
        from eval_harness.config.masking import mask_argv

        cfg = self.config
        # absolute: the command runs in {config_dir}, so a relative runs dir would point
        # somewhere else from there (and the files it writes would never be collected)
        case_dir = Path(os.path.abspath(request.case_dir))
        request = replace(request, case_dir=case_dir)
        case_str = str(case_dir)
        before: Snapshot = {}
        if self.needs_workspace:
            stage_workspace(case_dir / "workspace", request.input, request.case_files,
                            self.output_paths)
            copy_case_files(case_dir / "workspace", request.case_files, self.case_files)
            before = snapshot(case_dir / "workspace")
        out_dir = Path(self._output_dir(case_str))
        if self.needs_output:
            make_dirs(out_dir)
        argv = self.build_argv(request)
        stdin = None
        if cfg.execution.prompt:
            ctx = {"input": request.input, "case_id": request.case_id}
            stdin = str(render_value(cfg.execution.prompt, ctx, where="execution.prompt")).encode()
        context = {k.encode(): v.encode() for k, v in context_env(request).items()}
        env = self.base_env.copy()
        env.update(context)
        merged = {**self._base_context, **context} if self._base_context else context
        env_list = self._base_list + [k + b"=" + v for k, v in merged.items()]
        outcome = self.procs.run(
            argv, cwd=request.config_dir, env=env, timeout=cfg.execution.timeout,
            grace=cfg.execution.kill_grace, stdout_path=os.path.join(case_str, "stdout.log"),
            stderr_path=os.path.join(case_str, "stderr.log"), stdin_data=stdin,
            shell=isinstance(argv, str), executable=self._executable(argv, env),
            tee_prefix=tee_prefix(request), env_list=env_list,
            max_log_bytes=cfg.execution.max_log_bytes,
        )
        shown = [argv] if isinstance(argv, str) else argv
        result = RunResult(exit_code=outcome.exit_code, stdout=outcome.stdout, stderr=outcome.stderr,
                           latency_s=outcome.latency_s, argv=mask_argv(shown, list(request.secrets)),
                           notes=list(outcome.log_notes))
        classify_exit(outcome, cfg, result)
        runner = cfg.runner
        if self.needs_workspace:
            result.modified_files = modified_files(case_dir / "workspace", before,
                                                   cfg.outputs.max_file_bytes, self.output_paths)
        if self.output_paths:
            result.files = collect_paths(case_dir / "workspace", self.output_paths,
                                         cfg.outputs.max_file_bytes)
        elif self.needs_output:
            result.files = collect_files(out_dir, cfg.outputs.collect, cfg.outputs.max_file_bytes)
        if result.failure != "none":
            return result
        if runner is not None and runner.output_file:
            target = out_dir / runner.output_file
            if not target.is_file():
                result.failure, result.reason = "error", f"output file {runner.output_file} not written"
                return result
            text = target.read_text(encoding="utf-8", errors="replace")
        else:
            text = outcome.stdout
        if runner is not None and runner.output_format == "json":
            reply = parse_json_reply(text, outcome.stdout_tail if not runner.output_file else "")
            if reply is None:
                snippet = text.strip()[:80].replace("\n", " ")
                result.failure = "error"
                result.reason = f"malformed output: no JSON object on stdout ({snippet!r})"
                return result
            fill_from_reply(result, reply, runner.pricing, request.model, cfg.pricing)
        else:
            result.output = text.strip()
        return result


@register("cli")
def _factory(config: EvalConfig) -> CliRunner:
    return CliRunner(config)

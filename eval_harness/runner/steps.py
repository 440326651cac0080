"""``execution.steps`` (agent-eval-harness): a pipeline of calls per case.

Each step is one call of the eval's runner with that step's ``skill`` / ``prompt`` /
``arguments`` (and ``env``, ``timeout``, ``max_budget_usd`` over the execution's), in the
case's one workspace, so a step sees the files the steps before it wrote. Steps run in
order; a failed step with ``on_failure: fail`` (the default) makes the cell errored
(``step <id>: <reason>``) and the rest do not run; ``continue`` goes on. Each step's
``stdout.log`` / ``stderr.log`` are kept as ``steps/<id>/``. The cell's answer is the last
step's that ran; latency, cost and tokens are summed (cost unknown when a step's is). Its
``outputs.steps`` maps each step id to that step's outputs (``output``, ``exit_code``,
``latency_s``, ``cost_usd``, ``tokens``, ``files``, ``failure``, ``error``), which a judge
with ``step: <id>`` sees as its ``outputs``.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from eval_harness._util.file_modes import make_dirs
from eval_harness.config.models import EvalConfig
from eval_harness.runner.contract import Runner, RunnerFactory, RunRequest, RunResult


def step_config(config: EvalConfig, index: int) -> EvalConfig:
    """The config one step runs with (the execution block replaced by the step's)."""
    ex = config.execution
    step = ex.steps[index]
    update: dict[str, Any] = {"steps": [], "skill": step.skill, "prompt": step.prompt,
                              "arguments": step.arguments, "env": {**ex.env, **step.env}}
    if step.timeout is not None:
        update["timeout"] = step.timeout
    if step.max_budget_usd is not None:
        update["max_budget_usd"] = step.max_budget_usd
    return config.model_copy(update={"execution": ex.model_copy(update=update)})


def _sum(values: list[Any]) -> Any:
    return None if any(v is None for v in values) else sum(values)


class StepsRunner:
    """Runs the steps of ``execution.steps`` through one runner per step."""

    def __init__(self, config: EvalConfig, factory: RunnerFactory) -> None:
        self.steps = config.execution.steps
        self.configs = [step_config(config, i) for i in range(len(self.steps))]
        self.runners: list[Runner] = [factory(c) for c in self.configs]

    def cancel_all(self) -> None:
        """Stop every step's calls."""
        for runner in self.runners:
            runner.cancel_all()

    def preflight(self, config_dir: Path) -> None:
        """Each step runner's own check, when it has one."""
        for runner in self.runners:
            check = getattr(runner, "preflight", None)
            if callable(check):
                check(config_dir)

    def run(self, request: RunRequest) -> RunResult:
        """Every step in order (see module docstring)."""
        results: dict[str, dict[str, Any]] = {}
        ran: list[RunResult] = []
        for step, cfg, runner in zip(self.steps, self.configs, self.runners, strict=True):
            result = runner.run(replace(request, config=cfg))
            self._keep_logs(request.case_dir, step.id)
            ran.append(result)
            results[step.id] = {
                "output": result.output, "exit_code": result.exit_code,
                "latency_s": result.latency_s, "cost_usd": result.cost_usd,
                "tokens": result.total_tokens(), "files": result.files,
                "modified_files": result.modified_files, "trace": result.steps,
                "failure": result.failure, "error": result.reason}
            if not result.ok and step.on_failure == "fail":
                break
        last = ran[-1]
        out = replace(last, latency_s=_sum([r.latency_s for r in ran]),
                      cost_usd=_sum([r.cost_usd for r in ran]),
                      input_tokens=_sum([r.input_tokens for r in ran]),
                      output_tokens=_sum([r.output_tokens for r in ran]),
                      tokens=_sum([r.total_tokens() for r in ran]),
                      step_results=results,
                      notes=[n for r in ran for n in r.notes])
        if not last.ok:  # the failed step gives the cell's answer: errored, never scored
            out.reason = f"step {self.steps[len(ran) - 1].id}: {last.reason or last.failure}"
        return out

    @staticmethod
    def _keep_logs(case_dir: Path, step_id: str) -> None:
        dest = Path(case_dir) / "steps" / step_id
        make_dirs(dest)
        for name in ("stdout.log", "stderr.log"):
            src = Path(case_dir) / name
            if os.path.isfile(src):
                shutil.copyfile(src, dest / name)

"""``http`` runner: POST the case to the user's service.

Request body: ``{"input": {...}, "case_id", "condition_id", "levels", "replication",
"model", "effort", "subagent_model"}`` (plus ``"prompt"`` when ``execution.prompt`` is set).
Reply: ``{"output": ..., "cost_usd"?: ..., "usage"?: {input_tokens, output_tokens},
"steps"?: [{tool, arguments}]}``. Extra headers come from ``runner.headers``.
"""

from __future__ import annotations

from eval_harness.config.models import EvalConfig
from eval_harness.config.template_syntax import render_value
from eval_harness.runner.cli import fill_from_reply
from eval_harness.runner.contract import RunRequest, RunResult, register
from eval_harness.runner.httpcall import HttpReply, post_json


def reply_to_result(reply: HttpReply) -> RunResult:
    """A RunResult carrying the HTTP failure (the caller fills the success fields)."""
    return RunResult(exit_code=None, stdout=reply.text[:1_000_000], latency_s=reply.latency_s,
                     failure=reply.failure, reason=reply.reason, retry_after=reply.retry_after)


class HttpRunner:
    """POSTs each cell to ``runner.url``."""

    def __init__(self, config: EvalConfig) -> None:
        self.config = config

    def cancel_all(self) -> None:
        """In-flight requests end by their own timeout."""

    def run(self, request: RunRequest) -> RunResult:
        """One POST."""
        cfg = self.config
        runner = cfg.runner
        if runner is None or not runner.url:
            return RunResult(failure="error", reason="runner.url is not set")
        payload = {
            "input": request.input, "case_id": request.case_id,
            "condition_id": request.condition_id, "levels": request.levels,
            "replication": request.replication, "model": request.model,
            "effort": request.effort, "subagent_model": request.subagent_model,
        }
        if cfg.execution.prompt:
            payload["prompt"] = render_value(cfg.execution.prompt, {"input": request.input},
                                             where="execution.prompt")
        reply = post_json(runner.url, payload, runner.headers, cfg.execution.timeout,
                           cfg.execution.max_response_bytes)
        result = reply_to_result(reply)
        if reply.failure != "none":
            return result
        if not isinstance(reply.body, dict):
            result.failure, result.reason = "error", "malformed output: reply is not a JSON object"
            return result
        fill_from_reply(result, reply.body, runner.pricing, request.model, cfg.pricing)
        return result


@register("http")
def _factory(config: EvalConfig) -> HttpRunner:
    return HttpRunner(config)

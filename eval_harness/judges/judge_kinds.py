"""Build one judge implementation from a :class:`JudgeBlock` (kind inferred from its fields)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from eval_harness.config.judge_model import JudgeBlock
from eval_harness.config.models import EvalConfig
from eval_harness.errors import ConfigError
from eval_harness.judges.builtins import BUILTIN_KINDS, BuiltinJudge
from eval_harness.judges.cache import VerdictCache
from eval_harness.judges.code import CheckJudge, FunctionJudge
from eval_harness.judges.llm.chat_call import RetryPolicy
from eval_harness.judges.llm.judge import LLMJudge, LLMSettings, reference_template
from eval_harness.judges.llm.providers import ModelRef, parse_model
from eval_harness.judges.llm.rag import RagJudge, rag_template
from eval_harness.judges.values import Outcome, score_range


class JudgeImpl(Protocol):
    """Anything that turns a sample context into one raw verdict."""

    def evaluate(self, ctx: dict[str, Any], sample_index: int) -> Outcome:
        """Raise JudgeFailure when no trustworthy verdict can be produced."""
        ...


def judge_model(block: JudgeBlock, cfg: EvalConfig, where: str) -> ModelRef:
    """The judge's own model, else ``models.judge``; a missing one is a ConfigError."""
    name = block.model or cfg.models.judge
    if not name:
        raise ConfigError("an LLM judge needs a model", path=where + ".model",
                          hint="set models.judge or the judge's model: openai:gpt-4.1-nano")
    ref = parse_model(name)
    base_url = block.base_url or cfg.models.judge_base_url
    api_key = block.api_key or cfg.models.judge_api_key
    return replace(ref, base_url=base_url or None, api_key=api_key or None)


def llm_settings(block: JudgeBlock, cfg: EvalConfig, where: str, policy: RetryPolicy,
                 fence: bool = True) -> LLMSettings:
    """Call settings from the block."""
    price = tuple(block.cost_per_mtok) if block.cost_per_mtok else None
    return LLMSettings(judge_model(block, cfg, where), block.temperature, block.max_tokens,
                       price, policy, fence)  # type: ignore[arg-type]


def prompt_text(block: JudgeBlock, base_dir: Path, where: str) -> str:
    """The inline prompt or the prompt file's text."""
    if block.prompt is not None:
        return block.prompt
    path = base_dir / str(block.prompt_file)
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read prompt_file: {exc.strerror}", path=where + ".prompt_file",
                          hint="paths are relative to the config file") from None


def context_text(block: JudgeBlock, base_dir: Path, where: str) -> str:
    """A judge's ``context`` files as ``## Context: <name>`` sections (agent-eval-harness);
    appended after the prompt is rendered, so their text is never read as a template."""
    parts: list[str] = []
    for entry in block.context:
        path = base_dir / entry
        try:
            parts.append(f"\n\n## Context: {path.name}\n\n" + path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read context file: {exc.strerror}",
                              path=where + ".context", hint="paths are relative to the config "
                              "file") from None
    return "".join(parts)


def build_judge(block: JudgeBlock, cfg: EvalConfig, base_dir: Path, cache: VerdictCache,
                policy: RetryPolicy, *, where: str, fence: bool = True) -> JudgeImpl:
    """The implementation of one (non-pairwise) judge."""
    kind = block.kind_field
    if kind == "check":
        return CheckJudge(str(block.check), where + ".check", timeout=block.timeout,
                          base_dir=base_dir)
    if kind == "module":
        return FunctionJudge(str(block.module), str(block.function), base_dir, where,
                             timeout=block.timeout)
    if kind in BUILTIN_KINDS:
        return BuiltinJudge(kind, getattr(block, kind))
    rng = score_range(block.score_range) if block.score_range else None
    settings = llm_settings(block, cfg, where, policy, fence)
    if kind == "reference_correctness":
        spec = block.reference_correctness
        ref = spec.get("reference", True) if isinstance(spec, dict) else True
        return LLMJudge(block.name, reference_template(rng), settings, rng, cache, reference=ref)
    if kind in ("faithfulness", "context_relevance"):
        spec = getattr(block, kind)
        judge = RagJudge(block.name, rag_template(kind, rng), settings, rng, cache)
        if isinstance(spec, dict) and spec.get("max_docs") is not None:
            judge.max_docs = int(spec["max_docs"])
        return judge
    if kind in ("prompt", "prompt_file"):
        return LLMJudge(block.name, prompt_text(block, base_dir, where), settings, rng, cache,
                        appendix=context_text(block, base_dir, where))
    raise ConfigError(f"judge kind `{kind}` is not scored per sample", path=where)

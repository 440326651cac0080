"""agent-eval-harness's composite ("reward"): its default rule and its ``reward:`` block.

Used for agent-eval-harness run directories (analysed with or without its eval.yaml) and
for this tool's own runs when the config carries a ``reward:`` block.

Per judge j with value v_j (pairwise judges never enter):

    x_j = 1/0 for booleans;  clip((v_j − lo_j) / (hi_j − lo_j), 0, 1) for numbers, over the
          judge's declared ``score_range``, else ``reward.score_range``, else [1, 5]
          (agent-eval-harness's default scale; ``reward.raw`` judges are clipped, not scaled)

Default rule (no ``reward:`` block)::

    reward = 0                 if any boolean judge is false           (gates)
           = mean_j x_j        over the numeric judges with a value
           = 1                 when only passing booleans scored

``reward:`` block: ``judge: name`` (that judge's x, clipped as-is unless ``normalize``),
``formula: weighted`` (Σ w_j x_j / Σ w_j over ``weights``), or ``formula: <expression>``
(arithmetic over judge names, evaluated by :func:`evaluate_formula`); with ``gate`` (default
true, false in judge mode) any false boolean makes it 0. The result is clipped to [0, 1].

A judge without a value because it *errored* is left out, as agent-eval-harness does; but
where agent-eval-harness would then score 0 because nothing scored (every judge errored, the
reward judge errored, a formula naming an errored judge), this tool marks the sample
*errored* instead — it is excluded and listed, never counted as a zero.
A judge skipped by its condition (no value, no error) is simply absent.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: agent-eval-harness's scale for a numeric judge that declares none
DEFAULT_RANGE = (1.0, 5.0)
_MAX_NODES = 200
_MAX_CONST = 1e6


@dataclass(frozen=True)
class JudgeResult:
    """One judge's value on one sample (None: no value)."""

    value: float | bool | None
    errored: bool = False


@dataclass(frozen=True)
class RewardSpec:
    """A ``reward:`` block, resolved (see module docstring)."""

    formula: str = "weighted"
    weights: Mapping[str, float] = field(default_factory=dict)
    gate: bool = True
    score_range: tuple[float, float] | None = None
    raw: tuple[str, ...] = ()
    judge: str | None = None
    normalize: bool = False


def _scaled(value: float, rng: tuple[float, float]) -> float:
    lo, hi = rng
    return min(1.0, max(0.0, (value - lo) / (hi - lo))) if hi > lo else 0.0


def judge_x(res: JudgeResult, rng: tuple[float, float], *, clip_only: bool = False) -> float | None:
    """x_j of one judge (None without a value)."""
    v = res.value
    if v is None or res.errored:
        return None
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if clip_only:
        return min(1.0, max(0.0, float(v)))
    return _scaled(float(v), rng)


def _ranges_for(names: Sequence[str], ranges: Mapping[str, tuple[float, float]],
                spec: RewardSpec | None) -> dict[str, tuple[float, float]]:
    fallback = (spec.score_range if spec and spec.score_range else None) or DEFAULT_RANGE
    return {n: ranges.get(n) or fallback for n in names}


def reward(results: Mapping[str, JudgeResult], ranges: Mapping[str, tuple[float, float]],
           spec: RewardSpec | None = None) -> tuple[float | None, bool]:
    """(reward in [0, 1] or None, errored) of one sample."""
    rng = _ranges_for(list(results), ranges, spec)
    gate = spec.gate if spec is not None else True
    if gate and any(r.value is False and not r.errored for r in results.values()):
        return 0.0, False
    if spec is None:
        xs = [judge_x(r, rng[n]) for n, r in results.items()
              if isinstance(r.value, (int, float)) and not isinstance(r.value, bool)]
        scored = [x for x in xs if x is not None]
        if scored:
            return sum(scored) / len(scored), False
        if any(r.errored for r in results.values()):
            return None, True
        return 1.0, False
    if spec.judge is not None:
        res = results.get(spec.judge, JudgeResult(None))
        if res.errored:
            return None, True
        x = judge_x(res, rng.get(spec.judge, DEFAULT_RANGE), clip_only=not spec.normalize)
        return (0.0 if x is None else x), False
    xs_all = {n: judge_x(r, rng[n], clip_only=n in spec.raw) for n, r in results.items()}
    if spec.formula.strip() == "weighted":
        total = weight_sum = 0.0
        for name, w in spec.weights.items():
            x = xs_all.get(name)
            if x is not None:
                total += w * x
                weight_sum += w
        if weight_sum > 0:
            return min(1.0, max(0.0, total / weight_sum)), False
        if any(results.get(n, JudgeResult(None)).errored for n in spec.weights):
            return None, True
        return 0.0, False
    variables = {n: x for n, x in xs_all.items() if x is not None}
    if any(r.errored and n in formula_names(spec.formula) for n, r in results.items()):
        return None, True
    try:
        value = float(evaluate_formula(spec.formula, variables))
    except (ValueError, TypeError, ZeroDivisionError, OverflowError):
        return None, True
    if not math.isfinite(value):
        return None, True
    return min(1.0, max(0.0, value)), False


# --- a small arithmetic evaluator for ``reward.formula`` expressions -------------------

def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


_FUNCS: dict[str, Callable[..., Any]] = {
    "min": min, "max": max, "abs": abs, "round": round, "sum": sum, "len": len, "mean": _mean,
}
_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
}
_CMPS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
}


def parse_formula(text: str) -> list[ast.stmt]:
    """The statements of a formula (assignments, then one expression); ValueError if it
    uses anything but arithmetic, comparisons, conditionals and min/max/abs/round/sum/len/mean."""
    try:
        tree = ast.parse(text.strip(), mode="exec")
    except SyntaxError as exc:
        raise ValueError(f"cannot parse formula: {exc.msg}") from None
    if sum(1 for _ in ast.walk(tree)) > _MAX_NODES:
        raise ValueError(f"formula too complex (over {_MAX_NODES} nodes)")
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        raise ValueError("the last line of a formula must be an expression (its value)")
    for stmt in tree.body[:-1]:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            raise ValueError("only `name = expression` lines may precede the result")
    for node in ast.walk(tree):
        _check_node(node)
    return list(tree.body)


_ALLOWED = (ast.Module, ast.Expr, ast.Assign, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp,
            ast.IfExp, ast.Call, ast.List, ast.Tuple, ast.Name, ast.Constant, ast.Load,
            ast.Store, ast.And, ast.Or, ast.USub, ast.UAdd, ast.Not,
            *_BINOPS, *_CMPS)


def _check_node(node: ast.AST) -> None:
    if not isinstance(node, _ALLOWED):
        raise ValueError(f"`{type(node).__name__}` is not allowed in a formula")
    if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name)
                                           and node.func.id in _FUNCS):
        raise ValueError("only min, max, abs, round, sum, len and mean may be called")
    if isinstance(node, ast.Call) and node.keywords:
        raise ValueError("keyword arguments are not allowed in a formula")
    if isinstance(node, ast.Constant):
        v = node.value
        if not (v is None or isinstance(v, (bool, int, float))):
            raise ValueError("only numeric constants are allowed in a formula")
        if isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) > _MAX_CONST:
            raise ValueError(f"constant {v} is too large")


def formula_names(text: str) -> set[str]:
    """Judge names a formula reads (assigned names and functions excluded)."""
    try:
        body = parse_formula(text)
    except ValueError:
        return set()
    assigned = {s.targets[0].id for s in body[:-1] if isinstance(s, ast.Assign)
                and isinstance(s.targets[0], ast.Name)}
    read = {n.id for s in body for n in ast.walk(s)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return read - assigned - set(_FUNCS)


def evaluate_formula(text: str, variables: Mapping[str, float]) -> Any:
    """Value of a formula with judge values bound to their names (no eval/exec)."""
    body = parse_formula(text)
    env: dict[str, Any] = dict(variables)
    for stmt in body[:-1]:
        assert isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)
        env[stmt.targets[0].id] = _eval(stmt.value, env)
    last = body[-1]
    assert isinstance(last, ast.Expr)
    return _eval(last.value, env)


def _eval(node: ast.AST, env: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise ValueError(f"`{node.id}` has no value")
        return env[node.id]
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_eval(node.left, env), _eval(node.right, env))
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        return -v if isinstance(node.op, ast.USub) else (not v if isinstance(node.op, ast.Not) else +v)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = _eval(comp, env)
            if not _CMPS[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BoolOp):
        values = [_eval(v, env) for v in node.values]
        if isinstance(node.op, ast.And):
            return next((v for v in values if not v), values[-1])
        return next((v for v in values if v), values[-1])
    if isinstance(node, ast.IfExp):
        return _eval(node.body, env) if _eval(node.test, env) else _eval(node.orelse, env)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_eval(e, env) for e in node.elts]
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        return _FUNCS[node.func.id](*[_eval(a, env) for a in node.args])
    raise ValueError(f"`{type(node).__name__}` is not allowed in a formula")

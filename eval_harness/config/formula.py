"""The ``reward.formula`` language: arithmetic over judge names (``+ - * / // %``,
comparisons, ``and``/``or``/``not``, conditionals, ``min max abs round sum len mean``),
``name = expression`` lines then one expression. Parsed and checked here (the config layer
validates a formula at load), evaluated without eval/exec by :func:`evaluate_formula`
(judges/reward.py applies it)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from typing import Any

_MAX_NODES = 200
_MAX_CONST = 1e6

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

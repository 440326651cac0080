#!/usr/bin/env python3
"""A stand-in agent for the starter eval (stdlib only, no network, no key).

It "solves" arithmetic questions and sometimes slips: the large model slips less, and the
stepwise style slips less on harder cases. Slips are pseudo-random but reproducible per
(case, model, style, replication), so a rerun gives the same answers.

Prints one JSON object: {"output": ..., "usage": {"input_tokens", "output_tokens"}}.
Replace it with your own program in eval.yaml's `runner.command`.
"""

import ast
import json
import operator
import os
import random
import sys

SLIP = {"starter-small": 0.7, "starter-large": 0.12}
TIER = {"easy": 0.5, "medium": 1.0, "hard": 1.6}
HERE = os.path.dirname(os.path.abspath(__file__))


OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def calc(node):
    """Integer arithmetic (+, -, *, parentheses) only: never eval() text from a file."""
    if isinstance(node, ast.Expression):
        return calc(node.body)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -calc(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in OPS:
        return OPS[type(node.op)](calc(node.left), calc(node.right))
    raise ValueError("not integer arithmetic")


def arg(name):
    """The value after ``--name`` (argparse costs more than this whole program)."""
    argv = sys.argv[1:]
    return argv[argv.index(name) + 1] if name in argv[:-1] else ""


def main():
    model, style, case_id = arg("--model"), arg("--style"), arg("--case-id")
    question = arg("--question")
    if model not in SLIP:
        print(f"unknown model {model!r}", file=sys.stderr)
        return 2
    with open(os.path.join(HERE, "cases.jsonl"), encoding="utf-8") as fh:
        cases = {c["id"]: c for c in map(json.loads, filter(str.strip, fh))}
    case = cases[case_id]
    expr = question.removeprefix("What is ").rstrip("?")
    result = calc(ast.parse(expr, mode="eval"))
    rng = random.Random(f"{case_id}:{model}:{style}:{os.environ.get('EVAL_REPLICATION')}")
    slip = SLIP[model] * TIER[case["tags"]["tier"]] * (0.5 if style == "stepwise" else 1.0)
    if rng.random() < slip:
        result += rng.choice([-10, -1, 1, 10])
    text = f"{expr} = {result}" if style == "stepwise" else str(result)
    print(json.dumps({"output": text,
                      "usage": {"input_tokens": 20 + len(question), "output_tokens": len(text)}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

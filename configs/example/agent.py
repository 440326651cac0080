#!/usr/bin/env python3
"""A simulated question-answering agent for the bundled example (no network, no key).

It behaves like a real agent in the ways an evaluation cares about, with per-call
randomness so replications differ:

- correctness: P(correct) = logistic(case difficulty + model + effort + context
  + model x context + noise). ``example-large`` is better than ``example-small``; high
  effort helps; ``context: docs`` helps the small model a lot and the large one barely (an
  interaction); a few cases are flaky (large per-call noise);
- explanation: mentions each expected entity with a probability that rises when the
  answer is right and with effort (graded by ``entity_coverage``);
- tool calls: ``search_docs`` / ``read_section`` steps when it has docs, ``think`` steps
  with high effort;
- latency, tokens and cost: grow with effort and docs; the large model costs more.

Prints one JSON object: {output, cost_usd, usage: {input_tokens, output_tokens}, steps}.
Set EXAMPLE_AGENT_SEED to make it reproducible; EXAMPLE_AGENT_DEGRADE=3 makes it worse. Stdlib only, imports kept light.
"""

import json
import math
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TIER = {"easy": 1.8, "medium": 0.4, "hard": -0.9}
MODEL = {"example-small": -0.9, "example-large": 0.9}
EFFORT = {"low": -0.5, "high": 0.5}
#: docs effect per model: large interaction (the small model gains much more)
DOCS = {"example-small": 1.8, "example-large": 0.2}
FLAKY = {"geo-08", "sci-09", "math-07", "sci-12"}
PRICE = {"example-small": (0.25, 1.25), "example-large": (3.0, 15.0)}  # USD per 1M tokens


def load_case(case_id):
    with open(os.path.join(HERE, "cases.jsonl"), encoding="utf-8") as fh:
        cases = [json.loads(line) for line in fh if line.strip()]
    for case in cases:
        if case["id"] == case_id:
            return case, cases
    raise SystemExit(f"unknown case {case_id}")


def case_offset(case_id):
    """A fixed per-case shift in [-0.5, 0.5] (a stable string hash; no hashlib import)."""
    h = 0
    for ch in case_id:
        h = (h * 131 + ord(ch)) % 1000003
    return (h % 1001) / 1000.0 - 0.5


def parse_args(argv):
    """``--name value`` pairs (argparse costs more than this whole program)."""
    opts = {"model": None, "effort": "low", "context": "none", "case-id": None, "question": ""}
    it = iter(argv)
    for flag in it:
        name = flag[2:] if flag.startswith("--") else None
        if name not in opts:
            raise SystemExit(f"usage: agent.py --model M --effort E --context C --case-id ID "
                             f"[--question Q] (bad argument {flag!r})")
        opts[name] = next(it, "")
    if not opts["model"] or not opts["case-id"]:
        raise SystemExit("--model and --case-id are required")
    return opts


def main():
    o = parse_args(sys.argv[1:])
    model, effort, context, case_id = o["model"], o["effort"], o["context"], o["case-id"]
    if model not in MODEL:
        print(f"error: unknown model {model}", file=sys.stderr)
        return 2
    case, cases = load_case(case_id)
    seed = os.environ.get("EXAMPLE_AGENT_SEED")
    rng = random.Random(
        f"{seed}:{case_id}:{model}:{effort}:{context}:{os.environ.get('EVAL_REPLICATION')}"
        if seed else None)
    tier = case.get("tags", {}).get("tier", "medium")
    docs = context == "docs"
    high = effort == "high"
    noise_sd = 2.0 if case_id in FLAKY else 0.6
    # EXAMPLE_AGENT_DEGRADE: a logit penalty, to demonstrate a regression against a baseline
    degrade = float(os.environ.get("EXAMPLE_AGENT_DEGRADE") or 0.0)
    logit = (TIER.get(tier, 0.0) - degrade + case_offset(case_id) + MODEL[model]
             + EFFORT.get(effort, 0.0) + (DOCS[model] if docs else 0.0)
             + rng.gauss(0.0, noise_sd))
    correct = rng.random() < 1.0 / (1.0 + math.exp(-logit))
    truth = case["expected"]
    if correct:
        answer = truth["short"]
    else:
        answer = rng.choice([c["expected"]["short"] for c in cases
                             if c["expected"]["short"] != truth["short"]])
    mention = min(0.95, 0.35 + 0.35 * correct + 0.15 * high + 0.1 * docs)
    said = [e for e in truth["entities"] if rng.random() < mention]
    explanation = "Key facts: " + (", ".join(said) if said else "none recalled") + "."
    steps = []
    if docs:
        steps.append({"tool": "search_docs", "arguments": {"query": o['question'][:60]}})
        steps += [{"tool": "read_section", "arguments": {"n": i}}
                  for i in range(rng.randint(0, 2))]
    if high:
        steps += [{"tool": "think", "arguments": {}} for _ in range(rng.randint(1, 3))]
    # simulated latency: tens of milliseconds
    delay = 0.004 + 0.012 * high + 0.006 * docs + 0.004 * (model == "example-large")
    time.sleep(delay + rng.expovariate(1 / 0.004))
    input_tokens = int(len(o['question']) * 1.3) + 40 + (600 if docs else 0) + 80 * len(steps)
    output_tokens = int(rng.gauss(60 + 140 * high, 12))
    pin, pout = PRICE[model]
    reply = {
        "output": f"Answer: {answer}\n{explanation}",
        "cost_usd": round((input_tokens * pin + output_tokens * pout) / 1e6, 8),
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        "steps": steps,
    }
    print(json.dumps(reply))
    return 0


if __name__ == "__main__":
    sys.exit(main())

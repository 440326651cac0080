"""``orchestrate.py --config eval.yaml --lint``: lint the dataset.

Exit 0 when clean, 1 when there are findings (so CI can gate on it), 2 when the config or
dataset cannot be read. ``--json`` prints ``{"dataset": path, "findings": [..]}``.
"""

from __future__ import annotations

import argparse
import json

from eval_harness.config.dataset import load_dataset
from eval_harness.config.loader import load_config
from eval_harness.errors import ConfigError
from eval_harness.judges.lint import lint_dataset


def lint(args: argparse.Namespace) -> int:
    """Print findings; return 0 (clean) or 1 (findings)."""
    loaded = load_config(args.config, strict=False)
    if loaded.config.dataset is None:
        raise ConfigError("a `dataset` block is required", path="dataset", file=str(loaded.path))
    path = loaded.base_dir / loaded.config.dataset.path
    cases = load_dataset(path, only=args.cases, limit=args.limit)
    findings = lint_dataset(cases)
    if args.json:
        print(json.dumps({"dataset": str(path), "cases": len(cases), "findings": findings},
                         indent=2))
    else:
        for finding in findings:
            print(finding)
        print(f"{len(cases)} cases, {len(findings)} finding(s)")
    return 1 if findings else 0

#!/usr/bin/env python3
"""Thin entry point: ``python orchestrate.py --config eval.yaml [--dry-run]``."""

import sys

from eval_harness.cli.main import main

if __name__ == "__main__":
    sys.exit(main())

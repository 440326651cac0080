"""``python -m eval_harness``: the ``orchestrate`` command."""

import sys

from eval_harness.cli.main import main

if __name__ == "__main__":
    sys.exit(main())

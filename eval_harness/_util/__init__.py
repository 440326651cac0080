"""Private small utilities (layer 0: import nothing of eval_harness but each other and
``eval_harness.errors``), each module named for what it does. Not a public API."""

# %% [markdown]
# # eval_harness from Python (notebook-style)
#
# Each `# %%` is a cell: open this file as a notebook (VS Code, or Jupyter with jupytext),
# or run it whole from the repository root after the README's first command:
# `.venv/bin/python docs/example_notebook.py`. It reads the example's runs
# (`runs/example/`), then runs a small experiment of its own. docs/api.md is the reference.

# %%
from pathlib import Path

import eval_harness
from eval_harness import analyze, load_runs, run
from eval_harness.starter import scaffold

print("eval_harness", eval_harness.__version__)

# %% [markdown]
# ## The tidy frame: one row per (run, case, judge), plus a `composite` row per sample

# %%
df = load_runs("runs/example")
composite = df[df["judge"] == "composite"]
print(composite.groupby(["model", "context"])["value"].mean().round(3))

# %% [markdown]
# ## Analyse existing runs (= `orchestrate --analyze-only runs/example/ ...`)
#
# `config=` gives the judges' score ranges, the factor order and thresholds; overrides are
# the CLI's flags in snake_case. Nothing is printed unless `console=True`.

# %%
analysis = analyze("runs/example", config="configs/example.yaml",
                   output="analysis/notebook", simple_effects="context:model")
print("terms:")
print(analysis.terms()[["F", "df_num", "df_den", "p_adjusted", "significant", "partial_eta_sq"]])
print("contrasts:")
print(analysis.contrasts()[["factor", "by", "at", "a", "b", "estimate", "ci_low", "ci_high",
                            "p_adjusted"]])
print("conditions:")
print(analysis.conditions()[["model", "effort", "context", "mean", "ci_low", "ci_high"]])
print("comparisons against the reference:")
print(analysis.comparison_table()[["candidate", "verdict", "composite_diff", "composite_p"]])
print("files:", ", ".join(sorted(analysis.files)))
assert analysis.passed  # no threshold or regression gate failed

# %% [markdown]
# ## Run an experiment (= `orchestrate --config ...`)
#
# The starter eval of `orchestrate init`, cut to 4 cases with `limit=4` (any CLI flag works
# the same way). A rerun resumes: cells already complete are skipped.

# %%
scaffold("notebook-demo", force=True)
result = run("notebook-demo/eval.yaml", limit=4, runs_dir="runs", output="analysis/notebook-demo")
print(f"{result.name}: {result.ran} of {result.cells} cells ran, {result.ok} ok, "
      f"{result.errored} errored; runs in {result.eval_dir}")
assert result.analysis is not None
print(result.analysis.terms()[["F", "p_adjusted", "significant"]])
assert Path(result.analysis.files["report.html"]).is_file()

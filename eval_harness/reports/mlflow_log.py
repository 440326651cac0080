"""Log one analysis to MLflow (the ``mlflow`` extra; the config's ``mlflow:`` block).

What is logged, in experiment ``mlflow.experiment`` (default: the eval name):

- a parent run named ``<eval>``: tags ``eval_name``, ``condition_ids`` (comma-joined) and
  the block's ``tags``; params ``correction``, ``method``, ``n_conditions``, ``n_cases``,
  ``replications``; metrics ``p_adjusted.<term>`` per ANOVA term; artifacts
  ``anova.json``, ``comparisons.json`` (+ ``comparisons.cases.jsonl``), ``report.html``
  and ``report.md`` when written;
- one child run per condition (named by its label): params = its levels (and
  ``condition_id``), tags ``eval_name`` and ``condition_id``, metrics
  ``mean.<judge>`` (raw scale) and ``mean.composite``, ``pass_rate`` (share of samples that
  pass by the analysis' pass rule, as in the reports) and ``pass_rate.<judge>`` for boolean judges, ``cost_usd`` /
  ``latency_s`` / ``tokens`` (means over the samples that state them), ``n_samples``,
  ``n_errored``.

Where: the block's ``tracking_uri``, else ``MLFLOW_TRACKING_URI``, else the local file store
``./mlruns`` (so it works on a laptop with no server; MLflow 3 keeps that store in
maintenance mode behind ``MLFLOW_ALLOW_FILE_STORE``, which is set for this default only).
Metric and param names are cleaned to what MLflow accepts (letters, digits, ``_-. /``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from eval_harness._util.numbers import as_finite
from eval_harness._util.redact import mask_url_credentials
from eval_harness.errors import UsageError

HINT = "pip install 'factorial-eval-harness[mlflow]' (or remove the mlflow: block)"
_ARTIFACTS = ("anova.json", "comparisons.json", "comparisons.cases.jsonl", "report.html",
              "report.md")


def require_mlflow() -> Any:
    """The ``mlflow`` module, or a UsageError (exit 2) with the install hint."""
    try:
        import mlflow
    except ImportError:
        raise UsageError("the config has an mlflow: block but MLflow is not installed",
                         hint=HINT) from None
    return mlflow


def tracking_uri(block: Any, environ: Mapping[str, str] | None = None) -> str:
    """The block's URI › ``MLFLOW_TRACKING_URI`` › ``file:<cwd>/mlruns``."""
    env = os.environ if environ is None else environ
    if block is not None and block.tracking_uri:
        return str(block.tracking_uri)
    if env.get("MLFLOW_TRACKING_URI"):
        return str(env["MLFLOW_TRACKING_URI"])
    return (Path.cwd() / "mlruns").resolve().as_uri()


def _key(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_\-. /]", "_", text)[:250] or "_"



def condition_metrics(rows: Any, samples: Any = None) -> dict[str, float]:
    """The metrics of one condition's rows of the tidy frame (see module docstring);
    ``pass_rate`` is by the analysis' pass rule: its per-attempt verdicts ``samples`` of
    this condition (``analysis.compare.verdicts.sample_table``), else the default rule's."""
    from eval_harness.analysis.compare.verdicts import sample_table

    metrics: dict[str, float] = {}
    passed = (sample_table(rows) if samples is None else samples)["passed"].astype(float)
    if passed.notna().any():
        metrics["pass_rate"] = float(passed.dropna().mean())
    ok = rows[~rows["errored"].astype(bool)]
    for judge, group in ok.groupby("judge", observed=True):
        values = group["value"].dropna()
        if values.empty or (group["kind"].astype(str) == "pairwise").all():
            continue
        metrics[_key(f"mean.{judge}")] = float(values.mean())
        if str(judge) == "composite":
            continue
        if (group["kind"].astype(str) == "boolean").all():
            metrics[_key(f"pass_rate.{judge}")] = float(values.mean())
    samples = rows[rows["judge"].astype(str) == "composite"]
    if samples.empty:
        samples = rows.drop_duplicates(["case_id", "replication"])
    for column in ("cost_usd", "latency_s", "tokens"):
        if column in samples:
            values = samples[column].astype(float).dropna()
            if not values.empty:
                metrics[column] = float(values.mean())
    metrics["n_samples"] = float(len(samples))
    metrics["n_errored"] = float(samples["errored"].astype(bool).sum())
    return metrics


def _unreachable(mlflow: Any) -> tuple[type[BaseException], ...]:
    """The errors of a tracking server that cannot be reached or refuses us."""
    kinds: list[type[BaseException]] = [OSError, mlflow.exceptions.MlflowException]
    try:
        import requests

        kinds.append(requests.exceptions.RequestException)
    except ImportError:  # pragma: no cover - mlflow depends on requests
        pass
    return tuple(kinds)


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    for known in ("Connection refused", "Name or service not known", "timed out",
                  "Temporary failure in name resolution", "No route to host"):
        if known.lower() in text.lower():
            return known.lower()
    found = re.search(r"\b(?:status code|HTTP) (\d{3})\b", text)
    if found:
        return f"HTTP {found.group(1)}"
    return mask_url_credentials(text)[:200] or type(exc).__name__


def log_analysis(block: Any, eval_name: str, anova: Mapping[str, Any], frame: Any,
                 files: Mapping[str, Path], environ: Mapping[str, str] | None = None,
                 samples: Any = None) -> str:
    """Log the analysis (see module docstring); return the parent run's id. ``samples``:
    the analysis' per-attempt verdicts (its pass rule; None: the default rule). A tracking
    server that cannot be reached (or refuses us) is a UsageError (exit 2) in one line,
    its URI's credentials masked; the analysis files are already written."""
    mlflow = require_mlflow()
    uri = tracking_uri(block, environ)
    try:
        return _log(mlflow, uri, block, eval_name, anova, frame, files, samples)
    except _unreachable(mlflow) as exc:
        raise UsageError(
            f"mlflow: cannot log to {mask_url_credentials(uri)}: {_reason(exc)}",
            hint="check the tracking server and MLFLOW_TRACKING_URI (or the mlflow: block's "
                 "tracking_uri); the analysis files are written: `--analyze-only` logs "
                 "them again") from None


def _log(mlflow: Any, uri: str, block: Any, eval_name: str, anova: Mapping[str, Any],
         frame: Any, files: Mapping[str, Path], samples: Any) -> str:
    if uri.startswith("file:"):
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    client = mlflow.MlflowClient(tracking_uri=uri)
    experiment = (block.experiment if block is not None and block.experiment else eval_name)
    found = client.get_experiment_by_name(experiment)
    exp_id = found.experiment_id if found is not None else client.create_experiment(experiment)
    factors = list(frame.attrs.get("factors", []))
    conditions = frame.drop_duplicates("condition_id")
    ids = [str(c) for c in conditions["condition_id"]]
    base_tags = {**(dict(block.tags) if block is not None else {}), "eval_name": eval_name}
    design = anova.get("design") or {}
    parent = client.create_run(exp_id, run_name=eval_name,
                               tags={**base_tags, "condition_ids": ",".join(ids)})
    pid = parent.info.run_id
    try:
        for key, value in (("correction", anova.get("correction")),
                           ("method", (anova.get("method") or {}).get("name")),
                           ("n_conditions", design.get("n_conditions")),
                           ("n_cases", design.get("n_cases")),
                           ("replications", design.get("replications"))):
            if value is not None:
                client.log_param(pid, key, str(value))
        for term, row in (anova.get("terms") or {}).items():
            p = as_finite((row or {}).get("p_adjusted"))
            if p is not None:
                client.log_metric(pid, _key(f"p_adjusted.{term}"), p)
        for name in _ARTIFACTS:
            path = files.get(name)
            if path is not None and Path(path).is_file():
                client.log_artifact(pid, str(path))
        for cid, rows in frame.groupby("condition_id", sort=False, observed=True):
            first = rows.iloc[0]
            levels = {f: first[f] for f in factors if f in rows.columns}
            label = "-".join(f"{k}={v}" for k, v in levels.items()) or str(cid)
            child = client.create_run(exp_id, run_name=_key(label), tags={
                **base_tags, "condition_id": str(cid), "mlflow.parentRunId": pid})
            kid = child.info.run_id
            for key, value in {**levels, "condition_id": cid}.items():
                client.log_param(kid, _key(str(key)), str(value))
            mine = None if samples is None else samples[samples["condition_id"] == cid]
            for key, value in condition_metrics(rows, mine).items():
                client.log_metric(kid, key, value)
            client.set_terminated(kid)
    except Exception:
        client.set_terminated(pid, status="FAILED")
        raise
    client.set_terminated(pid)
    return str(pid)

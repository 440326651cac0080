"""deploy/k8s/: every manifest validates (strictly: no unknown field) against the
Kubernetes schemas kubernetes-validate bundles (offline), for the oldest release where
``backoffLimitPerIndex`` is GA and the newest bundled one; and the pieces fit together
(shard total = completions, the Secret and PVC the Jobs name exist, the analysis reads
where the shards write)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from eval_harness.cli.args import build_parser

ROOT = Path(__file__).resolve().parent.parent
K8S = ROOT / "deploy" / "k8s"
#: backoffLimitPerIndex / maxFailedIndexes are GA from Kubernetes 1.33
VERSIONS = ("1.33.0", kubernetes_validate.latest_version())


def _docs() -> dict[str, list[dict[str, Any]]]:
    return {p.name: [d for d in yaml.safe_load_all(p.read_text()) if d] for p in sorted(K8S.glob("*.yaml"))}


@pytest.mark.parametrize("version", VERSIONS)
def test_manifests_validate_strictly(version: str) -> None:
    docs = _docs()
    assert set(docs) == {"secret.yaml", "pvc.yaml", "job-run.yaml", "job-analyse.yaml"}
    for name, resources in docs.items():
        for resource in resources:
            try:
                kubernetes_validate.validate(resource, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                pytest.fail(f"{name}: {exc.message} at {list(exc.path)}")


def test_validator_rejects_a_misspelt_field() -> None:
    (job,) = _docs()["job-run.yaml"]
    job["spec"]["backoffLimitPerIndx"] = job["spec"].pop("backoffLimitPerIndex")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, VERSIONS[-1], strict=True)


def _container(job: dict[str, Any]) -> dict[str, Any]:
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return container


def test_the_pieces_fit_together() -> None:
    docs = _docs()
    (secret,), (pvc,) = docs["secret.yaml"], docs["pvc.yaml"]
    (run,), (analyse,) = docs["job-run.yaml"], docs["job-analyse.yaml"]
    spec = run["spec"]
    assert spec["completionMode"] == "Indexed" and spec["backoffLimitPerIndex"] >= 1
    assert spec["template"]["spec"]["restartPolicy"] == "Never"  # podFailurePolicy needs it
    eval_c, ana_c = _container(run), _container(analyse)
    env = {e["name"]: e.get("value") for e in eval_c["env"]}
    assert int(env["EVAL_SHARD_TOTAL"]) == spec["completions"]
    assert eval_c["envFrom"] == [{"secretRef": {"name": secret["metadata"]["name"]}}]
    assert "ReadWriteMany" in pvc["spec"]["accessModes"]
    for job in (run, analyse):
        (vol,) = job["spec"]["template"]["spec"]["volumes"]
        assert vol["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"]
    fail_codes = {c for r in spec["podFailurePolicy"]["rules"] if r["action"] == "FailJob"
                  for c in r["onExitCodes"]["values"]}
    assert fail_codes == {2, 3}  # config error, quota: a retry cannot fix them
    # both commands parse with the real CLI; the analysis reads where the shards write
    parser = build_parser()
    assert eval_c["command"][0] == ana_c["command"][0] == "orchestrate"
    run_args = parser.parse_args(eval_c["command"][1:])
    ana_args = parser.parse_args(ana_c["command"][1:])
    assert run_args.shard == "auto" and run_args.no_analysis
    assert ana_args.analyze_only[0].startswith(run_args.runs_dir.rstrip("/") + "/")
    mount = eval_c["volumeMounts"][0]["mountPath"]
    assert run_args.runs_dir.startswith(mount) and ana_c["volumeMounts"][0]["mountPath"] == mount


def test_docs_show_the_manifests_as_they_are() -> None:
    """docs/ci-fanout.md quotes job-run.yaml; the quote must be the file."""
    page = (ROOT / "docs" / "ci-fanout.md").read_text()
    section = page[page.index("## Kubernetes"):]
    section = section[:section.index("\n## ", 3)]
    blocks = re.findall(r"```yaml\n(.*?)```", section, re.S)
    assert (K8S / "job-run.yaml").read_text() in blocks
    for name in ("secret.yaml", "pvc.yaml", "job-analyse.yaml"):
        assert f"deploy/k8s/{name}" in section
    for line in re.findall(r"^kubectl .*$", section, re.M):
        shlex.split(line)  # well-formed shell

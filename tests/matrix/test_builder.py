"""Expansion, routing, labels, variants and config digests."""

from __future__ import annotations

from pathlib import Path

from eval_harness.config.loader import load_config
from eval_harness.matrix.builder import MatrixBuilder
from eval_harness.matrix.effective import config_digest, effective_config


def test_sorted_factor_cartesian_expansion() -> None:
    m = MatrixBuilder.from_yaml({"factors": {"model": ["a", "b"], "effort": ["lo", "hi", "x"]}})
    conds = m.condition_list()
    assert len(conds) == 6
    # sorted factor names: effort varies slowest
    assert [c.levels["effort"] for c in conds] == ["lo", "lo", "hi", "hi", "x", "x"]
    # levels recorded in writing order
    assert list(conds[0].levels) == ["model", "effort"]


def test_routing() -> None:
    m = MatrixBuilder.from_yaml({"factors": {
        "model": ["m"], "effort": ["high"], "subagent": ["s1"], "subagent_model": ["s2"],
        "context": ["docs"], "k": [3]}})
    (c,) = m.condition_list()
    assert c.model == "m" and c.effort == "high"
    assert c.subagent_model == "s1"  # subagent wins over subagent_model
    assert c.input_overrides == {"context": "docs", "k": 3}


def test_run_ids_and_labels() -> None:
    m = MatrixBuilder.from_yaml({"factors": {"effort": ["high"], "model": ["opus"]}})
    (c,) = m.condition_list()
    assert c.label == "opus-effort-high"
    assert c.run_id("2026-07-30", 2, 3) == "2026-07-30-opus-effort-high-r2"
    assert c.run_id("2026-07-30", 1, 1) == "2026-07-30-opus-effort-high"


def test_variants_record_name_and_enter_digest(tmp_path: Path) -> None:
    text = """\
name: v
matrix:
  factors:
    model: [m1]
    prompt:
      - {name: v1, set: {runner.system: "Be brief.", runner.temperature: 0.2}}
      - {name: v2, set: {runner.system: "Be thorough."}}
runner: {type: openai, system: "default"}
"""
    path = tmp_path / "v.yaml"
    path.write_text(text)
    loaded = load_config(path, env={})
    assert loaded.config.matrix is not None
    conds = MatrixBuilder.from_yaml(loaded.config.matrix).condition_list()
    assert [c.levels["prompt"] for c in conds] == ["v1", "v2"]
    eff = effective_config(loaded, conds[0])
    assert eff.runner is not None and eff.runner.system == "Be brief." and eff.runner.temperature == 0.2
    d1 = config_digest(loaded.raw, conds[0])
    # editing the variant's content changes the digest but not the id
    path.write_text(text.replace("Be brief.", "Be very brief."))
    loaded2 = load_config(path, env={})
    assert loaded2.config.matrix is not None
    conds2 = MatrixBuilder.from_yaml(loaded2.config.matrix).condition_list()
    assert conds2[0].condition_id == conds[0].condition_id
    assert config_digest(loaded2.raw, conds2[0]) != d1


def test_runtime_knobs_do_not_change_digest(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text("name: d\nmatrix: {factors: {model: [a]}}\nexecution: {timeout: 5, prompt: p}\n")
    loaded = load_config(path, env={})
    (c,) = MatrixBuilder.from_yaml(loaded.raw["matrix"]).condition_list()
    d1 = config_digest(loaded.raw, c)
    path.write_text("name: d\nmatrix: {factors: {model: [a]}}\nexecution: {timeout: 50, prompt: p, retries: 9}\n")
    assert config_digest(load_config(path, env={}).raw, c) == d1
    path.write_text("name: d\nmatrix: {factors: {model: [a]}}\nexecution: {timeout: 5, prompt: q}\n")
    assert config_digest(load_config(path, env={}).raw, c) != d1


def test_digests_are_stable_and_leave_the_raw_config_alone(tmp_path: Path) -> None:
    """Digests key resume: a change of how they are computed would rerun every cell. The
    values were captured before config_digest stopped deep-copying the whole config."""
    import copy

    from eval_harness.matrix.experiment import prepare

    (tmp_path / "cases.jsonl").write_text('{"id":"c1","input":{"q":"x"}}\n')
    (tmp_path / "eval.yaml").write_text("""\
name: var
matrix:
  factors:
    model: [a, b]
    prompt:
      - {name: terse, set: {execution.prompt: "One line: {{ input.q }}", runner.command: "agent2 --model {model}"}}
      - {name: expert, set: {execution.timeout: 99, models.subagent: x}}
      - plain
runner: {type: cli, command: "agent --model {model}"}
execution: {prompt: "{{ input.q }}", timeout: 30}
dataset: {path: cases.jsonl}
judges: [{name: ok, check: "return True, 'ok'"}]
""")
    exp = prepare(tmp_path / "eval.yaml")
    raw = copy.deepcopy(exp.loaded.raw)
    by_label = {c.label: exp.digests[c.condition_id] for c in exp.conditions}
    assert by_label == {
        "a-prompt-terse": "bb6262b2033c75c5", "b-prompt-terse": "e392d6b661e63f3b",
        "a-prompt-expert": "df468079e97cb7fc", "b-prompt-expert": "356c7597caf22b9e",
        "a-prompt-plain": "21ca2440b8aac67d", "b-prompt-plain": "bed863a8bfcce067",
    }
    for c in exp.conditions:
        config_digest(exp.loaded.raw, c)
    assert exp.loaded.raw == raw  # overrides are merged into copies only

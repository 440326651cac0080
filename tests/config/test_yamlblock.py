"""The pure-Python block reader (the default install's fast path for run data) returns
exactly what parse_yaml returns — same keys, values, types (1, 1.0 and True differ;
-0.0 and 0.0 differ), order — on every text it accepts, and falls back on the rest:

- generated documents dumped by PyYAML in the writers' styles (``yaml.dump`` /
  ``safe_dump``, ``default_flow_style=False``, Python and C dumpers, sorted or not, any
  width, unicode or escaped) holding tricky strings, numbers, big ints, special floats;
- those documents mutated line by line (hostile or broken text): accepted only when equal,
  else a fallback, never a different value and never an accepted error;
- every YAML file of the test fixtures and agent-eval-harness's sample runs;
- fast_load (what the loader calls) keeps parse_yaml's errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
import yaml.scanner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eval_harness.config import yamlblock, yamlfast, yamlio
from eval_harness.config.yamlblock import FALLBACK, read_block
from tests.config.test_yamlfast import same  # type-exact equality, one definition

REPO = Path(__file__).resolve().parents[2]
#: the design notes' copy beside the checkout, when present (tests/fixtures/aeh_runs holds the same runs)
SAMPLE_RUNS = REPO.parent / "shared" / "fixtures" / "agent-eval-harness-sample-runs"

TRICKY = ["1", "-1", "+1", "0", "-0", "00", "010", "08", "0x1F", "0o17", "0b101", "1_000", "1e3", "1E3", "1e+3", "1.0e3", "1.", ".5", "-.5", "+.5", "1.5", "-1.5", "01.5", ".inf", "-.inf", ".Inf", ".NaN", ".nan", "inf", "nan", "12345678901234567890", "1:30", "-1:30", "190:20:30", "1:30.5", "true", "True", "TRUE", "false", "no", "No", "yes", "Yes", "on", "Off", "y", "n", "Y", "N", "null", "Null", "NULL", "~", "=", "<<", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "0.1", "-0.0", "0e0", "case-000001", "x-1e3", "r2", "v1.2", "3.5s", "4/5", "10%", "a#b", "a:b", "-", "--", "---", "...", "?", ":", "!", "&", "*", "|", ">", "@", "`", "%", ",", "[", "]", "{", "}", "{}", "[]", "#", "#a", "''", '""', "'", '"', "\\", "\\n", "é", "😀",
    "a b", " lead", "trail ", "a: b", "a #b", "- x", "? x", "line\nbreak",
                "tab\there", "\u2028", "\x85", "nul\x00", "bell\x07", "\ufeff", "x" * 130,
                "long " * 40, "2001-12-14 21:59:43.10 -5", "\\x41", "é" * 3]




def check(text: str) -> bool:
    """Assert the reader agrees with parse_yaml (or falls back); True when it accepted."""
    got = read_block(text)
    try:
        want = yamlio.parse_yaml(text)[0]
    except Exception as exc:  # any error: the reader must have fallen back
        assert got is FALLBACK, f"accepted a text parse_yaml refuses ({exc}): {text!r}"
        return False
    if got is FALLBACK:
        return False
    assert same(got, want), f"differs from parse_yaml on {text!r}: {got!r} vs {want!r}"
    return True


scalar_text = st.one_of(
    st.sampled_from(TRICKY),
    st.text(alphabet=st.sampled_from(list("ab01 :#-'\"\\.,[]{}!&*|>%@`~=<+eE_xé😀\n\t")),
            max_size=12),
    st.text(max_size=8),
    st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True),
)
scalars = st.one_of(
    scalar_text,
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
)
keys = st.one_of(scalar_text, st.integers(min_value=-(10**6), max_value=10**6), st.booleans(),
                 st.floats(allow_nan=False, allow_infinity=True), st.none())
documents = st.dictionaries(
    keys,
    st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)), max_leaves=12),
    min_size=1, max_size=6)
dumpers = st.sampled_from([yaml.Dumper, yaml.SafeDumper, yaml.CSafeDumper, yaml.CDumper])


def dump(doc: Any, dumper: Any, sort_keys: bool, width: int, allow_unicode: bool) -> str:
    return yaml.dump(doc, Dumper=dumper, default_flow_style=False, sort_keys=sort_keys,
                     width=width, allow_unicode=allow_unicode)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, dumpers, st.booleans(), st.sampled_from([20, 80, 1000]), st.booleans())
def test_dumped_documents_read_exactly_as_pyyaml(doc: dict[Any, Any], dumper: Any,
                                                 sort_keys: bool, width: int,
                                                 allow_unicode: bool) -> None:
    try:
        text = dump(doc, dumper, sort_keys, width, allow_unicode)
    except TypeError:  # sort_keys over mixed key types
        return
    check(text)


# line-level mutations: hostile or broken text must never be read differently
_INSERTS = ["\t", " ", "  ", "#", ": ", "- ", "'", '"', "&a ", "*a", "!!str ", "? ", "|",
            "---", "...", "%YAML 1.1", "\r", "\\", "{", "[", "<<: ", "\x00", "\ufeff", "\n",
            "\n  ", "\n- ", "'x", '"\\', "\\x4"]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, dumpers, st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6),
                                              st.sampled_from([*_INSERTS, "<del>", "<dup>"])),
                                    min_size=1, max_size=3))
def test_mutated_documents_are_read_equal_or_fall_back(doc: dict[Any, Any], dumper: Any,
                                                       edits: list[tuple[int, int, str]]) -> None:
    text = dump(doc, dumper, False, 80, True)
    for where, size, what in edits:
        at = where % (len(text) + 1)
        if what == "<del>":
            text = text[:at] + text[at + 1 + size % 3:]
        elif what == "<dup>":
            lines = text.split("\n")
            i = where % len(lines)
            lines.insert(i, lines[i])
            text = "\n".join(lines)
        else:
            text = text[:at] + what + text[at:]
    check(text)


@pytest.mark.parametrize("scalar", TRICKY)
@pytest.mark.parametrize("shape", ["value", "key", "item", "nested", "indentless"])
def test_tricky_scalars_in_every_position(scalar: str, shape: str) -> None:
    for style in (None, "'", '"'):
        try:
            node = yaml.dump(scalar, default_style=style, width=1000).removesuffix("...\n")
        except yaml.YAMLError:
            continue
        # multi-line: only the raw string (as a mapping value, in the dump below)
        text_scalar = None if "\n" in node.rstrip("\n") else node.rstrip("\n")
        for raw in ([scalar] if text_scalar is None else [scalar, text_scalar]):
            text = {
                "value": f"a: {raw}\nb: 1\n",
                "key": f"{raw}: 1\nz: 2\n",
                "item": f"a:\n- {raw}\n- 2\n",
                "nested": f"a:\n  b:\n  - k: {raw}\n    j: 2\n",
                "indentless": f"x:\n- {raw}: 1\n  y: {raw}\n",
            }[shape]
            check(text)
        check(yaml.dump({"a": scalar, scalar: [scalar, {scalar: scalar}]},
                        default_style=style, default_flow_style=False, width=1000))


def _fixture_yaml() -> list[Path]:
    roots = [REPO / "tests" / "fixtures", SAMPLE_RUNS]
    found = [p for root in roots if root.is_dir() for p in sorted(root.rglob("*"))
             if p.suffix in (".yaml", ".yml") and p.is_file() and not p.is_symlink()]
    return found


def test_every_fixture_yaml_file_reads_as_pyyaml() -> None:
    files = _fixture_yaml()
    assert len(files) >= 40
    summaries = 0
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        accepted = check(text)
        if path.name == "summary.yaml":
            summaries += 1
            assert accepted, f"{path}: a summary.yaml fell back"
    assert summaries >= 2


def test_the_benchmark_writer_takes_the_fast_path(tmp_path: Path) -> None:
    import sys
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import scale_data
    finally:
        sys.path.remove(str(REPO / "bench"))
    scale_data.write_runs(str(tmp_path), "aeh", 2, 50, 1, missing=0.1)
    files = sorted(tmp_path.rglob("summary.yaml"))
    assert files
    for path in files:
        assert check(path.read_text(encoding="utf-8"))


def test_agent_eval_harness_shapes_take_the_fast_path() -> None:
    """What agent-eval-harness writes (yaml.dump, default_flow_style=False): judges with
    long, quoted, multi-line rationales, errors, lists of tags."""
    summary = {
        "run_id": "2026-07-30-sonnet",
        "judges": {"tests_pass": {"pass_rate": 0.75}, "quality": {"mean": 4.0, "n": 3}},
        "per_case": {
            f"task-{i:04d}": {
                "tests_pass": {"value": i % 2 == 0, "rationale": "All 12 tests pass: see log.",
                               "judge_type": "boolean"},
                "quality": {"value": i % 5 + 1, "judge_type": "numeric",
                            "rationale": ("The answer covers the main points; it misses "
                                          "the edge case 'empty input'\nand says \"ok\". " * 3),
                            "score_range": [1, 5]},
                "broken": {"value": None, "errored": True, "error": "timeout: 30 s"},
                "tags": ["a", "b: c", "1.5", "yes"],
            } for i in range(30)
        },
    }
    for dumper in (yaml.Dumper, yaml.SafeDumper, yaml.CSafeDumper):
        text = yaml.dump(summary, Dumper=dumper, default_flow_style=False, sort_keys=False)
        assert check(text), text[:400]


@pytest.mark.parametrize("text", [
    "a: 1\na: 2\n", "1: a\n1.0: b\n", "true: a\n1: b\n", "a: &x 1\nb: *x\n",
    "a: !!str 1\n", "%YAML 1.1\n---\na: 1\n", "a: [1, 2]\n", "a: {b: 1}\n", "a: |\n  x\n", "a: |+\n  x\n\nb: 1\n",
    "a: &x\n  b\n", "a: !!str\n  b\n",
    "a: 2001-12-14\n", "<<: {a: 1}\n", "a: =\n", "- a\n- b\n", "plain\n", "", "  a: 1\n",
    "a: 1 # c\n", "a:\tb\n", "a: b\r\nc: d\r\n", "a: b  \n", "a:\n  - x\n   - y\n",
    "a:\n- - x\n", "? a\n: b\n", "a: 'x\n", 'a: "\\q"\n', "a: 1\n- b\n", "a: b: c\n",
])
def test_outside_the_accepted_shapes_falls_back(text: str) -> None:
    assert read_block(text) is FALLBACK
    check(text)


def test_fast_load_keeps_parse_yaml_errors_without_ryaml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlfast, "_ryaml", None)
    with pytest.raises(yamlio.YamlProblem, match=r"duplicate key 'a' \(lines 1 and 2\)"):
        yamlfast.fast_load("a: 1\na: 2\n")
    with pytest.raises(yamlio.YamlProblem, match="invalid YAML"):
        yamlfast.fast_load("a: 'x\n")
    text = "per_case:\n  c1:\n    j:\n      value: true\n      rationale: r\n"
    calls: list[str] = []
    real = yamlio.parse_yaml
    monkeypatch.setattr(yamlio, "parse_yaml", lambda t: calls.append(t) or real(t))
    assert same(yamlfast.fast_load(text), real(text)[0])
    assert calls == []  # the block reader answered; PyYAML was not needed


def test_deep_nesting_falls_back() -> None:
    depth = yamlio.MAX_DEPTH + 5
    text = "".join(f"{'  ' * i}k{i}:\n" for i in range(depth)) + "  " * depth + "v: 1\n"
    assert read_block(text) is FALLBACK
    with pytest.raises(yamlio.YamlProblem, match="nested deeper"):
        yamlfast.fast_load(text)


def test_resolved_scalar_cache_is_bounded() -> None:
    text = "".join(f"k{i}: {i}\n" for i in range(yamlblock._MAX_RESOLVED + 10))
    assert check(text)
    assert len(yamlblock._RESOLVED) <= yamlblock._MAX_RESOLVED



@pytest.mark.parametrize("escape", [
    *yaml.scanner.Scanner.ESCAPE_REPLACEMENTS, "x41", "u00e9", "U0001F600", "U0010FFFF",
    "x00", "x85", "u2028", "ufeff", "x0", "u12", "q", "xZZ", "uD800", "udfff", "U00110000",
])
def test_double_quoted_escapes_as_libyaml_reads_them(escape: str) -> None:
    for text in (f'a: "x\\{escape}y"\n', f'"\\{escape}": 1\n', f'a:\n- "\\{escape}"\n'):
        check(text)
    assert read_block('a: "\\uD800"\n') is FALLBACK  # libyaml refuses a surrogate


def test_refused_characters_scanner_matches_its_readable_definition() -> None:
    import re

    every = "".join(chr(c) for c in range(0x110000))
    spec = re.compile(yamlblock.REFUSED_SPEC)
    assert yamlblock._REFUSED.findall(every) == spec.findall(every)

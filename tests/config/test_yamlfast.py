"""The ryaml fast path gives exactly what parse_yaml gives (same data, same types, same
errors) on tricky documents and on seeded random ones, and falls back where it must."""

from __future__ import annotations

import contextlib
import importlib
import math
import random
import re
import sys
from typing import Any

import pytest

from eval_harness.config import yamlblock, yamlfast, yamlio
from eval_harness.config.yamlfast import fast_load

ryaml = pytest.importorskip("ryaml")

def _words(text: str) -> list[str]:
    return text.split(" ")


# every resolver class of YAML 1.1 vs 1.2: booleans, sexagesimal, octal, underscores,
# exponents, hex / binary / 0o, leading dots and signs, timestamps, '=', '<<', nulls,
# special floats, big integers, plus strings that merely look like numbers
TRICKY = [*_words(
    "1 -1 +1 0 -0 +0 00 010 007 08 0x1F -0x1F +0x1F 0X1F 0o17 -0o17 0b101 -0b101 0b 0x "
    "1_000 1__0 _1 1e3 1E3 1e+3 1e-3 1.0e3 1.0e+3 1.0E-3 1. .5 -.5 +.5 1.5 -1.5 +1.5 01.5 "
    "1.5_0 1_0.5 .inf -.inf +.inf .Inf .INF inf -inf Infinity nan NaN .nan .NaN .NAN -.nan "
    "+.nan 12345678901234567890 123456789012345678901234 -9223372036854775808 "
    "-9223372036854775809 18446744073709551615 18446744073709551616 1:30 -1:30 190:20:30 "
    "1:30.5 1.5:30 true True TRUE tRue false False FALSE yes Yes YES no No NO on On ON off "
    "Off OFF y n Y N null Null NULL nUll ~ = << 2001-12-14 2001-12-14t21:59:43.10-05:00 "
    "2002-1-1 21:59:43.10 0.1 3.14159265358979323846 1e400 -1e400 1e-400 0.0 -0.0 0e0 "
    "0x_1F 0b_1 0_7 1.2.3 1e 1e+ .e3 case-000001 x-1e3 r2 task_01 v1.2 3.5s 4/5 10% "
    "hello 'quoted' é 😀 a#b"
), "1" + "0" * 310 + ".5", "0." + "0" * 400 + "1", "a b", "2001-12-14 21:59:43.10 -5"]


def same(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down (1, 1.0 and True differ; -0.0 and 0.0
    differ; NaN equals NaN), dict order included."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(
            same(ka, kb) and same(va, vb)
            for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True))
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b))
    return bool(a == b)


def outcome(fn: Any, text: str) -> tuple[str, Any]:
    try:
        return "ok", fn(text)
    except yamlio.YamlProblem as exc:
        return "error", str(exc)


def assert_same_as_parse_yaml(text: str) -> None:
    want = outcome(lambda t: yamlio.parse_yaml(t)[0], text)
    got = outcome(fast_load, text)
    assert got[0] == want[0], (text, got, want)
    if got[0] == "error":
        assert got[1] == want[1], (text, got, want)
    else:
        assert same(got[1], want[1]), (text, got, want)


def _quote(s: str, style: int) -> str:
    if style == 1:
        return "'" + s.replace("'", "''") + "'"
    if style == 2:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return s


@pytest.mark.parametrize("scalar", TRICKY)
@pytest.mark.parametrize("style", [0, 1, 2])
def test_tricky_scalars_as_keys_values_and_items(scalar: str, style: int) -> None:
    s = _quote(scalar, style)
    for doc in (f"k: {s}\n", f"{s}: v\n", f"[{s}]\n", f"- {s}\n", f"{{a: {s}, {s}: 1}}\n",
                f"a:\n  b: {s}  # note\n", f"? {s}\n: x\n"):
        assert_same_as_parse_yaml(doc)


CORPUS = [
    "", "# only a comment\n", "---\n", "---\na: 1\n...\n", "a: 1\n---\nb: 2\n",
    "a: 1\na: 2\n", 'a: 1\n"a": 2\n', "true: a\nTrue: b\n", "null: a\n~: b\n",
    "1: a\n1.0: b\n", "1: a\n'1': b\n", "? .nan\n: a\n.nan: b\n", "? [1, 2]\n: v\n",
    "? {a: 1}\n: v\n", "a: {x: 1, x: 2}\n",
    "a: &x [1, 2]\nb: *x\n", "a: *x\n", "<<: {a: 1}\nb: 2\n",
    "base: &b {k: 1}\nuse: {<<: *b, z: 2}\n", "a: !!str 1\n", "a: !foo 1\n",
    "a: !!python/object:os.system x\n", "a: !!binary aGVsbG8=\n", "a: !!set {x, y}\n",
    "a: !!float 1\n", "a: !<tag:yaml.org,2002:int> '3'\n", "%YAML 1.1\n---\na: yes\n",
    "%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n",
    "[" * 129 + "]" * 129, "[" * 300 + "]" * 300,
    "a:\n" + "".join("  " * i + "b:\n" for i in range(1, 150)),
    "a: \x07\n", "a: '\x85'\n", 'a: "\\x85"\n', 'a: "\\ud83d"\n', 'a: "\\U0001F600"\n',
    "\ufeffa: 1\n", "a: 1\r\nb: 2\r\n", "a:\t1\n", "a: b\x85c: d\n", "a: \ufffe\n",
    "a: \u2028x\n", "a: |\n  x\n  y\n\n", "a: |-\n  x\n", "a: >+\n  x\n  y\n\n\n",
    "a: 'it''s'\n", 'a: "x\\\n  y"\n', "a: x\n  y\n", "{a: 1, b: [1, 2, {c: d}]}",
    'a: "\\N\\_\\L\\P"\n', "a: [x: 1]\n", "? a\n", "a:\n", "a: ''\n", "'': 1\n",
    "a: .inf\nb: -.inf\nc: .nan\n", "a: 'x\n\n  y'\n", "a: b &c\n", "a: Q & A\n",
    "a: great!\n", "a: wow !x\n", "a: R&D\n", "a: [1,2,3]\nb: {c: 1e3}\n",
    'a: {"b":1e3}\n', "a: 5 # 1e3\n", "a: 50%\n%x: 1\n", "a: -\n", ": v\n",
    "run_id: r1\nper_case:\n  case-000001:\n    q: {value: 3, rationale: 'n/a', judge_type: numeric}\n",
    "finished_at: 2026-07-30 12:00:00\n", "finished_at: '2026-07-30T12:00:00'\n",
    *(f'a: "x\\{e}y"\n' for e in ["0", "a", "b", "t", "\t", "n", "v", "f", "r", "e", " ", '"',
                                  "/", "\\", "N", "_", "L", "P", "x41", "u0041",
                                  "U00000041", "q", "x4", "uD800"]),
]


@pytest.mark.parametrize("doc", CORPUS)
def test_corpus(doc: str) -> None:
    assert_same_as_parse_yaml(doc)


# scalars both versions read alike (documents made of these take the fast path)
ORDINARY = [*_words(
    "alpha case-000001 r2 3 -7 0 +4 2.5 -0.25 true false True null ~ .inf -.inf .nan "
    "x-1e3 task_01 4/5 3.5s 10% é 😀 v1.2 ok"
), "hello world", "a: b", "", "it's", "x # y", "multi\\nline"]


def _random_doc(rnd: random.Random, depth: int = 0) -> str:
    """A random block/flow document of ordinary and tricky scalars, a random share of each
    (sometimes invalid YAML: then both must give the same error)."""
    tricky = rnd.choice([0.0, 0.0, 0.02, 0.1, 0.5])

    def scalar() -> str:
        text = rnd.choice(TRICKY if rnd.random() < tricky else ORDINARY)
        plain_ok = not any(c in text for c in ":#,[]{}'\"") or rnd.random() < 0.1
        return _quote(text, rnd.choice([0, 0, 0, 1, 2] if plain_ok else [1, 2]))

    def flow(d: int) -> str:
        if d > 2 or rnd.random() < 0.5:
            return scalar()
        if rnd.random() < 0.5:
            return "[" + ", ".join(flow(d + 1) for _ in range(rnd.randint(0, 3))) + "]"
        return "{" + ", ".join(f"{scalar()}: {flow(d + 1)}" for _ in range(rnd.randint(0, 3))) + "}"

    def block(indent: int, d: int) -> str:
        pad = "  " * indent
        lines = []
        seq = rnd.random() < 0.3
        for _ in range(rnd.randint(1, 4)):
            head = f"{pad}- " if seq else f"{pad}{scalar()}:"
            r = rnd.random()
            if d < 3 and r < 0.3:
                lines.append(head.rstrip() if not seq else f"{pad}-")
                lines.append(block(indent + 1, d + 1))
            else:
                lines.append(f"{head} {flow(d)}" if not seq else f"{head}{flow(d)}")
        return "\n".join(lines)

    return block(0, depth) + "\n"


def _takes_fast_path(doc: str) -> bool:
    try:
        return not yamlfast._risky_text(doc) and yamlfast._agrees(ryaml.loads(doc))
    except Exception:
        return False


def test_seeded_random_documents_agree() -> None:
    rnd = random.Random(20261201)
    fast = 0
    for _ in range(2000):
        doc = _random_doc(rnd)
        assert_same_as_parse_yaml(doc)
        fast += _takes_fast_path(doc)
    assert fast > 200  # the fast path is really exercised


def test_number_scanner_matches_its_readable_definition() -> None:
    spec = re.compile(yamlfast.RISKY_NUMBER_SPEC)
    rnd = random.Random(7)
    alphabet = "0123456789._-+eExXoObB_: \n,]}#a1"
    for _ in range(100_000):
        s = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 9)))
        assert (spec.search(s) is None) == (yamlfast._RISKY_NUMBER.search(s) is None), s


class _Spy:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str) -> Any:
        self.calls += 1
        return _parse(text)


_parse = yamlio.parse_yaml


class _BlockSpy:
    """Stands in for yamlblock.read_block: counts and declines (PyYAML's path follows)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str) -> Any:
        self.calls += 1
        return yamlblock.FALLBACK


@pytest.mark.parametrize(("doc", "fast"), [
    ("run_id: r1\nper_case:\n  case-000001:\n    q: {value: 3, rationale: 'ok, 4/5', "
     "judge_type: numeric}\n    t: {value: true, judge_type: boolean}\n", True),
    ("a: -1.5\nb: [0, 10, 0.25]\nc: null\nd: ~\ne: .inf\n", True),
    ("a: yes\n", False), ("a: 'yes'\n", False), ("a: 1e3\n", False), ("a: 0o17\n", False),
    ("a: 010\n", False), ("a: 1_000\n", False), ("a: 1:30\n", False),
    ("a: 2001-12-14\n", False), ("<<: {a: 1}\n", False), ("a: &x 1\nb: *x\n", False),
    ("a: !!str 1\n", False), ("a: 1\na: 2\n", False), ("a: =\n", False),
])
def test_fast_path_is_taken_only_when_safe(doc: str, fast: bool,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    spy = _Spy()
    monkeypatch.setattr(yamlio, "parse_yaml", spy)
    # the pure-Python reader is the next path: count it too (and let it decline)
    block = _BlockSpy()
    monkeypatch.setattr(yamlblock, "read_block", block)
    with contextlib.suppress(yamlio.YamlProblem):
        fast_load(doc)
    assert (spy.calls == 0 and block.calls == 0) is fast


def test_without_ryaml_every_read_takes_the_pyyaml_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ryaml", None)  # `import ryaml` now raises ImportError
    try:
        module = importlib.reload(yamlfast)
        assert module._ryaml is None
        spy = _Spy()
        monkeypatch.setattr(yamlio, "parse_yaml", spy)
        monkeypatch.setattr(yamlblock, "read_block", _BlockSpy())
        assert module.fast_load("a: 1\nb: [x, 2.5]\n") == {"a": 1, "b": ["x", 2.5]}
        assert spy.calls == 1
    finally:
        monkeypatch.undo()
        assert importlib.reload(yamlfast)._ryaml is not None


# --- the security limits hold on the fast path (tests/security/test_yaml_limits.py) ----
BOMB = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n"
    for i in range(8))


def test_alias_bomb_recursion_and_depth_are_refused_with_our_messages() -> None:
    with pytest.raises(yamlio.YamlProblem, match="alias bomb"):
        fast_load(BOMB + "per_case: {c0: {ok: {value: *i}}}\n")
    with pytest.raises(yamlio.YamlProblem, match="recursive"):
        fast_load("a: &x [1, *x]\n")
    with pytest.raises(yamlio.YamlProblem, match="nested deeper than 200"):
        fast_load("[" * 1000 + "]" * 1000)
    with pytest.raises(yamlio.YamlProblem, match="nested deeper than 200"):
        fast_load("a:\n" + "".join("  " * i + "b:\n" for i in range(1, 260)))


def test_duplicate_keys_name_both_lines() -> None:
    with pytest.raises(yamlio.YamlProblem, match=r"duplicate key 'a' \(lines 1 and 3\)"):
        fast_load("a: 1\nb: 2\na: 3\n")
    with pytest.raises(yamlio.YamlProblem, match="duplicate key 'q'"):
        fast_load("- {id: c1, input: {q: x, q: y}}\n")


def test_size_is_bounded_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlio, "MAX_YAML_BYTES", 1000)
    spy = _Spy()
    monkeypatch.setattr(yamlio, "parse_yaml", spy)
    with pytest.raises(yamlio.YamlProblem, match="larger than"):
        fast_load("a: b\n" * 300)
    assert spy.calls == 0


def test_merge_keys_and_anchors_still_work() -> None:
    data = fast_load("base: &b {k: 1}\nuse: {<<: *b, z: 2}\nlist: [*b, *b]\n")
    assert data["use"] == {"k": 1, "z": 2} and data["list"] == [{"k": 1}, {"k": 1}]

"""Dataset lint (``--lint``, and part of ``--dry-run``).

Uses the expected-answer convention of :mod:`eval_harness.judges.expected`
(``expected: {answer: str, entities: [str], absent: bool}`` or a plain string) and reports:

1. an expected entity that is not a literal (case-sensitive) substring of its own reference
   answer — entity_coverage would then demand words the reference itself lacks;
2. entities without a reference answer to check them against;
3. an absence item (``absent: true``) that carries entities (nothing should be found);
4. duplicate inputs (same input after JSON canonicalisation, strings whitespace-collapsed
   and case-folded);
5. a tag cross-tab: with a ``tier`` tag of two or more levels, any value of another tag
   (e.g. ``domain: geo``) that appears in only one tier — tier and that tag are confounded,
   so a tier effect cannot be told from a domain effect.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from eval_harness.judges.expected import expected_entities, is_absence_item, reference_answer


def _canonical(value: Any) -> Any:
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def _tags(case: Any) -> dict[str, Any]:
    tags = getattr(case, "tags", None)
    return dict(tags) if isinstance(tags, dict) else {}


def lint_entities(case: Any) -> list[str]:
    """Findings 1-3 for one case."""
    out: list[str] = []
    entities = expected_entities(case.expected)
    answer = reference_answer(case.expected)
    if is_absence_item(case.expected) and entities:
        out.append(f"case {case.case_id}: absence item (absent: true) carries entities {entities}")
    if entities and answer is None and not is_absence_item(case.expected):
        out.append(f"case {case.case_id}: entities given but no reference answer "
                   "(expected.answer) to check them against")
    elif entities and answer is not None and not is_absence_item(case.expected):
        for entity in entities:
            if entity not in answer:
                out.append(f"case {case.case_id}: entity {entity!r} is not a literal substring "
                           "of its reference answer")
    return out


def lint_duplicates(cases: Sequence[Any]) -> list[str]:
    """Finding 4."""
    groups: dict[str, list[str]] = defaultdict(list)
    for case in cases:
        key = json.dumps(_canonical(case.input), sort_keys=True, default=str)
        groups[key].append(case.case_id)
    return [f"duplicate inputs: cases {', '.join(ids)} have the same input"
            for ids in groups.values() if len(ids) > 1]


def lint_crosstab(cases: Sequence[Any], tier_key: str = "tier") -> list[str]:
    """Finding 5."""
    tiers = {str(_tags(c)[tier_key]) for c in cases if tier_key in _tags(c)}
    if len(tiers) < 2:
        return []
    seen: dict[tuple[str, str], set[str]] = defaultdict(set)
    for case in cases:
        tags = _tags(case)
        if tier_key not in tags:
            continue
        for key, value in tags.items():
            if key != tier_key and isinstance(value, (str, int, float, bool)):
                seen[(key, str(value))].add(str(tags[tier_key]))
    by_key: dict[str, int] = defaultdict(int)
    for key, _ in seen:
        by_key[key] += 1
    out = []
    for (key, value), where in sorted(seen.items()):
        if len(where) == 1 and by_key[key] > 1:
            out.append(f"tags: {key}={value} appears only in {tier_key}={next(iter(where))} "
                       f"({tier_key} and {key} are confounded for it)")
    return out


def lint_dataset(cases: Sequence[Any], *, tier_key: str = "tier") -> list[str]:
    """Every finding, one line each (empty when clean)."""
    findings: list[str] = []
    for case in cases:
        findings.extend(lint_entities(case))
    findings.extend(lint_duplicates(cases))
    findings.extend(lint_crosstab(cases, tier_key))
    return findings

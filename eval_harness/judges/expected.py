"""The expected-answer convention every built-in and the dataset lint share.

A case's ``expected`` is either a plain string (the reference answer) or a mapping::

    expected:
      answer: "Marie Curie won the Nobel Prize in Physics in 1903."   # reference answer
      entities: ["Marie Curie", "1903"]   # must each appear literally in `answer`
      absent: false                       # true: the right answer is "not in the sources";
                                          #       such items carry no entities
      tool_calls: [...]                   # optional, free for check judges

Anything else in the mapping is passed through untouched to ``check`` judges.
"""

from __future__ import annotations

import unicodedata
from typing import Any


def reference_answer(expected: Any) -> str | None:
    """``expected`` itself when a string, else ``expected.answer`` (None when absent)."""
    if isinstance(expected, str):
        return expected
    if isinstance(expected, dict):
        answer = expected.get("answer")
        return answer if isinstance(answer, str) else None
    return None


def expected_entities(expected: Any) -> list[str] | None:
    """``expected.entities`` as strings (None when not given)."""
    if isinstance(expected, dict) and isinstance(expected.get("entities"), list):
        return [str(e) for e in expected["entities"]]
    return None


def is_absence_item(expected: Any) -> bool:
    """True when ``expected.absent`` is true."""
    return isinstance(expected, dict) and expected.get("absent") is True


def fold(text: str, *, case: bool = True, diacritics: bool = True) -> str:
    """Case-fold (``str.casefold``) and strip combining marks after NFKD decomposition."""
    if diacritics:
        decomposed = unicodedata.normalize("NFKD", text)
        text = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return text.casefold() if case else text

"""svg.prefix_ids: one pass renames every id and reference exactly as the per-id
replace loop did (it grew with ids × size)."""

from __future__ import annotations

import io
import re

import numpy as np

from eval_harness.reports.html.svg import _ID, new_figure, prefix_ids, style


def _loop(text: str, prefix: str) -> str:
    """The replace loop prefix_ids replaced (reference)."""
    for old in sorted(set(_ID.findall(text)), key=len, reverse=True):
        new = f"{prefix}-{old}"
        text = text.replace(f'id="{old}"', f'id="{new}"').replace(f"#{old})", f"#{new})")
        text = text.replace(f'href="#{old}"', f'href="#{new}"')
    return text


def _raw_svg() -> str:
    with style():
        fig = new_figure(8, 6)
        axes = fig.subplots(2, 3)
        rng = np.random.default_rng(1)
        for i, ax in enumerate(axes.flat):
            ax.errorbar(range(4), rng.random(4), yerr=0.1, fmt="-o", capsize=2, label=f"l{i}")
            ax.legend(title="#p1) and id=\"x\"")  # reference-like text stays text
        axes[0][0].imshow(rng.random((5, 5)))
        buf = io.StringIO()
        fig.savefig(buf, format="svg")
    return buf.getvalue()


def test_prefix_ids_equals_the_replace_loop() -> None:
    raw = _raw_svg()
    ids = set(_ID.findall(raw))
    assert len(ids) > 20 and any(f"url(#{i})" in raw for i in ids)  # clip paths referenced
    assert any(f'href="#{i}"' in raw for i in ids)  # markers used by reference
    out = prefix_ids(raw, "inter")
    assert out == _loop(raw, "inter")
    assert not (set(_ID.findall(out)) & ids)


def test_prefix_ids_handles_unusual_ids_and_lookalikes() -> None:
    text = ('<g id="a"><use href="#a"/><path clip-path="url(#a)" fill="#a"/></g>'
            '<g id="a1"/><text>#a) #a1) #zz) id="q"</text><g id="we ird"/><use href="#we ird"/>')
    assert prefix_ids(text, "p") == _loop(text, "p")
    plain = re.sub(r'<g id="we ird"/><use href="#we ird"/>', "", text)
    assert prefix_ids(plain, "p") == _loop(plain, "p")

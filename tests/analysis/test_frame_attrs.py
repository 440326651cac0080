"""Frame attrs the loader writes are shared, not deep-copied, by pandas operations."""

from __future__ import annotations

import copy
from pathlib import Path

from eval_harness.analysis.frame_attrs import SharedDict, SharedList
from eval_harness.analysis.loading.tidy_frame import load_runs
from tests.analysis.golden_data import write_tagged


def test_deepcopy_shares_the_containers() -> None:
    d, items = SharedDict(a={"x": 1}), SharedList([{"y": 2}])
    attrs = {"d": d, "l": items, "small": [1]}
    copied = copy.deepcopy(attrs)
    assert copied["d"] is d and copied["l"] is items
    assert copied["small"] is not attrs["small"]  # everything else is still copied


def test_loader_attrs_survive_filtering_and_grouping_without_copies(tmp_path: Path) -> None:
    frame = load_runs(write_tagged(tmp_path))
    tags = frame.attrs["case_tags"]
    assert isinstance(tags, SharedDict) and len(tags) == 60
    assert isinstance(frame.attrs["issues"], SharedList)
    sub = frame[frame["judge"] == "composite"]
    assert sub.attrs["case_tags"] is tags  # shared: no per-operation deep copy
    for _, group in sub.groupby("condition_id", observed=True):
        assert group.attrs["case_tags"] is tags
        break

"""The plan: every cell (condition × case × replication), sharded, filtered, ordered.

Sharding is condition-balanced and case-aligned: the *units* (replication, case) are
numbered ``u = (replication − 1)·n_cases + case_index`` and unit ``u`` goes to shard
``u mod N + 1`` with all its conditions, so every shard holds the same share of every
condition and complete case blocks (numbering by replication first means raising
``replications`` never moves existing units). With fewer units than shards, single cells
are dealt round-robin instead.

Order: ``random`` (default) deals cells in rounds — each round takes one not-yet-dealt cell
of every condition, conditions in a fresh seeded order — so all conditions progress at the
same rate and drift of a provider over time is spread evenly over factor levels instead of
confounding one. ``grid`` is condition, replication, case.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from eval_harness.config.dataset import Case
from eval_harness.matrix.builder import Condition
from eval_harness.runner.shard import Shard
from eval_harness.store.index import ResumeIndex, judge_changes


@dataclass(frozen=True)
class Cell:
    """One (condition, case, replication)."""

    condition: Condition
    case: Case
    replication: int

    @property
    def key(self) -> tuple[str, int, str]:
        """Resume key without the digest."""
        return (self.condition.condition_id, self.replication, self.case.case_id)


@dataclass
class Plan:
    """What will run and why the rest will not."""

    todo: list[Cell]
    total: int  # cells in this shard
    skipped_complete: int = 0
    skipped_errored: int = 0
    stale: int = 0  # in todo because the config digest or the case's content changed
    reasons: dict[str, int] = field(default_factory=dict)
    changed_cases: list[str] = field(default_factory=list)  # input/expected edited: rerun
    #: complete cells whose record was scored by other judges than the config's: rescored
    #: (no agent call), with the judge names by change (edited / added / removed)
    rejudge: list[tuple[Cell, Path]] = field(default_factory=list)  # (cell, its case dir)
    judge_changes: dict[str, set[str]] = field(default_factory=dict)


def all_cells(conditions: Sequence[Condition], cases: Sequence[Case], replications: int,
              shard: Shard | None = None) -> list[Cell]:
    """Every cell of this shard, in grid order."""
    n_units = replications * len(cases)
    by_unit = shard is not None and n_units >= shard.n
    cells: list[Cell] = []
    for ci, cond in enumerate(conditions):
        for rep in range(1, replications + 1):
            for i, case in enumerate(cases):
                if shard is not None:
                    unit = (rep - 1) * len(cases) + i
                    number = unit if by_unit else unit * len(conditions) + ci
                    if number % shard.n != shard.k - 1:
                        continue
                cells.append(Cell(cond, case, rep))
    return cells


def interleave(cells: Sequence[Cell], seed: int) -> list[Cell]:
    """Seeded round-robin over conditions (see the module doc)."""
    rng = random.Random(seed)
    groups: dict[str, list[Cell]] = {}
    for cell in cells:
        groups.setdefault(cell.condition.condition_id, []).append(cell)
    for group in groups.values():
        rng.shuffle(group)
    keys = sorted(groups)
    out: list[Cell] = []
    while keys:
        rng.shuffle(keys)
        for key in keys:
            out.append(groups[key].pop())
        keys = [k for k in keys if groups[k]]
    return out


def make_plan(
    conditions: Sequence[Condition], cases: Sequence[Case], replications: int,
    digests: dict[str, str], index: ResumeIndex, *, shard: Shard | None = None,
    order: str = "random", seed: int = 0, force: bool = False, retry_errors: bool = False,
    judge_digests: dict[str, dict[str, str]] | None = None,
) -> Plan:
    """Cells to run: complete current cells are skipped unless ``force``; errored current
    cells are rerun only with ``retry_errors`` (or ``force``); stale cells (config digest
    or case content changed) always rerun. Skipped complete cells scored by other judges
    than ``judge_digests`` ({condition: {judge: digest}}) are listed in ``rejudge``."""
    cells = all_cells(conditions, cases, replications, shard)
    plan = Plan(todo=[], total=len(cells))
    changed: dict[str, None] = {}
    for cell in cells:
        entry = index.get(*cell.key)
        if entry is None or force:
            plan.todo.append(cell)
        elif entry.config_digest != digests[cell.condition.condition_id]:
            plan.stale += 1
            plan.todo.append(cell)
        elif entry.case_hash and entry.case_hash != cell.case.case_hash:
            plan.stale += 1
            plan.todo.append(cell)
            changed[cell.case.case_id] = None
        elif entry.status == "ok":
            plan.skipped_complete += 1
            diff = judge_changes(entry.judges, (judge_digests or {}).get(
                cell.condition.condition_id, {})) if judge_digests is not None else {}
            if diff:
                plan.rejudge.append((cell, entry.run_dir / "cases" / cell.case.case_id))
                for kind, names in diff.items():
                    plan.judge_changes.setdefault(kind, set()).update(names)
        elif retry_errors:
            plan.todo.append(cell)
        else:
            plan.skipped_errored += 1
    plan.changed_cases = list(changed)
    if order == "random":
        plan.todo = interleave(plan.todo, seed)
    return plan

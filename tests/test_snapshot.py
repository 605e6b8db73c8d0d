"""Figures snapshot: every computed figure on the site against the checked-in snapshot.

A change fails with a diff naming page, figure, old -> new value. Accept an intended change with
`python3 -m nox -s snapshot` (a strict build, then `pytest tests/test_snapshot.py --snapshot-update`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from .conftest import Build


def flatten(numbers: dict[str, Any]) -> dict[str, str]:
    """`page :: figure` -> `value unit` (six significant digits: display rounding cannot hide a change)."""
    return {
        f"{page} :: {fig['name']}": f"{fig['value']:.6g} {fig['unit']}".strip()
        for page, entry in numbers.items()
        for fig in entry["figures"]
    }


@pytest.fixture
def snapshot_json(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.with_defaults(extension_class=JSONSnapshotExtension)


SNAPSHOT = Path(__file__).parent / "__snapshots__" / "test_snapshot" / "test_figures_match_snapshot.json"


def readable_diff(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """Every difference, one line each: `page :: figure: old -> new` (syrupy's own diff stops early)."""
    lines = [f"{k}: {old[k]} -> {new[k]}" for k in sorted(old.keys() & new.keys()) if old[k] != new[k]]
    lines += [f"{k}: (new) {new[k]}" for k in sorted(new.keys() - old.keys())]
    lines += [f"{k}: {old[k]} -> (gone)" for k in sorted(old.keys() - new.keys())]
    return lines


def test_figures_match_snapshot(built: Build, snapshot_json: SnapshotAssertion) -> None:
    numbers = json.loads((built.site / "numbers.json").read_text(encoding="utf-8"))
    current = flatten(numbers)
    if snapshot_json != current:  # syrupy records the result; `--snapshot-update` rewrites the file
        old = json.loads(SNAPSHOT.read_text(encoding="utf-8")) if SNAPSHOT.is_file() else {}
        changes = readable_diff(old, current)
        pytest.fail(
            f"{len(changes)} computed figure(s) changed. If intended, accept with `python3 -m nox -s snapshot`.\n"
            + "\n".join(changes),
            pytrace=False,
        )

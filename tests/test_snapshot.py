"""Figures snapshot: every computed figure on the site against the checked-in snapshot.

A change fails with a diff naming page, figure, old -> new value. Accept an intended change with
`python3 -m nox -s snapshot` (a strict build, then `pytest tests/test_snapshot.py --snapshot-update`).
"""

from __future__ import annotations

import json
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


def test_figures_match_snapshot(built: Build, snapshot_json: SnapshotAssertion) -> None:
    numbers = json.loads((built.site / "numbers.json").read_text(encoding="utf-8"))
    assert flatten(numbers) == snapshot_json

"""Figures snapshot: every computed figure on the site against the checked-in snapshot.

A change fails with a diff naming page, figure, old -> new value. Accept an intended change with
`python3 -m nox -s snapshot` (a strict build, then `pytest tests/site/test_snapshot.py --snapshot-update`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.types import SerializedData

from ..conftest import Build


def flatten(numbers: dict[str, Any]) -> dict[str, str]:
    """`page :: figure` -> `value unit` (six significant digits: display rounding cannot hide a change)."""
    return {
        f"{page} :: {fig['name']}": f"{fig['value']:.6g} {fig['unit']}".strip()
        for page, entry in numbers.items()
        for fig in entry["figures"]
    }


def readable_diff(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """Every difference, one line each: `page :: figure: old -> new` (syrupy's own diff stops early)."""
    lines = [f"{k}: {old[k]} -> {new[k]}" for k in sorted(old.keys() & new.keys()) if old[k] != new[k]]
    lines += [f"{k}: (new) {new[k]}" for k in sorted(new.keys() - old.keys())]
    lines += [f"{k}: {old[k]} -> (gone)" for k in sorted(old.keys() - new.keys())]
    return lines


class FigureSnapshot(JSONSnapshotExtension):
    """syrupy's JSON snapshot, with its failure report as one line per changed figure (`diff_lines`, the
    extension's hook for the report): `page :: figure: old -> new`, every one of them."""

    def diff_lines(self, serialized_data: SerializedData, snapshot_data: SerializedData) -> Iterator[str]:
        old = json.loads(str(snapshot_data)) if snapshot_data else {}
        changes = readable_diff(old, json.loads(str(serialized_data)))
        yield f"{len(changes)} computed figure(s) changed. If intended, accept with `python3 -m nox -s snapshot`:"
        yield from changes


@pytest.fixture
def snapshot_figures(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.with_defaults(extension_class=FigureSnapshot)


def test_figures_match_snapshot(built: Build, snapshot_figures: SnapshotAssertion) -> None:
    numbers = json.loads((built.site / "numbers.json").read_text(encoding="utf-8"))
    assert flatten(numbers) == snapshot_figures  # `--snapshot-update` rewrites the stored snapshot


def test_a_changed_figure_is_reported_as_page_figure_old_new(built: Build, tmp_path) -> None:
    """The report a contributor reads when data moves a figure: one line per figure, `page :: figure: old -> new`
    (the snapshot test run on a copy of the built figures with one changed, as a data edit would)."""
    import os
    import subprocess
    import sys

    from ..conftest import ROOT

    numbers = json.loads((built.site / "numbers.json").read_text(encoding="utf-8"))
    hbm = next(f for f in numbers["interconnect.md"]["figures"] if f["name"] == "hbm")
    hbm["value"] = 3.0
    (tmp_path / "numbers.json").write_text(json.dumps(numbers), encoding="utf-8")
    (tmp_path / "index.html").write_text("")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
         str(ROOT / "tests/site/test_snapshot.py::test_figures_match_snapshot")],
        cwd=ROOT, env={**os.environ, "SERVING_SITE_DIR": str(tmp_path)}, capture_output=True, text=True, timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "1 computed figure(s) changed. If intended, accept with `python3 -m nox -s snapshot`:" in out
    assert "interconnect.md :: hbm: 3.35 TB/s -> 3 TB/s" in out

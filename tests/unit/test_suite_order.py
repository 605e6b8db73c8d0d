"""The suite's order for two xdist workers (tests/conftest.py `pytest_collection_modifyitems`): each worker's
contiguous share starts with its part of the browser tests, a group that shares a module-scoped page goes whole into
one share, and the builds of modified copies lead the last share."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from ..conftest import pytest_collection_modifyitems


class _Item:
    """What the hook reads of a test: its markers."""

    def __init__(self, name: str, *marks: Any) -> None:
        self.name = name
        self.marks = {m.name: m for m in marks}

    def get_closest_marker(self, name: str) -> Any:
        mark = self.marks.get(name)
        return None if mark is None else mark.mark

    def __repr__(self) -> str:
        return self.name


def _order(items: list[_Item]) -> list[str]:
    config = SimpleNamespace(option=SimpleNamespace(numprocesses=2))
    pytest_collection_modifyitems(config, items)  # type: ignore[arg-type]
    return [i.name for i in items]


def test_a_group_goes_whole_into_one_share_and_the_sweeps_are_split() -> None:
    browser, build = pytest.mark.browser, pytest.mark.build
    calc = pytest.mark.xdist_group("calculator")
    items = ([_Item(f"short{k}") for k in range(20)] + [_Item(f"sweep{k}", browser) for k in range(5)]
             + [_Item(f"calc{k}", browser, calc) for k in range(3)] + [_Item("build0", build)])
    got = _order(items)
    first, second = got[:14], got[14:]  # the workers' shares: 29 tests, the first 14 to the first worker
    # the sweeps every other one (three to the first share, two to the second), the group whole in the share with
    # fewer browser tests (the second), after its sweeps, the builds after it in the last share
    assert first[:4] == ["sweep0", "sweep2", "sweep4", "short0"]
    assert second[:6] == ["sweep1", "sweep3", "calc0", "calc1", "calc2", "build0"]
    assert sorted(got) == sorted(i.name for i in items)


def test_without_groups_the_browser_tests_alternate() -> None:
    items = [_Item(f"b{k}", pytest.mark.browser) for k in range(4)] + [_Item(f"s{k}") for k in range(4)]
    got = _order(items)
    assert got[:2] == ["b0", "b2"] and got[4:6] == ["b1", "b3"]

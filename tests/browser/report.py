"""The page-weight report: bytes each page costs a reader with an empty cache.

The browser tests write it to site-report/page-weight.md; `pytest_terminal_summary` (imported by
tests/conftest.py, which pytest loads in every process, xdist's controller included) prints it at
the end of the session that wrote it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "site-report" / "page-weight.md"
_STARTED = pytest.StashKey[float]()
KIND_ORDER = ("document", "stylesheet", "script", "fetch", "xhr", "image", "font", "other")


@dataclass
class PageWeight:
    """One cold page load: response body bytes by resource kind, and the request count."""

    page: str
    requests: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str, size: int) -> None:
        kind = kind if kind in KIND_ORDER else "other"
        self.requests += 1
        self.by_kind[kind] = self.by_kind.get(kind, 0) + max(size, 0)

    @property
    def total(self) -> int:
        return sum(self.by_kind.values())


def kib(n: int) -> str:
    return f"{n / 1024:,.1f}"


def render(weights: list[PageWeight]) -> str:
    """A Markdown table of every page's weight, heaviest kinds as columns, in KiB (1 KiB = 1024 B)."""
    kinds = [k for k in KIND_ORDER if any(w.by_kind.get(k) for w in weights)]
    head = ["Page", "Requests", *(f"{k} KiB" for k in kinds), "Total KiB", "Total bytes"]
    lines = [
        "# Page weight",
        "",
        "Response body bytes per page, loaded once with an empty cache by headless Chromium from the",
        "site served on 127.0.0.1 (no compression: http.server sends files as they are), up to network idle.",
        "`xhr` is the search index, which the search worker loads on every page.",
        "",
        "| " + " | ".join(head) + " |",
        "| " + " | ".join(["---"] + ["---:"] * (len(head) - 1)) + " |",
    ]
    for w in sorted(weights, key=lambda w: w.page):
        sizes = [kib(w.by_kind.get(k, 0)) for k in kinds]
        cells = [f"/{w.page}", str(w.requests), *sizes, kib(w.total), f"{w.total:,}"]
        lines.append("| " + " | ".join(cells) + " |")
    if weights:
        heaviest = max(weights, key=lambda w: w.total)
        lines += ["", f"Heaviest: /{heaviest.page}, {kib(heaviest.total)} KiB. "
                      f"Mean over {len(weights)} pages: {kib(sum(w.total for w in weights) // len(weights))} KiB."]
    return "\n".join(lines) + "\n"


def write(weights: list[PageWeight], path: Path = REPORT) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(weights), encoding="utf-8")
    return path


def pytest_sessionstart(session: Any) -> None:
    session.config.stash[_STARTED] = time.time()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    """Print the page-weight report if this session wrote it."""
    started = config.stash.get(_STARTED, None)
    if started is None or not REPORT.is_file() or REPORT.stat().st_mtime < started:
        return
    terminalreporter.write_sep("=", f"page weight ({REPORT.relative_to(ROOT)})")
    terminalreporter.write(REPORT.read_text(encoding="utf-8"))

"""The calibration's rows as the pages read them: each role's evaluated once per catalog.

`snippets.calibration.evaluate` predicts every measurement of a role; the reference predictions page and the cost
page print a dozen tables from the same rows. It reads the catalog only by walking its measurements and through
the engine's records (kept with the catalog), so on a page's recording view it notes nothing
(`snippets.pages.sources`): the rows are kept with the loaded catalog (`Catalog.derived`) and go with it.
"""

from __future__ import annotations

from snippets import calibration
from snippets.calibration import Row, Skipped
from snippets.data import Catalog


def evaluate(cat: Catalog, role: str | None = None) -> tuple[list[Row], list[Skipped]]:
    """`calibration.evaluate(cat, role)`, computed once per catalog (new lists each call)."""
    derived = cat.loaded.derived
    key = ("calibration.evaluate", role)
    found = derived.get(key)
    if found is None:
        found = derived[key] = calibration.evaluate(cat.loaded, role)
    done, skipped = found
    return list(done), list(skipped)


def rows(cat: Catalog, role: str | None = None) -> list[Row]:
    """`calibration.rows(cat, role)`, computed once per catalog."""
    return evaluate(cat, role)[0]

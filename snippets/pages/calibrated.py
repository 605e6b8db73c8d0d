"""The calibration as the pages read it: each role's rows evaluated once per catalog, the fit kept across builds.

`snippets.calibration.evaluate` predicts every measurement of a role; the reference predictions page and the cost
page print a dozen tables from the same rows. It reads the catalog only by walking its measurements and through
the engine's records (kept with the catalog), so on a page's recording view it notes nothing
(`snippets.pages.sources`): the rows are kept with the loaded catalog (`Catalog.derived`) and go with it.

`snippets.calibration.fit` (a golden-section search over a few hundred predictions) is a function of the engine's
inputs, the measurements and the time model's entry in data/policies.yaml (its stated ranges), all of which key the
build's `EngineResults` (`snippets.data.results`): `fit` keeps it there, and notes on a recording view the two
entries the calibration's own `fit` looks up by id (the scenario and its time model).
"""

from __future__ import annotations

from typing import Any

from snippets import calibration
from snippets.calibration import Fit, Row, Skipped
from snippets.data import Catalog
from snippets.data.loader import derive
from snippets.data.results import results_of


def evaluate(cat: Catalog, role: str | None = None) -> tuple[list[Row], list[Skipped]]:
    """`calibration.evaluate(cat, role)`, computed once per catalog (new lists each call)."""
    done, skipped = derive(cat.loaded, ("calibration.evaluate", role), lambda: calibration.evaluate(cat.loaded, role))
    return list(done), list(skipped)


def rows(cat: Catalog, role: str | None = None) -> list[Row]:
    """`calibration.rows(cat, role)`, computed once per catalog."""
    return evaluate(cat, role)[0]


def with_prompt_step_host(cat: Catalog, role: str, seconds: float) -> list[Row]:
    """`calibration.rows_with_prompt_step_host(cat, role, seconds)` (the predictions page's what-if), computed once
    per catalog and figure."""
    return list(derive(cat.loaded, ("calibration.rows_with_prompt_step_host", role, seconds),
                       lambda: calibration.rows_with_prompt_step_host(cat.loaded, role, seconds)))


def at_time_model_issue(cat: Catalog, role: str) -> list[Row]:
    """`calibration.rows_at_time_model_issue(cat, role)` (the predictions page's what-if), computed once per catalog."""
    return list(derive(cat.loaded, ("calibration.rows_at_time_model_issue", role),
                       lambda: calibration.rows_at_time_model_issue(cat.loaded, role)))


def fit(cat: Catalog) -> Fit:
    """`calibration.fit(cat)`, kept with the engine's inputs (`snippets.data.results`)."""
    cat.policies[cat.scenarios[calibration.SCENARIO].time_model]  # what `calibration.fit` notes on a recording view
    found = results_of(cat).get(("calibration.fit",), lambda: _as_json(calibration.fit(cat.loaded)))
    return Fit(found["step_overhead_s"], dict(found["vendor_kernel_fraction"]), found["loss"], found["rows"])


def _as_json(f: Fit) -> dict[str, Any]:
    return {"step_overhead_s": f.step_overhead_s, "vendor_kernel_fraction": dict(f.vendor_kernel_fraction),
            "loss": f.loss, "rows": f.rows}

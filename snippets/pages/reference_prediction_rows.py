"""Page model of "Predictions, run by run" (docs/reference/prediction-rows.md).

Every measurement the engine predicts, calibration rows apart from test rows, each beside the engine's prediction and
its error (`reference_predictions.rows_table`, from the rows `snippets.pages.calibrated` evaluates once per catalog).
The summary, the errors by regime, the bands and the site's definitions are on "How well the model predicts"
(`reference_predictions`); this page holds the rows alone, so that the search index can leave them out: some four
thousand figures, which Material's search parsed again at every rebuild of `mkdocs serve` (issue 25).
"""

from __future__ import annotations

from functools import partial

from snippets.data import Catalog
from snippets.pages.base import Page
from snippets.pages.calibrated import evaluate
from snippets.pages.reference_predictions import rows_table
from snippets.render import fmt


class ReferencePredictionRowsPage(Page):
    shows = (partial(rows_table, role="calibration"), partial(rows_table, role="test"))
    """The functions the page's blocks print, with the blocks' arguments."""

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cal, cal_skip = evaluate(self.cat, "calibration")
        test, test_skip = evaluate(self.cat, "test")
        self.cal_predicted = fmt.count(len(cal), "rows")
        self.test_predicted = fmt.count(len(test), "rows")
        self.not_predicted = fmt.count(len(cal_skip) + len(test_skip), "rows")


namespace = ReferencePredictionRowsPage.namespace_of
sources = ReferencePredictionRowsPage.sources_of

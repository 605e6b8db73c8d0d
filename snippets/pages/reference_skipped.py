"""The rows the engine does not predict today, on "How well the model predicts" (docs/reference/predictions.md):
the table, with the reason for each row, and the figures that say how many are left out for which kind of reason
(`snippets.calibration.SKIP_KINDS`) and how many runs of each serving mode the engine does predict in that mode."""

from __future__ import annotations

from snippets.calibration import SKIP_KINDS, Row, Skipped
from snippets.data import Catalog
from snippets.pages.calibrated import evaluate
from snippets.pages.reference_common import source_label
from snippets.render import fmt

KIND_WORDS = {"unstated": ("whose source leaves out something the engine needs",
                           "whose sources leave out something the engine needs"),
              "unmodelled": ("served in a combination of modes the engine does not model",) * 2,
              "refused": ("that the engine refuses as it was run", "that the engine refuses as they were run")}
"""How the page says each kind of reason (`SKIP_KINDS`) after the count of rows: of one row, of more."""


def skipped_table(cat: Catalog) -> str:
    """The rows the engine does not predict today: what they measured, where from, and why not."""
    out: list[list[fmt.Cell]] = []
    names = []
    for role in ("calibration", "test"):
        for s in evaluate(cat, role)[1]:
            m = s.measurement
            what = (f"{cat.models[m.model].name} {cat.precisions[m.precision].name} on "
                    f"{cat.accelerators[m.accelerator].name}, {m.engine}")
            out.append([what, role, source_label(m), m.mode.label, s.reason])
            names.append(s.id)
    table = fmt.html_table("skipped", ["Run", "Role", "Source", "Mode", "Why not predicted today"], out,
                           align="lllll", names=names)
    return '<div class="sa-wide">\n' + table + "</div>\n"


def skipped_figures(done: list[Row], skipped: list[Skipped]) -> dict[str, object]:
    """By name: the rows left out by kind of reason (`skip_why`, the kinds that occur, in `SKIP_KINDS`' order), the
    predicted runs served disaggregated or with a repeated prefix (each predicted in its mode), and the speculative
    runs, with those left out for what their source does not state. An empty `skipped` is refused: the page's
    sentence on the rows left out could not be worded."""
    if set(KIND_WORDS) != set(SKIP_KINDS):
        raise ValueError(f"the page words the kinds {sorted(KIND_WORDS)}, the calibration has {sorted(SKIP_KINDS)}")
    if not skipped:  # the opening sentence says "the other N are listed at the end with the reason: <kinds>"
        raise ValueError("the engine predicts every row: the predictions page's opening sentence and its last table "
                         "speak of rows left out; reword them before removing the table")
    kinds = {k: sum(s.kind == k for s in skipped) for k in SKIP_KINDS}
    parts: list[str | tuple[str, fmt.Figure]] = []
    shown = [k for k in SKIP_KINDS if kinds[k]]
    for i, k in enumerate(shown):
        parts += [", and " if i and i == len(shown) - 1 else ", " if i else "",
                  (k, fmt.count(kinds[k], "rows")), f" {KIND_WORDS[k][kinds[k] != 1]}"]
    disagg = sum(r.measurement.mode.disaggregation is not None for r in done)
    prefix = sum(r.measurement.mode.prefix_cache is not None for r in done)
    spec = sum(r.measurement.mode.speculation is not None for r in done)
    spec += sum(s.measurement.mode.speculation is not None for s in skipped)
    unstated = sum(s.measurement.mode.speculation is not None and s.kind == "unstated" for s in skipped)
    return {
        "skip_why": fmt.Phrase(tuple(parts)),
        "disagg_rows": fmt.count(disagg, "rows"),
        "prefix_rows": fmt.count(prefix, "rows"),
        "spec_rows": fmt.count(spec, "rows"),
        "spec_unstated": fmt.count(unstated, "rows"),
    }

"""Page model of the home page (docs/index.md): the answer first, then the reading path."""

from __future__ import annotations

from snippets.data import Catalog
from snippets.engine import NoLayout
from snippets.engine.timing import predict
from snippets.pages import units
from snippets.pages.base import Page
from snippets.pages.scenario import SERVING, reference
from snippets.render import fmt

SUMMARY_MODELS = ("llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "qwen3-235b-a22b", "gpt-oss-120b",
                  "llama-4-maverick", "deepseek-v3")
"""One model of each family and size readers deploy, small to large."""
SUMMARY_PRECISIONS = ("bf16", "fp8")


def summary_table(cat: Catalog) -> str:
    """Which model fits where and what it costs: each at the scenario on its node, as the engine deploys it, with
    the time per output token of one sequence and the cost per million output tokens with the KV cache full."""
    r = reference(cat, SERVING)
    rows: list[list[fmt.Cell]] = []
    names = []
    for m in SUMMARY_MODELS:
        for p in SUMMARY_PRECISIONS:
            names.append(f"{cat.models[m].name} {cat.precisions[p].name}")
            try:
                d = r.deployment(m, p, scenario=SERVING)
            except NoLayout as exc:
                rows.append([cat.models[m].name, cat.precisions[p].name, str(exc), "—", "—", "—", "—"])
                continue
            one, full = predict(d, 1), predict(d, max(1, d.max_concurrency))
            mtok = full.usd_per_mtok_output
            rows.append([
                cat.models[m].name, cat.precisions[p].name, d.layout.label,
                fmt.count(d.gpus), fmt.count(d.nodes, "nodes"),
                fmt.quantity(one.tpot_s * 1e3, "ms", 1, basis="time per output token, one sequence"),
                "no price" if mtok is None else units.dated(
                    fmt.Figure(mtok, "USD/Mtok", f"${mtok:,.2f}", f"{full.in_flight} sequences in flight, indicative price"),
                    units.price_of(d)),
            ])
    return fmt.html_table("summary", ["Model", "Precision", "Layout", "GPUs", "Nodes", "ms per token, one sequence",
                                      "$ per M output tokens, KV cache full"], rows, align="lllrrrr", names=names)


class HomePage(Page):
    shows = (summary_table,)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        r = self.reference(SERVING)
        node = r.node
        self.gb = fmt.unit_definition("GB")
        self.gib = fmt.unit_definition("GiB")
        self.node_gpus = fmt.count(node.gpus)
        self.node_name = node.name
        self.scenario = r.scenario.name
        self.policy = r.eng.layout_policies[r.scenario.layout_policy].name


namespace = HomePage.namespace_of
sources = HomePage.sources_of

"""The predictions page's note on vLLM's symmetric-memory all-reduce off Hopper: the timings AIConfigurator took of it
on Blackwell chips through vLLM's whole dispatch (`snippets.calibration.routed` finds them), each against what the
engine prices that message at on that chip (the H100's fits at the chip's NVLink)."""

from __future__ import annotations

from snippets.calibration import routed
from snippets.data import Catalog, TimeModel, required
from snippets.data.export import engine_catalog
from snippets.engine import Deployment, Layout, setting
from snippets.engine.collectives import allreduce
from snippets.engine.topology import group_link
from snippets.render import fmt

PRICED_WITH = ("llama-3.1-70b", "bf16")
"""A BF16 model to set each chip's group up with: the all-reduce's price depends on the chip, its node and the
release's table, not on the model."""


def symm_off_hopper(cat: Catalog) -> dict[str, object]:
    """The claim that the engine prices every such timing below what was measured, and its figures: the chips, the
    number of timings, and how far above the engine's price the least and the most of them lie."""
    eng = engine_catalog(cat)
    tm = cat.policies[cat.scenarios["reference"].time_model]
    assert isinstance(tm, TimeModel)  # noqa: S101 - the scenario's time model (the loader checks it)
    policy = required(tm.allreduce_timed_under, "the release vLLM's timings ran under")
    ratios: list[float] = []
    chips: list[str] = []
    for cc in tm.chip_collectives:
        paths = routed(cat, eng, cc.points, cc.engine)
        timed = paths["multimem"] + paths["symm-two-shot"]
        acc = cat.latencies[cc.points].accelerator
        if not timed or acc is None:
            continue
        st = setting(eng, *PRICED_WITH, "reference", accelerator=acc, memory_policy=policy)
        for n, nbytes, seconds in timed:
            c = allreduce(nbytes, group_link(Deployment(st, Layout(n), "a group of n"), "tp"), st.time_model)
            if c.algorithm not in ("multimem", "symm-two-shot"):
                raise ValueError(f"{cc.points}: {nbytes} bytes on {n} GPUs priced as {c.algorithm}, not as the "
                                 "symmetric-memory path its timing took")
            ratios.append(seconds / c.seconds)
        chips.append(cat.accelerators[acc].name)
    if not ratios:
        raise ValueError("no chip's vLLM timings took the symmetric-memory path: the page says which did")
    low, high = min(ratios), max(ratios)
    return {
        "symm_bw_under": fmt.claim(low > 1, f"measured ÷ priced from {low:.2f} to {high:.2f} over {len(ratios)} timings"),
        "symm_bw_chips": fmt.Figure(len(chips), "chips", ", ".join(chips), "data/latencies.yaml, custom-allreduce-*"),
        "symm_bw_points": fmt.count(len(ratios), "timings"),
        "symm_bw_low": fmt.percent(low - 1),
        "symm_bw_high": fmt.percent(high - 1),
    }

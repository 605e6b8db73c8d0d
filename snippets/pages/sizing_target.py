"""A configuration at the sizing grid's latency target as a record holds it (reference/sizing.json): each number with
its unit, each prediction with its range (`predicted`), the cheapest meeting the target and the one the layout
policy recommends (`at_target`)."""

from __future__ import annotations

from typing import Any

from snippets.engine.search import Point, Search


def quantity(value: float, unit: str) -> dict[str, Any]:
    return {"value": value, "unit": unit}


def predicted(value: float, unit: str, rng: tuple[float, float] | None) -> dict[str, Any]:
    """A prediction as a record holds it: its value and unit, and `range`, [low, high], where 80 % of its regime's
    test measurements fell (`snippets.engine.bands`; None where no test row of the metric exists in any regime)."""
    return {"value": value, "unit": unit, "range": None if rng is None or not rng[1] > rng[0] else list(rng)}


def ms_range(rng: tuple[float, float]) -> tuple[float, float]:
    """A range of times in seconds, in ms."""
    return rng[0] * 1e3, rng[1] * 1e3


def _configuration(b: Point) -> dict[str, Any]:
    """A configuration at the target as a record holds it, each number with its unit."""
    z, p = b.as_dict(), b.prediction
    out: dict[str, Any] = {
        "mode": b.mode, "configuration": b.label, "layout": z["layout"], "layout_label": b.layout.label, "gpus": b.gpus,
        "rented_gpus": b.rented_gpus, "concurrency": b.concurrency,
        "ttft": predicted(b.ttft_s * 1e3, "ms", ms_range(p.ttft_range)),
        "tpot": predicted(b.tpot_s * 1e3, "ms", ms_range(p.tpot_range)),
        "output_tokens_per_s_per_gpu": predicted(b.per_gpu, "tokens/s/GPU", p.throughput_per_gpu_range),
        "usd_per_mtok_output": (None if b.usd_per_mtok is None else
                                predicted(b.usd_per_mtok, "USD/Mtok", b.usd_per_mtok_range)),
        "gpu_hours_per_mtok_output": quantity(b.gpu_hours_per_mtok, "GPU-hours/Mtok"),
    }
    if b.speculation is not None:  # the search at a scenario takes none, and `target_words` carries no draft
        raise ValueError(f"the sizing grid shows no speculative configuration ({b.label})")
    if b.mode == "disaggregated":
        assert b.prefill_layout is not None  # noqa: S101 - a disaggregated point has one
        out.update({k: z[k] for k in ("prefill_layout", "decode_layout", "prefill_workers", "decode_workers",
                                      "decode_batch")}, prefill_layout_label=b.prefill_layout.label)
    else:
        out["in_flight"] = z["in_flight"]
    return out


def at_target(s: Search | None) -> dict[str, Any] | None:
    """The cheapest configuration meeting the scenario's target, each number with its unit, under `recommended` the
    one the layout policy recommends (`cheapest_saving`: how much less the cheapest costs, 0: none); or why none."""
    if s is None:
        return None
    t = s.targets
    out: dict[str, Any] = {
        "ttft_target": None if t.ttft_s is None else quantity(t.ttft_s * 1e3, "ms"),
        "tpot_target": None if t.tpot_s is None else quantity(t.tpot_s * 1e3, "ms"),
        "met": s.best is not None,
    }
    b, rec = s.best, s.recommended
    if b is None or rec is None:
        w = s.why
        out.update({"why": None if w is None else w.text, "binding": None if w is None else w.binding})
        return out
    out.update({**_configuration(b), "recommended": _configuration(rec), "cheapest_saving": s.saving,
                "disaggregated_min_saving": s.min_saving})
    return out

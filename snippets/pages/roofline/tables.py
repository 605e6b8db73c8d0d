"""The roofline page's tables and charts: ridge points, intensity against the batch, the roofline, the curve."""

from __future__ import annotations

from dataclasses import dataclass

from snippets.data import Catalog
from snippets.engine import Deployment
from snippets.engine.bands import COVERAGE
from snippets.engine.serving import predict
from snippets.engine.specs import ChipSpec
from snippets.engine.step import Step, step
from snippets.pages import units
from snippets.pages.roofline.common import (
    BATCHES,
    MODEL,
    OLDER,
    PRECISION,
    SECOND,
    decode,
    decode_context,
    deployments,
    gbytes,
    gflop,
    intensity,
    ridge,
    tflops,
)
from snippets.pages.scenario import SERVING, Reference, reference
from snippets.pages.units import gpu_label, ms, tbps
from snippets.render import charts, fmt

# --------------------------------------------------------------------------- tables and chart

def ridge_table(cat: Catalog) -> str:
    """Every accelerator's ridge point in BF16 and FP8, from dense figures; derived ones marked."""
    r = reference(cat)
    rows: list[list[fmt.Cell]] = []
    for chip in r.eng.chips.values():
        cells: list[fmt.Cell] = [gpu_label(chip), tbps(chip.hbm_bytes_per_s)]
        derived = sorted(f.upper() for f in ("bf16", "fp8") if f in chip.dense_derived and f in chip.dense_flops)
        cells.append("derived: half the stated sparse figure" if derived else "stated dense")
        for f in ("bf16", "fp8"):
            if f in chip.dense_flops:
                cells += [tflops(chip.dense_flops[f]), intensity(ridge(chip, f), "dense FLOP/s ÷ HBM bandwidth")]
            else:
                cells += [f"no {f.upper()} figure", "—"]
        rows.append(cells)
    return fmt.table(  # the answer, the FP8 ridge, last: the column a phone keeps in view beside the accelerator
        "ridge",
        ["Accelerator", "HBM", "Dense figure", "BF16 dense", "BF16 ridge (FLOP/byte)", "FP8 dense",
         "FP8 ridge (FLOP/byte)"],
        rows, align="lrlrrrr",
    )


def batch_rows(d: Deployment) -> list[int]:
    return sorted({*BATCHES, d.max_concurrency})


def intensity_table(cat: Catalog) -> str:
    """A decode step of the worked deployment at growing batch, at predict's context: FLOPs, bytes, the roofline."""
    r = reference(cat)
    d, _ = deployments(r)
    ctx = decode_context(r)
    rows: list[list[fmt.Cell]] = []
    for b in batch_rows(d):
        p = decode(d, b, ctx)
        rows.append([
            fmt.count(b, "sequences"),
            gflop(p.flops),
            gbytes(p.bytes_read),
            intensity(p.flops / p.bytes_read),
            ms(p.compute_s, 2),
            ms(p.memory_s, 2),
            ms(p.total_s, 1),
            p.bound,
            "yes" if b <= d.max_concurrency else "no",
        ])
    return fmt.table(
        "intensity",
        ["Sequences", "FLOPs per GPU", "Bytes read per GPU", "FLOP/byte", "Compute", "Memory", "Step",
         "Largest part", "Fits the KV cache?"],
        rows, align="rrrrrrrll",
    )


@dataclass(frozen=True)
class Curve:
    label: str
    points: list[tuple[int, float, float]]
    """(concurrency, output tokens/s per GPU, time per output token in ms)."""
    tips: list[str]
    """Each point's tooltip: its load, and its throughput per GPU and time per token each with its range
    (`units.tps_banded`, `units.tpot_banded`: the engine's bands)."""


def curves(r: Reference) -> list[Curve]:
    out = []
    for d in deployments(r):
        pts, tips = [], []
        for c in range(1, d.max_concurrency + 1):
            x = predict(d, c)
            pts.append((c, x.output_tokens_per_s_per_gpu, x.tpot_s * 1e3))
            tput, tpot = units.tps_banded(x, 1 / x.gpus, per_gpu=True), units.tpot_banded(x)
            tips.append(f"{c:,} sequence{'' if c == 1 else 's'}: {tput.text} per GPU; {tpot.text} per token")
        out.append(Curve(f"{gpu_label(d.setting.chip)}, {d.layout.label}", pts, tips))
    return out


def curve_chart(cat: Catalog) -> str:
    """Time per output token against output tokens per second per GPU, one point per concurrency."""
    r = reference(cat)
    cs = curves(r)
    series = [charts.Series(c.label, [(x, y) for _, x, y in c.points], tips=c.tips) for c in cs]
    sc = r.scenario
    ends = "; ".join(
        f"{c.label}: from {c.points[0][2]:.1f} ms per token and {c.points[0][1]:,.0f} tokens/s per GPU at one "
        f"sequence to {c.points[-1][2]:.1f} ms and {c.points[-1][1]:,.0f} tokens/s per GPU at {c.points[-1][0]:,}"
        for c in cs)
    words = (f"Latency against throughput of {cat.models[MODEL].name} in {cat.precisions[PRECISION].name}, one point "
             f"per concurrency from one sequence to "
             f"as many as the KV cache holds, each request {sc.input_tokens:,} tokens in and {sc.output_tokens:,} out. "
             f"{ends}. Each point's tooltip gives both figures with their ranges: where "
             f"{fmt.percent(COVERAGE).text} of the test measurements of its regime fell.")
    svg = charts.lines("curve-chart", series, "output tokens/s per GPU", "ms per output token",
                       "Latency against throughput", words)
    return charts.figure(svg, words)


ROOF_CHIPS = ("h100-sxm", SECOND, OLDER, "b200")
"""The accelerators the roofline chart draws: the page's, the one the curve sets beside it, the older one of the
quiz, and a newer one."""


def roof_format(chip: ChipSpec, wanted: str) -> str:
    """The format a chip's roof is drawn in: the deployment's compute format where the chip has tensor cores for it,
    else BF16 (FP8 weights on an A100 are multiplied in BF16)."""
    return wanted if wanted in chip.dense_flops else "bf16"


def roof_marks(r: Reference, n: int) -> list[tuple[str, Step]]:
    """The steps the roofline chart marks: a decode step of one sequence and one of `n` (the serving scenario's
    concurrency, on the layout the policy picks for it), both at predict's decode context, and a prefill of the
    scenario's prompt; each the engine's `step`."""
    d, _ = deployments(r)
    ctx = decode_context(r)
    dn = r.deployment(MODEL, PRECISION, concurrency=n)
    return [
        (f"decode, one sequence, {d.layout.label}", decode(d, 1, ctx)),
        (f"decode, {n} sequences, {dn.layout.label}", decode(dn, n, ctx)),
        (f"prefill, {r.scenario.input_tokens:,} tokens", step(d, "prefill", r.scenario.input_tokens, 0)),
    ]


def roofline_chart(cat: Catalog) -> str:
    """Attainable FLOP/s per GPU against FLOPs per byte, log-log: each chart chip's datasheet roofs (dense FLOP/s,
    HBM bandwidth), and the engine's decode and prefill steps on the page's deployment, each at the FLOP/s it
    reaches (its FLOPs over its whole step time, communication and launches included)."""
    r = reference(cat)
    d, _ = deployments(r)
    fmt_c = d.compute_format
    roofs = []
    for cid in ROOF_CHIPS:
        chip = r.eng.chips[cid]
        f = roof_format(chip, fmt_c)
        roofs.append(charts.Roof(f"{gpu_label(chip)} {f.upper()}", chip.dense_flops[f] / 1e12,
                                 chip.hbm_bytes_per_s / 1e12))
    marks = []
    for label, p in roof_marks(r, reference(cat, SERVING).scenario.concurrency):
        x, y = p.flops / p.bytes_read, p.flops / p.total_s / 1e12
        marks.append(charts.Mark(label, x, y, f"{label}: {x:,.1f} FLOP/byte, {y:,.1f} TFLOP/s per GPU "
                                              f"({p.bound}-bound, step {p.total_s * 1e3:,.1f} ms)"))
    roofs_words = "; ".join(f"{rf.label}: {rf.peak:,.0f} TFLOP/s dense, ridge at {rf.ridge:,.0f} FLOP/byte"
                            for rf in roofs)
    marks_words = "; ".join(f"{m.label} at {m.x:,.1f} FLOP/byte reaching {m.y:,.1f} TFLOP/s per GPU" for m in marks)
    words = (f"The roofline, both axes on a log scale. Roofs from the datasheets (dense FLOP/s, HBM bandwidth): "
             f"{roofs_words}. The engine's steps of {cat.models[MODEL].name} in {cat.precisions[PRECISION].name} on "
             f"{gpu_label(d.setting.chip)}, each at its FLOPs over its whole step time: {marks_words}.")
    svg = charts.roofline("roofline-chart", roofs, marks, "FLOP per byte", "TFLOP/s per GPU",
                          "The roofline", words)
    return charts.figure(svg, words)

"""Page model of "Prefill, decode and the roofline" (docs/roofline.md).

Every time on the page is the engine's (`snippets.engine.step.step` and `snippets.engine.serving.predict`) for the
reference scenario's request (`data/scenarios.yaml`) and time model (`data/policies.yaml`,
`measured-fractions`); the deployments are the engine's (`snippets.pages.scenario.reference`).
What this module adds is teaching arithmetic the engine does not offer as a function (flagged for
the engine's owners):

- `critical_batch`: the smallest decode batch whose step the engine finds compute-bound, by
  bisection over `step` (the compute and memory parts of a step both grow linearly with the batch,
  so their ratio rises monotonically and the search is exact);
- `intensity_limit`: what a decode step's FLOPs per byte tend to as the batch grows (the slope of
  FLOPs over the slope of bytes, read off two `step` calls);
- the ridge point: dense FLOP/s ÷ HBM bandwidth, per chip and format, at datasheet peak and at the
  shares the time model's kernels reach (a large GEMM's throughput, a one-token GEMM's weight stream).
"""

from __future__ import annotations

from dataclasses import dataclass

from snippets.data import Catalog
from snippets.engine import Deployment, Layout
from snippets.engine.memory import kv_bytes_per_token_per_gpu, stage_weights
from snippets.engine.serving import predict
from snippets.engine.specs import ChipSpec
from snippets.engine.step import Step, step
from snippets.engine.timing import ALLREDUCES_PER_LAYER
from snippets.engine.topology import group_link
from snippets.pages import running
from snippets.pages.base import Page
from snippets.pages.scenario import SERVING, Reference, reference
from snippets.pages.units import gpu_label, ms, price_of, tbps, tps, us, usd
from snippets.render import charts, fmt
from snippets.render.fmt import Figure
from snippets.teaching.rounded import FLOP_PER_PARAM_PER_TOKEN

MODEL = "llama-3.1-70b"
PRECISION = "fp8"
SECOND = "h200-sxm"
"""The accelerator the curve sets beside the scenario's: the same tensor cores as the H100 SXM, more HBM."""
OLDER = "a100-80gb-sxm"
"""An accelerator without FP8 tensor cores: FP8 there is weight-only (a quiz problem)."""
CURVE_TP = 2
"""The curve's layout on both accelerators: the one the scenario's policy picks on the H100, so the two
lines differ only by the chip."""
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
"""Rows of the intensity table; the KV cache's largest batch is added."""
SEARCH_LIMIT = 1 << 20
"""Largest batch `critical_batch` looks at: far beyond any KV cache, so "none" means "never"."""


# --------------------------------------------------------------------------- formatting

def intensity(x: float, basis: str = "") -> Figure:
    return fmt.quantity(x, "FLOP/byte", 1 if x < 10 else 0, basis=basis)


def tflops(x: float, basis: str = "dense") -> Figure:
    return fmt.quantity(x / 1e12, "TFLOP/s", 0, show_unit=True, basis=basis)


def gflop(x: float) -> Figure:
    """FLOPs in GFLOP, or in TFLOP from a thousand GFLOP up."""
    if x >= 1e12:
        return fmt.quantity(x / 1e12, "TFLOP", 1, show_unit=True)
    return fmt.quantity(x / 1e9, "GFLOP", 1, show_unit=True)


def gbytes(x: float) -> Figure:
    return fmt.nbytes(x, "GB", 2)


# --------------------------------------------------------------------------- roofline arithmetic (page helpers)

def ridge(chip: ChipSpec, compute_format: str) -> float:
    """Datasheet ridge point: dense FLOP/s in the format ÷ HBM bytes/s."""
    return chip.dense_flops[compute_format] / chip.hbm_bytes_per_s


def fractions(d: Deployment) -> tuple[float, float]:
    """The shares of its peaks the time model's matrix products reach on this chip and format: a large GEMM's
    throughput, and a one-token GEMM's weight stream (both measured, `data/efficiencies.yaml`)."""
    g = d.setting.time_model.chip(d.setting.chip.id).gemm_for(d.setting.precision.tensor_format)
    return g.compute, g.weight_fraction(1)


def achieved_ridge(d: Deployment) -> float:
    """The ridge the time model's matrix products work with: (dense FLOP/s × a large GEMM's share) ÷ (HBM × a
    one-token GEMM's weight-stream share)."""
    chip = d.setting.chip
    cf, wf = fractions(d)
    return chip.dense_flops[d.compute_format] * cf / (chip.hbm_bytes_per_s * wf)


def decode(d: Deployment, batch: int, context: float) -> Step:
    return step(d, "decode", batch, context)


def compute_bound(d: Deployment, batch: int, context: float) -> bool:
    p = decode(d, batch, context)
    return p.compute_s >= p.memory_s


def critical_batch(d: Deployment, context: float, limit: int = SEARCH_LIMIT) -> int | None:
    """The smallest decode batch whose step's arithmetic takes at least as long as its memory traffic, by the
    engine's `step` at `context` cached tokens per sequence; None if none up to `limit` does. Not in the
    engine: a page helper (bisection; compute ÷ memory grows monotonically with the batch)."""
    if compute_bound(d, 1, context):
        return 1
    if not compute_bound(d, limit, context):
        return None
    lo, hi = 1, limit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if compute_bound(d, mid, context) else (mid, hi)
    return hi


def intensity_limit(d: Deployment, context: float, batch: int = 1 << 14) -> float:
    """FLOPs per byte a decode step tends to as the batch grows at `context`: the extra FLOPs of `batch` more
    sequences over their extra bytes (the weights are read once whatever the batch). Not in the engine."""
    a, b = decode(d, batch, context), decode(d, 2 * batch, context)
    return (b.flops - a.flops) / (b.bytes_read - a.bytes_read)


def weights_per_gpu(d: Deployment) -> float:
    s = d.setting
    return stage_weights(s.model.arch, s.precision, d.layout)[0].total


def kv_per_gpu(d: Deployment, tokens: float) -> float:
    s = d.setting
    arch = s.model.arch
    return kv_bytes_per_token_per_gpu(arch, arch.layers, d.layout.tp, s.kv_precision.bytes_per_param) * tokens


def node_of(r: Reference, chip_id: str) -> str:
    node = r.eng.node_of(chip_id)
    if node is None:
        raise ValueError(f"no node in data/ is built from {chip_id}")
    return node.id


def decode_context(r: Reference) -> float:
    """The context `predict` decodes at: the prompt and half the output (mid-way through the answer)."""
    return r.scenario.input_tokens + r.scenario.output_tokens / 2


def deployments(r: Reference) -> tuple[Deployment, Deployment]:
    """The worked deployment (the scenario's policy on its node) and the same layout on the second accelerator."""
    d = r.deployment(MODEL, PRECISION)
    if d.layout.tp != CURVE_TP or d.layout.pp != 1:
        raise ValueError(f"the page compares both chips on TP{CURVE_TP}; the policy now picks {d.layout.label}")
    return d, r.deployment(MODEL, PRECISION, node=node_of(r, SECOND), layout=Layout(CURVE_TP))


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
                cells += ["no FP8 figure", "—"]
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


def curves(r: Reference) -> list[Curve]:
    out = []
    for d in deployments(r):
        pts = []
        for c in range(1, d.max_concurrency + 1):
            x = predict(d, c)
            pts.append((c, x.output_tokens_per_s_per_gpu, x.tpot_s * 1e3))
        out.append(Curve(f"{gpu_label(d.setting.chip)}, {d.layout.label}", pts))
    return out


def curve_chart(cat: Catalog) -> str:
    """Time per output token against output tokens per second per GPU, one point per concurrency."""
    r = reference(cat)
    cs = curves(r)
    series = [charts.Series(c.label, [(x, y) for _, x, y in c.points],
                            tips=[f"{n:,} sequences: {x:,.0f} tokens/s per GPU, {y:.1f} ms per token"
                                  for n, x, y in c.points]) for c in cs]
    sc = r.scenario
    ends = "; ".join(
        f"{c.label}: from {c.points[0][2]:.1f} ms per token and {c.points[0][1]:,.0f} tokens/s per GPU at one "
        f"sequence to {c.points[-1][2]:.1f} ms and {c.points[-1][1]:,.0f} tokens/s per GPU at {c.points[-1][0]:,}"
        for c in cs)
    words = (f"Latency against throughput of {cat.models[MODEL].name} in {cat.precisions[PRECISION].name}, one point "
             f"per concurrency from one sequence to "
             f"as many as the KV cache holds, each request {sc.input_tokens:,} tokens in and {sc.output_tokens:,} out. "
             f"{ends}.")
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


# --------------------------------------------------------------------------- worked example

class PassShown:
    """A step's figures as the prose uses them (`{{ dec.memory }}`)."""

    def __init__(self, p: Step) -> None:
        self.flops = gflop(p.flops)
        self.bytes = gbytes(p.bytes_read)
        self.intensity = intensity(p.flops / p.bytes_read)
        self.compute = ms(p.compute_s, 2)
        self.memory = ms(p.memory_s, 2)
        self.comm = ms(p.comm_s, 2)
        self.comm_latency = ms(p.comm_latency_s, 2)
        self.overhead = ms(p.launch_s, 1)
        self.total = ms(p.total_s, 1)


def worked_example(cat: Catalog) -> str:
    """One decode step and one prefill of the worked deployment, step by step, as Markdown with figure spans."""
    p = RooflinePage.of(cat)
    h = fmt.fig_html
    dec, pre = p.dec, p.pre
    lines = [
        "**One decode step** (one sequence):",
        "",
        f"1. **Arithmetic.** Each GPU holds half of every weight matrix, and each weight does "
        f"{h(p.flop_per_param, 'wx.flop_per_param')} FLOPs for the token, plus attention over the "
        f"{h(p.ctx_decode, 'wx.ctx_decode')} cached tokens: {h(dec.flops, 'wx.dec.flops')} per GPU.",
        f"2. **Bytes.** Each GPU reads its {h(p.w_gpu, 'wx.w_gpu')} of weights and its "
        f"{h(p.kv_gpu, 'wx.kv_gpu')} of KV cache: {h(dec.bytes, 'wx.dec.bytes')}.",
        f"3. **Intensity.** {h(dec.flops, 'wx.dec.flops')} ÷ {h(dec.bytes, 'wx.dec.bytes')} = "
        f"{h(dec.intensity, 'wx.dec.intensity')} FLOP per byte, against a ridge of "
        f"{h(p.ridge_achieved, 'wx.ridge_achieved')}: far left of it.",
        f"4. **Compute time.** Each operation's FLOPs at the share of {h(p.fp8_dense, 'wx.fp8_dense')} its "
        f"kernel reaches ({h(p.compute_fraction, 'wx.compute_fraction')} for the matrix products), summed: "
        f"{h(dec.compute, 'wx.dec.compute')}.",
        f"5. **Memory time.** Each operation's bytes at the share of {h(p.hbm, 'wx.hbm')} its kind reaches (a "
        f"one-token GEMM's weight stream, {h(p.hbm_fraction, 'wx.hbm_fraction')}; the KV cache at a streaming "
        f"kernel's {h(p.stream_fraction, 'wx.stream_fraction')}): {h(dec.memory, 'wx.dec.memory')}, the "
        f"larger in every operation, so the step is memory-bound.",
        f"6. **Communication.** {h(p.allreduces, 'wx.allreduces')} all-reduces of one token's activations "
        f"({p.algorithm_dec}, {h(p.ar_dec, 'wx.ar_dec')} each, nearly all of it the collective's fixed "
        f"cost), and the embedding's and the logits' own: {h(dec.comm, 'wx.dec.comm')}, of which "
        f"{h(dec.comm_latency, 'wx.dec.comm_latency')} is fixed latency.",
        f"7. **Launches.** {h(p.kernels_dec, 'wx.kernels_dec')} kernels at {h(p.kernel_cost, 'wx.kernel_cost')} "
        f"each inside the CUDA graph, and the host's {h(p.step_overhead, 'wx.step_overhead')} per step: "
        f"{h(dec.overhead, 'wx.dec.overhead')}.",
        f"8. **Time per output token.** {h(dec.memory, 'wx.dec.memory')} + {h(dec.comm, 'wx.dec.comm')} + "
        f"{h(dec.overhead, 'wx.dec.overhead')} = **{h(dec.total, 'wx.dec.total')}**.",
        "",
        f"**One prefill** (a {h(p.n_in, 'wx.n_in')}-token prompt):",
        "",
        f"1. **Arithmetic.** Every prompt token passes every weight, and attends to the tokens before it: "
        f"{h(pre.flops, 'wx.pre.flops')} per GPU.",
        f"2. **Bytes.** The same weights, read once for the whole prompt, the activations and the KV cache "
        f"written: {h(pre.bytes, 'wx.pre.bytes')}.",
        f"3. **Intensity.** {h(pre.intensity, 'wx.pre.intensity')} FLOP per byte: far right of the ridge.",
        f"4. **Compute time.** The matrix products at {h(p.compute_fraction, 'wx.compute_fraction')} of "
        f"{h(p.fp8_dense, 'wx.fp8_dense')}, attention at {h(p.attention_fraction, 'wx.attention_fraction')} "
        f"of the BF16 peak: {h(pre.compute, 'wx.pre.compute')}, the larger in the heavy operations, so "
        f"the prefill is compute-bound.",
        f"5. **Memory time.** {h(pre.bytes, 'wx.pre.bytes')} at the same shares: {h(pre.memory, 'wx.pre.memory')}.",
        f"6. **Communication.** The same {h(p.allreduces, 'wx.allreduces')} all-reduces, now of the whole "
        f"prompt's activations ({p.algorithm_pre}): {h(pre.comm, 'wx.pre.comm')}.",
        f"7. **Time to first token.** Each operation's larger part, the communication and the launches: "
        f"**{h(pre.total, 'wx.pre.total')}**.",
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- names for prose

class RooflinePage(Page):
    """The names the page's `{{ ... }}` values and claims use."""
    shows = (running.shows("roofline"), ridge_table, roofline_chart, intensity_table, worked_example, curve_chart)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        r = self.reference()
        sc = r.scenario
        d, d2 = deployments(r)
        chip, chip2, old = d.setting.chip, d2.setting.chip, r.eng.chips[OLDER]
        tm = d.setting.time_model
        arch = d.setting.model.arch
        ctx = decode_context(r)
        fmt_c = d.compute_format

        dec = decode(d, 1, ctx)
        pre = step(d, "prefill", sc.input_tokens, 0)
        x1, x2 = predict(d, 1), predict(d2, 1)
        most, most2 = d.max_concurrency, d2.max_concurrency
        xm, xm2 = predict(d, most), predict(d2, most2)
        ra = achieved_ridge(d)
        r_bf16, r_fp8 = ridge(chip, "bf16"), ridge(chip, fmt_c)
        r2_fp8 = ridge(chip2, d2.compute_format)
        bpp = d.setting.precision.bytes_per_param
        envelope = r_fp8 * bpp / FLOP_PER_PARAM_PER_TOKEN
        envelope_achieved = ra * bpp / FLOP_PER_PARAM_PER_TOKEN
        crit0 = critical_batch(d, 0)
        crit_ctx = critical_batch(d, ctx)
        lim_ctx = intensity_limit(d, ctx)
        if crit0 is None:
            raise ValueError("the page expects a weights-only decode step to turn compute-bound at some batch")
        at_max = decode(d, most, ctx)
        eff = tm.chip(chip.id)
        cf, wf = fractions(d)
        ar_dec = next(o for o in dec.ops if o.name == "attention all-reduce")

        # the quiz: 32 sequences of the scenario's whole context on 2 GPUs, then on the layout the policy picks
        full = sc.input_tokens + sc.output_tokens
        q_n = self.reference(SERVING).scenario.concurrency  # the serving scenario's concurrency
        q_p = decode(d, q_n, full)
        q_d = r.deployment(MODEL, PRECISION, concurrency=q_n)
        q_pp = decode(q_d, q_n, full)
        d_old = r.deployment(MODEL, PRECISION, node=node_of(r, OLDER), layout=Layout(CURVE_TP))
        x_old = predict(d_old, 1)
        d2_policy = r.deployment(MODEL, PRECISION, node=node_of(r, SECOND))

        cost1, costm = x1.usd_per_mtok_output, xm.usd_per_mtok_output
        cost1_2, costm_2 = x2.usd_per_mtok_output, xm2.usd_per_mtok_output
        if cost1 is None or costm is None or cost1_2 is None or costm_2 is None:
            raise ValueError("the cost lens needs prices for both accelerators in data/prices.yaml")

        gain_tput = xm.output_tokens_per_s_per_gpu / x1.output_tokens_per_s_per_gpu
        gain_tpot = xm.tpot_s / x1.tpot_s

        self.model = d.setting.model.name
        self.precision = d.setting.precision.name
        self.gpu = gpu_label(chip)
        self.gpu2 = gpu_label(chip2)
        self.gpu_old = gpu_label(old)
        self.layout = d.layout.label
        self.gpus = fmt.count(d.gpus)
        self.layout2_policy = d2_policy.layout.label
        self.n_in = fmt.count(sc.input_tokens, "tokens")
        self.n_out = fmt.count(sc.output_tokens, "tokens")
        self.ctx_full = fmt.count(full, "tokens")
        self.ctx_decode = fmt.count(ctx, "tokens")
        self.flop_per_param = fmt.count(FLOP_PER_PARAM_PER_TOKEN, "FLOP")
        self.bytes_per_param = fmt.quantity(bpp, "bytes/param", 0)
        # the roofline's two roofs
        self.bf16_dense = tflops(chip.dense_flops["bf16"], "dense BF16, half the stated sparse figure"
                                 if "bf16" in chip.dense_derived else "dense BF16")
        self.fp8_dense = tflops(chip.dense_flops[fmt_c], f"dense {fmt_c.upper()}, half the stated sparse figure"
                                if fmt_c in chip.dense_derived else f"dense {fmt_c.upper()}")
        self.hbm = tbps(chip.hbm_bytes_per_s)
        self.hbm2 = tbps(chip2.hbm_bytes_per_s)
        self.ridge_bf16 = intensity(r_bf16, "dense BF16 FLOP/s ÷ HBM bandwidth")
        self.ridge_fp8 = intensity(r_fp8, "dense FP8 FLOP/s ÷ HBM bandwidth")
        self.ridge2_fp8 = intensity(r2_fp8, "dense FP8 FLOP/s ÷ HBM bandwidth")
        self.ridge_old_bf16 = intensity(ridge(old, "bf16"), "dense BF16 FLOP/s ÷ HBM bandwidth")
        self.ridge_achieved = intensity(ra, "achieved FLOP/s ÷ achieved HBM bandwidth")
        self.compute_fraction = fmt.percent(cf)
        self.hbm_fraction = fmt.percent(wf, 1)
        self.stream_fraction = fmt.percent(eff.hbm, 1)
        self.attention_fraction = fmt.percent(eff.attention)
        self.kernel_cost = us(tm.kernel_s, 1)
        self.step_overhead = ms(tm.step_overhead_s, 2)
        self.kernels_dec = fmt.count(sum(round(o.launch_s / tm.kernel_s) * o.count for o in dec.ops
                                         if o.launch_s and o.kind != "launch"), "kernels")
        self.ar_dec = us(ar_dec.seconds, 1)
        self.hop = us(group_link(d, "tp").hop_s, 1)
        self.layers = fmt.count(arch.layers, "layers")
        self.allreduces = fmt.count(ALLREDUCES_PER_LAYER * arch.layers, "all-reduces")
        self.algorithm_dec = dec.algorithm
        self.algorithm_pre = pre.algorithm
        self.w_gpu = gbytes(weights_per_gpu(d))
        self.kv_gpu = gbytes(kv_per_gpu(d, ctx))
        self.dec = PassShown(dec)
        self.pre = PassShown(pre)
        self.dec_intensity = intensity(dec.flops / dec.bytes_read)
        self.pre_intensity = intensity(pre.flops / pre.bytes_read)
        # the critical batch
        self.envelope = fmt.count(round(envelope), "sequences")
        self.envelope_achieved = fmt.count(round(envelope_achieved), "sequences")
        self.crit0 = fmt.count(crit0, "sequences")
        self.crit_gap = fmt.percent(crit0 / envelope_achieved - 1, 0)
        self.lim_ctx = intensity(lim_ctx, "extra FLOPs ÷ extra bytes of one more sequence")
        self.most = fmt.count(most, "sequences")
        self.most2 = fmt.count(most2, "sequences")
        self.most_intensity = intensity(at_max.flops / at_max.bytes_read)
        # TTFT and TPOT
        self.ttft = ms(x1.ttft_s, 0)
        self.ttft_2 = ms(x2.ttft_s, 0)
        self.tpot1 = ms(x1.tpot_s, 1)
        self.tpotm = ms(xm.tpot_s, 1)
        self.tput1 = tps(x1.output_tokens_per_s_per_gpu)
        self.tputm = tps(xm.output_tokens_per_s_per_gpu)
        self.tpot1_2 = ms(x2.tpot_s, 1)
        self.tpotm_2 = ms(xm2.tpot_s, 1)
        self.tput1_2 = tps(x2.output_tokens_per_s_per_gpu)
        self.tputm_2 = tps(xm2.output_tokens_per_s_per_gpu)
        self.gain_tput = fmt.ratio(gain_tput, 0, basis="tokens/s per GPU at the most sequences ÷ at one")
        self.gain_tpot = fmt.ratio(gain_tpot, 1, basis="time per output token at the most sequences ÷ at one")
        self.reads_per_s = fmt.quantity(x1.output_tokens_per_s, "tokens/s", 0)
        # the cost lens
        self.cost1 = usd(cost1, price_of(d))
        self.costm = usd(costm, price_of(d))
        self.cost1_2 = usd(cost1_2, price_of(d2))
        self.costm_2 = usd(costm_2, price_of(d2))
        self.cost_drop = fmt.ratio(cost1 / costm, 0, basis="$ per million output tokens at one sequence ÷ at the most")
        self.cost_in = usd(x1.usd_per_mtok_input or 0.0, price_of(d))
        self.rent = usd(d.cost_per_replica_hour or 0.0, price_of(d))
        self.rent2 = usd(d2.cost_per_replica_hour or 0.0, price_of(d2))
        # the quiz
        self.q_conc = fmt.count(q_n, "sequences")
        self.q_intensity = intensity(q_p.flops / q_p.bytes_read)
        self.q_layout = q_d.layout.label
        self.q_intensity_policy = intensity(q_pp.flops / q_pp.bytes_read)
        self.q_ridge_policy = intensity(achieved_ridge(q_d), "achieved FLOP/s ÷ achieved HBM bandwidth")
        self.ttft_old = ms(x_old.ttft_s, 0)
        self.ttft_ratio_old = fmt.ratio(x_old.ttft_s / x1.ttft_s, 1, basis="A100 TTFT ÷ H100 TTFT, both TP2")
        self.old_format = d_old.compute_format.upper()
        self.old_bf16_dense = tflops(old.dense_flops["bf16"], "dense BF16")
        # claims
        self.decode_memory_bound = fmt.claim(dec.bound == "memory" and dec.flops / dec.bytes_read < ra / 10,
                                             f"{dec.flops / dec.bytes_read:.1f} FLOP/byte against a ridge of {ra:.0f}; "
                                             f"memory {dec.memory_s * 1e3:.2f} ms > compute {dec.compute_s * 1e3:.2f} ms",
                structural="an order of magnitude: decoding does a few FLOP per byte, every ridge in data/ is hundreds")
        self.prefill_compute_bound = fmt.claim(pre.bound == "compute" and pre.flops / pre.bytes_read > 3 * ra,
                                               f"{pre.flops / pre.bytes_read:,.0f} FLOP/byte against {ra:.0f}; compute "
                                               f"{pre.compute_s * 1e3:.0f} ms > memory {pre.memory_s * 1e3:.0f} ms")
        self.fp8_ridge_twice = fmt.claim(abs(r_fp8 / r_bf16 - 2) < 0.01, f"{r_fp8:.0f} ÷ {r_bf16:.0f}")
        self.h200_lower_ridge = fmt.claim(
                r2_fp8 < r_fp8 and chip2.dense_flops[fmt_c] == chip.dense_flops[fmt_c],
                f"same {chip.dense_flops[fmt_c] / 1e12:.0f} TFLOP/s; {r2_fp8:.0f} < {r_fp8:.0f} FLOP/byte")
        self.crit_beyond_kv = fmt.claim(crit0 > most, f"{crit0} sequences > the {most} the KV cache holds",
                structural="the batch where compute catches up against the KV cache's, both from the engine")
        self.crit_near_envelope = fmt.claim(envelope_achieved <= crit0 <= 2 * envelope_achieved,
                                            f"engine {crit0} against ridge × bytes ÷ 2 = {envelope_achieved:.0f}")
        self.never_at_ctx = fmt.claim(crit_ctx is None and lim_ctx < ra,
                                      f"limit {lim_ctx:.0f} FLOP/byte < ridge {ra:.0f}; no batch up to {SEARCH_LIMIT:,}")
        self.max_still_memory = fmt.claim(at_max.bound == "memory", f"{most} sequences: {at_max.bound}-bound")
        self.h200_faster_everywhere = fmt.claim(
                x2.tpot_s < x1.tpot_s and xm2.output_tokens_per_s_per_gpu > xm.output_tokens_per_s_per_gpu,
                f"{x2.tpot_s * 1e3:.1f} < {x1.tpot_s * 1e3:.1f} ms at one sequence; "
                f"{xm2.output_tokens_per_s_per_gpu:.0f} > {xm.output_tokens_per_s_per_gpu:.0f} tokens/s per GPU at the most")
        self.h200_more_seqs = fmt.claim(most2 > 2 * most, f"{most2} > 2 × {most}")
        self.h200_policy_one_gpu = fmt.claim(d2_policy.layout.gpus < d2.gpus,
                                             f"policy: {d2_policy.layout.label}, curve: {d2.layout.label}")
        self.same_ttft = fmt.claim(abs(x2.ttft_s / x1.ttft_s - 1) < 0.1,
                                   f"{x2.ttft_s * 1e3:.0f} against {x1.ttft_s * 1e3:.0f} ms")
        self.batching_cheaper = fmt.claim(cost1 > 5 * costm, f"${cost1:.2f} > 5 × ${costm:.2f}")
        self.tpot_rises_less = fmt.claim(gain_tpot < gain_tput / 4, f"{gain_tpot:.1f}× slower, {gain_tput:.0f}× more")
        self.q_memory_bound = fmt.claim(q_p.bound == "memory" and q_p.flops / q_p.bytes_read < ra,
                                        f"{q_p.flops / q_p.bytes_read:.0f} FLOP/byte < {ra:.0f}",
                structural="the bound the engine computes, and its intensity under the ridge")
        self.q_does_not_fit = fmt.claim(most < q_n and q_d.gpus > d.gpus,
                                        f"{q_n} > {most} sequences; policy: {q_d.layout.label}")
        self.q_policy_memory_bound = fmt.claim(q_pp.bound == "memory", f"{q_d.layout.label}: {q_pp.bound}-bound")
        self.old_weight_only = fmt.claim(d_old.weight_only and not d.weight_only,
                                         f"{old.name} computes {d_old.compute_format}")
        self.old_slower_prefill = fmt.claim(x_old.ttft_s > 2 * x1.ttft_s,
                                            f"{x_old.ttft_s * 1e3:.0f} > 2 × {x1.ttft_s * 1e3:.0f} ms")


namespace = RooflinePage.namespace_of
sources = RooflinePage.sources_of

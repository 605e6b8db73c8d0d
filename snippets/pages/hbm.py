"""Page model of "HBM: capacity and bandwidth" (docs/hbm.md).

Every figure the page shows comes from here; every figure here comes from `data/` through the
functions of `snippets` (capacity, sizing, layout, decode). The page's reference GPU is the
H100 SXM of the 8-GPU HGX H100 node; the A100 80GB SXM is the generation before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from snippets import charts, fmt
from snippets.capacity import max_params, usable_bytes, weight_bytes
from snippets.data import Accelerator, Catalog, Model, Node
from snippets.decode import (
    FLOP_PER_PARAM_PER_TOKEN,
    KV_TENSORS,
    aggregate,
    batch_tokens_per_s_ceiling,
    bytes_read_per_step,
    flop_per_byte,
    kv_cache_bytes,
    kv_cache_bytes_per_token,
    max_batch,
    ridge_point,
    step_time,
    tokens_per_s_ceiling,
)
from snippets.fmt import Figure
from snippets.layout import Layout, deployable_layout
from snippets.pages.interconnect import pcie_x16
from snippets.sizing import Sizing, size_on_node
from snippets.units import BYTE_UNITS, Bandwidth

NODE = "hgx-h100-8"
OLDER_NODE = "hgx-a100-8"
RESERVE = "runtime-reserve"
CONTEXT = "decode-context"
KV_PRECISION = "fp16"
"""The KV cache is kept in the model's 16-bit activation format."""
MODELS = ("llama-3.1-70b", "llama-3.1-405b")
PRECISIONS = ("fp16", "int8")
PRECISION_ROWS = (("fp32",), ("bf16", "fp16"), ("fp8",), ("int8",), ("int4",))
"""Rows of the what-fits table; formats of equal width share a row."""
WORKED = ("llama-3.1-70b", "fp16")
INT8 = "int8"
SHARDED = ("llama-3.1-405b", "fp16")
BATCHES = (1, 2, 4)
ILLUSTRATIVE_BATCH = 8
"""A batch size the prose uses to show how batching raises arithmetic intensity."""
SECONDS_PER_HOUR = 3600

SOURCES = (
    ("accelerators", "h100-sxm"),
    ("accelerators", "a100-80gb-sxm"),
    ("interconnects", "hgx-h100-8"),
    ("interconnects", "hgx-a100-8"),
    ("interconnects", "pcie-gen5"),
    ("models", "llama-3.1-70b"),
    ("models", "llama-3.1-405b"),
    ("precisions", "fp32"),
    ("precisions", "bf16"),
    ("precisions", "fp16"),
    ("precisions", "fp8"),
    ("precisions", "int8"),
    ("precisions", "int4"),
    ("assumptions", "runtime-reserve"),
    ("assumptions", "decode-context"),
)
"""The data entries this page's figures are computed from."""


# --------------------------------------------------------------------------- formatting

def ms(seconds: float, digits: int = 1) -> Figure:
    """A time in milliseconds, unit shown."""
    return fmt.quantity(seconds * 1e3, "ms", digits, show_unit=True)


def tps(tokens_per_s: float) -> Figure:
    """Tokens per second: one decimal below 100, whole above."""
    return fmt.quantity(tokens_per_s, "tokens/s", 1 if tokens_per_s < 100 else 0)


def per_gpu_hour(tokens_per_s: float, gpus: int) -> Figure:
    """Tokens per GPU-hour at `tokens_per_s` for the whole replica of `gpus` GPUs."""
    return fmt.quantity(tokens_per_s / gpus * SECONDS_PER_HOUR, "tokens/GPU-hour", 0)


def tbps(bw: Bandwidth) -> Figure:
    return fmt.bandwidth(bw, "TB/s", 2)


def params(n: float) -> Figure:
    """A parameter count in billions, with a decimal only when it is not whole (17.5B, 35B)."""
    whole = abs(n / 1e9 - round(n / 1e9)) < 1e-9
    return fmt.params(n, 0 if whole else 1)


def byte_count(n: float) -> Figure:
    """A small byte count written out: 327,680 bytes."""
    return fmt.quantity(n, "bytes", 0, show_unit=True)


# --------------------------------------------------------------------------- picking data

def accelerator_of(cat: Catalog, node_id: str) -> Accelerator:
    return cat.accelerators[cat.interconnect(node_id, Node).accelerator]


def kv_per_token(cat: Catalog, model: Model) -> float:
    """KV-cache bytes per token of `model`, in the KV precision."""
    a = model.architecture
    return kv_cache_bytes_per_token(a.layers, a.kv_heads, a.head_dim, cat.precisions[KV_PRECISION].width.bytes)


def context_tokens(cat: Catalog) -> float:
    return cat.assumptions[CONTEXT].value.count


@dataclass(frozen=True)
class Decode:
    """One model x precision on one node's GPU: sizing, layout and decode ceilings, raw."""

    model: Model
    precision: str
    acc: Accelerator
    sizing: Sizing
    layout: Layout
    hbm: Bandwidth
    """One GPU's memory bandwidth, as quoted: shared by reads and writes, all of it usable by reads alone."""
    kv_per_token: float
    context: float
    kv_context: float
    """KV cache of one sequence at the assumed context."""

    @property
    def weights(self) -> float:
        return self.sizing.weight_bytes

    @property
    def per_token(self) -> float:
        """Bytes read per generated token at batch 1: weights plus one context's KV cache."""
        return bytes_read_per_step(self.weights, self.kv_per_token, self.context)

    @property
    def sequence_bw(self) -> Bandwidth:
        """Bandwidth one sequence sees: the TP group of its current stage reads together."""
        return aggregate(self.hbm, self.layout.tp)

    @property
    def replica_bw(self) -> Bandwidth:
        """Every GPU of the replica reading at once (all stages busy with different sequences)."""
        return aggregate(self.hbm, self.layout.gpus)

    @property
    def memory(self) -> float:
        return self.layout.gpus * self.acc.memory.bytes

    @property
    def kv_room(self) -> float:
        """Memory of the replica left after the weights: an upper bound on room for KV cache."""
        return self.memory - self.weights


def decode(cat: Catalog, model_id: str, precision_id: str, node_id: str = NODE) -> Decode:
    s = size_on_node(cat, model_id, precision_id, node_id, RESERVE)
    model = cat.models[model_id]
    a = model.architecture
    lay = deployable_layout(s.gpus_with_headroom, a.attention_heads, a.kv_heads, a.layers, s.gpus_per_node)
    acc = accelerator_of(cat, node_id)
    kv = kv_per_token(cat, model)
    ctx = context_tokens(cat)
    return Decode(model, cat.precisions[precision_id].name, acc, s, lay,
                  acc.memory_bandwidth.bandwidth, kv, ctx, kv_cache_bytes(ctx, kv))


# --------------------------------------------------------------------------- tables

def gpu_table(cat: Catalog) -> str:
    """Capacity (GB and GiB) and bandwidth of the page's GPUs, and the time to read all of memory once."""
    rows: list[list[fmt.Cell]] = []
    for node_id in (OLDER_NODE, NODE):
        acc = accelerator_of(cat, node_id)
        bw = acc.memory_bandwidth.bandwidth
        rows.append([
            acc.name, acc.memory_type,
            fmt.nbytes(acc.memory.bytes, "GB"), fmt.nbytes(acc.memory.bytes, "GiB", 1),
            fmt.bandwidth(bw, "GB/s"), bw.direction.label,
            ms(step_time(acc.memory.bytes, bw)),
        ])
    return fmt.table(
        "gpus",
        ["GPU", "Memory", "Capacity (GB)", "Capacity (GiB)", "Bandwidth", "Quoted as", "Read all of it once"],
        rows, align="llrrrlr",
    )


def _precision_label(cat: Catalog, group: tuple[str, ...]) -> str:
    return " / ".join(cat.precisions[p].name for p in group)


def _bytes_per_weight(cat: Catalog, group: tuple[str, ...]) -> float:
    """Effective bytes per weight of a row, per-group scales included; the row's formats must agree."""
    widths = {cat.precisions[p].bits_per_param for p in group}
    if len(widths) != 1:
        raise ValueError(f"formats {group} in one row have different widths: {sorted(widths)}")
    return widths.pop() / 8


def precision_table(cat: Catalog) -> str:
    """Largest model whose weights fit on one card, per precision: weights only and after the reserve."""
    acc = accelerator_of(cat, NODE)
    cap = acc.memory.bytes
    usable = usable_bytes(cap, cat.assumptions[RESERVE].value.fraction)
    m70 = cat.models["llama-3.1-70b"]
    rows: list[list[fmt.Cell]] = []
    for group in PRECISION_ROWS:
        bpw = _bytes_per_weight(cat, group)
        w70 = m70.nominal_params.count * bpw
        bits = bpw * 8
        rows.append([
            _precision_label(cat, group),
            fmt.quantity(bits, "bits", 0 if bits == int(bits) else 3),
            params(max_params(cap, bpw)),
            params(max_params(usable, bpw)),
            fmt.nbytes(w70, "GB", 1 if w70 % 1e9 else 0),
            "Yes" if w70 <= usable * (1 + 1e-9) else "No",
        ])
    return fmt.table(
        "fits",
        ["Precision", "Bits per weight", "Most params, weights only", "Most params, with reserve",
         f"{m70.name} weights", "Fits one card with reserve?"],
        rows, align="lrrrrl",
    )


def ceiling_table(cat: Catalog) -> str:
    """Decode ceilings for each model x precision on each GPU: weights only and with one context's KV."""
    rows: list[list[fmt.Cell]] = []
    for node_id in (OLDER_NODE, NODE):
        for m in MODELS:
            for p in PRECISIONS:
                d = decode(cat, m, p, node_id)
                gpu = d.acc.name.replace("NVIDIA ", "")
                rows.append([
                    f"{d.model.name} {d.precision} on {gpu}",
                    fmt.nbytes(d.weights, "GB"),
                    d.layout.label,
                    tbps(d.replica_bw),
                    tps(tokens_per_s_ceiling(d.weights, d.replica_bw)),
                    tps(tokens_per_s_ceiling(d.per_token, d.replica_bw)),
                    tps(tokens_per_s_ceiling(d.per_token, d.sequence_bw)),
                    per_gpu_hour(tokens_per_s_ceiling(d.per_token, d.replica_bw), d.layout.gpus),
                ])
    return fmt.table(
        "ceiling",
        ["Model, precision, GPU", "Weights", "Layout", "HBM, all GPUs", "Weights only",
         "With KV cache", "One sequence", "Per GPU-hour"],
        rows, align="lrlrrrrr",
    )


def batch_table(cat: Catalog) -> str:
    """The worked deployment at growing batch: bytes per step, ceiling and tokens per GPU-hour."""
    d = decode(cat, *WORKED)
    most = max_batch(d.kv_room, d.context, d.kv_per_token)
    batches = sorted({b for b in (*BATCHES, most) if 1 <= b <= most} or {1})
    rows: list[list[fmt.Cell]] = []
    for b in batches:
        t = batch_tokens_per_s_ceiling(d.weights, d.kv_per_token, d.context, b, d.replica_bw)
        rows.append([
            fmt.count(b, "sequences"),
            fmt.nbytes(kv_cache_bytes(d.context, d.kv_per_token, b), "GB", 1),
            fmt.nbytes(bytes_read_per_step(d.weights, d.kv_per_token, d.context, b), "GB", 1),
            tps(t),
            tps(t / b),
            per_gpu_hour(t, d.layout.gpus),
        ])
    return fmt.table(
        "batch",
        ["Sequences", "KV cache read", "Bytes per step", "Replica ceiling", "Per sequence", "Per GPU-hour"],
        rows, align="rrrrrr",
    )


def worked_example(cat: Catalog) -> str:
    """Llama 3.1 70B in FP16 on H100s, step by step, as Markdown with figure spans."""
    ns = namespace(cat)
    h = fmt.fig_html
    w = ns["w"]
    lines = [
        f"1. **Weight bytes.** {h(w.params, 'worked.params')} parameters × {h(ns['fp16_bytes'], 'worked.fp16_bytes')} "
        f"bytes = {h(w.weight, 'worked.weight')}.",
        f"2. **Where it lives.** With {h(ns['gpu_usable'], 'worked.gpu_usable')} usable per card that is "
        f"{h(w.gpus_needed, 'worked.gpus_needed')} GPUs; a serving engine splits the heads evenly, so the "
        f"deployment is {w.layout} on {h(w.gpus, 'worked.gpus')} GPUs.",
        f"3. **Bandwidth reading together.** {h(w.gpus, 'worked.gpus')} × {h(ns['hbm'], 'worked.hbm')} = "
        f"{h(w.bw, 'worked.bw')}: each GPU streams its own slice of every weight matrix at the same time.",
        f"4. **Weights only.** {h(w.weight, 'worked.weight')} ÷ {h(w.bw, 'worked.bw')} = "
        f"{h(w.step_weights, 'worked.step_weights')} per token at the least, so at most "
        f"**{h(w.tps_weights, 'worked.tps_weights')} tokens per second**.",
        f"5. **KV cache per token.** {h(ns['kv_tensors'], 'worked.kv_tensors')} tensors (K and V) × "
        f"{h(w.layers, 'worked.layers')} layers × {h(w.kv_heads, 'worked.kv_heads')} KV heads × "
        f"{h(w.head_dim, 'worked.head_dim')} × {h(ns['fp16_bytes'], 'worked.fp16_bytes')} bytes = "
        f"{h(w.kv_token, 'worked.kv_token')} ({h(w.kv_token_mb, 'worked.kv_token_mb')}).",
        f"6. **KV cache of one context.** {h(ns['context'], 'worked.context')} tokens × "
        f"{h(w.kv_token, 'worked.kv_token')} = {h(w.kv_context, 'worked.kv_context')}, read in full at every step.",
        f"7. **With the KV cache.** ({h(w.weight, 'worked.weight')} + {h(w.kv_context, 'worked.kv_context')}) ÷ "
        f"{h(w.bw, 'worked.bw')} = {h(w.step_kv, 'worked.step_kv')}, so at most "
        f"**{h(w.tps_kv, 'worked.tps_kv')} tokens per second** for this sequence.",
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- names for prose

@dataclass(frozen=True)
class Shown:
    """A deployment's figures as the prose uses them."""

    model: str
    precision: str
    params: Figure
    weight: Figure
    gpus_needed: Figure
    layout: str
    tp: Figure
    pp: Figure
    gpus: Figure
    bw: Figure
    seq_bw: Figure
    layers: Figure
    kv_heads: Figure
    head_dim: Figure
    kv_token: Figure
    kv_token_mb: Figure
    kv_context: Figure
    kv_share: Figure
    per_token: Figure
    step_weights: Figure
    tps_weights: Figure
    step_kv: Figure
    tps_kv: Figure
    tps_seq: Figure
    one_gpu_tps: Figure
    """The same bytes at one GPU's bandwidth: what a single card would manage, had it the room."""
    gain: Figure
    kv_room: Figure
    max_batch: Figure
    tps_max_batch: Figure
    gpu_hour_1: Figure
    gpu_hour_max: Figure
    batch_gain: Figure
    decode: Decode


def shown(d: Decode) -> Shown:
    a = d.model.architecture
    t_w = tokens_per_s_ceiling(d.weights, d.replica_bw)
    t_kv = tokens_per_s_ceiling(d.per_token, d.replica_bw)
    t_one = tokens_per_s_ceiling(d.weights, d.hbm)
    most = max_batch(d.kv_room, d.context, d.kv_per_token)
    t_most = batch_tokens_per_s_ceiling(d.weights, d.kv_per_token, d.context, max(most, 1), d.replica_bw)
    return Shown(
        model=d.model.name,
        precision=d.precision,
        params=fmt.params(d.sizing.params),
        weight=fmt.nbytes(d.weights, "GB"),
        gpus_needed=fmt.count(d.sizing.gpus_with_headroom),
        layout=d.layout.label,
        tp=fmt.count(d.layout.tp),
        pp=fmt.count(d.layout.pp),
        gpus=fmt.count(d.layout.gpus),
        bw=tbps(d.replica_bw),
        seq_bw=tbps(d.sequence_bw),
        layers=fmt.count(a.layers, "layers"),
        kv_heads=fmt.count(a.kv_heads, "heads"),
        head_dim=fmt.count(a.head_dim, "elements"),
        kv_token=byte_count(d.kv_per_token),
        kv_token_mb=fmt.nbytes(d.kv_per_token, "MB", 2),
        kv_context=fmt.nbytes(d.kv_context, "GB", 2),
        kv_share=fmt.percent(d.kv_context / d.per_token, 1),
        per_token=fmt.nbytes(d.per_token, "GB", 1),
        step_weights=ms(step_time(d.weights, d.replica_bw)),
        tps_weights=tps(t_w),
        step_kv=ms(step_time(d.per_token, d.replica_bw)),
        tps_kv=tps(t_kv),
        tps_seq=tps(tokens_per_s_ceiling(d.per_token, d.sequence_bw)),
        one_gpu_tps=tps(t_one),
        gain=fmt.ratio(t_w / t_one, 0, basis="replica ceiling ÷ one GPU's, weights only"),
        kv_room=fmt.nbytes(d.kv_room, "GB"),
        max_batch=fmt.count(most, "sequences"),
        tps_max_batch=tps(t_most),
        gpu_hour_1=per_gpu_hour(t_kv, d.layout.gpus),
        gpu_hour_max=per_gpu_hour(t_most, d.layout.gpus),
        batch_gain=fmt.ratio(t_most / t_kv, 1, basis="ceiling at the largest batch that fits ÷ batch 1"),
        decode=d,
    )


def namespace(cat: Catalog) -> dict[str, Any]:
    """The names the page's `{{ ... }}` values and claims use."""
    acc = accelerator_of(cat, NODE)
    old = accelerator_of(cat, OLDER_NODE)
    node = cat.interconnect(NODE, Node)
    reserve = cat.assumptions[RESERVE]
    ctx = cat.assumptions[CONTEXT]
    cap = acc.memory.bytes
    usable = usable_bytes(cap, reserve.value.fraction)
    hbm = acc.memory_bandwidth.bandwidth
    hbm_old = old.memory_bandwidth.bandwidth
    fp16_bpp = cat.precisions["fp16"].width.bytes
    int4_bpp = cat.precisions["int4"].bits_per_param / 8
    gen5 = pcie_x16(cat, "pcie-gen5")

    w = shown(decode(cat, *WORKED))
    a70 = shown(decode(cat, *WORKED, OLDER_NODE))
    hour = {k: tokens_per_s_ceiling(x.decode.per_token, x.decode.replica_bw) / x.decode.layout.gpus
            for k, x in (("w", w), ("a70", a70))}
    # INT8 weights of the worked model on the worked deployment's GPUs: only the bytes change
    wd = w.decode
    int8_weights = weight_bytes(wd.sizing.params, cat.precisions[INT8].width.bytes)
    hour["w8"] = tokens_per_s_ceiling(
        bytes_read_per_step(int8_weights, wd.kv_per_token, wd.context), wd.replica_bw) / wd.layout.gpus
    s405 = shown(decode(cat, *SHARDED))
    w70_int4 = cat.models[WORKED[0]].nominal_params.count * int4_bpp
    kv70_max = kv_cache_bytes(ctx.range[1], w.decode.kv_per_token)
    kv70_max_share = kv70_max / bytes_read_per_step(w.decode.weights, w.decode.kv_per_token, ctx.range[1])

    dense = old.bf16
    if dense.sparsity != "dense":
        raise ValueError(f"{old.name}: the compute contrast needs a dense BF16 figure, got {dense.sparsity}")
    ridge_old = ridge_point(dense.per_s, hbm_old)
    intensity = flop_per_byte(fp16_bpp)

    binary_reading = acc.memory.value * BYTE_UNITS["GiB"]
    t_pcie = tokens_per_s_ceiling(w.decode.weights, gen5)
    kv_share = w.decode.kv_context / w.decode.per_token
    d405 = s405.decode

    return {
        "gpu_name": acc.name,
        "old_gpu_name": old.name,
        "mem_type": acc.memory_type,
        "old_mem_type": old.memory_type,
        "node_name": node.name,
        "node_gpus": fmt.count(node.gpus),
        "gb": fmt.Figure(BYTE_UNITS["GB"], "bytes", f"{fmt.number(BYTE_UNITS['GB'])} bytes"),
        "gib": fmt.Figure(BYTE_UNITS["GiB"], "bytes", f"{fmt.number(BYTE_UNITS['GiB'])} bytes"),
        "gpu_memory": fmt.nbytes(cap, "GB"),
        "gpu_memory_gib": fmt.nbytes(cap, "GiB", 1),
        "binary_reading": fmt.nbytes(binary_reading, "GiB"),
        "binary_reading_gb": fmt.nbytes(binary_reading, "GB", 1),
        "gib_gap": fmt.percent(BYTE_UNITS["GiB"] / BYTE_UNITS["GB"] - 1, 1),
        "gpu_usable": fmt.nbytes(usable, "GB"),
        "gpu_usable_gib": fmt.nbytes(usable, "GiB", 1),
        "reserve": fmt.percent(reserve.value.fraction, 1 if reserve.value.value % 1 else 0),
        "hbm": tbps(hbm),
        "hbm_gbs": fmt.bandwidth(hbm),
        "hbm_old": tbps(hbm_old),
        "hbm_gain": fmt.ratio(hbm.ratio(hbm_old), 2, basis="H100 ÷ A100, one way each"),
        "sweep": ms(step_time(cap, hbm)),
        "sweep_old": ms(step_time(old.memory.bytes, hbm_old)),
        "fp16_bytes": fmt.quantity(fp16_bpp, "bytes/param", 0),
        "flop_per_param": fmt.count(FLOP_PER_PARAM_PER_TOKEN, "FLOP"),
        "intensity_fp16": fmt.quantity(flop_per_byte(fp16_bpp), "FLOP/byte", 0),
        "intensity_fp16_batch": fmt.quantity(flop_per_byte(fp16_bpp, ILLUSTRATIVE_BATCH), "FLOP/byte", 0),
        "old_bf16": fmt.quantity(dense.per_s / 1e12, "TFLOP/s", 0, show_unit=True, basis="dense BF16"),
        "ridge_old": fmt.quantity(ridge_old, "FLOP/byte", 0, basis="dense BF16 FLOP/s ÷ HBM bandwidth"),
        "ridge_gap": fmt.ratio(ridge_old / intensity, 0, basis="ridge point ÷ batch-1 FP16 intensity"),
        "h100_sparse_only": fmt.claim(acc.bf16.sparsity == "sparse", f"{acc.name}: BF16 figure is {acc.bf16.sparsity}"),
        "compute_waits": fmt.claim(ridge_old > 10 * intensity,
                                   f"{ridge_old:.0f} FLOP/byte the chip can do against {intensity:.0f} decoding needs"),
        "batch_n": fmt.count(ILLUSTRATIVE_BATCH, "sequences"),
        "kv_tensors": fmt.count(KV_TENSORS, "tensors"),
        "context": fmt.count(ctx.value.count, "tokens"),
        "context_low": fmt.count(ctx.range[0], "tokens"),
        "context_max": fmt.count(ctx.range[1], "tokens"),
        "fp16_cap": params(max_params(cap, fp16_bpp)),
        "fp16_cap_usable": params(max_params(usable, fp16_bpp)),
        "int4_cap_usable": params(max_params(usable, int4_bpp)),
        "w70_int4": fmt.nbytes(w70_int4, "GB", 1),
        "w": w,
        "int8_same_hour": fmt.quantity(hour["w8"] * SECONDS_PER_HOUR, "tokens/GPU-hour", 0),
        "a70": a70,
        "int8_hour_gain": fmt.ratio(hour["w8"] / hour["w"], 2, basis="INT8 ÷ FP16 tokens per GPU-hour, H100"),
        "h100_hour_gain": fmt.ratio(hour["w"] / hour["a70"], 2, basis="H100 ÷ A100 tokens per GPU-hour, FP16"),
        "s405": s405,
        "kv_max": fmt.nbytes(kv70_max, "GB", 1),
        "kv_max_share": fmt.percent(kv70_max_share, 0),
        "gen5": fmt.bandwidth(gen5, digits=1),
        "hbm_over_gen5": fmt.ratio(hbm.one_way().ratio(gen5), 0, basis="one way each"),
        "pcie_tps": fmt.quantity(t_pcie, "tokens/s", 2),
        # Claims the prose makes.
        "w70_exceeds_card": fmt.claim(
            w.decode.sizing.gpus_with_headroom > 1,
            f"{w.decode.weights / 1e9:.0f} GB of weights > {usable / 1e9:.1f} GB usable per card"),
        "h100_faster": fmt.claim(hbm.ratio(hbm_old) > 1, f"{hbm.in_unit('GB/s'):.0f} > {hbm_old.in_unit('GB/s'):.0f} GB/s"),
        "kv_small_at_batch1": fmt.claim(kv_share < 0.05, f"KV is {kv_share:.1%} of the bytes per token"),
        "nfold": fmt.claim(
            abs(d405.replica_bw.ratio(d405.hbm) - d405.layout.gpus) < 1e-9,
            f"{d405.layout.gpus} GPUs × one GPU's bandwidth"),
        "pp_splits_sequence": fmt.claim(
            d405.layout.pp > 1, f"layout {d405.layout.label}: {d405.layout.pp} stages in turn"),
        "kv_max_not_small": fmt.claim(kv70_max_share > 0.1, f"KV is {kv70_max_share:.0%} of the bytes per token"),
        "int4_70b_fits": fmt.claim(w70_int4 <= usable, f"{w70_int4 / 1e9:.1f} GB ≤ {usable / 1e9:.1f} GB usable"),
        "batch_helps": fmt.claim(
            w.decode.kv_room > 0 and max_batch(w.decode.kv_room, w.decode.context, w.decode.kv_per_token) > 1,
            "more than one sequence's KV cache fits beside the weights"),
        "h100_more_per_gpu_hour": fmt.claim(
            hour["w"] > hour["a70"], f"{hour['w'] * 3600:,.0f} > {hour['a70'] * 3600:,.0f} tokens per GPU-hour"),
        "int8_nearly_doubles": fmt.claim(
            1.5 < hour["w8"] / hour["w"] <= 2.0, f"INT8 ÷ FP16 per GPU-hour = {hour['w8'] / hour['w']:.2f}"),
        "hbm_gt_10x_pcie": fmt.claim(hbm.one_way().ratio(gen5) > 10,
                                     f"HBM ÷ PCIe 5.0 x16 one way = {hbm.one_way().ratio(gen5):.0f}"),
    }


CHART_MODEL = "llama-3.1-8b"
CHART_PRECISION = "fp8"


def ceiling_chart(cat: Catalog) -> str:
    """Tokens-per-second ceiling of one sequence on one accelerator, for every accelerator in data/.

    The model is small enough (Llama 3.1 8B in FP8) to sit on one card of each, so the bars compare
    the cards' memory bandwidth alone: ceiling = HBM bandwidth ÷ weight bytes (weights only).
    """
    model, precision = cat.models[CHART_MODEL], cat.precisions[CHART_PRECISION]
    w = weight_bytes(model.nominal_params.count, precision.bits_per_param / 8)
    rows = sorted(
        ((acc.name, tokens_per_s_ceiling(w, acc.memory_bandwidth.bandwidth)) for acc in cat.accelerators.values()),
        key=lambda r: -r[1],
    )
    bars_ = [charts.Bar(name, tok) for name, tok in rows]
    words = (
        f"Upper bound on tokens per second for one sequence of {model.name} in {precision.name} "
        f"({w / 1e9:,.0f} GB of weights), memory bandwidth ÷ weight bytes, by accelerator: from "
        f"{rows[0][1]:,.0f} on the {rows[0][0]} to {rows[-1][1]:,.0f} on the {rows[-1][0]}."
    )
    svg = charts.bars("ceiling-chart", bars_, "tokens per second, one sequence (ceiling)",
                      "Decode ceiling by accelerator", words)
    return charts.figure(svg, words)

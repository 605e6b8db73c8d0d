"""The KV-cache page's tables and chart: bytes per token, the pool, replication, cost, the chart over context."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from snippets.data import Catalog
from snippets.engine import Layout, deploy
from snippets.engine.deployment import Deployment, Setting
from snippets.engine.layout import kv_heads_per_gpu, kv_replicas
from snippets.engine.params import kv_bytes_per_token, kv_elements_per_token
from snippets.engine.specs import PriceSpec
from snippets.engine.timing import Prediction, predict
from snippets.pages import units
from snippets.pages.kv_cache.common import (
    CHART_CONCURRENCY,
    COST_ROWS,
    GIB,
    KV_FP8,
    MIDDLE_CONTEXT,
    PADDED_ROW,
    POOL_ROWS,
    REPLICATION_TPS,
    WORKED,
    at,
    gib,
    kv_token_gpu,
    longest_context,
    seqs,
    sequences_fit,
    tokens,
)
from snippets.pages.scenario import SERVING, reference
from snippets.pages.units import byte_count, cached_attention, usd
from snippets.render import charts, fmt
from snippets.render.fmt import Figure

# --------------------------------------------------------------------------- tables

def kv_table(cat: Catalog) -> str:
    """KV bytes per token of every model in data/models.yaml, and one sequence's cache at the scenario's
    context and at the model's longest."""
    r = reference(cat)
    ctx = r.scenario.context_tokens
    bf16 = r.eng.precisions[r.scenario.kv_precision].bytes_per_param
    rows: list[list[fmt.Cell]] = []
    for mid, m in r.eng.models.items():
        a = m.architecture
        longest = longest_context(cat, mid)
        per_tok = kv_bytes_per_token(a, bf16, context_tokens=ctx)
        cached = f"{a.mla.kv_lora_rank} + {a.mla.qk_rope_head_dim}" if a.mla else f"(K, V) × {a.kv_heads} × {a.head_dim}"
        beyond = longest is not None and longest < ctx
        rows.append([
            m.name, cached_attention(a), fmt.count(a.layers, "layers"), cached,
            fmt.quantity(kv_elements_per_token(a, context_tokens=ctx), "values", 0),
            byte_count(per_tok),
            "beyond its context" if beyond else fmt.nbytes(per_tok * ctx, "GB", 2),
            "not recorded" if longest is None else tokens(longest),
            "—" if longest is None else fmt.nbytes(kv_bytes_per_token(a, bf16, context_tokens=longest) * longest, "GB", 1),
        ])
    return fmt.table("kv", ["Model", "Attention", "Layers", "Cached per layer and token", "Values per token",
                            "Bytes per token", "One sequence, scenario context", "Longest context",
                            "One sequence, longest"], rows, align="llrrrrrrr")


def pool_rows(cat: Catalog) -> list[tuple[str, Setting, Layout]]:
    r = reference(cat)
    out = []
    for model, precision, tp in POOL_ROWS:
        st = at(r, model, precision)
        out.append((f"{st.model.name} {st.precision.name}, {Layout(tp).label}", st, Layout(tp)))
        if (model, precision, tp) == PADDED_ROW[:3]:
            padded = at(r, model, precision, moe_kernel=PADDED_ROW[3])
            out.append((f"{out[-1][0]}, {PADDED_ROW[3].capitalize()} kernel", padded, Layout(tp)))
    return out


def pool_table(cat: Catalog) -> str:
    """What the memory policy leaves for the KV cache on each GPU, and how many sequences that holds: at the
    scenario's context with a BF16 and an FP8 KV cache, at a longer context and at the longest."""
    r = reference(cat)
    ctx = r.scenario.context_tokens
    ctx_max = longest_context(cat, WORKED[0])
    assert ctx_max is not None  # noqa: S101 - Llama 3.1's comes from the decode-context assumption
    rows: list[list[fmt.Cell]] = []
    for label, st, lay in pool_rows(cat):
        m = st.memory(lay)
        mid = st.model.id
        longest = longest_context(cat, mid)

        def fit(n: int, kv: str | None = None, mid: str = mid, st: Setting = st, lay: Layout = lay,
                longest: int | None = longest) -> fmt.Cell:
            if longest is not None and n > longest:
                return "beyond its context"
            return seqs(sequences_fit(at(r, mid, st.precision.id, context_tokens=n, kv_precision=kv,
                                         moe_kernel=st.memory_policy.moe_kernel or None), lay))

        rows.append([
            label, gib(m.weights), gib(m.activations + m.non_torch, 2), gib(m.kv_room),
            fmt.percent(m.kv_room / m.capacity, 0),
            fit(ctx), fit(ctx, KV_FP8), fit(MIDDLE_CONTEXT), fit(ctx_max),
        ])
    return fmt.table("pool", ["Deployment", "Weights per GPU", "Runtime per GPU", "Left for KV per GPU",
                              "Share of the card", "Sequences, scenario context", "Same, FP8 KV cache",
                              "Sequences, middle context", "Sequences, longest context"], rows)


def replication_rows(cat: Catalog) -> list[dict[str, Any]]:
    r = reference(cat)
    st = at(r, *WORKED)
    arch = st.model.architecture
    out = []
    for tp in REPLICATION_TPS:
        m = st.memory(Layout(tp))
        per_gpu = kv_token_gpu(st, tp)
        out.append({"tp": tp, "heads": kv_heads_per_gpu(arch.kv_heads, tp), "copies": kv_replicas(arch.kv_heads, tp),
                    "per_gpu": per_gpu, "group": per_gpu * tp, "room": m.kv_room, "seqs": m.max_sequences,
                    "weights": m.weights})
    return out


def replication_table(cat: Catalog) -> str:
    """KV heads per GPU, copies of each, and the KV cache per token on one GPU and on the whole TP group, for
    the worked model from TP1 to TP16."""
    rows: list[list[fmt.Cell]] = []
    for x in replication_rows(cat):
        rows.append([
            Layout(x["tp"]).label, fmt.count(x["heads"], "heads"), fmt.count(x["copies"], "copies"),
            byte_count(x["per_gpu"]), byte_count(x["group"]), gib(x["weights"]), gib(max(0.0, x["room"])),
            seqs(x["seqs"]),
        ])
    return fmt.table("replication", ["TP", "KV heads per GPU", "Copies of each KV head", "KV per token, one GPU",
                                     "KV per token, whole group", "Weights per GPU", "Left for KV per GPU",
                                     "Sequences, scenario context"], rows)


@dataclass(frozen=True)
class CostRow:
    label: str
    d: Deployment
    p: Prediction

    @property
    def per_dollar_hour(self) -> float:
        c = self.d.cost_per_replica_hour
        if c is None:
            raise ValueError(f"{self.d.setting.chip.name}: the cost lens needs a price in data/prices.yaml")
        return self.d.max_concurrency / c

    @property
    def price(self) -> PriceSpec:
        """The price this row's costs rest on."""
        pr = self.d.setting.price
        if pr is None:
            raise ValueError(f"{self.d.setting.chip.name}: the cost lens needs a price in data/prices.yaml")
        return pr

    def per_dollar(self) -> Figure:
        """Sequences held per dollar-hour of rent, dated by the price it rests on."""
        return units.dated(fmt.quantity(self.per_dollar_hour, "sequences per $/hour", 1), self.price)

    @property
    def usd_per_mtok(self) -> float:
        x = self.p.usd_per_mtok_output
        if x is None:
            raise ValueError(f"{self.d.setting.chip.name}: the cost lens needs a price in data/prices.yaml")
        return x


def cost_rows(cat: Catalog) -> list[CostRow]:
    """The worked model on each layout, kept full: as many sequences in flight as its KV cache holds, timed by
    `predict` at the scenario's request shape."""
    r = reference(cat)
    out = []
    for tp, kv in COST_ROWS:
        st = at(r, *WORKED, kv_precision=kv)
        d = deploy(st, Layout(tp))
        label = f"{d.layout.label}, {st.kv_precision.name} KV cache"
        out.append(CostRow(label, d, predict(d, concurrency=d.max_concurrency)))
    return out


def cost_table(cat: Catalog) -> str:
    rows: list[list[fmt.Cell]] = []
    for c in cost_rows(cat):
        cost = c.d.cost_per_replica_hour
        assert cost is not None  # noqa: S101 - per_dollar_hour raised already if not
        rows.append([
            c.label, fmt.count(c.d.gpus), seqs(c.d.max_concurrency), usd(cost, c.price),
            c.per_dollar(),
            units.tps_banded(c.p),
            units.tpot_banded(c.p),
            units.mtok_banded(c.p, c.price),
        ])
    return fmt.table("cost", ["Layout", "GPUs", "Sequences held", "Replica per hour", "Sequences per $/hour",
                              "Output", "Time per output token", "Per million output tokens"], rows)


def _rent(c: CostRow) -> float:
    x = c.d.cost_per_replica_hour
    if x is None:
        raise ValueError(f"{c.d.setting.chip.name}: the cost lens needs a price in data/prices.yaml")
    return x


# --------------------------------------------------------------------------- the chart

def kv_chart(cat: Catalog) -> str:
    """KV cache per GPU of the worked model on the serving layout, for contexts x sequences in flight, with the
    pool's room for it as a dashed line."""
    r = reference(cat)
    lay = r.deployment(*WORKED, scenario=SERVING).layout
    contexts = chart_contexts(cat)
    room = at(r, *WORKED).memory(lay).kv_room
    bars_ = []
    for c in CHART_CONCURRENCY:
        group = f"{c} seq" + ("" if c == 1 else "s")
        for n in contexts:
            m = at(r, *WORKED, context_tokens=n, concurrency=c).memory(lay)
            bars_.append(charts.Bar(f"{n:,} tokens", m.kv_cache / GIB, group=group))
    name = r.eng.models[WORKED[0]].name
    top = max(b.value for b in bars_)
    words = (f"KV cache per GPU of {name} in BF16 on {lay.label} of {r.node.name}, in GiB, for "
             f"{', '.join(str(c) for c in CHART_CONCURRENCY)} sequences in flight at "
             f"{', '.join(f'{n:,}' for n in contexts)} tokens each: from "
             f"{min(b.value for b in bars_):,.2f} GiB to {top:,.0f} GiB. The dashed line is what the pool "
             f"leaves for the KV cache on each GPU, {room / GIB:,.1f} GiB: every bar above it does not fit.")
    log = charts.wants_log_axis([b.value for b in bars_])  # from one short sequence to many long ones: decades
    svg = charts.grouped_bars("kv-chart", bars_, "GiB per GPU", "KV cache per GPU against context and sequences",
                              words, line=room / GIB, line_label="left for KV per GPU", log=log)
    return charts.figure(svg, words)


def chart_contexts(cat: Catalog) -> tuple[int, ...]:
    r = reference(cat)
    ctx_max = longest_context(cat, WORKED[0])
    assert ctx_max is not None  # noqa: S101
    return (r.scenario.context_tokens, MIDDLE_CONTEXT, ctx_max)

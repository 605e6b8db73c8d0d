"""The parallelism page's diagrams: one layer split over a TP group, a ring all-reduce step by step, a pipeline's
schedule and its bubble."""

from __future__ import annotations

from snippets.data import Catalog
from snippets.engine import Deployment
from snippets.engine.collectives import Collective
from snippets.engine.ops import ACTIVATION_BYTES
from snippets.engine.timing import ALLREDUCES_PER_LAYER
from snippets.pages.parallelism.common import (
    PIPE_MICRO,
    WORKED,
    Traffic,
    share,
    traffic,
)
from snippets.pages.parallelism.steps import (
    TPShard,
    bubble,
    ring_steps_of,
    tp_allreduce,
    tp_shard,
)
from snippets.render import charts, fmt


def _tp_diagram_parts(cat: Catalog) -> tuple[Deployment, TPShard, Collective]:
    d = traffic(cat, *WORKED).dep
    return d, tp_shard(d), tp_allreduce(d, 1)


def tp_diagram(cat: Catalog) -> str:
    """One layer of the worked model split over its TP group, drawn with the per-GPU shapes, and its caption."""
    from snippets.render import diagrams

    d, sh, ar = _tp_diagram_parts(cat)
    a, n, num = d.setting.model.architecture, sh.tp, fmt.number
    name = d.setting.model.name
    ar_text = f"all-reduce of {n} partial sums: {num(ar.seconds * 1e6, 2)} µs"

    def kv_tip(i: int) -> str:
        if sh.kv_heads == 1:
            return f"KV head {i // sh.kv_replicas + 1}"
        return f"KV heads {i * sh.kv_heads + 1}–{(i + 1) * sh.kv_heads}"

    heads_tip = [f"GPU {i}: query heads {i * sh.heads + 1}–{(i + 1) * sh.heads}, {kv_tip(i)}" for i in range(n)]
    ffn_tip = [f"GPU {i}: FFN columns {num(i * sh.ffn + 1)}–{num((i + 1) * sh.ffn)}" for i in range(n)]
    mlp_in = "gate and up" if sh.gated else "up"
    kv_word = "KV head" if sh.kv_heads == 1 else "KV heads"
    blocks = [
        diagrams.Block(
            "Attention",
            diagrams.Split("Q, K, V: columns split by heads", "col",
                           [f"each GPU: {sh.heads} query heads, {sh.kv_heads} {kv_word}",
                            f"{num(sh.hidden)} × {num(sh.qkv_cols)} of the weights"], heads_tip),
            diagrams.Split("O: rows split", "row",
                           [f"each GPU: {num(sh.o_rows)} rows", f"of {num(sh.hidden)} columns;", "out: a partial sum"],
                           [f"GPU {i}: rows {num(i * sh.o_rows + 1)}–{num((i + 1) * sh.o_rows)} of O" for i in range(n)]),
            ar_text),
        diagrams.Block(
            "MLP",
            diagrams.Split(f"{mlp_in}: columns split", "col",
                           [f"each GPU: {num(sh.ffn)} of the {num(a.ffn_size)} FFN columns",
                            f"{'2 × ' if sh.gated else ''}{num(sh.hidden)} × {num(sh.ffn)} of the weights"], ffn_tip),
            diagrams.Split("down: rows split", "row",
                           [f"each GPU: {num(sh.ffn)} rows", f"of {num(sh.hidden)} columns;", "out: a partial sum"],
                           [f"GPU {i}: rows {num(i * sh.ffn + 1)}–{num((i + 1) * sh.ffn)} of down" for i in range(n)]),
            ar_text),
    ]
    title = f"One layer of {name} split over a TP group of {n} GPUs"
    desc = (f"Every GPU holds the whole input, a hidden state of {num(sh.hidden)}. In attention, the Q, K and V "
            f"projections are split by columns, {sh.heads} query heads and {sh.kv_heads} {kv_word} per GPU; the "
            f"output projection O is split by rows, so each GPU holds a partial sum of the output, and an "
            f"all-reduce adds them. In the MLP, {mlp_in} are split by columns, {num(sh.ffn)} of "
            f"{num(a.ffn_size)} per GPU, down by rows, and a second all-reduce adds the partial sums.")
    svg = diagrams.tp_layer("tp-split", n, f"input: {num(sh.hidden)} per token, on every GPU", blocks, title, desc)
    caption = (f"One layer of {name} on the TP group of {n} GPUs of {d.layout.label}. Each GPU holds "
               f"{sh.heads} of the {a.attention_heads} query heads and {sh.kv_heads} of the {a.kv_heads} KV heads "
               f"(Q, K, V {num(sh.hidden)} × {num(sh.qkv_cols)}), {num(sh.o_rows)} rows of O, and "
               f"{num(sh.ffn)} of the {num(a.ffn_size)} FFN columns of {mlp_in} and rows of down. Each block "
               f"ends in an all-reduce of {num(sh.hidden * ACTIVATION_BYTES)} bytes per token, {ar.algorithm} on "
               f"NVLink in {num(ar.seconds * 1e6, 2)} µs: {ALLREDUCES_PER_LAYER * a.layers} per token over "
               f"{a.layers} layers.")
    return charts.figure(svg, caption)


def _ring_parts(cat: Catalog) -> tuple[Traffic, int, dict[str, list[float]], str]:
    t = traffic(cat, *WORKED)
    n = t.dep.layout.tp
    chosen = tp_allreduce(t.dep, 1).algorithm
    return t, n, ring_steps_of(t.dep, t.message), {"nccl": "ring"}.get(chosen, chosen)


def ring_diagram(cat: Catalog) -> str:
    """A ring all-reduce of one token's hidden state over the worked TP group, step by step, beside two-shot and
    one-shot on one time axis, each taking the engine's price of its algorithm (NCCL's for the ring)."""
    from snippets.render import diagrams

    t, n, steps, chosen = _ring_parts(cat)

    def u(x: float) -> str:
        return fmt.number(x * 1e6, 2)

    def caption(name: str) -> str:
        st = steps[name]
        return f"{len(st)} × {u(st[0])} µs = {u(sum(st))} µs" if len(st) > 1 else f"{u(st[0])} µs"

    labels = {"ring": ["RS"] * (n - 1) + ["AG"] * (n - 1), "two-shot": ["RS", "AG"], "one-shot": ["all"]}
    algos = {k: diagrams.Algorithm(k, steps[k], labels[k], caption(k), chosen=k == chosen) for k in steps}
    title = f"A ring all-reduce over {n} GPUs, beside two-shot and one-shot"
    desc = (f"One token's hidden state, {fmt.number(t.message)} bytes, all-reduced over {n} GPUs on NVLink. The ring "
            f"takes {2 * (n - 1)} steps, {n - 1} of reduce-scatter then {n - 1} of all-gather; at each step every "
            f"GPU sends one chunk, 1/{n} of the message, to the next: NCCL's price spread over its steps, "
            f"{u(steps['ring'][0])} µs a step. Two-shot takes 2 steps of {u(steps['two-shot'][0])} µs, one-shot 1 "
            f"step of {u(steps['one-shot'][0])} µs. The engine picks {chosen}.")
    svg = diagrams.allreduce_steps("ring-steps", n, algos["ring"], [algos["two-shot"], algos["one-shot"]], "µs", 1e6,
                                   title, desc)
    rs = steps["ring"][0]
    cap = (f"An all-reduce of one token of {t.model} ({fmt.number(t.message)} bytes) over the {n} GPUs of "
           f"{t.dep.layout.label}'s TP group on NVLink. Each cell is the chunk ({fmt.number(t.message / n)} bytes) "
           f"a GPU sends to the next: {n - 1} reduce-scatter steps, then {n - 1} all-gather steps, {u(rs)} µs each "
           f"at NCCL's price; the ring takes {u(sum(steps['ring']))} µs, vLLM's custom two-shot "
           f"{u(sum(steps['two-shot']))} µs and one-shot {u(sum(steps['one-shot']))} µs, and the engine picks "
           f"{chosen}.")
    return charts.figure(svg, cap)


def pipeline_diagram(cat: Catalog) -> str:
    """The worked layout's pipeline, forward only, with one micro-batch and with more: its boxes and its bubble."""
    from snippets.render import diagrams

    d = traffic(cat, *WORKED).dep
    p = d.layout.pp
    if p < 2:
        raise ValueError(f"{d.layout.label} has no pipeline stages to draw")

    def word(m: int) -> str:
        return f"{m} micro-batch" + ("es" if m > 1 else "")

    def pct(m: int) -> str:
        return share(bubble(p, m)).text

    schedules = [diagrams.Schedule(m, f"{word(m)}: {p * (p - 1)} of {p * (m + p - 1)} slots idle, {pct(m)}")
                 for m in PIPE_MICRO]
    title = f"A pipeline of {p} stages with {' and with '.join(word(m) for m in PIPE_MICRO)}"
    desc = (f"Each row is a stage of {d.layout.label}, each column a time slot. Micro-batch j enters stage s at slot "
            f"s + j; the idle boxes are the bubble, "
            + "; ".join(f"with {word(m)} {p * (p - 1)} idle of {p * (m + p - 1)}, {pct(m)}" for m in PIPE_MICRO)
            + ".")
    svg = diagrams.pipeline("pipe-schedule", p, schedules, "time → one slot: one stage, one micro-batch",
                            title, desc)
    cap = (f"{d.setting.model.name} on {d.layout.label}: {p} stages, forward only, as in decoding. The bubble, "
           f"the idle share of the stages' slots, is "
           + " and ".join(f"{p - 1}/{m + p - 1} = {pct(m)} with {word(m)}" for m in PIPE_MICRO)
           + f": in both, {p * (p - 1)} idle boxes (the stages times one fewer), while the schedule grows by one "
           f"slot per micro-batch.")
    return charts.figure(svg, cap)

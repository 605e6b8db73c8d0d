"""Page model of the models reference (docs/reference/models.md).

Architecture fields from each model's config.json (or paper), the parameter count recomputed from
them by `snippets.params` against the count the model card states, and KV-cache bytes per token.
"""

from __future__ import annotations

from snippets.data import Catalog, Model
from snippets.engine.memory import weight_bytes
from snippets.engine.params import (
    attention_params,
    card_params,
    embedding_params,
    ffn_layer_params,
    kv_bytes_per_token,
    layer_norm_params,
    layer_params,
    lm_head_params,
    relative_error,
    total_params,
    vision_params,
)
from snippets.engine.specs import Arch
from snippets.pages import parallelism
from snippets.pages.base import Page
from snippets.pages.reference_common import as_of, binary_bytes, source_links
from snippets.pages.units import active_as_counted, attention_kind, encoder_builders
from snippets.render import fmt

KV_PRECISION = "bf16"
TOLERANCE = 0.02
"""How far a recomputed count may lie from the stated one; tests/unit/test_params.py enforces it."""
KEPT_EXAMPLE = "gpt-oss-120b"
"""The model whose shipped checkpoint the page's sentence on 16-bit layers takes as its example."""
WORKED = "llama-3.1-70b"


def features(arch: Arch) -> str:
    """The architecture's departures from a Llama-style dense model, in words."""
    out = [attention_kind(arch), "SwiGLU MLP" if arch.mlp == "gated" else "plain MLP",
           "RMSNorm" if arch.norm == "rmsnorm" else "LayerNorm",
           "RoPE" if arch.position_embeddings == "rope" else "learned positions"]
    if arch.qkv_bias:
        out.append("QKV biases")
    if arch.linear_bias:
        out.append("biases on every linear layer")
    if arch.qk_norm:
        out.append("query and key norms")
    if arch.attention_sinks:
        out.append("attention sinks")
    if arch.sliding_window is not None:
        which = "alternate layers" if arch.sliding_window_layers == "alternate" else "every layer"
        out.append(f"{arch.sliding_window:,}-token sliding window on {which}")
    out.append("tied embeddings" if arch.tied_embeddings else "untied LM head")
    if arch.moe is not None:
        m = arch.moe
        moe = f"MoE {m.active_experts} of {m.experts} routed experts"
        if m.shared_experts:
            moe += f" + {m.shared_experts} shared"
        if m.router_bias:
            moe += ", router bias"
        if m.dense_layers:
            moe += f", first {m.dense_layers} layers dense"
        if m.layer_step > 1:
            moe += f", every {_ordinal(m.layer_step)} layer routed, the others dense"
        out.append(moe)
    if arch.vision is not None:
        v = arch.vision
        out.append(f"image encoder ({v.layers} layers of {v.hidden_size:,}, {sum(vision_params(arch)) / 1e9:.2f}B)")
    return ", ".join(out)


def _ordinal(n: int) -> str:
    return {2: "second", 3: "third", 4: "fourth"}.get(n, f"{n}th")


_KEPT = {frozenset({"attention_in", "attention_out"}): "attention", frozenset({"attention_in"}): "attention but o_proj",
         frozenset({"attention_out"}): "o_proj"}
"""How the checkpoint column names the linear layers a 4-bit checkpoint keeps at 16 bits (`ModelSpec.keeps_16bit`)."""


def _with_kept(cat: Catalog, m: Model, pid: str) -> str:
    kept = m.keeps_16bit.get(pid, frozenset())
    name = cat.precisions[pid].name
    return f"{name} ({_KEPT[frozenset(kept)]} in BF16)" if kept else name


def checkpoint(cat: Catalog, m: Model) -> str:
    """The precisions the developer released the weights in, main checkpoint first, each with the linear layers it
    keeps at 16 bits."""
    if m.checkpoint_precision is None:
        return "not recorded"
    return ", ".join(_with_kept(cat, m, p) for p in [m.checkpoint_precision, *m.other_checkpoint_precisions])


def context(a: Arch) -> fmt.Cell:
    return "not recorded" if a.context_length is None else fmt.count(a.context_length, "tokens")


def context_of(m: Model) -> str:
    """Which checkpoint the context length is, where a model's checkpoints differ, with the others' lengths; a model
    with no published checkpoint (GPT-3) has no config.json, and its context is its paper's."""
    if m.context_checkpoint is None:
        return "its config.json" if m.checkpoint_precision is not None else "its paper (no published checkpoint)"
    others = "; ".join(f"{name}: {n:,}" for name, n in m.context_by_checkpoint.items() if name != m.context_checkpoint)
    return f"{m.context_checkpoint} (others: {others})" if others else m.context_checkpoint


def architecture_table(cat: Catalog) -> str:
    """The config.json fields each model is computed from."""
    rows: list[list[fmt.Cell]] = []
    for m in cat.models.values():
        a = m.architecture
        dense_too = a.moe is not None and (a.moe.dense_layers or a.moe.layer_step > 1)
        ffn = a.ffn_size if a.moe is None or dense_too else a.moe.expert_ffn_size
        rows.append([m.name, fmt.count(a.layers, "layers"), fmt.count(a.hidden_size, "channels"),
                     fmt.count(a.attention_heads, "heads"), fmt.count(a.kv_heads, "heads"),
                     fmt.count(a.head_dim, "channels"), fmt.count(ffn, "channels"),
                     fmt.count(a.vocab_size, "tokens"), context(a), context_of(m), checkpoint(cat, m), features(a),
                     source_links(m)])
    return fmt.table("architecture", ["Model", "Layers", "Hidden", "Heads", "KV heads", "Head dim", "MLP width",
                                      "Vocabulary", "Context", "Context of", "Checkpoint", "Features", "Sources"],
                     rows, align="lrrrrrrrrllll") + as_of(cat.models.values())


def params_table(cat: Catalog) -> str:
    """Stated against recomputed parameter counts, total and (MoE) active per token."""
    rows: list[list[fmt.Cell]] = []
    for m in cat.models.values():
        a = m.architecture
        total = card_params(a)
        err = relative_error(total, m.stated_params)
        if m.stated_active_params is None:
            act_s: fmt.Cell = "all"
            act_c: fmt.Cell = "all"
        else:
            act = active_as_counted(a, m.stated_active_excludes_embedding)
            act_s = fmt.params(m.stated_active_params, 1)
            act_c = fmt.params(act, 2)
        rows.append([m.name, fmt.params(m.nominal_params, 1), fmt.params(m.stated_params, 1),
                     fmt.params(total, 2), fmt.Figure(err * 100, "%", f"{err * 100:+.2f}%", "computed vs stated"),
                     act_s, act_c, source_links(m)])
    return fmt.table("params", ["Model", "Size in its name", "Stated", "Computed", "Difference",
                                "Active per token, stated", "Active per token, computed", "Sources"],
                     rows, align="lrrrrrrl") + as_of(cat.models.values())


def kv_table(cat: Catalog) -> str:
    """KV-cache bytes per token, per thousand tokens and per sequence at the model's context length where the data
    gives one (a sliding-window layer holds no more than its window of a sequence)."""
    bpe = cat.precisions[KV_PRECISION].width_bytes
    rows: list[list[fmt.Cell]] = []
    for m in cat.models.values():
        a = m.architecture
        per_tok = kv_bytes_per_token(a, bpe)
        thousand = kv_bytes_per_token(a, bpe, context_tokens=1000) * 1000
        whole: fmt.Cell = "not recorded"
        if a.context_length is not None:
            whole = fmt.nbytes(kv_bytes_per_token(a, bpe, context_tokens=a.context_length) * a.context_length, "GB", 1)
        rows.append([m.name, attention_kind(a), binary_bytes(per_tok, "KiB", 1), fmt.nbytes(per_tok, "KB", 1),
                     fmt.nbytes(thousand, "MB", 0), whole, source_links(m)])
    return fmt.table("kv", ["Model", "Attention", f"Per token ({cat.precisions[KV_PRECISION].name}, KiB)",
                            "Per token (KB)", "Per thousand tokens", "One sequence at its context length",
                            "Sources"], rows,
                     align="llrrrrl") + as_of(cat.models.values())


def worked_params(cat: Catalog, model_id: str = WORKED) -> str:
    """One model's count, part by part, as a Markdown list of figure spans."""
    m: Model = cat.models[model_id]
    a = m.architecture
    h = fmt.fig_html
    attn, mlp, norms = attention_params(a), ffn_layer_params(a, 0), layer_norm_params(a)
    block = layer_params(a, 0)
    emb, head, total = embedding_params(a), lm_head_params(a), total_params(a)
    def c(n: int, name: str) -> str:
        return h(fmt.Figure(n, "params", f"{n:,}"), f"worked.{name}")

    lines = [
        f"1. **Attention per layer.** Q and O are {a.hidden_size:,} × {a.attention_heads * a.head_dim:,} each, "
        f"K and V {a.hidden_size:,} × {a.kv_heads * a.head_dim:,} each: {c(attn, 'attention')}.",
        f"2. **MLP per layer.** Gate, up and down, {a.hidden_size:,} × {a.ffn_size:,} each: {c(mlp, 'mlp')}.",
        f"3. **Norms per layer.** Two RMSNorm scales of {a.hidden_size:,}: {c(norms, 'norms')}.",
        f"4. **All {a.layers} layers.** {c(block, 'block')} × {a.layers} = {c(block * a.layers, 'blocks')}.",
        f"5. **Embeddings and LM head.** {a.vocab_size:,} × {a.hidden_size:,} each, untied: "
        f"{c(emb, 'embedding')} + {c(head, 'head')}, and a final norm of {a.hidden_size:,}.",
        f"6. **Total.** {c(total, 'total')}, against the {h(fmt.params(m.stated_params), 'worked.stated')} "
        f"the model card states.",
    ]
    return "\n".join(lines) + "\n"


def used_on_table(cat: Catalog) -> str:
    """Each model with links to the pages that show it (filled in once every page is built: snippets.render.usage)."""
    from snippets.render.usage import placeholder

    rows: list[list[fmt.Cell]] = [[m.name, placeholder("model", k)] for k, m in cat.models.items()]
    return fmt.table("usedon", ["Model", "Shown on"], rows, align="ll") + as_of(cat.models.values())


def layouts_table(cat: Catalog) -> str:
    """The parallelism page's layouts per model and precision (`snippets.pages.parallelism.layout_table`, moved
    here to keep that page short), with the date its models' rows were read."""
    return parallelism.layout_table(cat) + as_of(cat.models[m] for m in parallelism.MODELS)


class ReferenceModelsPage(Page):
    """Names the page's prose uses."""
    shows = (architecture_table, params_table, worked_params, kv_table, layouts_table, used_on_table)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        errs = {k: relative_error(card_params(m.architecture), m.stated_params) for k, m in cat.models.items()}
        worst = max(errs, key=lambda k: abs(errs[k]))
        ds = cat.models["deepseek-v3"]
        l70 = cat.models["llama-3.1-70b"]
        bpe = cat.precisions[KV_PRECISION].width_bytes
        ds_kv, l70_kv = kv_bytes_per_token(ds.architecture, bpe), kv_bytes_per_token(l70.architecture, bpe)
        self.count = fmt.count(len(cat.models), "models")
        self.tolerance = fmt.percent(TOLERANCE)
        self.worst_model = cat.models[worst].name
        self.worst_error = fmt.Figure(abs(errs[worst]) * 100, "%", f"{abs(errs[worst]) * 100:.1f}%", "computed vs stated")
        self.all_within = fmt.claim(all(abs(e) <= TOLERANCE for e in errs.values()),
                                    f"largest |computed - stated| / stated = {abs(errs[worst]):.4f}")
        self.worked_model = l70.name
        self.deepseek = ds.name
        self.llama70 = l70.name
        self.kv_precision = cat.precisions[KV_PRECISION].name
        self.ds_kv = binary_bytes(ds_kv, "KiB", 1)
        self.l70_kv = binary_bytes(l70_kv, "KiB", 1)
        self.mla_smaller = fmt.claim(ds_kv < l70_kv, f"{ds_kv:.0f} B < {l70_kv:.0f} B per token")
        oss = cat.models[KEPT_EXAMPLE]
        assert oss.checkpoint_precision is not None  # noqa: S101 - the example's checkpoint is recorded
        shipped = cat.precisions[oss.checkpoint_precision]
        kept = oss.kept_16bit(shipped)
        extra = weight_bytes(oss.architecture, shipped, kept) - weight_bytes(oss.architecture, shipped)
        eng = self.reference().eng
        self.encoder_vllm = encoder_builders(eng.memory_policies["vllm-default"], eng.chips.values())
        self.encoder_sglang = encoder_builders(eng.memory_policies["sglang-default"], eng.chips.values())
        self.kept_model = oss.name
        self.kept_precision = shipped.name
        self.kept_extra = binary_bytes(extra, "GiB", 2)
        self.kept_attention = fmt.claim(kept == {"attention_in", "attention_out"}, f"kept at 16 bits: {sorted(kept)}",
                                        structural="the checkpoint's own list of unquantized modules (data/models.yaml "
                                                   "keeps_16bit), which the page's test removes to see the claim fail")


namespace = ReferenceModelsPage.namespace_of
sources = ReferenceModelsPage.sources_of

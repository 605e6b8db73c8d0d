"""The KV-cache page model: the names its `{{ ... }}` values and claims use."""

from __future__ import annotations

from typing import Any

from snippets.data import Catalog
from snippets.engine import Layout
from snippets.engine.layout import tp_degrees
from snippets.engine.memory import kv_bytes_per_sequence, padded_expert_shape, paged_tokens
from snippets.engine.params import kv_bytes_per_token
from snippets.pages import running
from snippets.pages.base import Page
from snippets.pages.kv_cache.common import (
    COMPARED,
    GIB,
    KV_FP8,
    MIDDLE_CONTEXT,
    PADDED_ROW,
    REPLICATION_TPS,
    TIGHT_TP,
    WORKED,
    WORKED_TPS,
    Worked,
    at,
    gib,
    kv_token_gpu,
    longest_context,
    seqs,
    sequences_fit,
    tokens,
)
from snippets.pages.kv_cache.tables import (
    _rent,
    cost_rows,
    cost_table,
    kv_chart,
    kv_table,
    pool_rows,
    pool_table,
    replication_rows,
    replication_table,
)
from snippets.pages.scenario import NEWER_VLLM, SERVING, reference
from snippets.pages.units import byte_count, usd
from snippets.render import fmt

# --------------------------------------------------------------------------- names for the prose


class KvCachePage(Page):
    """The names the page's `{{ ... }}` values and claims use."""
    shows = (running.shows("kv-cache"), kv_table, pool_table, kv_chart, replication_table, cost_table)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        r = reference(cat)
        rs = reference(cat, SERVING)
        chip, node = r.eng.chips[r.node.chip], r.node
        pol = r.eng.memory_policies[r.scenario.memory_policy]
        ctx = r.scenario.context_tokens
        sc_serving = rs.scenario
        ctx_max = longest_context(cat, WORKED[0])
        assert ctx_max is not None  # noqa: S101
        kv_bf16 = r.eng.precisions[r.scenario.kv_precision]
        kv_fp8 = r.eng.precisions[KV_FP8]

        # -- bytes per token, the four ways of caching
        cmp: dict[str, dict[str, Any]] = {}
        for key, mid in zip(("mha", "gqa", "mla", "swa"), COMPARED, strict=True):
            m = r.eng.models[mid]
            a = m.architecture
            per_tok = kv_bytes_per_token(a, kv_bf16.bytes_per_param, context_tokens=ctx)
            cmp[key] = {"name": m.name, "arch": a, "per_tok": per_tok,
                        "full": kv_bytes_per_token(a, kv_bf16.bytes_per_param)}
        mha, gqa, mla, swa = cmp["mha"], cmp["gqa"], cmp["mla"], cmp["swa"]
        gqa_arch, mla_arch, swa_arch = gqa["arch"], mla["arch"], swa["arch"]
        assert mla_arch.mla is not None and swa_arch.sliding_window is not None  # noqa: S101
        # MLA's model, had it cached a K and V per attention head: its heads' keys (the per-head and the rotary part,
        # 128 + 64 in DeepSeek-V3) and values (128), as the decompressed attention computes them
        m = mla_arch.mla
        mla_as_mha = (mla_arch.layers * mla_arch.attention_heads * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim)
                      * kv_bf16.bytes_per_param)
        swa_long = kv_bytes_per_token(swa_arch, kv_bf16.bytes_per_param, context_tokens=ctx_max)
        # what vLLM reserves for one sequence of the windowed model (its admission): window + one step per layer
        swa_pol = at(r, COMPARED[3], "bf16").memory_policy
        def reserved(n: int) -> float:
            return kv_bytes_per_sequence(swa_arch, 0, swa_arch.layers, 1, kv_bf16.bytes_per_param, n, swa_pol)
        swa_full_seq = kv_bytes_per_token(swa_arch, kv_bf16.bytes_per_param) * ctx

        # -- the worked example: 32 sequences of the serving scenario's context, TP2 and TP4
        w = {tp: Worked(r, tp) for tp in WORKED_TPS}
        w_lo, w_hi = w[WORKED_TPS[0]], w[WORKED_TPS[1]]
        serving = rs.deployment(*WORKED)
        arch = serving.setting.model.architecture
        need = sc_serving.concurrency
        answer_tp = next((t for t in tp_degrees(arch, node.gpus)
                          if sequences_fit(at(r, *WORKED, scenario=SERVING), Layout(t)) >= need), None)
        if answer_tp is None:
            raise ValueError(f"no TP degree in one node holds {need} sequences of {WORKED[0]}")

        # -- FP8 KV cache on the serving layout
        lay = serving.layout
        st_bf16 = at(r, *WORKED)
        st_fp8 = at(r, *WORKED, kv_precision=KV_FP8)
        n_bf16, n_fp8 = sequences_fit(st_bf16, lay), sequences_fit(st_fp8, lay)

        # -- paging: a sequence one token past a block boundary, and contiguous reservation for the longest context
        block = pol.kv_block_tokens
        partial = r.scenario.input_tokens + 1  # a prompt and its first generated token
        partial_paged = paged_tokens(partial, block)
        per_tok_gpu = kv_token_gpu(st_bf16, lay.tp)
        room = st_bf16.memory(lay).kv_room
        reserve_max = sequences_fit(at(r, *WORKED, context_tokens=ctx_max), lay)
        reserve_waste = 1 - ctx / ctx_max
        worst_waste_bytes = (block - 1) * per_tok_gpu * need

        # -- replication
        rep = {x["tp"]: x for x in replication_rows(cat)}
        t_hi, t_lo = REPLICATION_TPS[-1], REPLICATION_TPS[-2]

        # -- long context on the serving layout and on the whole node
        long_node = sequences_fit(at(r, *WORKED, context_tokens=ctx_max), Layout(node.gpus))
        long_seq = kv_bytes_per_token(gqa_arch, kv_bf16.bytes_per_param) * ctx_max

        # -- the pool table's spread for the worked model
        shares = [st.memory(lay_).kv_room / st.memory(lay_).capacity for _, st, lay_ in pool_rows(cat)
                  if (st.model.id, st.precision.id) == WORKED]

        # -- the pool table's padded row: the same checkpoint under another fused-MoE kernel
        p_model, p_prec, p_tp, p_kernel = PADDED_ROW
        shipped, padded = at(r, p_model, p_prec), at(r, p_model, p_prec, moe_kernel=p_kernel)
        m_shipped, m_padded = shipped.memory(Layout(p_tp), 1), padded.memory(Layout(p_tp), 1)
        p_arch = padded.model.architecture
        (ph, pi), (hp, ip) = padded_expert_shape(p_arch, Layout(p_tp), padded.expert_pad)
        as_shipped, by_default = padded_expert_shape(p_arch, Layout(p_tp), shipped.expert_pad)
        p_refused = padded.kv_refusal(Layout(p_tp))

        # -- the cost lens
        costs = {c.label: c for c in cost_rows(cat)}
        cost_list = list(costs.values())
        c_mid, c_hi, c_fp8 = cost_list
        tight = at(r, *WORKED).kv_refusal(Layout(TIGHT_TP))
        newer = at(r, *WORKED, memory_policy=NEWER_VLLM)  # vLLM's budget from v0.21
        m_newer = newer.memory(Layout(TIGHT_TP), 1)
        cheapest = min(cost_list, key=lambda c: c.usd_per_mtok)
        # the FP8 cache's read: the lens's engine's measured decode kernel at its context (`ChipEfficiency.kv_share`)
        eff = c_fp8.d.setting.time_model.chip(chip.id)
        read_ctx = c_fp8.p.decode.batch.decode_context
        read_engine = c_fp8.d.setting.memory_policy.engine
        share_bf16 = eff.kv_share(read_ctx)
        share_fp8 = eff.kv_share(read_ctx, kv_fp8.tensor_format, read_engine)
        share_trt = eff.kv_share(read_ctx, kv_fp8.tensor_format, "TensorRT-LLM")
        read_ratio = kv_fp8.bytes_per_param / kv_bf16.bytes_per_param * share_bf16 / share_fp8

        # -- the quiz: Llama 3.1 8B's bytes per token, FP8 KV on the serving layout, 128K on a whole node
        small = r.eng.models["llama-3.1-8b"]
        small_tok = kv_bytes_per_token(small.architecture, kv_bf16.bytes_per_param)

        self.gpu_name = chip.name
        self.node_name = node.name
        self.node_gpus = fmt.count(node.gpus)
        self.policy_name = pol.name
        self.utilization = fmt.percent(pol.utilization)
        self.block_tokens = fmt.count(block, "tokens")
        self.context = tokens(ctx)
        self.context_max = tokens(ctx_max)
        self.middle_context = tokens(MIDDLE_CONTEXT)
        self.concurrency = seqs(need)
        self.model_count = fmt.count(len(r.eng.models), "models")
        self.kv_tensors = fmt.count(2, "tensors")
        # the four ways
        self.mha_name = mha["name"]
        self.gqa_name = gqa["name"]
        self.mla_name = mla["name"]
        self.swa_name = swa["name"]
        self.mha_tok = byte_count(mha["per_tok"])
        self.gqa_tok = byte_count(gqa["per_tok"])
        self.mla_tok = byte_count(mla["per_tok"])
        self.swa_tok = byte_count(swa["per_tok"])
        self.swa_full = byte_count(swa["full"])
        self.swa_long = byte_count(swa_long)
        self.swa_batched = tokens(swa_pol.max_num_batched_tokens)
        self.swa_reserved_long = byte_count(reserved(ctx_max) / ctx_max)
        self.swa_reserve_full = fmt.claim(reserved(ctx) >= swa_full_seq,
                                          f"{reserved(ctx):,.0f} bytes reserved against {swa_full_seq:,.0f} for "
                                          f"full attention at {ctx:,} tokens")
        self.mha_heads = fmt.count(mha["arch"].kv_heads, "heads")
        self.gqa_heads = fmt.count(gqa_arch.attention_heads, "heads")
        self.gqa_kv_heads = fmt.count(gqa_arch.kv_heads, "heads")
        self.gqa_group = fmt.count(gqa_arch.attention_heads // gqa_arch.kv_heads, "heads")
        self.gqa_layers = fmt.count(gqa_arch.layers, "layers")
        self.gqa_head_dim = fmt.count(gqa_arch.head_dim, "elements")
        self.mla_heads = fmt.count(mla_arch.attention_heads, "heads")
        self.mla_rank = fmt.count(mla_arch.mla.kv_lora_rank, "elements")
        self.mla_rope = fmt.count(mla_arch.mla.qk_rope_head_dim, "elements")
        self.mla_as_mha = byte_count(mla_as_mha)
        self.mla_saving = fmt.ratio(mla_as_mha / mla["per_tok"], 0, basis="K and V per head ÷ MLA's latent, same model")
        self.mha_over_gqa = fmt.ratio(mha["per_tok"] / gqa["per_tok"], 1, basis="bytes per token, BF16")
        self.gqa_over_mla = fmt.ratio(gqa["per_tok"] / mla["per_tok"], 1, basis="bytes per token, BF16")
        self.swa_window = fmt.count(swa_arch.sliding_window, "tokens")
        self.kv_bf16_bytes = fmt.quantity(kv_bf16.bytes_per_param, "bytes/element", 0)
        self.kv_fp8_bytes = fmt.quantity(kv_fp8.bytes_per_param, "bytes/element", 0)
        self.gqa_seq = fmt.nbytes(gqa["per_tok"] * ctx, "GB", 2)
        self.mha_seq = fmt.nbytes(mha["per_tok"] * ctx, "GB", 1)
        self.long_seq = fmt.nbytes(long_seq, "GB", 1)
        # worked example
        self.w_lo = w_lo
        self.w_hi = w_hi
        self.serving_layout = serving.layout.label
        self.serving_max = seqs(serving.max_concurrency)
        # FP8 KV
        self.n_bf16 = seqs(n_bf16)
        self.n_fp8 = seqs(n_fp8)
        self.fp8_gain = fmt.ratio(n_fp8 / n_bf16, 2, basis="sequences with an FP8 KV cache ÷ with BF16, same layout")
        self.engine = read_engine
        self.read_context = tokens(round(read_ctx))
        self.kv_bf16_share = fmt.percent(share_bf16, 0)
        self.kv_fp8_share = fmt.percent(share_fp8, 0)
        self.kv_read_ratio = fmt.percent(read_ratio, 0)
        self.fp8_read_slower = fmt.claim(share_fp8 < share_bf16 and read_ratio > 0.5,
                                         f"{read_engine}: {share_fp8:.3f} of the HBM (FP8 cache) against {share_bf16:.3f} "
                                         f"(BF16) at {read_ctx:,.0f} tokens; the read takes {read_ratio:.3f} of BF16's")
        self.trt_reads_bf16 = fmt.claim(share_trt == share_bf16, f"TensorRT-LLM: {share_trt:.3f} against {share_bf16:.3f}")
        # paging
        self.partial = tokens(partial)
        self.partial_paged = tokens(partial_paged)
        self.partial_waste = tokens(partial_paged - partial)
        self.partial_blocks = fmt.count(partial_paged // block, "blocks")
        self.worst_waste = fmt.nbytes(worst_waste_bytes, "MiB", 1)
        self.worst_share = fmt.percent(worst_waste_bytes / room, 2)
        self.reserve_max = seqs(reserve_max)
        self.reserve_waste = fmt.percent(reserve_waste, 1)
        self.paged_gain = fmt.ratio(n_bf16 / reserve_max, 0, basis="paged sequences at the scenario's context ÷ "
                                                                     "sequences reserved at the longest")
        # replication
        self.rep_hi = Layout(t_hi).label
        self.rep_lo = Layout(t_lo).label
        self.rep_hi_gpu = byte_count(rep[t_hi]["per_gpu"])
        self.rep_lo_gpu = byte_count(rep[t_lo]["per_gpu"])
        self.rep_copies = fmt.count(rep[t_hi]["copies"], "copies")
        self.rep_hi_seqs = seqs(rep[t_hi]["seqs"])
        self.rep_lo_seqs = seqs(rep[t_lo]["seqs"])
        # long context
        self.long_serving = seqs(reserve_max)
        self.long_node = seqs(long_node)
        self.node_layout = Layout(node.gpus).label
        # cost
        self.c_mid = c_mid
        self.c_hi = c_hi
        self.c_fp8 = c_fp8
        self.c_mid_usd = usd(c_mid.usd_per_mtok, c_mid.price)
        self.c_hi_usd = usd(c_hi.usd_per_mtok, c_hi.price)
        self.c_fp8_usd = usd(c_fp8.usd_per_mtok, c_fp8.price)
        self.c_hi_seqs = seqs(c_hi.d.max_concurrency)
        self.c_mid_per = c_mid.per_dollar()
        self.c_mid_layout = c_mid.d.layout.label
        self.c_hi_layout = c_hi.d.layout.label
        self.c_hi_per = c_hi.per_dollar()
        self.c_fp8_per = c_fp8.per_dollar()
        self.c_fp8_seqs = seqs(c_fp8.d.max_concurrency)
        self.c_mid_seqs = seqs(c_mid.d.max_concurrency)
        self.c_mid_tpot = fmt.quantity(c_mid.p.tpot_s * 1e3, "ms", 1, show_unit=True)
        self.c_fp8_tpot = fmt.quantity(c_fp8.p.tpot_s * 1e3, "ms", 1, show_unit=True)
        self.c_hi_rent = fmt.ratio(_rent(c_hi) / _rent(c_mid), 0, basis="replica's hourly rent")
        self.room_gain = fmt.ratio(w_hi.m.kv_room / w_lo.m.kv_room, 1, basis="room for the KV cache per GPU")
        self.long_share = fmt.percent(long_seq / chip.capacity_bytes, 0)
        self.mha_over_least = fmt.ratio(mha["per_tok"] / swa["per_tok"], 0, basis="bytes per token at the scenario's context")
        self.order_of_magnitude = fmt.claim(mha["per_tok"] / min(mla["per_tok"], swa["per_tok"]) > 10,
                                            f"{mha['per_tok']:,.0f} ÷ {min(mla['per_tok'], swa['per_tok']):,.0f} bytes",
                structural="an order of magnitude: full multi-head attention against its compressed variants")
        # quiz
        self.answer_tp = Layout(answer_tp).label
        self.answer_gpus = fmt.count(answer_tp)
        self.small_name = small.name
        self.small_layers = fmt.count(small.architecture.layers, "layers")
        self.small_kv_heads = fmt.count(small.architecture.kv_heads, "heads")
        self.small_head_dim = fmt.count(small.architecture.head_dim, "elements")
        self.small_tok = byte_count(small_tok)
        self.small_seq = fmt.nbytes(small_tok * ctx, "GB", 2)
        # claims
        self.mha_largest = fmt.claim(mha["per_tok"] > gqa["per_tok"] > swa["per_tok"] and gqa["per_tok"] > mla["per_tok"],
                                     f"{mha['per_tok']:,.0f} > {gqa['per_tok']:,.0f} > {mla['per_tok']:,.0f} bytes")
        self.gqa_shares = fmt.claim(gqa_arch.kv_heads < gqa_arch.attention_heads,
                                    f"{gqa_arch.kv_heads} KV heads for {gqa_arch.attention_heads} query heads")
        self.swa_halves = fmt.claim(0.45 < swa_long / swa["full"] < 0.55,
                                    f"{swa_long:,.0f} of {swa['full']:,.0f} bytes per token at {ctx_max:,} tokens")
        self.lo_misses = fmt.claim(not w_lo.m.fits, f"{w_lo.m.used / GIB:.1f} GiB > {w_lo.m.pool / GIB:.1f} GiB")
        self.hi_fits = fmt.claim(w_hi.m.fits, f"{w_hi.m.used / GIB:.1f} GiB ≤ {w_hi.m.pool / GIB:.1f} GiB")
        self.lo_weights_fit = fmt.claim(w_lo.m.weights < w_lo.m.pool,
                                        f"weights {w_lo.m.weights / GIB:.1f} GiB < pool {w_lo.m.pool / GIB:.1f} GiB")
        self.engine_agrees = fmt.claim(serving.layout == Layout(answer_tp),
                                       f"the serving scenario's policy chooses {serving.layout.label}")
        self.fp8_doubles = fmt.claim(1.9 <= n_fp8 / n_bf16 <= 2.1, f"{n_fp8} against {n_bf16} sequences")
        self.paging_small = fmt.claim(worst_waste_bytes / room < 0.01,
                                      f"{worst_waste_bytes / 2**20:.1f} MiB of {room / GIB:.1f} GiB")
        self.reserve_hurts = fmt.claim(n_bf16 > 10 * reserve_max, f"{n_bf16} paged against {reserve_max} reserved")
        self.rep_stops = fmt.claim(rep[t_hi]["per_gpu"] == rep[t_lo]["per_gpu"] and rep[t_hi]["copies"] > 1,
                                   f"{rep[t_hi]['per_gpu']:,.0f} bytes per token per GPU at both TP degrees")
        self.rep_more_seqs_anyway = fmt.claim(rep[t_hi]["seqs"] > rep[t_lo]["seqs"],
                                              f"{rep[t_hi]['seqs']} > {rep[t_lo]['seqs']}: the weights still halve")
        self.long_few = fmt.claim(reserve_max < need, f"{reserve_max} sequences of {ctx_max:,} tokens",
                structural="the reservation for the longest context against the sequences the scenario needs")
        self.pad_model = padded.model.name
        self.pad_kernel = p_kernel.capitalize()
        self.pad_hidden, self.pad_ffn = fmt.count(ph, "channels"), fmt.count(pi, "channels")
        self.pad_hidden_to, self.pad_ffn_to = fmt.count(hp, "channels"), fmt.count(ip, "channels")
        self.pad_growth = fmt.ratio(hp * ip / (ph * pi), 3, basis="an expert's padded matrices over its own")
        self.pad_bytes = gib(m_padded.weights - m_shipped.weights, 2)
        self.pad_room = gib(m_shipped.kv_room, 2)
        self.pad_shipped = gib(m_shipped.weights)
        self.pad_loaded = gib(m_padded.weights)
        # the padding takes more than the room the checkpoint's own shapes leave for the cache
        pad_bytes = m_padded.weights - m_shipped.weights
        self.pad_refused = fmt.claim(pad_bytes > m_shipped.kv_room and p_refused is not None,
                                     f"padding {pad_bytes / GIB:.2f} GiB against {m_shipped.kv_room / GIB:.2f} GiB "
                                     "left with the checkpoint's shapes")
        self.pad_default_none = fmt.claim(by_default == as_shipped,
                                          f"{as_shipped} held as {by_default} under the default kernel's multiples "
                                          f"{shipped.expert_pad}")
        self.pool_spread = fmt.claim(min(shares) < 0.1 and max(shares) > 0.5,
                                     f"{gqa['name']}: {min(shares):.0%} to {max(shares):.0%} of the card left for KV")
        self.tight_layout = Layout(TIGHT_TP).label
        self.tight_refused = fmt.claim(tight is not None and tight.available < tight.needed,
                                       "vLLM starts" if tight is None else
                                       f"{tight.available / GIB:.2f} GiB left for the KV cache on TP{TIGHT_TP}, "
                                       f"{tight.needed / GIB:.2f} GiB for one sequence",
                structural="the tight layout leaves less room than one sequence's KV needs")
        self.newer_policy = newer.memory_policy.id
        self.tight_newer_seqs = fmt.count(m_newer.max_sequences, "sequence" if m_newer.max_sequences == 1 else "sequences",
                                          show_unit=True)
        self.tight_newer_starts = fmt.claim(tight is not None and newer.kv_refusal(Layout(TIGHT_TP)) is None
                                            and m_newer.max_sequences >= 1,
                                            f"{NEWER_VLLM}: {m_newer.kv_room / GIB:.2f} GiB for the KV cache on "
                                            f"TP{TIGHT_TP}, {m_newer.kv_per_sequence / GIB:.2f} GiB a sequence")
        self.most_held_cheapest = fmt.claim(cheapest is max(cost_list, key=lambda c: c.per_dollar_hour),
                                            f"cheapest per token: {cheapest.label}, ${cheapest.usd_per_mtok:.2f}, "
                                            f"{cheapest.per_dollar_hour:.1f} sequences per $/hour")
        self.tp8_beats_tp4 = fmt.claim(c_hi.usd_per_mtok < c_mid.usd_per_mtok,
                                       f"${c_hi.usd_per_mtok:.2f} < ${c_mid.usd_per_mtok:.2f}")
        self.fp8_cheaper = fmt.claim(c_fp8.usd_per_mtok < c_mid.usd_per_mtok,
                                     f"${c_fp8.usd_per_mtok:.2f} < ${c_mid.usd_per_mtok:.2f}")


namespace = KvCachePage.namespace_of
sources = KvCachePage.sources_of

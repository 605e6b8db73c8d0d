"""Layouts serving engines accept: the rules vLLM and SGLang enforce, kept apart from any policy.

- Tensor parallelism (TP) must divide the attention heads; TP and the KV heads must divide one
  another: below the KV-head count each GPU holds `kv_heads / tp` of them, above it each KV head is
  replicated on `tp / kv_heads` GPUs (vLLM's QKVParallelLinear, `num_kv_head_replicas`).
- Pipeline parallelism (PP) may split the layers unevenly: vLLM's default partition gives every
  stage `layers // pp` and one more to each of the `layers % pp` stages just before the last
  (`get_pp_indices`): 61 layers in 4 stages are 15, 15, 16, 15.
- Expert parallelism (EP) hands whole experts to GPUs: EP = TP x DP, each GPU `ceil(experts / ep)`.
- Block-quantized weights (FP8 with one scale per 128 x 128 block, as DeepSeek-V3's and Qwen3's FP8
  checkpoints) must be cut along block edges: every TP shard of a weight (a column-parallel output, a
  row-parallel input, the experts' intermediate size when TP slices them) a multiple of the block. vLLM
  checks it as it creates each layer (fp8.py) and stops at the first that breaks it, with its own message:
  Qwen3-235B-A22B-FP8 at TP8 without expert parallelism splits 1,536 into 192.

Which valid layout to rent is a policy (`data/policies.yaml`, `choose` in `snippets.engine.deployment`).
"""

from __future__ import annotations

from dataclasses import dataclass

from snippets.engine.specs import Arch, PrecisionSpec


@dataclass(frozen=True, slots=True)
class Layout:
    tp: int
    pp: int = 1
    ep: int = 1
    """Expert-parallel degree: 1 slices every expert across the TP group; TP x DP hands out whole experts."""
    dp: int = 1
    """Data-parallel attention replicas inside one deployment (DP attention); 1 otherwise."""

    def __post_init__(self) -> None:
        if min(self.tp, self.pp, self.ep, self.dp) < 1:
            raise ValueError("every degree of a layout must be at least 1, got "
                             f"tp={self.tp}, pp={self.pp}, ep={self.ep}, dp={self.dp}")

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp

    @property
    def label(self) -> str:
        parts = [f"TP{self.tp}"]
        if self.pp > 1:
            parts.append(f"PP{self.pp}")
        if self.dp > 1:
            parts.append(f"DP{self.dp}")
        if self.ep > 1:
            parts.append(f"EP{self.ep}")
        return " × ".join(parts)

    def as_dict(self) -> dict[str, int]:
        return {"tp": self.tp, "pp": self.pp, "ep": self.ep, "dp": self.dp}


def kv_heads_per_gpu(kv_heads: int, tp: int) -> int:
    """KV heads each GPU of a TP group holds: a share below the KV-head count, one (replicated) above it."""
    return max(1, kv_heads // tp)


def kv_replicas(kv_heads: int, tp: int) -> int:
    """GPUs that hold a copy of each KV head (1 unless TP exceeds the KV heads)."""
    return max(1, tp // kv_heads)


def tp_problems(arch: Arch, tp: int) -> list[str]:
    """Why an engine refuses `tp` for this architecture; empty if it accepts it."""
    out = []
    if arch.attention_heads % tp:
        out.append(f"TP{tp} does not divide the {arch.attention_heads} attention heads")
    kv = arch.kv_heads
    if arch.mla is None and (kv % tp if tp <= kv else tp % kv):
        out.append(f"TP{tp} and the {kv} KV heads do not divide one another")
    return out


def pp_partition(layers: int, pp: int) -> list[int]:
    """Layers per stage as vLLM's `get_pp_indices` splits them: `layers // pp` each, and one more to
    each of the `layers % pp` stages before the last (the last stage also holds the LM head)."""
    if not 1 <= pp <= layers:
        raise ValueError(f"{pp} pipeline stages cannot split {layers} layers (each stage needs one)")
    parts = [layers // pp] * pp
    for i in range(2, layers % pp + 2):
        parts[-i] += 1
    return parts


def experts_per_gpu(experts: int, ep: int) -> int:
    """Whole experts on the busiest GPU when `ep` GPUs share them."""
    return -(-experts // ep)


def _block_shards(arch: Arch, layout: Layout) -> list[tuple[str, str, int]]:
    """The TP shards of one block's weights that must meet a quantization block, in the order vLLM creates them:
    (what, kind, size), kind "out" (a column-parallel output partition), "in" (a row-parallel input partition) or
    "moe" (the experts' intermediate size, where TP slices the experts)."""
    tp, out = layout.tp, []
    if tp > 1:
        if arch.mla is not None:
            m, heads = arch.mla, arch.attention_heads // tp
            out += [("q_b_proj output", "out", heads * (m.qk_nope_head_dim + m.qk_rope_head_dim)),
                    ("kv_b_proj output", "out", heads * (m.qk_nope_head_dim + m.v_head_dim)),
                    ("o_proj input", "in", heads * m.v_head_dim)]
        else:
            q = arch.attention_heads // tp * arch.head_dim
            kv = kv_heads_per_gpu(arch.kv_heads, tp) * arch.head_dim
            out += [("q_proj output", "out", q), ("k_proj output", "out", kv), ("v_proj output", "out", kv),
                    ("o_proj input", "in", q)]
    moe = arch.moe
    dense = moe is None or moe.dense_layers > 0 or moe.layer_step > 1
    if dense and tp > 1:
        out += [("gate_up_proj output", "out", arch.ffn_size // tp), ("down_proj input", "in", arch.ffn_size // tp)]
    if moe is not None:
        if layout.ep == 1:
            out.append(("experts' gate and up output", "moe", moe.expert_ffn_size // tp))
        if moe.shared_experts and tp > 1:
            shared = moe.shared_experts * moe.expert_ffn_size // tp
            out += [("shared experts' gate_up output", "out", shared), ("shared experts' down input", "in", shared)]
    return out


def block_quant_problem(arch: Arch, layout: Layout, precision: PrecisionSpec) -> str | None:
    """vLLM's refusal of a block-quantized checkpoint at this layout, as its message reads (fp8.py,
    `validate_fp8_block_shape` and `Fp8MoEMethod.create_weights`), or None if every shard meets the block."""
    if precision.weight_block is None:
        return None
    block_n, block_k = precision.weight_block.rows, precision.weight_block.cols
    for what, kind, size in _block_shards(arch, layout):
        if kind == "in" and size % block_k:
            msg = f"Weight input_size_per_partition = {size} is not divisible by weight quantization block_k = {block_k}."
        elif kind == "out" and size % block_n:
            msg = f"Weight output_partition_size = {size} is not divisible by weight quantization block_n = {block_n}."
        elif kind == "moe" and size % block_n:
            msg = (f"The output_size of gate's and up's weight = {size} is not divisible by weight quantization "
                   f"block_n = {block_n}.")
        else:
            continue
        return (f"TP{layout.tp} cuts the {what} of {precision.name} weights into {size}, not a multiple of the "
                f"{block_n} x {block_k} block; vLLM: {msg}")
    return None


def layout_problems(arch: Arch, layout: Layout, precision: PrecisionSpec | None = None) -> list[str]:
    """Every rule of the engines that `layout` breaks for this architecture (and, given the precision, its
    block quantization); empty if it is accepted."""
    out = tp_problems(arch, layout.tp)
    if layout.pp > arch.layers:
        out.append(f"PP{layout.pp} exceeds the {arch.layers} layers")
    moe = arch.moe
    if layout.ep > 1:
        if moe is None:
            out.append("expert parallelism needs a mixture-of-experts model")
        elif layout.ep != layout.tp * layout.dp:
            out.append(f"EP{layout.ep} must equal TP x DP = {layout.tp * layout.dp}")
        elif layout.ep > moe.experts:
            out.append(f"EP{layout.ep} exceeds the {moe.experts} experts")
    if layout.dp > 1 and layout.ep == 1:
        out.append("data-parallel attention inside a deployment is used with expert parallelism")
    if precision is not None and not out:
        block = block_quant_problem(arch, layout, precision)
        if block is not None:
            out.append(block)
    return out


def tp_degrees(arch: Arch, limit: int) -> list[int]:
    """TP degrees up to `limit` the engines accept for this architecture, smallest first."""
    return [t for t in range(1, limit + 1) if not tp_problems(arch, t)]

"""Layouts serving engines accept: the rules vLLM and SGLang enforce, kept apart from any policy.

- Tensor parallelism (TP) must divide the attention heads; TP and the KV heads must divide one
  another: below the KV-head count each GPU holds `kv_heads / tp` of them, above it each KV head is
  replicated on `tp / kv_heads` GPUs (vLLM's QKVParallelLinear, `num_kv_head_replicas`).
- Pipeline parallelism (PP) may split the layers unevenly: vLLM's default partition gives every
  stage `layers // pp` and one more to each of the `layers % pp` stages just before the last
  (`get_pp_indices`): 61 layers in 4 stages are 15, 15, 16, 15.
- Expert parallelism (EP) hands whole experts to GPUs: EP = TP x DP, each GPU `ceil(experts / ep)`.

Which valid layout to rent is a policy (`data/policies.yaml`, `choose` in `snippets.engine.deployment`).
"""

from __future__ import annotations

from dataclasses import dataclass

from snippets.engine.specs import ArchLike


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
            raise ValueError(f"every degree of a layout must be at least 1, got {self}")

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


def tp_problems(arch: ArchLike, tp: int) -> list[str]:
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


def layout_problems(arch: ArchLike, layout: Layout) -> list[str]:
    """Every rule of the engines that `layout` breaks for this architecture; empty if it is accepted."""
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
    return out


def tp_degrees(arch: ArchLike, limit: int) -> list[int]:
    """TP degrees up to `limit` the engines accept for this architecture, smallest first."""
    return [t for t in range(1, limit + 1) if not tp_problems(arch, t)]

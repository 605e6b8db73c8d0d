"""Derive decode attention's KV-cache read (data/efficiencies.yaml, resource kv_stream: `by_context`, `achieved`,
`achieved_range`) from AIConfigurator's measured generation-attention tables, and print each entry whole.

Run by hand, not in CI: it needs pandas and pyarrow (not project dependencies) and a checkout of
ai-dynamo/aiconfigurator at the commit the entries cite:

    PYTHONPATH=. python scripts/derive_kv_stream.py /path/to/aiconfigurator [chip ...]

For each chip, in each engine's table (the newest of SGLang, TensorRT-LLM and vLLM that the chip has; on A100 the
newest each engine has there, as scripts/derive_attention.py reads them): the decode kernel the table measured most,
BF16 queries and cache, head dimension 128, no window. The table's fixed cost per call is the median latency of its
calls that read at most 1 MB of cache; the entry's `fixed` is the engines' median of it, which the time model charges
a layer in place of its count of the attention op's kernels (as a fused-MoE kernel's own `fixed`). Each point reads batch x
(isl + step) cached tokens x KV heads x 128 x 2 (keys and values) x 2 bytes; its share of the HBM datasheet bandwidth
is those bytes over (its latency less the fixed cost), over the points whose cache is at least four times the L2
cache (the collector re-reads one cache, which a smaller one would serve from L2). Points are grouped by the tokens
each sequence attends (128 to 16,384, within 10 %), the median per group; a table whose median in any group exceeds the
datasheet is left out (A100's TensorRT-LLM 1.0.0 table: it reads as more than the HBM can move, so its bytes are not
what this counts); then the median of the engines per group, to two decimals. `achieved` is the longest context's
share, its range the engines' there.

It then prints, for each chip, an entry of each of vLLM's and SGLang's decode kernels over an FP8 cache (`tensor_format:
fp8`, `engine`), read the same way from the same tables at one byte an element, with the table's own fixed cost. On
Hopper those kernels read an FP8 cache at a much lower share than a BF16 one (vLLM's FlashAttention-3 at 0.65 of the
H200's datasheet at 16,384 tokens, SGLang's at 0.52, against about 0.88 in BF16), alike at every ratio of query to KV
heads. TensorRT-LLM's gets no such entry: at the ratios of the models the site serves (2 to 8) its FP8 cache reaches
about its BF16 share (0.83 to 0.92 at 16,384 tokens on an H100 and H200), and only its one-head-per-KV-head and its
ratio-16 points fall (0.53 to 0.79), so a median over every ratio would slow the engine where it is as fast; an FP8 cache
under it reads the chip's BF16 curve."""
from __future__ import annotations

import statistics
import sys

from derive_moe_weights import L2_BYTES as MOE_L2  # the same tables, read the same way (run from scripts/)
from derive_moe_weights import TABLE_DIRS, TABLES, table

CHIPS = {k: TABLE_DIRS[k] for k in ("a100-80gb-sxm", "h100-sxm", "h200-sxm", "b200", "gb200", "b300", "gb300",
                                    "rtx-pro-6000-server")} | {"l40s": "l40s"}
OLDER = {"a100_sxm": ("sglang/0.5.10", "trtllm/1.0.0", "vllm/0.14.0")}
"""Engine versions read where a chip has no table of TABLES' versions: A100's newest of each engine."""
L2_BYTES = {**MOE_L2, "a100-80gb-sxm": 40e6, "l40s": 96e6}
"""Each chip's L2 cache in bytes: scripts/derive_moe_weights.py's, and the two chips it reads no MoE tables of (NVIDIA's
architecture briefs: 40 MB on the A100, 96 on the L40S's AD102)."""
CONTEXTS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)
HEAD_DIM = 128
TITLE = "ai-dynamo/aiconfigurator, measured generation-attention tables of"
NAMES = {"a100-80gb-sxm": "A100 SXM 80GB", "h100-sxm": "H100 SXM", "h200-sxm": "H200 SXM", "b200": "B200",
         "gb200": "GB200", "b300": "B300", "gb300": "GB300", "rtx-pro-6000-server": "RTX PRO 6000 Server Edition",
         "l40s": "L40S"}
URL = ("https://github.com/ai-dynamo/aiconfigurator/tree/095f58a51c4ca8e61b66ec108d86f223f8d559ce/aic-core/src/"
       "aiconfigurator_core/systems/data/{dir}/attention")


FP8_ENGINES = {"vllm": "vLLM", "sglang": "SGLang"}
"""The engines whose decode kernels get an entry of their own over an FP8 cache, by their tables' directory."""


def engine_curve(repo: str, chip: str, t: str, peak: float, l2: float,
                 cache: str = "bfloat16") -> tuple[str, float, dict[int, float]] | None:
    """One engine's (table `t`'s) decode kernel over a `cache` ("bfloat16" or "fp8") KV cache, its fixed cost per call
    (seconds) and its share by context; None where the table holds no such points."""
    df = table(repo, chip, t, "attention", "generation_attention")
    if df is None:
        return None
    if "window_size" in df:  # older tables measured no windows
        df = df[df.window_size == 0]
    df = df[(df.head_dim == HEAD_DIM) & (df.attn_dtype == "bfloat16") & (df.kv_cache_dtype == cache)]
    if df.empty:
        return None
    kernel = str(df.kernel_source.value_counts().idxmax())
    df = df[df.kernel_source == kernel]
    ctx = df.isl + df.step
    kv = df.batch_size * ctx * df.num_key_value_heads * HEAD_DIM * 2 * (1 if cache == "fp8" else 2)
    fixed = statistics.median(df[kv <= 1e6].latency) * 1e-3
    groups: dict[int, list[float]] = {c: [] for c in CONTEXTS}
    for c, b, lat in zip(ctx, kv, df.latency, strict=True):
        near = [x for x in CONTEXTS if 0.9 * x <= c < 1.1 * x]
        if near and b >= 4 * l2 and lat * 1e-3 > fixed:
            groups[near[0]].append(b / (lat * 1e-3 - fixed) / peak)
    return kernel, fixed, {c: statistics.median(v) for c, v in groups.items() if v}


def main() -> None:
    from snippets.data import load
    from snippets.data.export import engine_catalog

    repo, chosen = sys.argv[1], sys.argv[2:] or list(CHIPS)
    eng = engine_catalog(load())
    for chip_id in chosen:
        chip, l2 = CHIPS[chip_id], L2_BYTES[chip_id]
        peak = eng.chips[chip_id].hbm_bytes_per_s
        engines: dict[str, dict[int, float]] = {}
        fixed_us: list[float] = []
        left_out: list[str] = []
        for t in (*TABLES, *OLDER.get(chip, ())):
            if any(name.startswith(t.split("/")[0]) for name in engines) or any(
                    name.startswith(t.split("/")[0]) for name in left_out):
                continue
            got = engine_curve(repo, chip, t, peak, l2)
            if got is None:
                continue
            kernel, fixed, curve = got
            name = f"{t.replace('/', ' ')} {kernel}"
            if max(curve.values()) > 1:
                left_out.append(name)
                continue
            engines[name] = curve
            fixed_us.append(fixed * 1e6)
        shares = {c: round(statistics.median([g[c] for g in engines.values() if c in g]), 2) for c in CONTEXTS
                  if any(c in g for g in engines.values())}
        last = max(shares)
        ends = [g[last] for g in engines.values() if last in g]
        versions = ", ".join(n.rsplit(" ", 1)[0] for n in engines)
        kernels = ", ".join(n.rsplit(" ", 1)[1] for n in engines)
        peak_tb = peak / 1e12
        print(f"{chip_id}-kv-stream:")
        print(f"  name: {NAMES[chip_id]}, decode attention's KV-cache read, BF16")
        print("  resource: kv_stream")
        print(f"  accelerator: {chip_id}")
        print(f"  achieved: {{value: {shares[last] * peak_tb:.3f}, unit: TB/s, direction: shared}}")
        print(f"  achieved_range: [{min(ends) * peak_tb:.3f}, {max(ends) * peak_tb:.3f}]")
        print(f"  peak: {{value: {peak_tb:g}, unit: TB/s, direction: shared}}")
        print(f"  fixed: {{value: {statistics.median(fixed_us):.1f}, unit: us}}")
        print(f"  by_context: [{', '.join(f'[{c}, {v:.2f}]' for c, v in shares.items())}]")
        print(f"  method: Decode attention kernels of {len(engines)} engines ({kernels}), BF16 cache, head dimension "
              "128, no window, caches of at least four L2s")
        print("  note: >-")
        print("    The share of the HBM datasheet bandwidth decode attention reaches as it reads the KV cache, by the")
        print("    cached tokens each sequence attends (128 to 16,384): each point's cache bytes over its latency less")
        print(f"    the table's fixed cost per call ({', '.join(f'{x:.1f}' for x in fixed_us)} us by engine; the fixed figure is")
        print("    their median, which the time model charges a layer in place of its count of the op's kernels), the")
        print("    median per context, then the median of the engines (scripts/derive_kv_stream.py). Short contexts")
        print("    give each sequence's block of work little to read, and its fixed work shows; long ones approach")
        print("    the achieved figure (16,384 tokens; its range spans the engines there). A streaming kernel's")
        print("    share (BabelStream, or the stated default) still prices activations and a prefill's cache.")
        if left_out:
            print(f"    Left out: {', '.join(left_out)}, whose points read as more than the datasheet moves.")
        print("  sources:")
        print(f"    - url: {URL.format(dir=chip)}")
        print(f"      title: {TITLE} {NAMES[chip_id]} ({versions}; generation_attention_perf.parquet)")
        print("      read: 2026-12-05")
        print()
        for t in TABLES:
            engine = FP8_ENGINES.get(t.split("/")[0])
            got = None if engine is None else engine_curve(repo, chip, t, peak, l2, "fp8")
            if engine is not None and got is not None:
                fp8_entry(chip_id, chip, t, engine, got, peak, engines)


def fp8_entry(chip_id: str, chip: str, t: str, engine: str, got: tuple[str, float, dict[int, float]], peak: float,
              bf16: dict[str, dict[int, float]]) -> None:
    """Print one engine's entry over an FP8 cache (`engine_curve` of table `t`), beside its own BF16 share."""
    kernel, fixed, curve = got
    last = max(curve)
    own = next((g for n, g in bf16.items() if n.startswith(t.replace("/", " "))), {})
    peak_tb = peak / 1e12
    print(f"{chip_id}-kv-stream-fp8-{t.split('/')[0]}:")
    print(f"  name: {NAMES[chip_id]}, decode attention's KV-cache read, FP8 cache, {engine}")
    print("  resource: kv_stream")
    print(f"  accelerator: {chip_id}")
    print("  tensor_format: fp8")
    print(f"  engine: {engine}")
    print(f"  achieved: {{value: {round(curve[last], 2) * peak_tb:.3f}, unit: TB/s, direction: shared}}")
    print(f"  achieved_range: [{round(curve[last], 2) * peak_tb:.3f}, {round(curve[last], 2) * peak_tb:.3f}]")
    print(f"  peak: {{value: {peak_tb:g}, unit: TB/s, direction: shared}}")
    print(f"  fixed: {{value: {fixed * 1e6:.1f}, unit: us}}")
    print(f"  by_context: [{', '.join(f'[{c}, {v:.2f}]' for c, v in curve.items())}]")
    print(f"  method: {engine}'s decode attention kernel ({kernel}) over an FP8 (E4M3) cache, BF16 queries, head dimension "
          "128, no window, caches of at least four L2s")
    print("  note: >-")
    print(f"    The share of the HBM datasheet bandwidth {engine}'s decode attention reaches as it reads an FP8 KV cache")
    print("    (one byte an element), by the cached tokens each sequence attends, read as the chip's BF16 entry is")
    print(f"    (scripts/derive_kv_stream.py), from {engine}'s table alone: the engines' FP8 kernels differ. Its")
    print(f"    own share over a BF16 cache in the same table: {', '.join(f'{own[c]:.2f}' for c in curve if c in own)}")
    print("    at the same contexts. An engine that runs this kernel reads this curve and fixed cost for an FP8")
    print("    cache in place of the chip's BF16 one.")
    print("  sources:")
    print(f"    - url: {URL.format(dir=chip)}")
    print(f"      title: {TITLE} {NAMES[chip_id]} ({t}; generation_attention_perf.parquet)")
    print("      read: 2026-12-05")
    print()


if __name__ == "__main__":
    main()

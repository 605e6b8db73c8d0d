"""Decode ceilings and KV-cache arithmetic against figures worked out by hand."""

import pytest

from snippets.decode import (
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
from snippets.units import Bandwidth, BasisMismatchError, Direction

GB = 1e9
H100_HBM = Bandwidth(3.35e12, Direction.SHARED)  # H100 SXM datasheet: 3.35 TB/s


# ---------------------------------------------------------------- step time and ceilings

def test_step_time_of_a_full_card() -> None:
    # 80 GB / 3.35 TB/s = 0.023880... s
    assert step_time(80 * GB, H100_HBM) == pytest.approx(0.0238806, rel=1e-5)


def test_weights_only_ceiling_of_70b_fp16_on_two_h100s() -> None:
    # 2 x 3.35 TB/s = 6.7 TB/s; 6.7e12 / 140e9 = 47.857 tokens/s
    bw = aggregate(H100_HBM, 2)
    assert bw.direction is Direction.SHARED
    assert tokens_per_s_ceiling(140 * GB, bw) == pytest.approx(47.857, abs=1e-3)


def test_aggregate_multiplies_bandwidth_by_gpus() -> None:
    # 16 x 3.35 TB/s = 53.6 TB/s; 810 GB over it: 53.6e12 / 810e9 = 66.17 tokens/s, 16x one GPU's 4.136
    bw = aggregate(H100_HBM, 16)
    assert bw.in_unit("TB/s") == pytest.approx(53.6)
    assert tokens_per_s_ceiling(810 * GB, bw) == pytest.approx(66.17, abs=0.01)
    assert tokens_per_s_ceiling(810 * GB, H100_HBM) == pytest.approx(4.136, abs=1e-3)


def test_reading_memory_refuses_a_both_directions_sum() -> None:
    with pytest.raises(BasisMismatchError):
        step_time(1 * GB, Bandwidth(900e9, Direction.BOTH_SUMMED))
    with pytest.raises(ValueError):
        step_time(0, H100_HBM)
    with pytest.raises(ValueError):
        aggregate(H100_HBM, 0)


# ---------------------------------------------------------------- KV cache

@pytest.mark.parametrize(
    ("layers", "kv_heads", "head_dim", "bytes_per_elem", "expected"),
    [
        (80, 8, 128, 2, 327_680),    # Llama 3.1 70B, FP16: 2 x 80 x 8 x 128 x 2
        (126, 8, 128, 2, 516_096),   # Llama 3.1 405B, FP16: 2 x 126 x 8 x 128 x 2
        (32, 8, 128, 2, 131_072),    # Llama 3.1 8B, FP16: 2 x 32 x 8 x 128 x 2 = 2^17
        (80, 8, 128, 1, 163_840),    # Llama 3.1 70B with an 8-bit KV cache: half of FP16
        (32, 32, 128, 2, 524_288),   # Llama 2 7B (no GQA, 32 KV heads): 2 x 32 x 32 x 128 x 2 = 2^19
    ],
)
def test_kv_cache_bytes_per_token(layers: int, kv_heads: int, head_dim: int, bytes_per_elem: float,
                                  expected: float) -> None:
    assert kv_cache_bytes_per_token(layers, kv_heads, head_dim, bytes_per_elem) == expected


def test_kv_cache_bytes_per_token_from_the_model_data(catalog) -> None:
    a = catalog.models["llama-3.1-70b"].architecture
    fp16 = catalog.precisions["fp16"].width.bytes
    assert kv_cache_bytes_per_token(a.layers, a.kv_heads, a.head_dim, fp16) == 327_680  # ~0.33 MB


@pytest.mark.parametrize("bad", [(0, 8, 128, 2), (80, 0, 128, 2), (80, 8, 0, 2), (80, 8, 128, 0)])
def test_kv_cache_bytes_per_token_refuses_non_positive_inputs(bad: tuple[int, int, int, float]) -> None:
    with pytest.raises(ValueError):
        kv_cache_bytes_per_token(*bad)


def test_kv_cache_of_a_context_and_a_batch() -> None:
    # 8,192 tokens x 327,680 bytes = 2,684,354,560 bytes (2.68 GB); 4 sequences: 10,737,418,240
    assert kv_cache_bytes(8192, 327_680) == 2_684_354_560
    assert kv_cache_bytes(8192, 327_680, batch=4) == 10_737_418_240
    # the full 131,072-token context of Llama 3.1 70B: 42,949,672,960 bytes (42.9 GB)
    assert kv_cache_bytes(131_072, 327_680) == 42_949_672_960
    assert kv_cache_bytes(0, 327_680) == 0
    with pytest.raises(ValueError):
        kv_cache_bytes(8192, 327_680, batch=0)
    with pytest.raises(ValueError):
        kv_cache_bytes(-1, 327_680)


# ---------------------------------------------------------------- bytes per step, batches

def test_bytes_read_per_step() -> None:
    # weights only
    assert bytes_read_per_step(140 * GB) == 140 * GB
    # 140e9 + 2,684,354,560 = 142,684,354,560
    assert bytes_read_per_step(140 * GB, 327_680, 8192) == 142_684_354_560
    # batch of 7 shares the weights: 140e9 + 7 x 2,684,354,560 = 158,790,481,920
    assert bytes_read_per_step(140 * GB, 327_680, 8192, batch=7) == 158_790_481_920
    with pytest.raises(ValueError):
        bytes_read_per_step(0, 327_680, 8192)


def test_ceiling_with_kv_cache_of_70b_fp16_on_two_h100s() -> None:
    # 6.7e12 / 142,684,354,560 = 46.957 tokens/s (against 47.857 for weights alone)
    bw = aggregate(H100_HBM, 2)
    assert tokens_per_s_ceiling(bytes_read_per_step(140 * GB, 327_680, 8192), bw) == pytest.approx(46.957, abs=1e-3)


def test_batch_ceiling() -> None:
    bw = aggregate(H100_HBM, 2)
    # batch 1 is the single-sequence ceiling
    assert batch_tokens_per_s_ceiling(140 * GB, 327_680, 8192, 1, bw) == pytest.approx(46.957, abs=1e-3)
    # batch 7: 7 x 6.7e12 / 158,790,481,920 = 295.36 tokens/s
    assert batch_tokens_per_s_ceiling(140 * GB, 327_680, 8192, 7, bw) == pytest.approx(295.36, abs=0.01)
    # without a KV cache the ceiling grows exactly with the batch
    assert batch_tokens_per_s_ceiling(140 * GB, 0, 0, 4, bw) == pytest.approx(4 * 47.857, abs=1e-2)


def test_max_batch() -> None:
    # 20 GB left / 2,684,354,560 bytes per sequence = 7.45 -> 7 sequences
    assert max_batch(20 * GB, 8192, 327_680) == 7
    # exactly two sequences' worth is two, not one (no float noise)
    assert max_batch(2 * 2_684_354_560, 8192, 327_680) == 2
    # not even one sequence fits
    assert max_batch(1 * GB, 8192, 327_680) == 0
    assert max_batch(-5 * GB, 8192, 327_680) == 0
    with pytest.raises(ValueError):
        max_batch(20 * GB, 0, 327_680)


# ---------------------------------------------------------------- arithmetic intensity

@pytest.mark.parametrize(
    ("bytes_per_param", "batch", "expected"),
    [(2, 1, 1.0), (4, 1, 0.5), (1, 1, 2.0), (0.5, 1, 4.0), (2, 8, 8.0)],  # 2 FLOP x batch / bytes
)
def test_flop_per_byte(bytes_per_param: float, batch: int, expected: float) -> None:
    assert flop_per_byte(bytes_per_param, batch) == expected


def test_flop_per_byte_refuses_bad_input() -> None:
    with pytest.raises(ValueError):
        flop_per_byte(0)
    with pytest.raises(ValueError):
        flop_per_byte(2, 0)


def test_ridge_point_of_the_a100() -> None:
    # A100 80GB SXM datasheet: 312 TFLOP/s dense BF16, 2,039 GB/s: 312e12 / 2.039e12 = 153.02 FLOP/byte
    a100 = Bandwidth(2.039e12, Direction.SHARED)
    assert ridge_point(312e12, a100) == pytest.approx(153.02, abs=0.01)
    with pytest.raises(ValueError):
        ridge_point(0, a100)
    with pytest.raises(BasisMismatchError):
        ridge_point(312e12, Bandwidth(600e9, Direction.BOTH_SUMMED))

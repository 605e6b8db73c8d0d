"""The teaching arithmetic (snippets/teaching/rounded.py) against figures worked out by hand and in the source material."""

import pytest

from snippets.teaching.rounded import (
    ceil_count,
    flop_per_byte,
    gpus_exact,
    gpus_needed,
    max_params,
    nodes_needed,
    usable_bytes,
    weight_bytes,
)

GB = 1e9


@pytest.mark.parametrize(
    ("params", "bpp", "expected_gb"),
    [(70e9, 2, 140), (405e9, 2, 810), (405e9, 1, 405), (70e9, 1, 70), (405e9, 0.5, 202.5)],
)
def test_weight_bytes(params: float, bpp: float, expected_gb: float) -> None:
    assert weight_bytes(params, bpp) == pytest.approx(expected_gb * GB)


def test_405b_fp16_on_80gb_cards() -> None:
    w = weight_bytes(405e9, 2)
    assert gpus_exact(w, 80 * GB) == pytest.approx(10.125)  # ~10.1
    assert gpus_needed(w, 80 * GB) == 11


def test_405b_fp16_with_70gb_usable() -> None:
    usable = usable_bytes(80 * GB, 0.125)
    assert usable == pytest.approx(70 * GB)
    w = weight_bytes(405e9, 2)
    assert gpus_exact(w, usable) == pytest.approx(11.571, abs=1e-3)  # ~11.6
    assert gpus_needed(w, usable) == 12
    assert nodes_needed(12, 8) == 2


def test_405b_int8_with_70gb_usable() -> None:
    w = weight_bytes(405e9, 1)
    assert gpus_exact(w, 70 * GB) == pytest.approx(5.786, abs=1e-3)  # ~5.8
    assert gpus_needed(w, 70 * GB) == 6
    assert nodes_needed(6, 8) == 1


def test_exact_fits_do_not_round_up_on_float_noise() -> None:
    # 70 GB of INT8 weights on 70 GB usable is one GPU, 140 GB on 70 GB is two
    usable = usable_bytes(80 * GB, 0.125)
    assert gpus_needed(weight_bytes(70e9, 1), usable) == 1
    assert gpus_needed(weight_bytes(70e9, 2), usable) == 2
    assert ceil_count(2.0000000001) == 2
    assert ceil_count(2.001) == 3


def test_fp16_cap_of_one_80gb_card_is_about_40b_params() -> None:
    assert max_params(80 * GB, 2) == pytest.approx(40e9)
    assert max_params(usable_bytes(80 * GB, 0.125), 2) == pytest.approx(35e9)


@pytest.mark.parametrize("bad", [-0.1, 1.0, 1.5])
def test_reserve_fraction_must_leave_memory(bad: float) -> None:
    with pytest.raises(ValueError):
        usable_bytes(80 * GB, bad)


def test_nonpositive_inputs_are_refused() -> None:
    with pytest.raises(ValueError):
        weight_bytes(0, 2)
    with pytest.raises(ValueError):
        gpus_needed(1, 0)


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

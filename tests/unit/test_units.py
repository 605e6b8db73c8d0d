import pytest

from snippets.data.units import BYTE_UNITS, Bandwidth, BasisMismatchError, Direction, UnitError, to_base


def test_decimal_and_binary_bytes_are_distinct() -> None:
    assert BYTE_UNITS["GB"] == 1_000_000_000
    assert BYTE_UNITS["GiB"] == 1_073_741_824
    # 80 GB of HBM is 74.5 GiB: the two units differ by 7.4 %
    assert 80 * BYTE_UNITS["GB"] / BYTE_UNITS["GiB"] == pytest.approx(74.506, abs=1e-3)


def test_bits_per_second_are_eighths_of_bytes() -> None:
    assert to_base(400, "Gb/s", {"Gb/s": 1e9 / 8}) == 50e9


def test_unknown_unit_is_refused() -> None:
    with pytest.raises(UnitError, match="unknown unit 'GB/h'"):
        to_base(1, "GB/h", BYTE_UNITS)


def test_both_summed_halves_to_one_way() -> None:
    nvlink = Bandwidth(900e9, Direction.BOTH_SUMMED)
    assert nvlink.one_way() == Bandwidth(450e9, Direction.PER_DIRECTION)


def test_shared_memory_bandwidth_counts_whole_one_way() -> None:
    hbm = Bandwidth(3.35e12, Direction.SHARED)
    assert hbm.one_way().bytes_per_s == 3.35e12
    with pytest.raises(BasisMismatchError):
        hbm.both_summed()


def test_mixed_bases_are_refused_not_guessed() -> None:
    nvlink = Bandwidth(900e9, Direction.BOTH_SUMMED)
    pcie = Bandwidth(31.5e9, Direction.PER_DIRECTION)
    with pytest.raises(BasisMismatchError, match="both directions summed"):
        nvlink.ratio(pcie)
    with pytest.raises(BasisMismatchError):
        nvlink + pcie
    assert nvlink.one_way().ratio(pcie) == pytest.approx(450 / 31.5)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_bandwidth_must_be_positive_and_finite(bad: float) -> None:
    with pytest.raises(ValueError):
        Bandwidth(bad, Direction.PER_DIRECTION)

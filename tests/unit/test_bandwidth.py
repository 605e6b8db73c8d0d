"""Link bandwidths derived from their parts, against the figures the standards and datasheets state."""

import pytest

from snippets.data.bandwidth import nvlink_per_gpu, pcie_bandwidth, transfer_time
from snippets.data.units import Bandwidth, BasisMismatchError, Direction


@pytest.mark.parametrize(
    ("gt_s", "gb_s"),
    # PCI-SIG: Gen3 8 GT/s, Gen4 16 GT/s, Gen5 32 GT/s, all 128b/130b; x16 per direction
    [(8, 15.754), (16, 31.508), (32, 63.015)],
)
def test_pcie_x16_per_direction(gt_s: float, gb_s: float) -> None:
    bw = pcie_bandwidth(gt_s * 1e9, 16, 128, 130)
    assert bw.direction is Direction.PER_DIRECTION
    assert bw.in_unit("GB/s") == pytest.approx(gb_s, abs=1e-3)


def test_nvlink_per_gpu_matches_datasheets() -> None:
    per_link = Bandwidth(25e9, Direction.PER_DIRECTION)
    a100 = nvlink_per_gpu(12, per_link)
    h100 = nvlink_per_gpu(18, per_link)
    assert a100.in_unit("GB/s") == 300 and a100.both_summed().in_unit("GB/s") == 600
    assert h100.in_unit("GB/s") == 450 and h100.both_summed().in_unit("GB/s") == 900


def test_transfer_time_refuses_a_summed_figure() -> None:
    with pytest.raises(BasisMismatchError):
        transfer_time(1e9, Bandwidth(900e9, Direction.BOTH_SUMMED))
    assert transfer_time(1e9, Bandwidth(900e9, Direction.BOTH_SUMMED).one_way()) == pytest.approx(1 / 450)

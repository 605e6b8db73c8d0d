"""Link bandwidths derived from their parts, against the figures the standards and datasheets state."""

import pytest

from snippets.data import PCIe
from snippets.pages.interconnect import pcie_x16


def test_pcie_gen4_x16_from_data_is_31_5_gb_s(catalog) -> None:
    assert pcie_x16(catalog, "pcie-gen4").in_unit("GB/s") == pytest.approx(31.5, abs=0.01)
    gen4 = catalog.interconnect("pcie-gen4", PCIe)
    assert (gen4.encoding.payload_bits, gen4.encoding.line_bits) == (128, 130)

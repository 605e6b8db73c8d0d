"""`snippets.engine.topology.rewired`: the same deployment over PCIe or the network, the engine pricing its links."""

from __future__ import annotations

import pytest

from snippets.data import Catalog
from snippets.engine.topology import group_link, rewired
from snippets.pages.scenario import reference


@pytest.fixture(scope="module")
def dep(catalog: Catalog):
    return reference(catalog).deployment("llama-3.1-70b", "bf16")


def test_over_pcie_the_group_crosses_each_cards_host_link(dep) -> None:
    p = group_link(rewired(dep, "pcie"), "tp")
    chip = dep.setting.chip
    assert (p.shape, p.bytes_per_s, p.nodes) == ("pcie", chip.host_link_bytes_per_s, 1)
    assert p.bytes_per_s < group_link(dep, "tp").bytes_per_s


def test_over_the_network_every_gpu_is_a_node_of_its_own(dep) -> None:
    d = rewired(dep, "network")
    n = group_link(d, "tp")
    assert (n.shape, n.nodes, n.bytes_per_s) == ("network", dep.layout.tp, dep.setting.node.network_bytes_per_s)
    assert d.layout == dep.layout and d.setting.model == dep.setting.model


def test_the_deployment_itself_is_unchanged(dep) -> None:
    before = group_link(dep, "tp")
    rewired(dep, "pcie")
    rewired(dep, "network")
    assert group_link(dep, "tp") == before
    with pytest.raises(ValueError, match="link must be one of"):
        rewired(dep, "nvlink")

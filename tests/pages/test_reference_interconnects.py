"""The interconnects reference's claims about what a tensor-parallel group gets: each holds on the repository's data
and fails when the wiring it rests on is changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from snippets.data import load

from ..conftest import edited_data

CLAIMS = ("switch_same", "mesh_pair_one_link", "paired_pair_fastest")


def _namespace(data: Path) -> dict[str, object]:
    from snippets.pages.reference_interconnects import namespace

    return namespace(load(data))


def test_the_group_claims_hold_on_the_repository_data(catalog) -> None:
    from snippets.pages.reference_interconnects import namespace

    ns = namespace(catalog)
    assert all(ns[c].holds for c in CLAIMS)  # type: ignore[attr-defined]
    assert (ns["mesh_pair"].value, ns["mesh_eight"].value) == (64, 448)  # type: ignore[attr-defined]
    assert (ns["paired_twin"].value, ns["paired_four"].value) == (200, 75)  # type: ignore[attr-defined]


EDITS = [
    # the HGX H100's GPUs on a mesh of their own 18 NVLinks (two to each of 7 peers) instead of NVSwitch: a pair gets
    # two links, 50 GB/s, eight 350
    ("switch_same", [
        ("interconnects.yaml", "  fabric_shape: switched\n  name: NVIDIA HGX H100 8-GPU\n  accelerator: h100-sxm\n"
         "  gpus: 8\n  switch: nvswitch-gen3\n  switch_chips: 4\n",
         "  fabric_shape: full_mesh\n  name: NVIDIA HGX H100 8-GPU\n  accelerator: h100-sxm\n  gpus: 8\n"),
        ("accelerators.yaml", "    fabric: nvlink-4\n    bandwidth: {value: 900, unit: GB/s, direction: both_summed}\n",
         "    fabric: nvlink-4\n    links: 18\n    bandwidth: {value: 900, unit: GB/s, direction: both_summed}\n")]),
    # MI300X with fourteen links, two to each peer: a pair gets two links
    ("mesh_pair_one_link", [
        ("accelerators.yaml", "    fabric: infinity-fabric-mi300\n    links: 7\n"
         "    bandwidth: {value: 896, unit: GB/s, direction: both_summed}\n",
         "    fabric: infinity-fabric-mi300\n    links: 14\n"
         "    bandwidth: {value: 1792, unit: GB/s, direction: both_summed}\n")]),
    # a package link of 50 GB/s each way, under the 75 GB/s a group of four gets between modules
    ("paired_pair_fastest", [
        ("accelerators.yaml", "    package: {value: 400, unit: GB/s, direction: both_summed}\n",
         "    package: {value: 100, unit: GB/s, direction: both_summed}\n")]),
]


@pytest.mark.parametrize(("claim", "edits"), EDITS, ids=[e[0] for e in EDITS])
def test_each_group_claim_fails_when_its_wiring_changes(tmp_path: Path, claim: str,
                                                        edits: list[tuple[str, str, str]]) -> None:
    ns = _namespace(edited_data(tmp_path, edits))
    assert not ns[claim].holds  # type: ignore[attr-defined]
    assert all(ns[c].holds for c in CLAIMS if c != claim)  # type: ignore[attr-defined]

"""CONTRIBUTING.md's worked messages are the loader's: each error its "Add an accelerator" recipe shows for an H200 NVL
entry is made again here, from the same mistake in a copy of data/, and compared with the text the recipe prints (the
line and column each message ends with, and the entry the `(entry)` message repeats, left out as the recipe leaves
them out). A change to a message, or to what an accelerator entry needs, fails here until the recipe says so."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from snippets.data import DataError, load

from ..conftest import ROOT

ENTRY = """
h200-nvl:
  name: NVIDIA H200 NVL
  vendor: NVIDIA
  memory: {value: 141, unit: GB}
  memory_type: HBM3e
  memory_bandwidth: {value: 4.8, unit: TB/s, direction: shared}
  tensor:
    bf16: {value: 1671, unit: TFLOP/s, sparsity: sparse, sparse_speedup: 2}
    fp8: {value: 3341, unit: TFLOP/s, sparsity: sparse, sparse_speedup: 2}
  scale_up:
    fabric: nvlink-4
    bandwidth: {value: 900, unit: GB/s, direction: both_summed}
  host_link: pcie-gen5
  host_link_lanes: 16
  power: {value: 600, unit: W}
  not_stated:
    memory_runtime: no source publishes the total CUDA reports
    memory_reported: no source publishes what nvidia-smi reports
  sources:
    - url: https://www.nvidia.com/en-us/data-center/h200/
      title: NVIDIA H200 Tensor Core GPU, specifications (H200 NVL column)
      read: 2026-12-06
"""
MISTAKES = {  # each of the recipe's messages, from one mistake in the entry above
    "no direction": [("direction: shared}", "}")],
    "a unit spelt as the datasheet's prose": [("bf16: {value: 1671, unit: TFLOP/s", "bf16: {value: 1671, unit: TFLOPS")],
    "no sources": [(ENTRY[ENTRY.index("  sources:"):], "")],
    "no scale-up and no power": [(ENTRY[ENTRY.index("  scale_up:"):ENTRY.index("  host_link:")], ""),
                                 ("  power: {value: 600, unit: W}\n", "")],
    "an interconnect that does not exist": [("host_link: pcie-gen5", "host_link: pcie-gen9")],
}
POSITION = re.compile(r" \(data/[\w./-]+:\d+:\d+\)$")


def recipe_messages() -> list[str]:
    """The messages the recipe prints, each on one line (a continuation line joined to its message)."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    at = text.index("Messages we met adding an H200 NVL entry")
    block = text[text.index("```text", at) + len("```text"):]
    block = block[:block.index("```")]
    out: list[str] = []
    for line in block.splitlines():
        if line.strip().startswith("data/"):
            out.append(line.strip())
        elif line.strip():
            out[-1] += " " + line.strip()
    return out


def _errors(tmp_path: Path, name: str, edits: list[tuple[str, str]]) -> list[str]:
    data = tmp_path / name.replace(" ", "-")
    shutil.copytree(ROOT / "data", data)
    entry = ENTRY
    for old, new in edits:
        assert old in entry, (name, old)
        entry = entry.replace(old, new)
    with (data / "accelerators.yaml").open("a", encoding="utf-8") as f:
        f.write(entry)
    with pytest.raises(DataError) as caught:
        load(data)
    lines = [x.strip().replace(str(data), "data") for x in str(caught.value).splitlines()[1:]]
    return [re.sub(r" \(got \{.*\}\)$", " (got {...})", POSITION.sub("", x)) for x in lines]


def test_the_entry_the_recipe_starts_from_loads(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    with (data / "accelerators.yaml").open("a", encoding="utf-8") as f:
        f.write(ENTRY)
    assert "h200-nvl" in load(data).accelerators


def test_each_message_the_recipe_shows_is_the_loaders(tmp_path: Path) -> None:
    made = [m for name, edits in MISTAKES.items() for m in _errors(tmp_path, name, edits)]
    assert made == recipe_messages()

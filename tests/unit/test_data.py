"""Validation of data/: every bad edit is refused with file, entry and field named."""

from __future__ import annotations

import functools
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from snippets.data import FILES, DataError, iter_sources, load
from snippets.data.loader import Parsed
from snippets.data.units import Direction

from ..conftest import ROOT


def test_repository_data_is_valid(catalog) -> None:
    assert {"a100-80gb-sxm", "h100-sxm"} <= set(catalog.accelerators)
    assert {"llama-3.1-70b", "llama-3.1-405b"} <= set(catalog.models)
    assert {"fp16", "bf16", "fp8", "int8", "int4"} <= set(catalog.precisions)
    assert catalog.accelerators["h100-sxm"].memory.bytes == 80e9
    assert catalog.accelerators["h100-sxm"].memory_bandwidth.bandwidth.direction is Direction.SHARED
    assert catalog.precisions["int4"].width / 8 == 0.5
    assert catalog.assumptions["runtime-reserve"].value.fraction == 0.125


def test_every_entry_has_a_dated_https_source(catalog) -> None:
    seen = {(f, e) for f, e, _ in iter_sources(catalog)}
    for name in FILES:
        for entry_id in getattr(catalog, name):
            assert (name, entry_id) in seen
    for _, _, src in iter_sources(catalog):
        assert src.url.startswith("https://") and src.read.year >= 2023
        assert src.read.year >= 2024 or src.secondary, src  # only a dated transcription may be that old
        assert (src.copies is not None) == src.secondary, src  # a transcription names the document it copies


def test_sources_nested_in_an_entry_are_counted_with_it(catalog) -> None:
    """A source inside an entry's fields belongs to the entry: the H100's runtime total (vLLM's log) and INT8's
    kernel gap on Blackwell (vLLM's error) are listed with their entries, which cite neither in `sources`."""
    listed = {(f, e, s.url) for f, e, s in iter_sources(catalog)}
    runtime = catalog.accelerators["h100-sxm"].memory_runtime.source.url
    gap = catalog.precisions["int8"].kernel_gaps[0].sources[0].url
    assert ("accelerators", "h100-sxm", runtime) in listed
    assert ("precisions", "int8", gap) in listed
    assert runtime not in {s.url for s in catalog.accelerators["h100-sxm"].sources}
    assert gap not in {s.url for s in catalog.precisions["int8"].sources}


def test_an_entrys_sources_for_a_reader_list_its_own_first_then_the_nested_ones_once_each(catalog) -> None:
    """What a page links for an entry: the H100's own sources, then the vLLM log its runtime total was read from;
    no address twice."""
    from snippets.data import entry_sources

    h100 = catalog.accelerators["h100-sxm"]
    got = [s.url for s in entry_sources(h100)]
    assert got[:len(h100.sources)] == [s.url for s in h100.sources]
    assert h100.memory_runtime.source.url in got[len(h100.sources):]
    assert len(got) == len(set(got))


Edit = Callable[[dict[str, Any]], None]


_CLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@functools.cache
def _repository_parse() -> Parsed:
    """The repository's data/ as one load parses it: `broken` hands a copy to each load, so only the file it edits is
    parsed and validated again (the references between files are checked every time, as at every load)."""
    parsed = Parsed()
    load(ROOT / "data", parsed_before=parsed)
    return parsed


def broken(tmp_path: Path, file: str, edit: Edit) -> str:
    """Copy data/, apply `edit` to one file's parsed YAML, load, and return the error message."""
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    path = data / f"{file}.yaml"
    doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_CLoader)  # noqa: S506 - the safe loader, in C where PyYAML has it
    edit(doc)
    path.write_text(yaml.dump(doc, Dumper=_CDumper, sort_keys=False), encoding="utf-8")
    base = _repository_parse()
    with pytest.raises(DataError) as info:
        load(data, parsed_before=Parsed(dict(base.files), base.schemas))
    return str(info.value)


def _walk(doc: Any, path: str) -> tuple[Any, Any]:
    """Follow a /-separated path (entry ids contain dots); numeric parts index lists."""
    *head, last = path.split("/")
    for key in head:
        doc = doc[int(key)] if isinstance(doc, list) else doc[key]
    return doc, int(last) if isinstance(doc, list) else last


def _set(path: str, value: Any) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        node, last = _walk(doc, path)
        node[last] = value
    return edit


def _del(path: str) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        node, last = _walk(doc, path)
        del node[last]
    return edit


def _all(*edits: Edit) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        for e in edits:
            e(doc)
    return edit


CASES = [
    # (case, file, edit, expected fragments)
    ("wrong type", "accelerators", _set("h100-sxm/memory/value", "eighty"),
     ["data/accelerators.yaml", "entry 'h100-sxm'", "field 'memory.value'", "valid number"]),
    ("missing field", "accelerators", _del("h100-sxm/memory_type"),
     ["entry 'h100-sxm'", "field 'memory_type'", "Field required"]),
    ("unknown key", "models", _set("llama-3.1-405b/architecture/colour", "green"),
     ["data/models.yaml", "entry 'llama-3.1-405b'", "field 'architecture.colour'", "Extra inputs"]),
    ("unknown reference", "accelerators", _set("h100-sxm/host_link", "pcie-gen9"),
     ["entry 'h100-sxm'", "field 'host_link'", "unknown interconnect 'pcie-gen9'"]),
    ("reference of the wrong kind", "accelerators", _set("h100-sxm/host_link", "nvlink-4"),
     ["field 'host_link'", "'nvlink-4' is a nvlink, expected a pcie"]),
    ("unknown node reference", "interconnects", _set("hgx-h100-8/accelerator", "h900"),
     ["data/interconnects.yaml", "entry 'hgx-h100-8'", "field 'accelerator'", "unknown accelerator 'h900'"]),
    ("zero quantity", "accelerators", _set("h100-sxm/memory/value", 0),
     ["field 'memory.value'", "greater than 0"]),
    ("negative quantity", "interconnects", _set("nvlink-4/per_link/value", -25),
     ["data/interconnects.yaml", "entry 'nvlink-4'", "field 'per_link.value'", "greater than 0"]),
    ("negative transfer rate", "interconnects", _set("pcie-gen4/transfer_rate/value", -16),
     ["entry 'pcie-gen4'", "field 'transfer_rate.value'"]),
    ("bandwidth without a direction", "accelerators", _del("h100-sxm/memory_bandwidth/direction"),
     ["entry 'h100-sxm'", "field 'memory_bandwidth.direction'", "Field required"]),
    ("unknown direction", "interconnects", _set("infiniband-ndr/port/direction", "bidirectional"),
     ["entry 'infiniband-ndr'", "field 'port.direction'"]),
    ("unknown unit", "accelerators", _set("h100-sxm/memory/unit", "gigs"),
     ["field 'memory.unit'", "'GB'"]),
    ("missing source", "precisions", _set("fp8/sources", []),
     ["data/precisions.yaml", "entry 'fp8'", "field 'sources'"]),
    ("undated source", "models", _del("llama-3.1-70b/sources/0/read"),
     ["entry 'llama-3.1-70b'", "field 'sources.0.read'", "Field required"]),
    ("datasheet disagrees with links x rate", "accelerators", _set("h100-sxm/scale_up/bandwidth/value", 800),
     ["entry 'h100-sxm'", "field 'scale_up.bandwidth'", "disagrees"]),
    ("percent out of range", "assumptions", _set("runtime-reserve/value/value", 120),
     ["data/assumptions.yaml", "entry 'runtime-reserve'", "field 'value'", "below 100"]),
    # a layout policy validates into the engine's record (LayoutPolicySpec) and is refused as a schema class is
    ("unknown key in an engine record", "policies", _set("tp-in-node/disaggregation/colour", "green"),
     ["data/policies.yaml", "entry 'tp-in-node'", "field 'disaggregation.colour'", "Extra inputs"]),
    ("a choice the engine does not know", "policies", _set("tp-in-node/tp_limit", "rack"),
     ["entry 'tp-in-node'", "field 'tp_limit'", "'node' or 'domain'", "(got 'rack')"]),
    ("a record's id written in its entry", "policies", _set("tp-in-node/id", "fewest-gpus"),
     ["entry 'tp-in-node'", "field 'id'", "its key in the file"]),
    ("a share outside its stated range", "policies", _set("tp-in-node/disaggregation/min_saving", 0.3),
     ["entry 'tp-in-node'", "field 'disaggregation.min_saving'", "outside min_saving_range 0.05-0.25 (got 0.3)"]),
    ("a record's provenance missing", "policies", _del("tp-in-node/disaggregation/sources"),
     ["entry 'tp-in-node'", "field 'disaggregation.sources'", "Field required"]),
    # a scenario validates into ScenarioSpec: its target's times are measures as written, held in seconds
    ("a target time without its unit", "scenarios", _set("reference/target/ttft", 2.0),
     ["data/scenarios.yaml", "entry 'reference'", "field 'target.ttft'", "valid dictionary or instance of TargetTime"]),
    ("a target time in an unknown unit", "scenarios", _set("reference/target/ttft/unit", "min"),
     ["entry 'reference'", "field 'target.ttft.unit'", "'min' is not one of 's', 'ms', 'us', 'ns'"]),
    ("an implausible target time", "scenarios", _set("reference/target/tpot/value", 1e9),
     ["entry 'reference'", "field 'target.tpot'", "outside the plausible range", "TargetTime.BOUNDS"]),
    ("no sequences", "scenarios", _set("reference/concurrency", 0),
     ["entry 'reference'", "field 'concurrency'", "0 is less than 1"]),
    # a memory policy validates into MemoryPolicySpec: its sizes are measures as written, held in bytes
    ("a size without its unit", "policies", _set("vllm-default/non_torch_by_tp/1/memory", 3.58),
     ["entry 'vllm-default'", "field 'non_torch_by_tp.1.memory'", "valid dictionary or instance of RuntimeBytes"]),
    ("a size outside its stated range", "policies", _set("vllm-default/non_torch_by_tp/1/memory/value", 9.0),
     ["entry 'vllm-default'", "field 'non_torch_by_tp.1.memory'", "TP2's 9 GiB lies outside non_torch_range"]),
    ("an unknown key in a record of a list", "policies", _set("vllm-default/non_torch_by_tp/1/colour", "green"),
     ["entry 'vllm-default'", "field 'non_torch_by_tp.1.colour'", "Extra inputs"]),
    ("a size in a rate's unit", "policies", _set("vllm-default/cuda_graphs/unit", "GB/s"),
     ["entry 'vllm-default'", "field 'cuda_graphs.unit'", "'GB/s' is not one of"]),
    ("a scheduler of no sequences", "policies", _set("vllm-default/serve_defaults/max_num_seqs", 0),
     ["entry 'vllm-default'", "field 'serve_defaults.max_num_seqs'", "0 is less than 1"]),
    # an MXFP4 expert layout: one entry per kernel and vendor, one default per vendor, a kernel the engine knows
    ("a kernel's padding given twice", "policies", _set("vllm-default/mxfp4_experts/3/kernel", "triton"),
     ["entry 'vllm-default'", "field 'mxfp4_experts'", "give each kernel once per vendor and set of chips"]),
    ("two default kernels on one vendor", "policies", _set("vllm-default/mxfp4_experts/3/default", True),
     ["entry 'vllm-default'", "field 'mxfp4_experts'", "at most one kernel per vendor and set of chips as the default"]),
    ("padding to no multiple", "policies", _set("vllm-default/mxfp4_experts/1/hidden", 0),
     ["entry 'vllm-default'", "field 'mxfp4_experts.1.hidden'", "greater than 0"]),
    ("a kernel the engine does not know", "policies", _set("vllm-default/mxfp4_experts/1/kernel", "cublas"),
     ["entry 'vllm-default'", "field 'mxfp4_experts.1.kernel'", "cublas"]),
    ("an MXFP4 layout on an unknown chip", "policies", _set("vllm-default/mxfp4_experts/2/accelerators", ["b900"]),
     ["data/policies.yaml", "entry 'vllm-default'", "field 'mxfp4_experts[2].accelerators'", "unknown accelerator 'b900'"]),
    ("an MXFP4 layout on another vendor's chip", "policies", _set("vllm-default/mxfp4_experts/2/accelerators", ["mi300x"]),
     ["entry 'vllm-default'", "field 'mxfp4_experts[2].accelerators'", "a chip of AMD under vendor NVIDIA"]),
    ("an image encoder built on an unknown vendor's chips", "policies",
     _set("vllm-default/vision_encoder_vendors", ["NVIDIA", "AMDD"]),
     ["data/policies.yaml", "entry 'vllm-default'", "field 'vision_encoder_vendors'", "unknown vendor 'AMDD'"]),
    # a precision validates into PrecisionSpec: its widths are measures as written, held in bits
    ("a width without its unit", "precisions", _set("int4-g128/width", 4),
     ["data/precisions.yaml", "entry 'int4-g128'", "field 'width'", "valid dictionary or instance of Bits"]),
    ("a scale's width in an unknown unit", "precisions", _set("int4-g128/block_scale/scale_width/unit", "byte"),
     ["entry 'int4-g128'", "field 'block_scale.scale_width.unit'", "'byte' is not one of 'bit'"]),
    ("an unknown key in a precision's weight block", "precisions", _set("fp8-block/weight_block/depth", 1),
     ["entry 'fp8-block'", "field 'weight_block.depth'", "Extra inputs"]),
    ("an empty weight block", "precisions", _set("fp8-block/weight_block/rows", 0),
     ["entry 'fp8-block'", "field 'weight_block.rows'", "0 is less than 1"]),
    # a model validates into ModelSpec: its counts are measures as written, held as counts
    ("a count without its unit", "models", _set("deepseek-v3/nominal_params", 671),
     ["data/models.yaml", "entry 'deepseek-v3'", "field 'nominal_params'", "valid dictionary or instance of Count"]),
    ("a count in bytes", "models", _set("deepseek-v3/nominal_params/unit", "B"),
     ["entry 'deepseek-v3'", "field 'nominal_params.unit'", "'B' is not one of 'count', 'million', 'billion'"]),
    ("acceptance rates out of order", "models", _set("deepseek-v3/mtp_acceptance/low", 0.95),
     ["entry 'deepseek-v3'", "field 'mtp_acceptance.low'", "must not exceed high (got 0.95)"]),
]


@pytest.mark.parametrize(("case", "file", "edit", "expected"), CASES, ids=[c[0] for c in CASES])
def test_bad_data_is_refused_naming_file_entry_field(
    tmp_path: Path, case: str, file: str, edit: Edit, expected: list[str]
) -> None:
    message = broken(tmp_path, file, edit)
    for fragment in expected:
        assert fragment in message, f"{case}: {fragment!r} not in:\n{message}"


def test_duplicate_entry_ids_are_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    path = data / "precisions.yaml"
    text = path.read_text()
    fp8 = text[text.index("fp8:"):text.index("int8:")]
    path.write_text(text + "\n" + fp8)
    with pytest.raises(DataError, match=r"data/precisions.yaml: not valid YAML: duplicate key 'fp8'"):
        load(data)


def test_loader_rereads_changed_files(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    assert load(data).accelerators["h100-sxm"].memory.value == 80
    path = data / "accelerators.yaml"
    text = path.read_text()
    h100 = text.index("\nh100-sxm:")
    path.write_text(text[:h100] + text[h100:].replace("memory: {value: 80, unit: GB}", "memory: {value: 96, unit: GB}", 1))
    assert load(data).accelerators["h100-sxm"].memory.value == 96


def test_a_load_given_the_last_parse_reads_only_changed_files(tmp_path: Path) -> None:
    """`load(data, parsed)` takes the entries of a file whose text is unchanged from the last load given `parsed`;
    an edited file is parsed and validated again, a broken one is refused as without it, and the catalog equals a
    load from nothing."""
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    parsed = Parsed()
    first = load(data, parsed)
    assert set(parsed.files) == set(FILES)
    path = data / "accelerators.yaml"
    text = path.read_text()
    h100 = text.index("\nh100-sxm:")
    path.write_text(text[:h100] + text[h100:].replace("memory: {value: 80, unit: GB}", "memory: {value: 96, unit: GB}", 1))
    second = load(data, parsed)
    assert second.accelerators["h100-sxm"].memory.value == 96
    assert second.models["llama-3.1-405b"] is first.models["llama-3.1-405b"]  # models.yaml: unchanged, not parsed
    assert second.accelerators["b200"] is not first.accelerators["b200"]  # accelerators.yaml: edited, parsed
    assert second == load(data)
    path.write_text(text.replace("memory: {value: 80, unit: GB}", "memory: {value: eighty, unit: GB}", 1))
    with pytest.raises(DataError, match=r"data/accelerators.yaml: entry '[^']+': field 'memory.value'"):
        load(data, parsed)
    assert "accelerators" not in parsed.files  # a file with a problem is not kept
    path.write_text(text)
    assert load(data, parsed) == load(data) == first
    parsed.schemas = None  # as if another import of the loader had validated them: every file read again
    assert load(data, parsed).models["llama-3.1-405b"] is not first.models["llama-3.1-405b"]


def test_reference_entries_present(catalog) -> None:
    assert {"a100-40gb-sxm", "a100-80gb-sxm", "h100-sxm", "h100-pcie", "h100-nvl", "h200-sxm", "b200", "gb200",
            "l40s", "l4", "mi300x", "mi325x", "mi355x", "tpu-v5e", "tpu-v5p", "tpu-v6e", "gaudi-3"} \
        <= set(catalog.accelerators)
    assert {"nvlink-3", "nvlink-4", "nvlink-5", "nvswitch-gen2", "nvswitch-gen3", "nvswitch-gen4", "pcie-gen3",
            "pcie-gen4", "pcie-gen5", "pcie-gen6", "infiniband-hdr", "infiniband-ndr", "infiniband-xdr",
            "ethernet-400g", "ethernet-800g", "hgx-a100-8", "hgx-h100-8", "hgx-b200-8", "gb200-nvl72"} \
        <= set(catalog.interconnects)
    assert {"llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-2-70b", "mixtral-8x7b", "deepseek-v3",
            "qwen2.5-72b", "gpt-3-175b", "llama-4-scout", "llama-4-maverick", "deepseek-r1", "qwen3-235b-a22b",
            "qwen3-32b", "gpt-oss-120b", "gpt-oss-20b"} <= set(catalog.models)
    assert catalog.models["deepseek-r1"].checkpoint_precision == "fp8-block"
    assert catalog.precisions["fp8-block"].weight_block is not None
    assert catalog.models["gpt-oss-120b"].checkpoint_precision == "mxfp4"
    assert catalog.models["llama-4-maverick"].other_checkpoint_precisions == ("fp8",)
    priced = {p.accelerator for p in catalog.prices.values()}
    assert {"h100-sxm", "h200-sxm", "a100-80gb-sxm", "b200", "mi300x"} <= priced
    # values other pages depend on
    assert catalog.accelerators["a100-80gb-sxm"].memory_bandwidth.value == 2039
    assert catalog.models["llama-3.1-405b"].nominal_params == 405e9


def test_every_accelerator_is_complete_or_says_why(catalog) -> None:
    from snippets.data import OPTIONAL_ACCELERATOR_FIELDS

    for acc_id, acc in catalog.accelerators.items():
        assert acc.memory_bandwidth.direction is Direction.SHARED, acc_id
        for key in OPTIONAL_ACCELERATOR_FIELDS:
            if getattr(acc, key) is None and not (key == "host_link_lanes" and acc.host_link is None):
                assert key in acc.not_stated, (acc_id, key)


REFERENCE_CASES = [
    ("optional field left out without a reason", "accelerators", _del("tpu-v5e/not_stated/power"),
     ["entry 'tpu-v5e'", "power: missing", "not_stated.power"]),
    ("reason given for a present field", "accelerators", _set("h100-sxm/not_stated", {"power": "no reason at all"}),
     ["entry 'h100-sxm'", "not_stated.power: the field is given"]),
    ("site value outside the disagreement range", "accelerators", _set("b200/memory/value", 200),
     ["entry 'b200'", "outside the recorded range 180-192 GB"]),
    ("disagreement in a unit of another quantity", "accelerators", _set("b200/disagreements/0/unit", "TB/s"),
     ["entry 'b200'", "not a unit of memory"]),
    ("memory bandwidth not shared", "accelerators", _set("mi300x/memory_bandwidth/direction", "per_direction"),
     ["entry 'mi300x'", "direction must be 'shared'"]),
    ("unknown sparsity", "accelerators", _set("l4/tensor/bf16/sparsity", "effective"),
     ["entry 'l4'", "field 'tensor.bf16.sparsity'"]),
    ("fabric links x rate disagree", "accelerators", _set("mi300x/scale_up/bandwidth/value", 900),
     ["entry 'mi300x'", "field 'scale_up.bandwidth'", "disagrees", "7 x 64"]),
    ("fabric with a per-link rate needs links", "accelerators", _del("gaudi-3/scale_up/links"),
     ["entry 'gaudi-3'", "field 'scale_up.links'", "required"]),
    ("scale-up onto a switch", "accelerators", _set("b200/scale_up/fabric", "nvswitch-gen4"),
     ["entry 'b200'", "field 'scale_up.fabric'", "expected a nvlink or a fabric"]),
    ("nic without a count", "interconnects", _del("hgx-b200-8/nics_per_gpu"),
     ["entry 'hgx-b200-8'", "give both or neither"]),
    ("active params on a dense model", "models", _set("llama-3.1-8b/stated_active_params",
                                                        {"value": 8, "unit": "billion"}),
     ["entry 'llama-3.1-8b'", "stated_active_params"]),
    ("learned positions without context", "models", _del("gpt-3-175b/architecture/context_length"),
     ["entry 'gpt-3-175b'", "context_length"]),
    ("checkpoint in an unknown precision", "models", _set("deepseek-r1/checkpoint_precision", "fp7"),
     ["entry 'deepseek-r1'", "field 'checkpoint_precision'", "unknown precision 'fp7'"]),
    ("further checkpoint in an unknown precision", "models",
     _set("llama-4-maverick/other_checkpoint_precisions", ["fp8", "int3"]),
     ["entry 'llama-4-maverick'", "field 'other_checkpoint_precisions'", "unknown precision 'int3'"]),
    ("16-bit layers of a checkpoint in an unknown precision", "models", _set("gpt-oss-20b/keeps_16bit",
                                                                            {"fp7": ["attention_in"]}),
     ["entry 'gpt-oss-20b'", "field 'keeps_16bit'", "unknown precision 'fp7'"]),
    ("16-bit layers of a 16-bit checkpoint", "models", _set("gpt-oss-20b/keeps_16bit", {"bf16": ["attention_in"]}),
     ["entry 'gpt-oss-20b'", "field 'keeps_16bit'", "not narrower than 16 bits"]),
    ("16-bit layers of an unknown group", "models", _set("gpt-oss-20b/keeps_16bit", {"mxfp4": ["lm_head"]}),
     ["entry 'gpt-oss-20b'", "keeps_16bit"]),
    ("sliding window without its layers", "models", _del("gpt-oss-20b/architecture/sliding_window_layers"),
     ["entry 'gpt-oss-20b'", "give both or neither"]),
    ("sliding window on an unknown pattern", "models",
     _set("gpt-oss-20b/architecture/sliding_window_layers", "every third"),
     ["entry 'gpt-oss-20b'", "sliding_window_layers"]),
    ("two prices used for one accelerator", "prices", _set("h100-sxm-runpod-secure/site_uses", True),
     ["data/prices.yaml", "accelerator 'h100-sxm'", "exactly one price", "found 2"]),
    ("a dearer on-demand price used for the site's costs", "prices",
     _all(_set("h100-sxm-lambda/site_uses", True), _del("h100-sxm-runpod-community/site_uses")),
     ["entry 'h100-sxm-lambda'", "field 'site_uses'", "lowest on-demand price", "h100-sxm-runpod-community"]),
    ("an unmarked on-demand price below the one used", "prices", _set("h200-sxm-aws-p5en/price/value", 3.5),
     ["entry 'h200-sxm-runpod-community'", "field 'site_uses'", "h200-sxm-aws-p5en is lower"]),
    ("a weight format as a scenario's KV cache", "scenarios", _set("reference/kv_precision", "int4-g128"),
     ["data/scenarios.yaml", "entry 'reference'", "field 'kv_precision'", "weight format, not a KV cache dtype"]),
    ("a weight format as a measured run's KV cache", "measurements",
     _set("inferencex-dsr1-fp8-sglang-8xb300-in8192-out1024-c1/kv_precision", "fp8-block"),
     ["entry 'inferencex-dsr1-fp8-sglang-8xb300-in8192-out1024-c1'", "field 'kv_precision'", "'fp8-block'"]),
    ("an engine's kernel gap on an unknown accelerator", "precisions",
     _set("int8/kernel_gaps/0/accelerators", ["b200", "b900"]),
     ["data/precisions.yaml", "entry 'int8'", "field 'kernel_gaps.0.accelerators'", "unknown accelerator 'b900'"]),
    ("an engine's kernel gap for an engine no policy runs", "precisions", _set("int8/kernel_gaps/0/engine", "vLLM-X"),
     ["entry 'int8'", "field 'kernel_gaps.0.engine'", "no memory policy", "'vLLM-X'"]),
    ("an engine's kernel gap on a format whose error the engine does not word", "precisions",
     _set("fp8/kernel_gaps", [{"engine": "vLLM", "accelerators": ["b200"], "sm": 100, "note": "a made-up gap of FP8",
                               "sources": [{"url": "https://example.com/x", "title": "a source", "read": "2026-12-06"}]}]),
     ["entry 'fp8'", "field 'kernel_gaps.0'", "whose error the engine does not know"]),
    ("an INT8 kernel gap with neither the SM version nor the engine's message", "precisions",
     _del("int8/kernel_gaps/0/sm"),
     ["entry 'int8'", "field 'kernel_gaps.0'", "without the engine's message"]),
    ("a kernel gap with both the engine's message and an SM version", "precisions", _set("fp8/kernel_gaps/0/sm", 90),
     ["entry 'fp8'", "field 'kernel_gaps.0'", "not both"]),
    ("an engine's kernel gap without its source", "precisions", _del("int8/kernel_gaps/2/sources"),
     ["entry 'int8'", "kernel_gaps.2.sources"]),
    ("a spot price used for the site's costs", "prices", _set("h100-sxm-gcp-a3-spot/site_uses", True),
     ["entry 'h100-sxm-gcp-a3-spot'", "site_uses: the site's costs use an on-demand price"]),
    ("a price without its kind", "prices", _del("mi300x-vultr/kind"),
     ["entry 'mi300x-vultr'", "field 'kind'", "required"]),
    ("a reserved price without its term", "prices", _set("h100-sxm-aws-p5/kind", "reserved"),
     ["entry 'h100-sxm-aws-p5'", "term: a reserved price states its term"]),
    ("a secondary source that names no primary", "prices", _del("b200-lambda/sources/0/copies"),
     ["entry 'b200-lambda'", "copies: a secondary source names the primary document"]),
    ("a primary source that copies another", "prices", _set("mi300x-vultr/sources/0/copies", "Vultr's own page"),
     ["entry 'mi300x-vultr'", "only a secondary source copies another document"]),
    ("price of an unknown accelerator", "prices", _set("mi300x-vultr/accelerator", "mi900x"),
     ["entry 'mi300x-vultr'", "unknown accelerator 'mi900x'"]),
    ("a latency measured on an unknown accelerator", "latencies", _set("nccl-allreduce-h100/accelerator", "h900"),
     ["data/latencies.yaml", "entry 'nccl-allreduce-h100'", "field 'accelerator'", "unknown accelerator 'h900'"]),
    ("price in another unit", "prices", _set("b200-lambda/price/unit", "EUR/GPU-hour"),
     ["entry 'b200-lambda'", "field 'price.unit'"]),
    # another tool's published accuracy: errors in per cent, at least one of them, read from its text or a chart
    ("a predictor's evaluation that reports no error", "predictors",
     lambda d: [d["aiconfigurator-showdown"].pop(m) for m in ("e2e", "itl")],
     ["data/predictors.yaml", "entry 'aiconfigurator-showdown'", "at least one of the three errors"]),
    ("a predictor's error as a fraction", "predictors", _set("blis-trained-physics/e2e/unit", "fraction"),
     ["entry 'blis-trained-physics'", "field 'e2e.unit'"]),
    ("a predictor's error read from nowhere", "predictors", _set("blis-trained-physics/read_from", "memory"),
     ["entry 'blis-trained-physics'", "field 'read_from'", "'text' or 'chart'"]),
    ("a predictor's evaluation without a source", "predictors", _del("blis-trained-physics-a100/sources"),
     ["entry 'blis-trained-physics-a100'", "field 'sources'", "required"]),
    ("a predictor's evaluation on an unknown accelerator", "predictors", _set("blis-trained-physics-l40s/accelerator", "l50s"),
     ["data/predictors.yaml", "entry 'blis-trained-physics-l40s'", "field 'accelerator'", "unknown accelerator 'l50s'"]),
]


@pytest.mark.parametrize(("case", "file", "edit", "expected"), REFERENCE_CASES, ids=[c[0] for c in REFERENCE_CASES])
def test_bad_reference_data_is_refused(tmp_path: Path, case: str, file: str, edit: Edit, expected: list[str]) -> None:
    message = broken(tmp_path, file, edit)
    for fragment in expected:
        assert fragment in message, f"{case}: {fragment!r} not in:\n{message}"


def test_every_accelerator_has_a_node(catalog) -> None:
    from snippets.data import Node

    with_node = {n.accelerator for n in catalog.of_kind(Node).values()}
    assert set(catalog.accelerators) <= with_node, set(catalog.accelerators) - with_node


def test_a_used_price_has_a_node(catalog) -> None:
    from snippets.data import Node

    with_node = {n.accelerator for n in catalog.of_kind(Node).values()}
    for price_id, p in catalog.prices.items():
        if p.site_uses:
            assert p.accelerator in with_node, price_id
    assert catalog.prices["b200-lambda"].gpus_per_unit == 1  # the snapshot's B200 row is a 1x instance
    assert catalog.prices["h200-sxm-aws-p5en"].gpus_per_unit == 8
    assert all("Secure Cloud, on demand" not in p.offering for p in catalog.prices.values())


def test_prices_as_the_september_2026_snapshot_gives_them(catalog) -> None:
    """tgarg01/silybench-data's gpu_prices.csv (rows checked 2026-09-25): Lambda's 8-GPU H100 and A100 instances at
    3.99 and 2.79, one B200 at 6.99; RunPod's Community and Secure Cloud tiers recorded apart. The site uses the
    lowest on-demand price of each accelerator: RunPod's Community Cloud for every NVIDIA GPU, Vultr for MI300X."""
    pr = catalog.prices
    used = {p.accelerator: p for p in pr.values() if p.site_uses}
    assert (pr["h100-sxm-lambda"].price.value, pr["h100-sxm-lambda"].gpus_per_unit) == (3.99, 8)
    assert (pr["a100-80gb-sxm-lambda"].price.value, pr["a100-80gb-sxm-lambda"].gpus_per_unit) == (2.79, 8)
    assert (pr["b200-lambda"].price.value, pr["b200-lambda"].gpus_per_unit) == (6.99, 1)
    assert {a: (p.price.value, p.tier, p.gpus_per_unit) for a, p in used.items()} == {
        "h100-sxm": (2.69, "Community Cloud", 1), "a100-80gb-sxm": (1.39, "Community Cloud", 1),
        "h200-sxm": (3.59, "Community Cloud", 1), "b200": (5.98, "Community Cloud", 1), "mi300x": (1.85, None, 1)}
    for p in used.values():
        assert p.kind == "on-demand"
    tiers = {(p.accelerator, p.tier): p.price.value for p in pr.values() if p.provider == "RunPod"}
    assert tiers == {("h100-sxm", "Community Cloud"): 2.69, ("h100-sxm", "Secure Cloud"): 3.49,
                     ("a100-80gb-sxm", "Community Cloud"): 1.39, ("a100-80gb-sxm", "Secure Cloud"): 1.59,
                     ("h200-sxm", "Community Cloud"): 3.59, ("h200-sxm", "Secure Cloud"): 4.59,
                     ("b200", "Community Cloud"): 5.98, ("b200", "Secure Cloud"): 6.79}
    snap = [p for p in pr.values() if "silybench" in p.sources[0].url]
    assert snap and all(p.secondary and p.read.isoformat() in ("2026-09-25", "2026-09-26") for p in snap)


def test_hyperscaler_prices_by_kind(catalog) -> None:
    """Azure ND H100 v5 ($117.984 and $29.496 an hour for 8 GPUs, skypilot-catalog#50, 2023-12-06) and Google
    Cloud A3 (a3-highgpu-1g, $10.9791 and $6.571, the 2026-09-26 snapshot), on demand and spot, each secondary."""
    pr = catalog.prices
    assert pr["h100-sxm-azure-nd-v5"].price.value == pytest.approx(117.984 / 8)
    assert pr["h100-sxm-azure-nd-v5-spot"].price.value == pytest.approx(29.496 / 8)
    assert pr["h100-sxm-azure-nd-v5"].read.isoformat() == "2023-12-06"
    assert (pr["h100-sxm-gcp-a3"].price.value, pr["h100-sxm-gcp-a3-spot"].price.value) == (10.9791, 6.571)
    assert pr["h200-sxm-aws-p5en-spot"].price.value == pytest.approx(26.57 / 8)
    kinds = {k: p.kind for k, p in pr.items() if p.provider in ("Microsoft Azure", "Google Cloud", "AWS")}
    assert kinds == {"h100-sxm-azure-nd-v5": "on-demand", "h100-sxm-azure-nd-v5-spot": "spot",
                     "h100-sxm-gcp-a3": "on-demand", "h100-sxm-gcp-a3-spot": "spot",
                     "h200-sxm-aws-p5en": "on-demand", "h200-sxm-aws-p5en-spot": "spot", "h100-sxm-aws-p5": "on-demand"}
    assert all(pr[k].secondary for k in kinds)


def test_tensor_formats_and_dense(catalog) -> None:
    a = catalog.accelerators
    assert a["a100-80gb-sxm"].dense("int8").flops_per_s == 624e12
    assert "fp8" not in a["a100-80gb-sxm"].tensor and "fp8" in a["a100-80gb-sxm"].tensor_notes
    h100_int8 = a["h100-sxm"].tensor["int8"]
    assert (h100_int8.value, h100_int8.sparsity, h100_int8.sparse_speedup) == (3958, "sparse", 2)
    assert a["h100-sxm"].dense("bf16").derived and a["h100-sxm"].dense("bf16").flops_per_s == 989.5e12
    assert a["b200"].dense("fp4").flops_per_s == 9e15
    assert a["mi355x"].tensor["fp6"].per_s == 10e15 and a["mi355x"].tensor["fp4"].per_s == 10e15
    assert a["tpu-v5e"].dense("int8").flops_per_s == 393e12 and a["tpu-v5e"].fp8 is None
    assert a["tpu-v6e"].dense("int8").flops_per_s == 1836e12
    assert "int8" in a["tpu-v5p"].tensor_notes  # Google states no Int8 for v5p
    # every sparse figure states the speedup that derives its dense figure, and every chip has a dense BF16 but the
    # V100, whose tensor cores compute FP16 only (its note says so, and the engine refuses BF16 on it)
    for acc_id, acc in a.items():
        assert acc.dense("bf16") is not None or (acc_id == "v100-sxm2-32gb" and "bf16" in acc.tensor_notes), acc_id
        assert acc.dense("bf16") is not None or acc.dense("fp16") is not None, acc_id
        for fmt_, f in acc.tensor.items():
            if f.sparsity == "sparse":
                assert f.sparse_speedup == 2, (acc_id, fmt_)


def test_reported_memory(catalog) -> None:
    a = catalog.accelerators
    mib = 2**20
    assert a["h200-sxm"].memory_reported.value == 143771
    assert a["b200"].memory_reported.value == 183359
    # the engine budgets the runtime's total where one is published, else the label (issue 26: one basis)
    assert a["h100-sxm"].capacity_bytes == 79.22 * 2**30 and a["h100-sxm"].capacity_basis == "CUDA"
    assert a["b200"].capacity_bytes == 178.35 * 2**30
    assert a["h200-sxm"].capacity_bytes == 143156 * mib
    assert a["mi300x"].capacity_bytes == 196592 * mib and a["mi300x"].capacity_basis == "ROCm"
    assert a["a100-40gb-sxm"].capacity_bytes == 42298834944
    # deviceQuery's totalGlobalMem, in bytes, naming the exact device (newest driver's where readings differ)
    assert a["a100-80gb-sxm"].capacity_bytes == 85100068864 and a["a100-80gb-sxm"].capacity_basis == "CUDA"
    assert a["h100-nvl"].capacity_bytes == 99861594112 and a["l40s"].capacity_bytes == 47803596800
    assert a["l4"].capacity_bytes == 23570219008 and a["l4"].capacity_basis == "CUDA"
    assert a["gb200"].capacity_basis == "label" and a["gb200"].capacity_bytes == 186e9
    assert a["gb200"].memory_reported.value == 189471 and a["gb200"].memory_reported.source.secondary
    # the Blackwell datasheet's per-GPU column: "Configurable up to 1,200W" (GB200 NVL72), 1,000W (HGX B200)
    assert (a["gb200"].power.watts, a["b200"].power.watts) == (1200, 1000) and "power" not in a["gb200"].not_stated
    assert a["h100-pcie"].capacity_bytes == a["h100-sxm"].memory.bytes == 80e9  # PCIe: label (no runtime total)
    # RTX PRO 6000 Server: torch's total_memory, 97,250 MiB (PyTorch prints MiB), not the 96 GB label
    rtx = a["rtx-pro-6000-server"]
    assert rtx.capacity_bytes == 97250 * 2**20 and rtx.capacity_basis == "CUDA" and rtx.memory.bytes == 96e9
    assert a["tpu-v6e"].capacity_bytes == 32 * 2**30  # Google's 32 GiB
    # MI325X: rocminfo's coarse-grained pool, 268,419,072 KiB (ROCm/ROCm#6023): 256.0 GiB, above the 256 GB label
    assert a["mi325x"].capacity_bytes == 268419072 * 2**10 and a["mi325x"].capacity_basis == "ROCm"
    # MI355X: vLLM requests 273.6 GiB at 0.95 and 244.8 at 0.85 (InferenceX's launch script, 8a428bf5): 288.0 GiB
    assert a["mi355x"].capacity_bytes == 288 * 2**30 and a["mi355x"].capacity_basis == "ROCm"
    for util, requested in ((0.95, 273.6), (0.85, 244.8), (0.86, 247.7), (0.90, 259.2)):
        assert round(util * a["mi355x"].capacity_bytes / 2**30, 1) == requested
    assert a["mi350x"].capacity_basis == "label" and "memory_runtime" in a["mi350x"].not_stated
    for acc_id, acc in a.items():
        assert (acc.memory_runtime is None) == ("memory_runtime" in acc.not_stated), acc_id
    assert a["mi300x"].memory_reported.tool == "rocm-smi"
    for acc_id, acc in a.items():
        r = acc.memory_reported
        if r is None:
            assert "memory_reported" in acc.not_stated, acc_id
            continue
        assert r.unit in ("MiB", "B") and r.source.url.startswith("https://"), acc_id
        assert 0.9 * acc.memory.bytes < r.bytes < 1.1 * acc.memory.bytes, acc_id


def test_corrections(catalog) -> None:
    from snippets.data import Node

    a = catalog.accelerators
    assert a["b200"].memory_bandwidth.value == 7.7 and a["b200"].host_link == "pcie-gen5"
    assert a["b200"].disagreement("memory_bandwidth").range == (7.7, 8)
    assert a["gaudi-3"].scale_up.links == 21 and a["gaudi-3"].disagreement("scale_up.bandwidth") is not None
    assert a["h100-pcie"].scale_up.joins == 2 and a["h100-nvl"].scale_up.joins == 2
    assert a["gb200"].host_link is None and "NVLink-C2C" in a["gb200"].host_link_other
    nodes = catalog.of_kind(Node)
    assert "HLS-3" in nodes["hls-gaudi3-8"].name
    assert nodes["tpu-v5e-host-8"].domain == 256 and nodes["tpu-v6e-host-8"].domain == 256
    assert nodes["tpu-v5p-vm-4"].domain > 1000
    assert nodes["h100-pcie-8"].scale_up == "pcie" and nodes["h100-nvl-8"].scale_up == "pcie"
    assert nodes["gb200-nvl72"].switch_chips == 18 and nodes["gb200-nvl72"].switch_trays == 9
    assert {"hgx-h200-8", "l40s-pcie-8", "l4-pcie-8", "aws-p5-48xlarge", "aws-p5en-48xlarge"} <= set(nodes)


def test_latencies_and_efficiencies(catalog) -> None:
    assert catalog.latencies and catalog.efficiencies
    for lat_id, lat in catalog.latencies.items():
        assert lat.accelerator is None or lat.accelerator in catalog.accelerators, lat_id
    for e_id, e in catalog.efficiencies.items():
        assert e.accelerator in catalog.accelerators, e_id
        # a TP-sliced fused MoE layer's expert GEMMs reach a far smaller share than a dense kernel (11 % to 20 % for
        # the engines' median; TensorRT-LLM's CUTLASS kernel on FP4 slices of the B300 and GB300, 3.7 % to 3.8 %)
        floor = 0.035 if getattr(e, "kernel", None) else 0.05
        assert (floor if e.resource.startswith("moe_compute") else 0.3) < e.fraction <= 1, e_id
    assert catalog.efficiencies["h100-nvlink-p2p"].fraction == pytest.approx(376 / 450)


ISSUE14_CASES = [
    ("dense and sparse figure", "accelerators", _set("mi300x/tensor/bf16/sparse_speedup", 2),
     ["entry 'mi300x'", "only a sparse figure has one"]),
    ("unknown tensor format", "accelerators", _set("l4/tensor/fp12", {"value": 1, "unit": "TFLOP/s", "sparsity": "dense"}),
     ["entry 'l4'", "field 'tensor.fp12"]),
    ("note for a given format", "accelerators", _set("tpu-v6e/tensor_notes", {"int8": "no int8 here at all"}),
     ["entry 'tpu-v6e'", "tensor_notes.int8: the format is given"]),
    ("reported memory far above the label", "accelerators", _set("h200-sxm/memory_reported/value", 200000),
     ["entry 'h200-sxm'", "memory_reported: more than the vendor's label"]),
    ("switch without a chip count or a note", "interconnects", _del("hgx-h200-8/switch_chips"),
     ["entry 'hgx-h200-8'", "switch_chips: give the switch chips, or say in `note` why"]),
    ("switch chips without a switch", "interconnects", _del("hgx-h200-8/switch"),
     ["entry 'hgx-h200-8'", "switch_chips: a node without a switch has no switch chips"]),
    ("runtime total far below the label", "accelerators", _set("h100-sxm/memory_runtime/value", 50),
     ["entry 'h100-sxm'", "memory_runtime: more than 20 % under"]),
    ("runtime total above the tool's", "accelerators", _set("h200-sxm/memory_runtime/value", 144000),
     ["entry 'h200-sxm'", "memory_runtime: more than the management tool's total"]),
    ("a checkpoint's context that is not the architecture's", "models",
     _set("llama-4-scout/context_checkpoint", "meta-llama/Llama-4-Scout-17B-16E"),
     ["entry 'llama-4-scout'", "context_checkpoint", "262,144 tokens"]),
    ("a chip without BF16 that does not say why", "accelerators", _del("v100-sxm2-32gb/tensor_notes/bf16"),
     ["entry 'v100-sxm2-32gb'", "tensor_notes.bf16"]),
    ("InfiniBand without its switch latency or a reason", "interconnects",
     _del("infiniband-ndr/not_stated/switch_latency"),
     ["entry 'infiniband-ndr'", "switch_latency: give the manual's figure, or say why"]),
    ("PCIe-only node with a switch", "interconnects", _set("h100-pcie-8/switch", "nvswitch-gen3"),
     ["entry 'h100-pcie-8'"]),
    ("domain smaller than the node", "interconnects", _set("tpu-v5e-host-8/domain_gpus", 4),
     ["entry 'tpu-v5e-host-8'", "domain_gpus"]),
    ("latency outside its range", "latencies", _set("gpu-gpu-nvlink-p2p/value/value", 9),
     ["data/latencies.yaml", "entry 'gpu-gpu-nvlink-p2p'", "outside the range"]),
    ("efficiency on two bases", "efficiencies", _set("h100-nvlink-p2p/peak/direction", "both_summed"),
     ["data/efficiencies.yaml", "entry 'h100-nvlink-p2p'", "one basis"]),
    ("efficiency above peak", "efficiencies", _set("h200-hbm-stream/peak/value", 4),
     ["entry 'h200-hbm-stream'", "exceeds peak"]),
    ("bandwidth without a direction in an efficiency", "efficiencies", _del("h200-pcie-h2d/achieved/direction"),
     ["entry 'h200-pcie-h2d'", "field 'achieved.direction'", "Field required"]),
    ("an SGLang row on vLLM's budget that does not say whether its steps mix", "measurements",
     _del("dstack-dsr1-fp8-sglang-8xh200-in3200-out800-c16/mixed_steps"),
     ["entry 'dstack-dsr1-fp8-sglang-8xh200-in3200-out800-c16'", "field 'mixed_steps'", "SGLang's default"]),
    ("a chip's own all-reduce on an entry that is no collective's timings", "policies",
     _set("measured-fractions/chip_collectives/1/points", "kernel-in-graph"),
     ["data/policies.yaml", "entry 'measured-fractions'", "chip_collectives[1].points", "not a collective entry"]),
    ("a chip's own all-reduce that leaves out the chip it was timed on", "policies",
     _set("measured-fractions/chip_collectives/1/accelerators", ["b300"]),
     ["chip_collectives[1].accelerators", "leave out 'b200'"]),
    ("a chip priced by two all-reduce entries", "policies",
     _set("measured-fractions/chip_collectives/2/accelerators", ["b300", "b200"]),
     ["chip_collectives[2].accelerators", "'b200' is already priced by 'custom-allreduce-b200'"]),
    ("a chip priced twice under one engine (each engine's kernel may have its own entry, not two)", "policies",
     _set("measured-fractions/chip_collectives/6/engine", "vLLM"),
     ["chip_collectives[6].accelerators", "'mi300x' is already priced by 'custom-allreduce-mi300x' under vLLM"]),
    ("a kernel's one-stage rule whose groups do not rise", "policies",
     _set("measured-fractions/chip_collectives/6/one_stage_below", [[4, 163840], [2, None]]),
     ["chip_collectives.6.one_stage_below", "must rise from 2"]),
    ("a chip's own all-reduce under an engine no memory policy names", "policies",
     _set("measured-fractions/chip_collectives/1/engine", "vllm"),
     ["chip_collectives[1].engine", "'vllm' is the engine of no memory policy"]),
    ("a memory policy that names no engine", "policies", _del("vllm-default/engine"),
     ["entry 'vllm-default'", "field 'engine'", "name the serving engine"]),
    ("a chip's own NCCL on another chip's timings", "policies",
     _set("measured-fractions/chip_nccl/1/points", "nccl-allreduce-b300"),
     ["chip_nccl[1].accelerators", "leave out 'b300'"]),
    ("a CUDA-graph cap of no batch", "measurements",
     _set("inferencex-dsr1-fp8-sglang-8xb200-in1024-out1024-c16/engine_limits/cuda_graph_max_batch", 0),
     ["entry 'inferencex-dsr1-fp8-sglang-8xb200-in1024-out1024-c16'", "engine_limits.cuda_graph_max_batch"]),
    ("a fused MoE weight stream without its format", "efficiencies", _del("b200-moe-weights-fp8/tensor_format"),
     ["data/efficiencies.yaml", "entry 'b200-moe-weights-fp8'", "tensor_format: give it for gemm_weights and moe_weights"]),
    ("a second fused MoE weight stream for one chip and format", "efficiencies",
     _set("h100-sxm-moe-weights-bf16/accelerator", "h200-sxm"),
     ["entry 'h200-sxm-moe-weights-bf16'", "already reads 'h100-sxm-moe-weights-bf16'", "h200-sxm's moe_weights"]),
    ("a compute ramp on a dense GEMM's share", "efficiencies",
     _set("b200-gemm-compute-fp8/by_rows", [[8, 0.5], [512, 1.0]]),
     ["entry 'b200-gemm-compute-fp8'", "by_rows: only a fused MoE layer's expert GEMMs ramp"]),
    ("a compute ramp whose rows fall", "efficiencies", _set("b200-moe-compute-fp8/by_rows/1/0", 4),
     ["entry 'b200-moe-compute-fp8'", "by_rows: rows must rise"]),
    ("a compute ramp that falls", "efficiencies", _set("b200-moe-compute-fp8/by_rows/1/1", 0.1),
     ["entry 'b200-moe-compute-fp8'", "by_rows: the fraction must not fall"]),
    ("a compute ramp that grows faster than its rows", "efficiencies", _set("b200-moe-compute-fp8/by_rows/1/1", 0.3),
     ["entry 'b200-moe-compute-fp8'", "from 8 to 16 rows the fraction grows faster than the rows"]),
    ("a compute ramp that stops short of the large-batch share", "efficiencies",
     _set("b200-moe-compute-fp8/by_rows/6/1", 0.99),
     ["entry 'b200-moe-compute-fp8'", "by_rows: the ramp ends at the large-batch share"]),
    ("a GFLOP ramp on a fused MoE layer's share", "efficiencies",
     _set("b200-moe-compute-fp8/by_gflop", [[68.7, 0.8], [274.9, 1]]),
     ["entry 'b200-moe-compute-fp8'", "by_gflop: only a dense GEMM's compute share ramps"]),
    ("a GFLOP ramp that falls", "efficiencies", _set("a100-80gb-sxm-gemm-compute-bf16/by_gflop/1/1", 0.6),
     ["entry 'a100-80gb-sxm-gemm-compute-bf16'", "by_gflop: the fraction must not fall"]),
    ("a GFLOP ramp that stops short of the large-batch share", "efficiencies",
     _set("a100-80gb-sxm-gemm-compute-bf16/by_gflop/4/1", 0.99),
     ["entry 'a100-80gb-sxm-gemm-compute-bf16'", "by_gflop: the fraction must not fall as the FLOPs grow, and ends at 1"]),
    ("a GFLOP ramp that grows faster than its FLOPs", "efficiencies",
     _set("a100-80gb-sxm-gemm-compute-bf16/by_gflop/0", [16.0, 0.1]),
     ["entry 'a100-80gb-sxm-gemm-compute-bf16'", "from 16.0 to 17.2 GFLOP the fraction grows faster"]),
    ("a fused-MoE kernel on a dense GEMM's share", "efficiencies", _set("b200-gemm-compute-fp8/kernel", "cutlass"),
     ["entry 'b200-gemm-compute-fp8'", "kernel: a dense GEMM's entry names an engine's own GEMM ops (trtllm)"]),
    ("a kernel's entry without its own ramp", "efficiencies", _del("b200-moe-compute-fp4-cutlass/by_rows"),
     ["entry 'b200-moe-compute-fp4-cutlass'", "kernel: a kernel's entry gives its own by_rows and by_columns"]),
    ("a MoE kernel no engine names", "efficiencies", _set("b200-moe-compute-fp4-cutlass/kernel", "nonesuch"),
     ["entry 'b200-moe-compute-fp4-cutlass'", "field 'kernel'"]),
    ("a second entry of one kernel's share", "efficiencies",
     _set("b200-moe-compute-whole-fp4-cutlass/resource", "moe_compute"),
     ["entry 'b200-moe-compute-whole-fp4-cutlass'", "the time model already reads 'b200-moe-compute-fp4-cutlass'"]),
    ("a kernel's weight stream without its fixed cost", "efficiencies", _del("b200-moe-weights-bf16-triton/fixed"),
     ["entry 'b200-moe-weights-bf16-triton'", "fixed: a kernel's weight-stream entry gives its fixed cost"]),
    ("a fixed cost by hidden size on the median's weight stream", "efficiencies",
     _set("b200-moe-weights-fp8/fixed_by_hidden", [[2048, 0.8], [7168, 1.4]]),
     ["entry 'b200-moe-weights-fp8'", "fixed_by_hidden: only a fused-MoE kernel's weight stream with its own fixed"]),
    ("a fixed cost by hidden size whose sizes fall", "efficiencies",
     _set("b200-moe-weights-fp8-trtllm-gen/fixed_by_hidden/1/0", 1024),
     ["entry 'b200-moe-weights-fp8-trtllm-gen'", "fixed_by_hidden: the hidden sizes must rise"]),
    ("a fixed cost on the median's weight stream", "efficiencies",
     _set("b200-moe-weights-bf16/fixed", {"value": 20, "unit": "us"}),
     ["entry 'b200-moe-weights-bf16'", "fixed: a kernel's weight-stream entry gives its fixed cost"]),
    ("decode attention's KV read without its curve", "efficiencies", _del("h100-sxm-kv-stream/by_context"),
     ["entry 'h100-sxm-kv-stream'", "by_context: give it for kv_stream"]),
    ("a context curve on a streaming kernel's share", "efficiencies",
     _set("h100-hbm-stream/by_context", [[128, 0.6], [4096, 0.9]]),
     ["entry 'h100-hbm-stream'", "by_context: give it for kv_stream"]),
    ("a context curve whose tokens fall", "efficiencies", _set("h100-sxm-kv-stream/by_context/1/0", 64),
     ["entry 'h100-sxm-kv-stream'", "by_context: tokens must rise"]),
    ("decode attention's KV read without its fixed cost", "efficiencies", _del("h100-sxm-kv-stream/fixed"),
     ["entry 'h100-sxm-kv-stream'", "fixed: decode attention's KV read gives the kernel's fixed cost"]),
    ("a second KV read of one chip", "efficiencies", _set("h200-sxm-kv-stream/accelerator", "h100-sxm"),
     ["entry 'h200-sxm-kv-stream'", "already reads 'h100-sxm-kv-stream'", "h100-sxm's kv_stream"]),
    ("an FP8 cache's KV read that names no engine", "efficiencies", _del("h100-sxm-kv-stream-fp8-vllm/engine"),
     ["entry 'h100-sxm-kv-stream-fp8-vllm'", "engine: an 8-bit cache's KV read names the engine whose kernel"]),
    ("an engine on the chip's 16-bit KV read", "efficiencies", _set("h100-sxm-kv-stream/engine", "vLLM"),
     ["entry 'h100-sxm-kv-stream'", "engine: an 8-bit cache's KV read names the engine whose kernel"]),
    ("a KV read of a 4-bit cache", "efficiencies", _set("h100-sxm-kv-stream-fp8-vllm/tensor_format", "fp4"),
     ["entry 'h100-sxm-kv-stream-fp8-vllm'", "tensor_format: a KV read's cache is 16-bit (none) or fp8, not 'fp4'"]),
    ("an engine on a GEMM's weight stream", "efficiencies", _set("h100-sxm-gemm-weights-fp8/engine", "vLLM"),
     ["entry 'h100-sxm-gemm-weights-fp8'", "engine: only decode attention's KV read over an 8-bit cache"]),
    ("an engine no serving engine is", "efficiencies", _set("h100-sxm-kv-stream-fp8-vllm/engine", "TGI"),
     ["entry 'h100-sxm-kv-stream-fp8-vllm'", "field 'engine'"]),
    ("a second FP8 KV read of one engine", "efficiencies", _set("h100-sxm-kv-stream-fp8-vllm/engine", "SGLang"),
     ["entry 'h100-sxm-kv-stream-fp8-vllm'", "already reads 'h100-sxm-kv-stream-fp8-sglang'"]),
    ("a fused-MoE kernel on a dense GEMM's weight stream", "efficiencies",
     _set("b200-gemm-weights-bf16/kernel", "triton"),
     ["entry 'b200-gemm-weights-bf16'", "kernel: a dense GEMM's entry names an engine's own GEMM ops (trtllm)"]),
    ("an engine's GEMM ops on a fused MoE layer's share", "efficiencies",
     _set("b200-moe-compute-fp4-cutlass/kernel", "trtllm"),
     ["entry 'b200-moe-compute-fp4-cutlass'", "kernel: 'trtllm' names an engine's dense GEMM ops"]),
    ("a kernel on decode attention's KV read", "efficiencies", _set("h100-sxm-kv-stream/kernel", "trtllm"),
     ["entry 'h100-sxm-kv-stream'", "kernel: only a GEMM's or a fused MoE layer's figures are read per kernel"]),
    ("a fixed cost on a dense GEMM's weight stream", "efficiencies",
     _set("b200-gemm-weights-fp4-trtllm/fixed", {"value": 6.7, "unit": "us"}),
     ["entry 'b200-gemm-weights-fp4-trtllm'", "fixed: only a fused-MoE kernel's weight stream"]),
    ("a policy's GEMM ops no engine names", "policies", _set("trtllm-bench/gemm_kernel", "cublas"),
     ["entry 'trtllm-bench'", "field 'gemm_kernel'"]),
    ("a second entry of one engine's GEMM ops", "efficiencies",
     _set("gb200-gemm-weights-fp4-trtllm/accelerator", "b200"),
     ["entry 'gb200-gemm-weights-fp4-trtllm'", "already reads 'b200-gemm-weights-fp4-trtllm'"]),
    ("a policy's MoE kernel no engine names", "policies", _set("trtllm-bench/moe_kernel", "nonesuch"),
     ["entry 'trtllm-bench'", "field 'moe_kernel'"]),
    ("a columns curve on a dense GEMM's share", "efficiencies",
     _set("b200-gemm-compute-fp8/by_columns", [[128, 0.1], [512, 0.2]]),
     ["entry 'b200-gemm-compute-fp8'", "by_columns: only a fused MoE layer's expert GEMMs"]),
    ("a columns curve without the columns its share was read at", "efficiencies",
     _set("b200-moe-compute-fp8/columns", None),
     ["entry 'b200-moe-compute-fp8'", "by_columns and columns: give both"]),
    ("a columns curve whose columns fall", "efficiencies", _set("b200-moe-compute-fp8/by_columns/1/0", 64),
     ["entry 'b200-moe-compute-fp8'", "by_columns: columns must rise"]),
    ("a share read outside its columns curve", "efficiencies", _set("b200-moe-compute-fp8/columns", 65536),
     ["entry 'b200-moe-compute-fp8'", "columns: 65536 lies outside by_columns"]),
    ("an attention grid on a dense GEMM's share", "efficiencies",
     _set("b200-gemm-compute-fp8/by_heads_length", {"heads": [8], "lengths": [512], "shares": [[0.5]]}),
     ["entry 'b200-gemm-compute-fp8'", "by_heads_length: only a fused attention kernel's share"]),
    ("an attention grid whose lengths fall", "efficiencies", _set("h100-attention-bf16/by_heads_length/lengths/1", 256),
     ["entry 'h100-attention-bf16'", "lengths must rise"]),
    ("an attention grid short of a row", "efficiencies", _del("h100-attention-bf16/by_heads_length/shares/4"),
     ["entry 'h100-attention-bf16'", "shares: give 5 rows (one per heads) of 6 shares"]),
    ("an attention grid growing faster than its heads", "efficiencies",
     _set("h100-attention-bf16/by_heads_length/shares/1/0", 0.09),
     ["entry 'h100-attention-bf16'", "from 4 to 8 heads at length 512 the share grows faster than the heads"]),
    ("an attention grid growing faster than its work", "efficiencies",
     _set("h100-attention-bf16/by_heads_length/shares/0/1", 0.17),
     ["entry 'h100-attention-bf16'", "from length 512 to 1024 at 4 heads the share grows faster than the work"]),
    ("an attention grid that ends off its achieved share", "efficiencies",
     _set("h100-attention-bf16/by_heads_length/shares/4/5", 0.62),
     ["entry 'h100-attention-bf16'", "by_heads_length: its last share, 0.62, is not achieved over peak (0.600)"]),
    ("a memory fraction over the whole device", "measurements",
     _set("inferencex-dsr1-fp8-trt-4xb200-in1024-out1024-c16/engine_limits/memory_fraction", 1.2),
     ["entry 'inferencex-dsr1-fp8-trt-4xb200-in1024-out1024-c16'", "engine_limits.memory_fraction"]),
    ("CUDA graphs of no batch", "policies", _set("trtllm-serve-plain/cuda_graph_batch", 0),
     ["data/policies.yaml", "entry 'trtllm-serve-plain'", "cuda_graph_batch"]),
    ("a static pool without SGLang's rule", "policies", _del("sglang-default/static_reserve"),
     ["data/policies.yaml", "entry 'sglang-default'", "static_reserve", "kv_share_of: static"]),
    ("SGLang's device classes out of order", "policies",
     _set("sglang-default/static_reserve/classes/1/below", {"value": 10, "unit": "GiB"}),
     ["entry 'sglang-default'", "static_reserve.classes", "rising below"]),
    ("a paired mesh whose chip has no package link", "accelerators", _del("mi250x/scale_up/package"),
     ["data/interconnects.yaml: entry 'mi250x-node-4': field 'fabric_shape'", "states a package link"]),
    ("a package link on a node that is no paired mesh", "interconnects", _set("mi250x-node-4/fabric_shape", "full_mesh"),
     ["entry 'mi250x-node-4'", "a paired mesh exactly when its accelerator (mi250x) states a package link"]),
    ("a paired mesh of an odd number of GPUs", "interconnects", _set("mi250x-node-4/gpus", 7),
     ["entry 'mi250x-node-4'", "a paired mesh holds its GPUs in pairs"]),
    ("a sampler figure for an engine that profiles nothing", "policies",
     _set("sglang-default/sampler_bytes_per_logit", {"value": 38.9, "unit": "B"}),
     ["entry 'sglang-default'", "sampler_bytes_per_logit", "neither where its pool is static"]),
    ("symmetric memory without the release's tables", "policies", _del("vllm-default/allreduce_tables"),
     ["entry 'vllm-default'", "symm_mem", "give allreduce_tables"]),
    ("an all-reduce table of an unknown chip", "policies", _set("vllm-default/allreduce_tables/0/accelerators/1", "h300"),
     ["entry 'vllm-default'", "allreduce_tables[0].accelerators", "unknown accelerator 'h300'"]),
    ("an all-reduce table's groups out of order", "policies",
     _set("vllm-default/allreduce_tables/1/custom_max", [[4, 2097152], [2, 2097152]]),
     ["entry 'vllm-default'", "allreduce_tables.1.custom_max", "groups rising from 2"]),
    ("multimem on a group with no symmetric-memory limit", "policies", _set("vllm-v021/allreduce_tables/2/multimem", [6, 16]),
     ["entry 'vllm-v021'", "allreduce_tables.2.multimem"]),
    ("a chip in two all-reduce tables", "policies", _set("vllm-default/allreduce_tables/1/accelerators", ["b200", "h100-sxm"]),
     ["entry 'vllm-default'", "allreduce_tables.1.accelerators", "h100-sxm already in an earlier table"]),
    ("multimem priced without its timings", "policies", _del("measured-fractions/multimem_points"),
     ["entry 'measured-fractions'", "give multimem and symm_two_shot with their points"]),
    ("multimem timings that are no collective's", "policies", _set("measured-fractions/multimem_points", "kernel-in-graph"),
     ["entry 'measured-fractions'", "field 'multimem_points'", "is not a collective entry"]),
    ("timings routed by a policy that is no memory policy", "policies",
     _set("measured-fractions/allreduce_timed_under", "tp-in-node"),
     ["entry 'measured-fractions'", "field 'allreduce_timed_under'", "is not a memory policy"]),
]


@pytest.mark.parametrize(("case", "file", "edit", "expected"), ISSUE14_CASES, ids=[c[0] for c in ISSUE14_CASES])
def test_bad_issue14_data_is_refused(tmp_path: Path, case: str, file: str, edit: Edit, expected: list[str]) -> None:
    message = broken(tmp_path, file, edit)
    for fragment in expected:
        assert fragment in message, f"{case}: {fragment!r} not in:\n{message}"


def _text_edit(tmp_path: Path, file: str, old: str, new: str, extra: str | None = None) -> str:
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data", data)
    path = data / f"{file}.yaml"
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))
    if extra:
        (data / extra).write_text("x: {}\n")
    with pytest.raises(DataError) as info:
        load(data)
    return str(info.value)


def _line_of(file: str, needle: str) -> int:
    return next(i for i, ln in enumerate((ROOT / "data" / f"{file}.yaml").read_text().splitlines(), 1) if needle in ln)


TEXT_CASES = [
    # (case, file, old, new, expected fragments)
    ("quoted number", "accelerators", "memory: {value: 80, unit: GB}", 'memory: {value: "80", unit: GB}',
     ["field 'memory.value'", "valid number", "'80'"]),
    ("octal-looking number", "accelerators", "memory: {value: 80, unit: GB}", "memory: {value: 010, unit: GB}",
     ["field 'memory.value'", "'010'"]),
    ("sexagesimal", "accelerators", "memory: {value: 80, unit: GB}", "memory: {value: 12:30, unit: GB}",
     ["field 'memory.value'", "'12:30'"]),
    ("yes for a bool", "models", "tied_embeddings: false", "tied_embeddings: no",
     ["field 'architecture.tied_embeddings'", "valid boolean", "'no'"]),
    ("1 for a bool", "models", "tied_embeddings: false", "tied_embeddings: 0",
     ["field 'architecture.tied_embeddings'", "write true or false"]),
    ("no pixel shuffle", "models", "      pixel_shuffle_ratio: 0.5\n", "      pixel_shuffle_ratio: 0\n",
     ["entry 'llama-4-scout'", "field 'architecture.vision.pixel_shuffle_ratio'", "above 0, at most 1"]),
    ("patches that do not tile", "models", "      image_size: 336\n", "      image_size: 335\n",
     ["entry 'llama-4-scout'", "field 'architecture.vision.image_size'", "14-pixel patches"]),
    ("impossible date", "accelerators", "read: 2026-11-30", "read: 2026-02-30",
     ["data/accelerators.yaml: not valid YAML: '2026-02-30' is not a date"]),
    ("future date", "accelerators", "read: 2026-11-30", "read: 2999-01-01",
     ["field 'sources.0.read'", "is after the build date"]),
    ("implausible memory", "accelerators", "memory: {value: 80, unit: GB}", "memory: {value: 1.0e-30, unit: GB}",
     ["field 'memory'", "outside the plausible range", "ByteSize.BOUNDS"]),
    ("implausible parameters", "models", "stated_params: {value: 405", "stated_params: {value: 4050000000",
     ["field 'stated_params'", "outside the plausible range"]),
    ("markup in a name", "accelerators", "name: NVIDIA H100 SXM\n", "name: NVIDIA H100 <script>x</script>\n",
     ["entry 'h100-sxm'", "field 'name'", "angle bracket"]),
    ("link in a note", "accelerators", "name: NVIDIA H100 SXM\n", "name: '[x](javascript:alert(1))'\n",
     ["field 'name'", "Markdown link syntax"]),
    ("template syntax", "accelerators", "name: NVIDIA H100 SXM\n", "name: 'H100 {{ gpu_memory }}'\n",
     ["field 'name'", "template syntax"]),
    ("control character", "accelerators", "name: NVIDIA H100 SXM\n", 'name: "H100\\u202e SXM"\n',
     ["field 'name'", "U+202E"]),
    ("url that closes the attribute", "accelerators", "url: https://", 'url: https://x.example/"><img onerror=a>//',
     ["source.url'", "URL characters"]),
    ("url without a proper host", "accelerators", "url: https://", "url: https://localhost/",
     ["source.url'", "host name"]),
]


@pytest.mark.parametrize(("case", "file", "old", "new", "expected"), TEXT_CASES, ids=[c[0] for c in TEXT_CASES])
def test_wrong_scalars_and_text_are_refused_at_file_line_column(
    tmp_path: Path, case: str, file: str, old: str, new: str, expected: list[str]
) -> None:
    message = _text_edit(tmp_path, file, old, new)
    for fragment in expected:
        assert fragment in message, f"{case}: {fragment!r} not in:\n{message}"
    line = _line_of(file, old.splitlines()[0])
    assert re.search(rf"data/{file}\.yaml:{line}:\d+", message), message
    assert "Traceback" not in message


def test_an_unknown_data_file_is_refused(tmp_path: Path) -> None:
    message = _text_edit(tmp_path, "models", "tied_embeddings", "tied_embeddings", extra="foo.yaml")
    assert "data/foo.yaml: unknown data file" in message


def test_the_loaded_catalog_is_plain_text_and_strict(catalog) -> None:
    from snippets.data import check_text

    for _, _, src in iter_sources(catalog):
        check_text(src.title)


def test_the_loaded_catalog_is_read_only() -> None:
    cat = load(ROOT / "data")
    with pytest.raises(AttributeError):
        cat.accelerators.pop("l4")  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        cat.models["planted"] = cat.models["llama-3.1-70b"]  # type: ignore[index]
    assert "l4" in load(ROOT / "data").accelerators
    # and inside an entry: its fields (pydantic's frozen models), its tables of figures, its lists
    h100 = cat.accelerators["h100-sxm"]
    with pytest.raises(ValidationError):
        h100.name = "planted"  # type: ignore[misc]
    with pytest.raises(TypeError):
        h100.tensor["fp8"] = h100.tensor["bf16"]  # type: ignore[index]
    with pytest.raises(TypeError):
        h100.not_stated["power"] = "planted by a block"  # type: ignore[index]
    with pytest.raises(AttributeError):
        h100.sources.append(h100.sources[0])  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        cat.precisions["fp8"].keeps_16bit.append("embeddings")  # type: ignore[attr-defined]


def test_what_readers_buy_now(catalog) -> None:
    """Issue 26's additions, each figure as its source (primary, else a transcription marked secondary) states it."""
    a = catalog.accelerators
    b300, gb300 = a["b300"], a["gb300"]
    # B300: 288 GB label, 268-288 GB across NVIDIA's datasheet, MLPerf's "270GB" and AWS's 2,144 GB / 8
    assert b300.memory.bytes == 288e9 and b300.disagreement("memory").range == (268, 288)
    assert b300.memory_reported.value == 275040 and b300.memory_reported.source.secondary
    assert b300.memory_bandwidth.value == 7.75 and b300.power.watts == 1100
    assert b300.dense("bf16").flops_per_s == 2.25e15 and b300.dense("fp8").flops_per_s == 4.5e15
    assert b300.dense("fp4").flops_per_s == 14e15 and b300.dense("int8").flops_per_s == 153.5e12
    assert gb300.memory.bytes == 288e9 and gb300.power.watts == 1400 and gb300.memory_bandwidth.value == 8
    assert gb300.dense("bf16").flops_per_s == 2.5e15 and gb300.dense("fp4").flops_per_s == 15e15
    assert gb300.host_link is None and "NVLink-C2C" in gb300.host_link_other
    # A100 80GB PCIe: the A100 datasheet's PCIe column as transcribed: 1,935 GB/s, 300 W, the SXM's tensor rates
    pcie = a["a100-80gb-pcie"]
    assert pcie.memory_bandwidth.value == 1935 and pcie.power.watts == 300 and pcie.dense("bf16").flops_per_s == 312e12
    # V100: FP16 125 TFLOPS dense, no BF16; 900 GB/s; NVLink 150 GB/s each way; 300 W (NVML's default limit)
    v100 = a["v100-sxm2-32gb"]
    assert v100.bf16 is None and v100.half.per_s == 125e12 and v100.memory_bandwidth.value == 900
    assert v100.scale_up.bandwidth.bandwidth.one_way().bytes_per_s == 150e9 and v100.power.watts == 300
    # its CUDA total read off mixbench's device report (totalGlobalMem in MiB): 81,049 MiB, 79.15 GiB, not the label
    assert pcie.memory_runtime is not None and pcie.memory_runtime.value == 81049 and pcie.memory_runtime.unit == "MiB"
    assert "memory_runtime" not in pcie.not_stated and "mixbench" in pcie.memory_runtime.source.url
    for acc in (b300, gb300, pcie, v100):
        assert acc.sources and all(s.secondary == (s.copies is not None) for s in acc.sources)
    for acc in (b300, gb300, v100):
        assert "memory_runtime" in acc.not_stated  # no runtime total published: the label, said so
    # InfiniBand switch and adapter latency: not printed in the manual pages read, recorded as not stated
    from snippets.data import Network

    for net_id in ("infiniband-hdr", "infiniband-ndr", "infiniband-xdr"):
        n = catalog.interconnect(net_id, Network)
        assert n.switch_latency is None and "switch_latency" in n.not_stated
        assert n.adapter_latency is None and "adapter_latency" in n.not_stated


LAYOUT_CASES = [
    # issue 27: each was refused by a page block naming neither file nor entry, or never checked (nodes)
    ("deployment TP against the heads", "deployments",
     lambda doc: doc["sglang-deepseek-v3-fp8-8xh200"].update(gpus=6, layout={"tp": 6}),
     ["data/deployments.yaml: entry 'sglang-deepseek-v3-fp8-8xh200': field 'layout': TP6 PP1 EP1 DP1 is not a layout "
      "the engines accept for deepseek-v3"]),
    ("deployment PP beyond the layers", "deployments",
     lambda doc: doc["sglang-deepseek-v3-fp8-8xh200"].update(gpus=128, nodes=16, layout={"tp": 1, "pp": 128}),
     ["entry 'sglang-deepseek-v3-fp8-8xh200': field 'layout'", "PP128 exceeds the 61 layers"]),
    ("more nodes than GPUs", "deployments", _set("sglang-deepseek-v3-fp8-8xh200/nodes", 9),
     ["entry 'sglang-deepseek-v3-fp8-8xh200': field 'nodes': 9 nodes for 8 GPUs", "from 1 to 8 nodes"]),
    ("uneven nodes", "deployments", _set("sglang-deepseek-v3-fp8-8xh200/nodes", 3),
     ["field 'nodes': 3 nodes for 8 GPUs"]),
    ("more GPUs than the nodes hold", "deployments",
     lambda doc: doc["sglang-deepseek-v3-fp8-8xh200"].update(gpus=16, layout={"tp": 16}),
     ["field 'nodes': 1 nodes for 16 GPUs; the largest node of h200-sxm in interconnects.yaml holds 8"]),
    ("16-bit layers of a BF16 deployment's checkpoint", "deployments",
     _set("sglang-deepseek-v3-bf16-16xh200/keeps_16bit", ["attention_in"]),
     ["data/deployments.yaml: entry 'sglang-deepseek-v3-bf16-16xh200': field 'keeps_16bit'", "not narrower than 16"]),
    ("16-bit layers of an unknown group on a run", "measurements",
     _set("nim180-llama33-70b-fp8-2xh100-in5000-out500-c1/keeps_16bit", ["lm_head"]),
     ["entry 'nim180-llama33-70b-fp8-2xh100-in5000-out500-c1'", "keeps_16bit"]),
    ("measurement TP against the heads", "measurements",
     _set("nim180-llama33-70b-fp8-2xh100-in5000-out500-c1/layout/tp", 3),
     ["data/measurements.yaml: entry 'nim180-llama33-70b-fp8-2xh100-in5000-out500-c1': field 'layout': TP3"]),
]


@pytest.mark.parametrize(("case", "file", "edit", "expected"), LAYOUT_CASES, ids=[c[0] for c in LAYOUT_CASES])
def test_a_published_layout_is_checked_at_load_naming_file_and_entry(
    tmp_path: Path, case: str, file: str, edit: Edit, expected: list[str]
) -> None:
    message = broken(tmp_path, file, edit)
    for fragment in expected:
        assert fragment in message, f"{case}: {fragment!r} not in:\n{message}"
    assert message.count("\n") < 3, message  # one slip, one message


PHYSICS_CASES = [
    # issue 27: each passed the build and every test but the snapshot, moving figures on many pages
    ("MI300X HBM bandwidth typed x10", "accelerators", _set("mi300x/memory_bandwidth/value", 53),
     ["data/accelerators.yaml: entry 'mi300x': fields 'memory_bandwidth' and 'memory': 53,000 GB/s over 192 GB reads "
      "the memory 276.0 times a second", "entry 'mi300x': field 'memory_bandwidth': 53.00 TB/s is more than HBM3 can carry"]),
    ("H100 HBM bandwidth typed /10", "accelerators", _set("h100-sxm/memory_bandwidth/value", 0.335),
     ["entry 'h100-sxm': fields 'memory_bandwidth' and 'memory'", "4.2 times a second"]),
    ("L4 GDDR6 bandwidth typed x10", "accelerators", _set("l4/memory_bandwidth/value", 3000),
     ["entry 'l4': fields 'memory_bandwidth' and 'memory'", "entry 'l4': field 'memory_bandwidth': 3.00 TB/s is more "
      "than GDDR6 can carry"]),
    ("H100 BF16 typed x10", "accelerators", _set("h100-sxm/tensor/bf16/value", 19790),
     ["entry 'h100-sxm': fields 'tensor.bf16' and 'power'", "entry 'h100-sxm': fields 'tensor.fp8' and 'tensor.bf16'"]),
    ("MI300X power typed /10", "accelerators", _set("mi300x/power/value", 75),
     ["entry 'mi300x': fields 'tensor.bf16' and 'power'"]),
    ("H100 NVLink total typed x10", "accelerators", _set("h100-sxm/scale_up/bandwidth/value", 9000),
     ["data/accelerators.yaml: entry 'h100-sxm': fields 'scale_up.bandwidth' and 'memory_bandwidth': 4,500 GB/s each "
      "way over 3.35 TB/s of memory is 1.343"]),
    ("MI300X fabric total typed /10", "accelerators", _set("mi300x/scale_up/bandwidth/value", 89.6),
     ["entry 'mi300x': fields 'scale_up.bandwidth' and 'memory_bandwidth'"]),
    ("ConnectX-7 port typed x10", "interconnects", _set("infiniband-ndr/port/value", 4000),
     ["data/interconnects.yaml: entry 'hgx-h100-8': fields 'nic' and 'nics_per_gpu': 500.0 GB/s of network each way "
      "per GPU over 450 GB/s of h100-sxm's scale-up fabric is 1.111"]),
    ("B200 FP8 typed x10", "accelerators", _set("b200/tensor/fp8/value", 90),
     ["entry 'b200': fields 'tensor.fp8' and 'tensor.bf16': FP8 at 20.00 times the 16-bit rate"]),
]


@pytest.mark.parametrize(("case", "file", "edit", "expected"), PHYSICS_CASES, ids=[c[0] for c in PHYSICS_CASES])
def test_a_figure_physics_rules_out_stops_the_load_naming_the_entry(
    tmp_path: Path, case: str, file: str, edit: Edit, expected: list[str]
) -> None:
    message = broken(tmp_path, file, edit)
    for fragment in expected:
        assert fragment in message, f"{case}: {fragment!r} not in:\n{message}"


def test_every_model_records_the_context_it_reads(catalog) -> None:
    """Every model states its config.json's max_position_embeddings (`context_length`): the engine refuses a request
    longer than that as vLLM and SGLang do at start, which it can do only for a model that records it."""
    assert {m: x.architecture.context_length for m, x in catalog.models.items()
            if x.architecture.context_length is None} == {}
    read = {m: catalog.models[m].architecture.context_length
            for m in ("llama-2-70b", "mixtral-8x7b", "qwen2.5-72b", "deepseek-v3", "deepseek-r1")}
    assert read == {"llama-2-70b": 4096, "mixtral-8x7b": 32768, "qwen2.5-72b": 131072, "deepseek-v3": 163840,
                    "deepseek-r1": 163840}


def _cut_short(text: str) -> list[int]:
    """Lines where a plain scalar spanning several lines stops at a ` #`, which YAML reads as a comment: the rest of
    the sentence is dropped without a word (a `#1050` in a note). Quote or fold such text."""
    lines = text.splitlines()
    return [tok.end_mark.line + 1 for tok in yaml.scan(text, Loader=yaml.SafeLoader)
            if isinstance(tok, yaml.ScalarToken) and tok.plain and tok.start_mark.line != tok.end_mark.line
            and lines[tok.end_mark.line][tok.end_mark.column:].lstrip().startswith("#")]


def test_no_plain_text_in_data_is_cut_short_by_a_hash() -> None:
    # the B300 DeepSeek-R1 FP8 rows' intake notes once ended at "added in": the PR number after it began a comment
    assert _cut_short("how: a note that runs\n  over two lines, added in #1050 of April\nnext: 1\n") == [2]
    assert _cut_short("how: >-\n  folded text keeps #1050\nlayers: 80  # a comment after a value\n") == []
    found = {f.name: bad for f in sorted((ROOT / "data").glob("*.yaml")) if (bad := _cut_short(f.read_text()))}
    assert found == {}

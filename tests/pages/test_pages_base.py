"""The `Page` base (snippets/pages/base.py) and the recording catalog behind its sources (snippets/pages/sources.py)."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

from snippets.data import Catalog, load
from snippets.engine.step import step
from snippets.engine.timing import predict
from snippets.pages.base import Page
from snippets.pages.sources import in_data_order, recording

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return load()


def test_lookups_by_id_are_noted_and_walking_a_table_is_not(cat: Catalog) -> None:
    rec = recording(cat)
    assert len(rec.models) == len(cat.models) and "llama-3.1-8b" in rec.models
    assert [m.name for m in rec.models.values()] == [m.name for m in cat.models.values()]
    assert not rec.reads
    assert rec.models["llama-3.1-8b"] is cat.models["llama-3.1-8b"]
    assert rec.accelerators.get("h100-sxm") is cat.accelerators["h100-sxm"]
    assert rec.reads == {("models", "llama-3.1-8b"), ("accelerators", "h100-sxm")}


def test_reads_come_in_data_order(cat: Catalog) -> None:
    refs = [("models", "llama-3.1-70b"), ("accelerators", "h200-sxm"), ("models", "llama-3.1-8b"),
            ("accelerators", "h100-sxm"), ("models", "llama-3.1-8b")]
    order = {k: i for i, k in enumerate(cat.accelerators)}
    assert in_data_order(cat, refs)[:2] == sorted([("accelerators", "h200-sxm"), ("accelerators", "h100-sxm")],
                                                  key=lambda r: order[r[1]])
    assert [r[0] for r in in_data_order(cat, refs)] == ["accelerators", "accelerators", "models", "models"]


def test_a_deployment_notes_what_it_is_built_from_and_its_time_model_once_used(cat: Catalog) -> None:
    page = Page(cat)
    r = page.reference()
    d = r.deployment("llama-3.1-70b", "fp8")
    assert d.gpus >= 1
    sc = r.scenario
    built = {("models", "llama-3.1-70b"), ("precisions", "fp8"), ("precisions", sc.kv_precision),
             ("accelerators", r.node.chip), ("interconnects", r.node.id), ("scenarios", sc.id),
             ("policies", sc.memory_policy), ("policies", sc.layout_policy)}
    assert set(page.reads()) == built == set(d.setting.sources), "memory and layout read no time model and no price"
    predict(d, 1)
    tm = cat.policies[sc.time_model]
    # the time model, the latencies it reads, and the efficiencies measured on the deployment's chip (and no other's)
    assert {("policies", sc.time_model), ("latencies", tm.kernel_launch), ("efficiencies", tm.link_efficiency),
            ("efficiencies", "h100-hbm-stream"), ("efficiencies", "h100-sxm-gemm-weights-fp8")} <= set(page.reads())
    assert not {e for f, e in page.reads() if f == "efficiencies" and cat.efficiencies[e].accelerator not in
                (r.node.chip, cat.efficiencies[tm.link_efficiency].accelerator)}
    assert d.cost_per_hour is not None
    assert any(f == "prices" for f, _ in page.reads())


def test_the_price_is_listed_only_where_a_cost_is_computed(cat: Catalog) -> None:
    page = Page(cat)
    r = page.reference()
    d = r.deployment("llama-3.1-8b", "bf16")
    assert r.node.chip == "h100-sxm" and d.setting.priced
    step(d, "prefill", 1024, 0)  # a step's time: the time model and the H100's measured efficiencies, no price
    reads = set(page.reads())
    assert ("policies", r.scenario.time_model) in reads and ("efficiencies", "h100-hbm-stream") in reads
    assert not {ref for ref in reads if ref[0] == "prices"}
    predict(d, 1)  # a prediction's cost per token: the one prices.yaml entry of the H100 the site uses, not the others
    assert {ref for ref in page.reads() if ref[0] == "prices"} == {("prices", "h100-sxm-runpod-community")}


def test_a_memory_only_page_lists_no_time_model_and_a_timed_one_lists_it_with_its_chips(cat: Catalog) -> None:
    class Memory(Page):
        def __init__(self, cat: Catalog) -> None:
            super().__init__(cat)
            self.kv = self.reference().deployment("llama-3.1-70b", "fp8").max_concurrency

    class Timed(Page):
        def __init__(self, cat: Catalog) -> None:
            super().__init__(cat)
            d = self.reference().deployment("llama-3.1-70b", "fp8")
            self.tpot = predict(d, 1).tpot_s

    tm = cat.scenarios["reference"].time_model
    memory, timed = set(Memory(cat).reads()), set(Timed(cat).reads())
    assert not {ref for ref in memory if ref[0] in ("latencies", "efficiencies", "prices")}
    assert ("policies", tm) not in memory
    # the time model's entries as the export lists them, and the H100's nineteen measured efficiencies (written out;
    # its fused-MoE shares, the engines' median and TensorRT-LLM's own kernel's, are noted with the chip, whichever
    # model and engine a page times)
    assert {("policies", tm), ("latencies", "kernel-in-graph"), ("efficiencies", "h100-nvlink-p2p")} <= timed
    assert {e for f, e in timed if f == "efficiencies"} == {
        "h100-nvlink-p2p", "h100-hbm-stream", "h100-attention-bf16", "h100-sxm-gemm-weights-bf16",
        "h100-sxm-gemm-compute-bf16", "h100-sxm-gemm-weights-fp8", "h100-sxm-gemm-compute-fp8",
        "h100-sxm-moe-compute-fp8", "h100-sxm-moe-compute-whole-fp8", "h100-sxm-moe-weights-bf16",
        "h100-sxm-moe-weights-fp8", "h100-sxm-moe-compute-bf16", "h100-sxm-moe-compute-whole-bf16",
        "h100-sxm-moe-compute-fp8-cutlass", "h100-sxm-moe-compute-whole-fp8-cutlass",
        "h100-sxm-moe-compute-bf16-cutlass", "h100-sxm-moe-compute-whole-bf16-cutlass",
        "h100-sxm-moe-weights-fp4-marlin", "h100-sxm-kv-stream", "h100-sxm-kv-stream-fp8-sglang",
        "h100-sxm-kv-stream-fp8-vllm"}
    assert timed - memory >= {("policies", tm)} and memory <= timed


def test_the_records_list_the_entries_they_are_built_from(cat: Catalog) -> None:
    from snippets.data.export import engine_catalog

    eng = engine_catalog(cat)
    # data/efficiencies.yaml's H100 SXM entries of the resources the time model reads per chip (its NVLink and
    # PCIe copy rows are a time model's link efficiency or nobody's), and the one H100 price the site uses
    assert eng.chips["h100-sxm"].time_sources == (
        ("efficiencies", "h100-hbm-stream"), ("efficiencies", "h100-attention-bf16"),
        ("efficiencies", "h100-sxm-gemm-weights-bf16"), ("efficiencies", "h100-sxm-gemm-compute-bf16"),
        ("efficiencies", "h100-sxm-gemm-weights-fp8"), ("efficiencies", "h100-sxm-gemm-compute-fp8"),
        ("efficiencies", "h100-sxm-moe-compute-fp8"),
        ("efficiencies", "h100-sxm-moe-compute-whole-fp8"), ("efficiencies", "h100-sxm-moe-weights-bf16"),
        ("efficiencies", "h100-sxm-moe-weights-fp8"), ("efficiencies", "h100-sxm-moe-compute-bf16"),
        ("efficiencies", "h100-sxm-moe-compute-whole-bf16"), ("efficiencies", "h100-sxm-moe-compute-fp8-cutlass"),
        ("efficiencies", "h100-sxm-moe-compute-whole-fp8-cutlass"), ("efficiencies", "h100-sxm-moe-compute-bf16-cutlass"),
        ("efficiencies", "h100-sxm-moe-compute-whole-bf16-cutlass"), ("efficiencies", "h100-sxm-moe-weights-fp4-marlin"),
        ("efficiencies", "h100-sxm-kv-stream"),
        ("efficiencies", "h100-sxm-kv-stream-fp8-sglang"), ("efficiencies", "h100-sxm-kv-stream-fp8-vllm"))
    assert eng.prices["h100-sxm"].sources == (("prices", "h100-sxm-runpod-community"),)
    tm = eng.time_models[cat.scenarios["reference"].time_model]
    assert ("policies", tm.id) in tm.sources and ("latencies", "kernel-in-graph") in tm.sources
    st = Page(cat).reference().deployment("llama-3.1-70b", "fp8").setting
    assert st.sources == (("models", "llama-3.1-70b"), ("precisions", "fp8"), ("precisions", "bf16"),
                          ("accelerators", "h100-sxm"), ("interconnects", "hgx-h100-8"), ("scenarios", "reference"),
                          ("policies", st.memory_policy.id), ("policies", st.layout_policy.id))


def test_a_chip_read_but_not_timed_on_lists_no_efficiencies(cat: Catalog) -> None:
    """The roofline chart draws a B200's datasheet roofs beside a time computed on an H100: the B200's entry is a
    source, its measured efficiencies are not (no time is computed on it)."""
    page = Page(cat)
    r = page.reference()
    assert r.eng.chips["b200"].dense_flops
    step(r.deployment("llama-3.1-8b", "bf16"), "prefill", 1024, 0)
    reads = set(page.reads())
    assert ("accelerators", "b200") in reads and ("efficiencies", "h100-hbm-stream") in reads
    assert not {e for f, e in reads if f == "efficiencies" and cat.efficiencies[e].accelerator == "b200"}
    assert {e for e, x in cat.efficiencies.items() if x.accelerator == "b200"}, "the B200 has measured efficiencies"


def _pages() -> list[tuple[Path, str]]:
    out = []
    for md in sorted(DOCS.rglob("*.md")):
        found = re.search(r"^model: *(\S+)", md.read_text(encoding="utf-8"), re.M)
        if found:
            out.append((md, found.group(1)))
    return out


@pytest.mark.parametrize(("md", "model"), _pages(), ids=lambda x: str(x))
def test_shows_lists_every_function_the_page_prints(md: Path, model: str) -> None:
    """A page on the base lists in `shows` each function of its module its blocks call, so its sources list covers
    what the tables read."""
    module = importlib.import_module(f"snippets.pages.{model}")
    pages = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, Page) and v is not Page
             and (v.__module__ == module.__name__ or v.__module__.startswith(module.__name__ + "."))]  # a package
    if not pages:
        pytest.skip(f"snippets.pages.{model} is not on the Page base yet")
    shown = {getattr(f, "func", f).__name__ for p in pages for f in p.shows}
    imported = set()
    for names in re.findall(rf"^from snippets\.pages\.{model} import (.+)$", md.read_text(encoding="utf-8"), re.M):
        imported |= {n.strip() for n in names.split(",")}
    reads_data = {n for n in imported - {"sources"}
                  if not (callable(f := getattr(module, n)) and not inspect.signature(f).parameters)}
    assert reads_data <= shown, f"{md.name}: blocks print {sorted(reads_data - shown)} not in shows"


def test_every_row_source_label_names_its_own_document(cat: Catalog) -> None:
    """A row's source label names the document it cites: each arXiv paper by its own name (the DeepSeek-V3 report's
    MTP speed-up was once labelled the EAGLE paper), and no label is shared by two different arXiv papers."""
    from snippets.pages.reference_common import source_label

    arxiv = {m.sources[0].url: source_label(m) for m in cat.measurements.values() if "arxiv.org" in m.sources[0].url}
    assert arxiv["https://arxiv.org/abs/2412.19437"] == "DeepSeek-V3 report (arXiv)"
    assert len(set(arxiv.values())) == len(arxiv)

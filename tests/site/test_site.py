"""The built site, read back with an HTML parser: the figures the page shows are the right ones."""

from __future__ import annotations

import json
import math

import pytest
from bs4 import BeautifulSoup

from snippets.data import Catalog

from ..conftest import Build, figures, text, value


@pytest.fixture(scope="module")
def page(built: Build):
    return built.page("interconnect/index.html")


@pytest.mark.parametrize(
    ("name", "expected", "shown"),
    [
        ("m70_fp16.weight", 140, "140 GB"),
        ("m405_fp16.weight", 810, "810 GB"),
        ("d405_fp8.weight", 410.0602266, "410.1 GB"),
        ("gpu_usable", 70, "70 GB"),
        ("m405_fp16.gpus_exact", 10.125, "10.1"),
        ("m405_fp16.gpus_weights", 11, "11"),
        ("m405_fp16.gpus_exact_usable", 810 / 70, "11.6"),
        ("m405_fp16.gpus", 12, "12"),
        # what the engine deploys (snippets.engine): 405B BF16 on TP8 x PP2, FP8 on TP8
        ("d405_bf16.gpus", 16, "16"),
        ("d405_bf16.nodes", 2, "2"),
        ("d405_fp8.gpus", 8, "8"),
        ("capacity", 79.22, "79.2 GiB"),  # the total CUDA reports of an H100 (vLLM's log), not nvidia-smi's 81,559 MiB
        ("pool", 0.9 * 79.22, "71.3 GiB"),  # vLLM's --gpu-memory-utilization 0.9
        ("d405_bf16_cost", 16 * 2.69, "$43.04 (Sep 2026 price)"),
        ("fp16_cap", 40, "40B"),
        ("gen4", 16 * 16 * 128 / 130 / 8, "31.5 GB/s"),
        ("net_step", 5.0, "5 µs"),  # NCCL's tuner: one LL step over the network (data/latencies.yaml nccl-network-step)
        ("nvlink", 450, "450 GB/s"),
        ("nvlink_summed", 900, "900 GB/s"),
        ("nvlink_old_summed", 600, "600 GB/s"),
    ],
)
def test_prose_figures(page, name: str, expected: float, shown: str) -> None:
    assert value(page, name) == pytest.approx(expected, rel=1e-6)
    assert text(page, name) == shown


def test_worked_example_steps(page) -> None:
    assert value(page, "worked.weight") == 810
    assert value(page, "worked.gpus_exact") == pytest.approx(10.125)
    assert value(page, "worked.gpus_weights") == 11
    assert value(page, "worked.gpu_usable") == 70
    assert value(page, "worked.gpus") == 12
    assert value(page, "worked.nodes") == 2


def test_engine_example_steps(page) -> None:
    # 405B from its architecture: 405.85e9 parameters; embeddings and LM head stay 16-bit
    assert value(page, "engine.params") == pytest.approx(405.85, abs=0.01)
    assert value(page, "engine.weight") == pytest.approx(811.7, abs=0.05)
    assert value(page, "engine.gpus") == 16 and value(page, "engine.nodes") == 2
    assert value(page, "engine.gpus_fp8") == 8 and value(page, "engine.nodes_fp8") == 1


def test_sizing_table(page) -> None:
    # what the engine deploys on an HGX H100 (TP inside the node, PP across nodes, whole nodes)
    expect = {
        "Llama 3.1 70B BF16": ("TP4", 4, 1, "Yes"),   # TP2 is refused: no KV room beside the activation peak
        "Llama 3.1 70B FP8": ("TP2", 2, 1, "Yes"),
        "Llama 3.1 405B BF16": ("TP8 × PP2", 16, 2, "No: spans nodes"),
        "Llama 3.1 405B FP8": ("TP8", 8, 1, "Yes"),
    }
    table = next(t for t in page.select("table") if "Pool used per GPU" in t.get_text())
    rows = {tr.find("td").get_text(): tr for tr in table.select("tbody tr")}
    assert set(rows) == set(expect)
    for label, (layout, gpus, nodes, verdict) in expect.items():
        assert rows[label].find_all("td")[2].get_text() == layout
        assert value(page, f"sizing[{label}][GPUs]") == gpus
        assert value(page, f"sizing[{label}][Nodes]") == nodes
        assert value(page, f"sizing[{label}][Pool used per GPU]") <= 0.9 * 79.22
        assert rows[label].find_all("td")[-1].get_text() == verdict


def test_the_sources_table_beside_the_engine(page) -> None:
    """The source's own rows, "405B INT8 -> 405 GB -> 405 / 70 = 5.8 -> 6 GPUs" and "405B FP16 -> 810 GB -> 11.6 -> 12",
    beside the engine's: 410.1 GB with the embeddings and LM head at 16 bit, TP8 on 8 GPUs; 811.7 GB on TP8 x PP2."""
    int8 = "source[Llama 3.1 405B INT8]"
    assert value(page, f"{int8}[Source: weights]") == 405
    assert value(page, f"{int8}[Source: weights ÷ 70 GB]") == pytest.approx(405 / 70)
    assert text(page, f"{int8}[Source: weights ÷ 70 GB]") == "5.8"
    assert value(page, f"{int8}[Source: GPUs]") == 6
    assert value(page, f"{int8}[Engine: weights]") == pytest.approx(410.06, abs=0.01)
    assert text(page, f"{int8}[Engine: weights]") == "410.1 GB"
    assert value(page, f"{int8}[Engine: GPUs]") == 8
    fp16 = "source[Llama 3.1 405B FP16]"
    assert value(page, f"{fp16}[Source: weights]") == 810
    assert value(page, f"{fp16}[Source: weights ÷ 70 GB]") == pytest.approx(810 / 70)
    assert value(page, f"{fp16}[Source: GPUs]") == 12
    assert value(page, f"{fp16}[Engine: GPUs]") == 16
    assert value(page, "source[Llama 3.1 70B INT8][Source: GPUs]") == 1  # 70 GB / 70 GB: one card
    for name in ("int8_source_fits", "int8_engine_more", "int8_weight_above_nominal"):
        assert page.select_one(f'span.sa-claim[data-claim="{name}"]') is not None, name


def test_bandwidth_cliff_is_one_basis_and_ordered(page) -> None:
    figs = figures(page)
    cells = {n: f for n, f in figs.items() if n.startswith("cliff[") and n.endswith("[One way]")}
    assert {f["data-basis"] for f in cells.values()} == {"per direction"}
    one_way = [float(f["data-value"]) for f in cells.values()]
    assert one_way[0] == pytest.approx(3350)  # HBM3 on H100 SXM
    assert one_way[1] == pytest.approx(450)  # NVLink 4
    ratios = [float(f["data-value"]) for n, f in figs.items() if n.startswith("cliff[") and "times faster" in n]
    assert ratios[0] == 1 and ratios[1] == pytest.approx(3350 / 450)
    assert value(page, "hbm_over_gen4") == pytest.approx(3350 / 31.5077, rel=1e-3)


def test_claims_are_marked_and_hold(page) -> None:
    claims = page.select("span.sa-claim")
    assert len(claims) >= 8
    for c in claims:
        assert c["title"].startswith("Checked at build time")


def test_quiz_answers_are_folded(page) -> None:
    details = page.select("details")
    answers = [d for d in details if "Answers" in d.find("summary").get_text()]
    assert len(answers) == 1 and not answers[0].has_attr("open")
    questions = page.find(id="check-your-understanding").find_next("ol").find_all("li", recursive=False)
    assert len(answers[0].select("ol > li")) == len(questions) == 5
    assert "810 GB" in answers[0].get_text()
    asked = " ".join(q.get_text() for q in questions)
    for recall in ("Why do some models", "Rank HBM", "Why does splitting"):
        assert recall not in asked


def test_quiz_answers_are_worked_by_hand(page, catalog: Catalog) -> None:
    # one H100 cannot hold Llama 3.1 70B in BF16: 70,553,706,496 parameters (config.json) x 2 bytes = 131.4 GiB
    # against a 71.3 GiB pool; vLLM refuses TP2, and TP4 holds 53 sequences of 8K
    # ((71.30 - 32.86 - 4.76 - 0.55) GiB / 0.625 GiB)
    params = 80 * (2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192) + 8192 + 2 * 128256 * 8192
    assert value(page, "q1_card_weights") == pytest.approx(2 * params / 2**30, rel=1e-9)
    assert value(page, "q1_pool") == pytest.approx(0.9 * 79.22)
    assert value(page, "q1_card_weights") > value(page, "q1_pool")
    assert value(page, "q1_seqs") == 53
    # one decode step's all-reduce of 405B FP8 on TP8: 16,384 x 2 bytes, on NVLink and on PCIe
    assert value(page, "q2_msg") == 32768
    assert value(page, "q2_nvl_bw") == 450                                     # 18 NVLink 4 links x 25 GB/s
    pcie = catalog.interconnects["pcie-gen5"]
    gen5 = pcie.transfer_rate.value * 16 * pcie.encoding.payload_bits / pcie.encoding.line_bits / 8
    assert value(page, "q2_pcie_bw") == pytest.approx(gen5)                    # 32 GT/s x 16 x 128/130 / 8 = 63.0 GB/s
    # NVLink: vLLM's custom all-reduce (one stage below 256 KiB on eight GPUs) was measured at 5.17 us for 16 KiB
    # and 6.31 us for 64 KiB on eight H100 (data/latencies.yaml): 32 KiB lies between
    pts = {(n, size): us for n, size, us in catalog.latencies["custom-allreduce-h100"].points}
    assert pts[8, 16384] <= value(page, "q2_nvl_ar") <= pts[8, 65536]
    # PCIe: vLLM refuses custom all-reduce, so NCCL: its fixed cost (7.45 us + 1.62 us for each of 6 further
    # peers, fitted on NCCL's published times, data/policies.yaml), then 2 x 7/8 of the message at NCCL's 0.698
    # share of 63.0 GB/s
    nccl = catalog.policies["measured-fractions"].collectives.nccl
    fixed = nccl.latency.value + 6 * nccl.per_peer.value                       # 17.17 us
    assert value(page, "q2_pcie_hop") == pytest.approx(fixed)
    assert value(page, "q2_pcie_ar") == pytest.approx(fixed + 2 * 7 / 8 * 32768 / (gen5 * 1e3 * nccl.efficiency))
    # and within 15 % of NCCL's measured 8-GPU all-reduce of 16 KiB on NVLink (16.58 us), a fixed cost the
    # slower wire adds about a microsecond to
    measured = {(n, size): us for n, size, us in catalog.latencies["nccl-allreduce-h100"].points}
    assert value(page, "q2_pcie_ar") == pytest.approx(measured[8, 16384], rel=0.15)
    # two all-reduces per layer, 126 layers
    assert value(page, "q2_per_token") == 2 * 126
    for link in ("nvl", "pcie"):
        assert value(page, f"q2_{link}_tok") == pytest.approx(value(page, f"q2_{link}_ar") * 252 / 1e3)
    # the time per output token: at least 405B's FP8 weights per GPU (401.6e9 linear / 8 at 1 byte, the 2.1e9 BF16
    # head / 8 at 2 bytes) at 3.35 TB/s, the all-reduces and the host's 1.70 ms per step; on PCIe longer by the
    # all-reduces' difference, and by at most 2 % more for the embedding's all-reduce and the logits' gather
    linear405 = 126 * (2 * 16384 * 16384 + 2 * 16384 * 1024 + 3 * 16384 * 53248)
    floor_ms = (linear405 / 8 + 2 * 128256 * 16384 / 8) / 3.35e12 * 1e3 + 1.70                    # 16.8 ms
    assert value(page, "q2_nvl_tpot") >= floor_ms + value(page, "q2_nvl_tok")
    tok_diff = value(page, "q2_pcie_tok") - value(page, "q2_nvl_tok")
    assert tok_diff <= value(page, "q2_pcie_tpot") - value(page, "q2_nvl_tpot") <= 1.02 * tok_diff
    # Llama 3.1 70B BF16, TP4 (the smallest TP degree vLLM starts) against TP8: the memory time halves (the BF16
    # weights, (68.45e9 linear + 1.05e9 head) x 2 bytes / TP, at the one-token BF16 GEMM's measured 86 % of 3.35
    # TB/s, and a cache of 7,168 tokens at decode attention's measured 91.8 % there, data/efficiencies.yaml
    # h100-sxm-kv-stream, straight on log-log axes between 0.91 at 4,096 and 0.92 at 8,192; within the 0.1 % the
    # activations add), the launches do not, so the time per output token falls by less than the GPUs rise
    w1 = dict(catalog.efficiencies["h100-sxm-gemm-weights-bf16"].by_tokens)[1]
    kv_at = dict(catalog.efficiencies["h100-sxm-kv-stream"].by_context)
    stream = kv_at[4096] * (kv_at[8192] / kv_at[4096]) ** math.log2(7168 / 4096)
    linear70 = 80 * (2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672)
    for tp, mem in ((4, "q3_lo_mem"), (8, "q3_hi_mem")):
        kv = 2 * 80 * (8 // tp) * 128 * 2 * 7168
        hand = ((linear70 + 128256 * 8192) * 2 / tp / (w1 * 3.35e12) + kv / (stream * 3.35e12)) * 1e3
        assert hand <= value(page, mem) <= 1.001 * hand, tp                   # 12.26 ms, 6.13 ms
    # each step's 160 all-reduces of 16 KiB: vLLM's measured 4.88 us on four GPUs, 5.17 us on eight (within 5 %:
    # the engine fits all points, and adds the embedding's all-reduce and the logits' gather)
    assert value(page, "q3_lo_comm") == pytest.approx(160 * pts[4, 16384] / 1e3, rel=0.05)
    assert value(page, "q3_hi_comm") == pytest.approx(160 * pts[8, 16384] / 1e3, rel=0.05)
    for side in ("lo", "hi"):
        parts = value(page, f"q3_{side}_mem") + value(page, f"q3_{side}_comm") + value(page, "q3_overhead")
        assert value(page, f"q3_{side}_tpot") == pytest.approx(parts)
    speedup = value(page, "q3_lo_tpot") / value(page, "q3_hi_tpot")
    assert value(page, "q3_speedup") == pytest.approx(speedup) and speedup < value(page, "q3_gpus_ratio") == 2


def test_numbers_json_lists_every_inline_figure(built: Build, page) -> None:
    data = json.loads((built.site / "numbers.json").read_text())
    inline = {f["name"]: f for f in data["interconnect.md"]["figures"]}
    assert inline["m405_fp16.weight"]["value"] == 810 and inline["m405_fp16.weight"]["unit"] == "GB"
    assert all(c["holds"] for c in data["interconnect.md"]["claims"])


def test_home_page_says_how_numbers_are_made(built: Build) -> None:
    home = built.page("index.html")
    assert "How the numbers on this site are made" in home.get_text()
    assert value(home, "gb") == 1e9 and value(home, "gib") == 2**30


def test_every_quiz_has_one_answer_per_question(built: Build) -> None:
    checked = 0
    for path in sorted(built.site.rglob("index.html")):
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        heading = soup.find(id="check-your-understanding")
        if heading is None:
            continue
        questions = heading.find_next("ol")
        answers = next(d for d in heading.find_all_next("details") if "Answers" in d.find("summary").get_text())
        asked = len(questions.find_all("li", recursive=False))
        answered = len(answers.find("ol").find_all("li", recursive=False))
        assert asked == answered, f"{path.relative_to(built.site)}: {asked} questions, {answered} answers"
        checked += 1
    assert checked >= 4


def test_no_build_marker_reaches_a_published_page(built: Build) -> None:
    """The marks the build uses while a page converts are gone from every page: the wrapper of each block's output
    (guard), and mkdocs-jupyter's stray `<style>` of a Python list on the notebook page (plugin)."""
    from snippets.build.drift import BLOCK_OUTPUT_CLASS

    markers = (f'class="{BLOCK_OUTPUT_CLASS}"', f"/{BLOCK_OUTPUT_CLASS}-->", "<style>\n        ['")
    pages = sorted(built.site.rglob("*.html"))
    assert len(pages) > 10
    for path in pages:
        html = path.read_text(encoding="utf-8")
        left = [m for m in markers if m in html]
        assert not left, f"{path.relative_to(built.site)}: {left}"
    grid = (built.site / "reference" / "sizing" / "index.html").read_text(encoding="utf-8")
    assert grid.count('<div class="sa-grid sa-wide" data-search-exclude>') == 1

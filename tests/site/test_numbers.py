""""How the numbers are made", read back from the built HTML: the trail and the counts are the data's."""

from __future__ import annotations

import re

import pytest

from snippets.data import FILES, Catalog

from ..conftest import Build, figures, text, value


@pytest.fixture(scope="module")
def page(built: Build):
    return built.page("how-the-numbers-are-made/index.html")


def test_the_trail_is_the_engines_deployment(page) -> None:
    # Llama 3.1 70B in BF16 on an HGX H100 for the reference scenario, as the engine deploys it:
    # 70.55e9 parameters from the architecture x 2 bytes = 141.1 GB; the H100 reports 81,559 MiB = 79.6 GiB,
    # vLLM's pool is 0.9 of it = 71.7 GiB; one GPU cannot hold 131.4 GiB of weights; TP2 holds them (65.7 GiB
    # each) but not the activation peak of vllm serve's profiling run (1,024 x 128,256 logits x 38.9 bytes =
    # 4.76 GiB) with 0.55 GiB outside PyTorch: vLLM refuses it, and TP4 is the smallest TP degree it starts
    # config.json: 80 layers of q, o (8,192 x 8,192), k, v (8,192 x 1,024), gate, up, down (8,192 x 28,672) and two
    # norms, a final norm, an untied 128,256-row embedding and LM head: 70,553,706,496 parameters
    params = 80 * (2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192) + 8192 + 2 * 128256 * 8192
    assert value(page, "trail[Parameters][Figure]") == pytest.approx(params / 1e9, rel=1e-9)
    assert value(page, "trail[Parameters][Figure]") == pytest.approx(70.55, abs=0.01)
    assert value(page, "trail[Bytes per parameter][Figure]") == 2
    assert value(page, "trail[Weight memory][Figure]") == pytest.approx(2 * params / 1e9, rel=1e-9)
    assert value(page, "trail[Weight memory][Figure]") == pytest.approx(141.1, abs=0.05)
    # the total CUDA reports (vLLM's total_gpu_memory), the field it is read from: not nvidia-smi's 79.6 GiB
    assert value(page, "trail[Memory the runtime reports (CUDA)][Figure]") == pytest.approx(79.22)
    table = next(t for t in page.select("table") if "Engine function" in t.get_text())
    row = next(tr for tr in table.select("tbody tr") if tr.find("td").get_text().startswith("Memory the runtime"))
    assert row.find_all("td")[2].get_text() == "data/accelerators.yaml, h100-sxm: memory_runtime"
    assert value(page, "trail[The engine's pool][Figure]") == pytest.approx(0.9 * 79.22)
    assert value(page, "trail[Activations and runtime][Figure]") == pytest.approx(4.76 + 0.55, abs=0.005)
    assert value(page, "trail[GPUs][Figure]") == 4
    # one sequence of 8,192 tokens on TP4: K and V of 80 layers, 8 / 4 = 2 KV heads of 128 per GPU, BF16
    assert value(page, "trail[KV cache per GPU][Figure]") == pytest.approx(2 * 80 * 2 * 128 * 2 * 8192 / 2**30)
    # the prose shows the same figures as the table
    assert text(page, "weight") == "141.1 GB"
    assert value(page, "gpus") == 4


def test_counts_are_the_catalogs(page, catalog: Catalog) -> None:
    entries = sum(len(getattr(catalog, name)) for name in FILES)
    # every source the data files hold, an entry's own and those nested in its fields (a runtime total's, a kernel
    # gap's), counted in the YAML text: each source has one `url` key
    sources = sum(len(re.findall(r"^\s*(?:- )?url:", (catalog.directory / f"{name}.yaml").read_text(), re.M))
                  for name in FILES)
    assert sources > sum(len(e.sources) for name in FILES for e in getattr(catalog, name).values())
    assert value(page, "tables") == len(FILES)
    assert value(page, "entries") == entries
    assert value(page, "sources") == sources
    rows = {n: v for n, v in ((n, float(el["data-value"])) for n, el in figures(page).items()) if n.startswith("tables[")}
    assert sum(v for n, v in rows.items() if n.endswith("[Entries]")) == entries
    assert sum(v for n, v in rows.items() if n.endswith("[Sources cited]")) == sources


def test_claims_hold_and_are_marked(page) -> None:
    claims = {el["data-claim"] for el in page.select("span.sa-claim")}
    assert claims == {"more_than_one_gpu", "every_entry_sourced"}


def test_the_page_is_second_in_the_nav(built: Build) -> None:
    home = built.page("index.html")
    links = [a["href"] for a in home.select("nav.md-nav--primary a.md-nav__link[href]") if not a["href"].startswith("#")]
    assert links[:2] == [".", "how-the-numbers-are-made/"]

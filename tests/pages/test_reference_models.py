"""The models reference page's sentence on the linear layers a quantized checkpoint keeps at 16 bits."""

from __future__ import annotations

from pathlib import Path

from snippets.data import Catalog, load
from snippets.pages.reference_models import ReferenceModelsPage, checkpoint

from ..conftest import edited_data


def test_gpt_oss_keeps_its_attention_in_bf16_and_the_page_says_how_much(catalog: Catalog) -> None:
    ns = ReferenceModelsPage.of(catalog)
    assert ns.kept_attention.holds
    assert ns.kept_model == "gpt-oss-120b" and ns.kept_precision == "MXFP4"
    # 36 layers x 26,542,080 attention weights at 2 bytes instead of 4.25 bits: 1.31 GiB
    assert ns.kept_extra.unit == "GiB" and ns.kept_extra.text.startswith("1.31")
    assert ns.kept_extra.value == 36 * 26_542_080 * (2 - 4.25 / 8) / 2**30
    assert checkpoint(catalog, catalog.models["gpt-oss-120b"]) == "MXFP4 (attention in BF16)"
    assert checkpoint(catalog, catalog.models["deepseek-r1"]) == "FP8, 128 x 128 blocks"  # others' lists: per checkpoint


def test_without_the_checkpoints_list_the_claim_fails(tmp_path: Path) -> None:
    line = "  keeps_16bit: {mxfp4: [attention_in, attention_out]}  # modules_to_not_convert: model.layers.*.self_attn\n"
    off = ReferenceModelsPage.of(load(edited_data(tmp_path, [("models.yaml", line, "")])))
    assert not off.kept_attention.holds
    assert off.kept_extra.value == 0

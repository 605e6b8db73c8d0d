"""The precision page's figures against the float oracle (numpy's and ml_dtypes' own types, `DTYPES` in
tests/unit/test_precision_oracle.py): its ranges table, its prose, the element and scale widths it shows."""

from __future__ import annotations

import math
import re
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from ..conftest import Build, figures
from ..unit.test_precision_oracle import DTYPES, oracle

RANGES = {
    "FP32": "fp32", "BF16": "bf16", "FP16": "fp16", "FP8 E4M3": "fp8-e4m3", "FP8 E5M2": "fp8-e5m2",
    "FP4 E2M1 (element of MXFP4 and NVFP4)": "mxfp4",
}
"""The rows of the page's ranges table, by the precision they show."""


def shown(text: str) -> float:
    """The number a figure's text shows: "57,344", "2^-9", "0.5", "3.39 × 10^38", "12.5%", "128×"."""
    t = text.replace(",", "").replace("%", "").replace("−", "-").strip().removesuffix("×")
    if m := re.fullmatch(r"2\^(-?\d+)", t):
        return 2.0 ** int(m.group(1))
    if m := re.fullmatch(r"([\d.]+) × 10\^(-?\d+)", t):
        return float(m.group(1)) * 10.0 ** int(m.group(2))
    return float(t)


def digits_shown(text: str) -> int:
    """Significant digits of a mantissa written as "3.39 × 10^38": 3."""
    return len(re.sub(r"\D", "", text.split("×")[0]))


@pytest.fixture(scope="module")
def page_figures(built: Build) -> dict[str, tuple[float, str]]:
    return {k: (float(el["data-value"]), el.get_text()) for k, el in figures(built.page("precision/index.html")).items()}


def check(page_figures: dict[str, tuple[float, str]], name: str, truth: float) -> None:
    assert name in page_figures, f"no figure {name!r} on the precision page"
    v, text = page_figures[name]
    assert v == pytest.approx(truth, rel=1e-9), f"{name}: data-value {v} but the oracle says {truth}"
    s = shown(text)
    if " × 10^" in text:  # rounded for display: to the digits it shows
        assert s == pytest.approx(truth, rel=10.0 ** (1 - digits_shown(text)))
        assert f"{truth:.{digits_shown(text) - 1}e}".split("e")[0] == text.split(" ")[0]
    else:
        assert s == truth, f"{name}: the page shows {text!r}, the oracle says {truth}"


@pytest.mark.parametrize("label", sorted(RANGES))
def test_ranges_table_matches_the_oracle(page_figures: dict[str, tuple[float, str]], label: str) -> None:
    fi = oracle(DTYPES[RANGES[label]])
    check(page_figures, f"ranges[{label}][Exponent bits]", fi.nexp)
    check(page_figures, f"ranges[{label}][Mantissa bits]", fi.nmant)
    check(page_figures, f"ranges[{label}][Largest value]", float(fi.max))
    check(page_figures, f"ranges[{label}][Smallest value above zero]", float(fi.smallest_subnormal))
    check(page_figures, f"ranges[{label}][Relative step between neighbours]", float(fi.eps))


def test_prose_figures_match_the_oracle(page_figures: dict[str, tuple[float, str]]) -> None:
    e4m3 = ml_dtypes.finfo(ml_dtypes.float8_e4m3fn)
    e5m2 = ml_dtypes.finfo(ml_dtypes.float8_e5m2)
    check(page_figures, "e4m3_max", float(e4m3.max))
    check(page_figures, "e5m2_max", float(e5m2.max))
    check(page_figures, "fp16.max", float(np.finfo(np.float16).max))
    check(page_figures, "e4m3_step", float(e4m3.eps) * 100)   # a percentage
    check(page_figures, "e5m2_step", float(e5m2.eps) * 100)
    check(page_figures, "e5m2_over_e4m3_range", float(e5m2.max) / float(e4m3.max))


@pytest.mark.parametrize(("row", "dtype"), [
    ("FP32", np.float32), ("BF16", ml_dtypes.bfloat16), ("FP16", np.float16), ("FP8", ml_dtypes.float8_e4m3fn),
    ("MXFP4", ml_dtypes.float4_e2m1fn), ("NVFP4", ml_dtypes.float4_e2m1fn),
])
def test_element_bits_match_the_oracle(page_figures: dict[str, tuple[float, str]], row: str, dtype: Any) -> None:
    check(page_figures, f"formats[{row}][Element bits]", ml_dtypes.finfo(dtype).bits)


def test_scale_widths_on_the_page_match_the_oracle(page_figures: dict[str, tuple[float, str]]) -> None:
    check(page_figures, "mxfp4.scale_width", ml_dtypes.finfo(ml_dtypes.float8_e8m0fnu).bits)
    check(page_figures, "nvfp4.scale_width", ml_dtypes.finfo(ml_dtypes.float8_e4m3fn).bits)


def test_shown_reads_what_the_page_writes() -> None:
    assert shown("57,344") == 57344 and shown("2^-9") == 2**-9 and shown("0.5") == 0.5
    assert shown("3.39 × 10^38") == pytest.approx(3.39e38) and shown("12.5%") == 12.5
    assert shown("128×") == 128
    assert math.isclose(shown("2^-133"), 2.0**-133)

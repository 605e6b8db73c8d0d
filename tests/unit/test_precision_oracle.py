"""The float formats against an independent oracle: numpy's and ml_dtypes' own types.

`snippets/teaching/formats.py` derives each float's range and step from the bit fields in
`data/precisions.yaml` (exponent and mantissa bits, bias, which codes are special). Those formulas
and those entries are checked here against `numpy.finfo` (FP16, FP32) and `ml_dtypes.finfo`
(BF16, FP8 E4M3 and E5M2, FP4 E2M1, the E8M0 scale), which implement the formats as arithmetic
types; and against every bit pattern of each format, decoded by those types. A wrong formula, a
wrong bias or a mistyped bit count in the data fails here, and so does a page figure that
disagrees. numpy and ml_dtypes are test dependencies only: `snippets/` stays standard library.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from snippets.data import Catalog, FloatLayout
from snippets.teaching.formats import max_finite, min_normal, min_subnormal, relative_step

from ..conftest import ROOT

DTYPES: dict[str, Any] = {
    "fp32": np.float32,
    "bf16": ml_dtypes.bfloat16,
    "fp16": np.float16,
    "fp8-e4m3": ml_dtypes.float8_e4m3fn,
    "fp8-block": ml_dtypes.float8_e4m3fn,   # E4M3 elements, one FP32 scale per 128 x 128 block
    "fp8-e5m2": ml_dtypes.float8_e5m2,
    "mxfp4": ml_dtypes.float4_e2m1fn,   # the element of MXFP4 and NVFP4
    "nvfp4": ml_dtypes.float4_e2m1fn,
}
"""Every precision in data/ with a float layout, and the type that implements its element."""

SCALES: dict[str, Any] = {
    "FP32": np.float32,
    "FP16": np.float16,
    "E8M0": ml_dtypes.float8_e8m0fnu,
    "E4M3": ml_dtypes.float8_e4m3fn,
}
"""The block-scale formats data/ names, and their types."""

UINT = {4: np.uint8, 8: np.uint8, 16: np.uint16, 32: np.uint32}


def oracle(dtype: Any) -> Any:
    """numpy.finfo for numpy's own floats, ml_dtypes.finfo for the others."""
    return np.finfo(dtype) if dtype in (np.float16, np.float32) else ml_dtypes.finfo(dtype)


def _bits(dtype: Any) -> int:
    return int(oracle(dtype).bits)


def test_every_float_layout_has_an_oracle(catalog: Catalog) -> None:
    with_layout = {pid for pid, p in catalog.precisions.items() if p.layout is not None}
    assert with_layout == set(DTYPES)
    scales = {p.block_scale.scale_format for p in catalog.precisions.values() if p.block_scale is not None}
    assert scales <= set(SCALES)


def test_numpy_and_ml_dtypes_agree_where_both_speak() -> None:
    # ml_dtypes.finfo defers to numpy.finfo for numpy's own types: one oracle, not two that differ
    for t in (np.float16, np.float32):
        assert ml_dtypes.finfo(t).max == np.finfo(t).max
        assert ml_dtypes.finfo(t).smallest_subnormal == np.finfo(t).smallest_subnormal


@pytest.mark.parametrize("pid", sorted(DTYPES))
def test_bit_fields_match(catalog: Catalog, pid: str) -> None:
    p = catalog.precisions[pid]
    lay = p.layout
    assert lay is not None
    fi = oracle(DTYPES[pid])
    assert p.width == fi.bits
    assert lay.exponent_bits == fi.nexp
    assert lay.mantissa_bits == fi.nmant
    # the smallest normal exponent is 1 - bias (the all-zeros exponent field is the subnormals)
    assert lay.bias == 1 - fi.minexp


@pytest.mark.parametrize("pid", sorted(DTYPES))
def test_range_and_step_match(catalog: Catalog, pid: str) -> None:
    lay = catalog.precisions[pid].layout
    assert lay is not None
    fi = oracle(DTYPES[pid])
    # all of these are exact powers of two or short binary fractions: compare exactly
    assert max_finite(lay) == float(fi.max)
    assert min_normal(lay) == float(fi.smallest_normal)
    assert min_subnormal(lay) == float(fi.smallest_subnormal)
    assert relative_step(lay) == float(fi.eps)


def positive_codes(width: int, dtype: Any) -> np.ndarray:
    """Every code with the sign bit clear, decoded by `dtype`, as float64 (FP32: the top two exponents)."""
    # FP32's 2^31 codes are too many; its specials and its largest value live in the top two exponents
    start = 0 if width <= 16 else 0x7F000000
    codes = np.arange(start, 2 ** (width - 1), dtype=UINT[width])
    with np.errstate(invalid="ignore"):  # the NaN codes stay NaN in float64
        return codes.view(dtype).astype(np.float64)


@pytest.mark.parametrize("pid", sorted(DTYPES))
def test_specials_and_extremes_from_every_code(catalog: Catalog, pid: str) -> None:
    """Decode every positive bit pattern: the special codes are those the layout says, and the
    largest and smallest values are the ones the formulas give."""
    lay = catalog.precisions[pid].layout
    assert lay is not None
    values = positive_codes(int(catalog.precisions[pid].width), DTYPES[pid])
    infs, nans = int(np.isinf(values).sum()), int(np.isnan(values).sum())
    expected = {"ieee": (1, 2**lay.mantissa_bits - 1), "nan_only": (0, 1), "none": (0, 0)}[lay.specials]
    assert (infs, nans) == expected, f"{pid}: {lay.specials} layout, but {infs} Inf and {nans} NaN codes"
    finite = values[np.isfinite(values)]
    assert finite.max() == max_finite(lay)
    if pid != "fp32":  # FP32's enumeration starts high; its small end is checked by finfo above
        assert finite[finite > 0].min() == min_subnormal(lay)
        # the step: just above 1.0 the next value is 1 + 2^-m
        above_one = finite[finite > 1.0]
        if above_one.size:
            assert above_one.min() - 1.0 == relative_step(lay)


def test_the_formulas_fail_on_a_wrong_layout() -> None:
    """The oracle would catch a wrong entry: E4M3 read as IEEE-style loses its top binade (448 -> 240)."""
    wrong = FloatLayout(exponent_bits=4, mantissa_bits=3, bias=7, specials="ieee")
    assert max_finite(wrong) != float(ml_dtypes.finfo(ml_dtypes.float8_e4m3fn).max)


def test_scale_formats_match(catalog: Catalog) -> None:
    for pid, p in catalog.precisions.items():
        bs = p.block_scale
        if bs is None or bs.scale_format is None:
            continue
        t = SCALES[bs.scale_format]
        assert bs.scale_width == _bits(t), f"{pid}: {bs.scale_format} scale"
    # E8M0 is a pure power of two: no mantissa, so every scale is 2^k (MX spec)
    e8m0 = ml_dtypes.finfo(ml_dtypes.float8_e8m0fnu)
    assert (e8m0.nexp, e8m0.nmant) == (8, 0)


def test_snippets_do_not_need_numpy() -> None:
    """The oracle is a test dependency: the page models and the engine import without numpy or ml_dtypes."""
    script = (
        "import sys\n"
        "sys.modules['numpy'] = sys.modules['ml_dtypes'] = None\n"
        "import snippets.teaching.formats, snippets.pages.precision, snippets.render.charts\n"
        "import snippets.render.diagrams, snippets.engine\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr

"""The predictions page's fused-MoE fixed cost by format: InferenceX's DeepSeek-R1 runs in FP8 and FP4 on one chip run
the same experts' kernel (FlashInfer's TensorRT-LLM-generated one, `moe_kernel` trtllm-gen), whose own fixed cost a
layer differs by format and hidden size, where the time model's count of kernels does not; and the runs whose experts'
kernel the tables time in another format of the same width (vLLM's Marlin kernel, `moe_kernel` marlin)
(`snippets.pages.reference_predictions` adds these figures and claims to its namespace)."""

from __future__ import annotations

import statistics

from snippets.calibration import Row
from snippets.engine.specs import moe_key
from snippets.pages.reference_misses import counted, experts_fixed
from snippets.render import fmt

KERNEL = "trtllm-gen"
"""The kernel whose rows the paragraph reads."""
MARLIN = "marlin"
"""The kernel of the runs whose MXFP4 experts vLLM runs with Marlin's kernel (InferenceX's gpt-oss launch script on H100
asks for it), which the tables time with INT4 weights only."""


def fixed_by_format(cal: list[Row], band: float) -> dict[str, object]:
    """The FP4 runs' figures and claims by name; `band` is the one the page holds the calibration's TPOT to."""
    own = [r for r in cal if r.deployment.setting.memory_policy.moe_kernel == KERNEL
           and r.deployment.setting.model.architecture.moe is not None and r.error("itl_ms") is not None]
    fp4 = [r for r in own if r.deployment.setting.precision.tensor_format == "fp4"]
    if not fp4:
        raise ValueError(f"no calibration run of a mixture of experts in FP4 under the {KERNEL} kernel: the page "
                         "weighs its fixed cost")
    chip = fp4[0].deployment.setting.chip.id
    fp8 = [r for r in own if r.deployment.setting.precision.tensor_format == "fp8"
           and r.deployment.setting.chip.id == chip and r.measurement.model == fp4[0].measurement.model]
    if not fp8:
        raise ValueError(f"no FP8 run of the FP4 runs' model on {chip} under the {KERNEL} kernel: the page compares "
                         "the two formats' fixed costs")
    f4, f8 = experts_fixed(fp4[0].deployment), experts_fixed(fp8[0].deployment)
    plain = experts_fixed(counted(fp4[0].deployment))
    median = statistics.median(abs(r.error("itl_ms") or 0.0) for r in fp4)
    st = fp4[0].deployment.setting
    # the kernel's fixed cost by hidden size, as the chip's entries read it: block FP8's at the smallest size its
    # curve holds against the model's, and FP4's multiples over every size measured
    eff = st.time_model.chip(chip)
    curve8 = eff.moe_fixed_hidden.get(moe_key("fp8", KERNEL), ())
    curve4 = eff.moe_fixed_hidden.get(moe_key("fp4", KERNEL), ())
    small = curve8[0][0] if curve8 else float(st.model.architecture.hidden_size)
    f8_small = eff.moe_fixed_for("fp8", KERNEL, small) or 0.0
    spread4 = max((abs(m - 1) for _, m in curve4), default=0.0)
    return {
        "fx_rows": fmt.count(len(fp4), "runs"), "fx_model": st.model.name, "fx_chip": st.chip.name,
        "fx_fp4": fmt.quantity(f4 * 1e6, "µs", 1, show_unit=True),
        "fx_fp8": fmt.quantity(f8 * 1e6, "µs", 1, show_unit=True),
        "fx_counted": fmt.quantity(plain * 1e6, "µs", 1, show_unit=True),
        "fx_small_hidden": fmt.count(int(small), "channels"),
        "fx_fp8_small": fmt.quantity(f8_small * 1e6, "µs", 1, show_unit=True),
        "fx_fp4_spread": fmt.percent(spread4),
        # block FP8's fixed cost at the model's hidden size well above its cost at the smallest size measured, FP4's
        # within a fifth of its own at every size
        "fx_hidden": fmt.claim(f8 > 1.3 * f8_small and spread4 <= 0.2,
                               f"FP8 fixed {f8 * 1e6:.1f} us at hidden {st.model.architecture.hidden_size}, "
                               f"{f8_small * 1e6:.1f} us at {small:.0f}; FP4 multiples within {spread4:.0%} of one"),
        "fx_median": fmt.percent(median), "fx_band": fmt.percent(band),
        # the FP4 runs come within the band priced at the kernel's own fixed costs, which differ by format by more than
        # half the count of kernels the model charged both
        "fx_close": fmt.claim(len(fp4) >= 5 and median <= band and f8 - f4 > plain / 2,
                              f"median |ITL error| {median:.1%} over {len(fp4)} runs; fixed a layer FP8 "
                              f"{f8 * 1e6:.1f} us, FP4 {f4 * 1e6:.1f} us, counted {plain * 1e6:.1f} us"),
    }


def marlin_experts(cal: list[Row], band: float) -> dict[str, object]:
    """The calibration runs whose experts run Marlin's kernel in another format than the one the tables time it in
    (MXFP4 against INT4; data/measurements.yaml says why): their figures and the claim that, priced at its INT4
    timing, they come within `band`, the one the page holds the calibration's TPOT to."""
    runs = [r for r in cal if r.deployment.setting.memory_policy.moe_kernel == MARLIN
            and r.deployment.setting.model.architecture.moe is not None and r.error("itl_ms") is not None]
    if not runs:
        raise ValueError(f"no calibration run of a mixture of experts under the {MARLIN} kernel: the page weighs it")
    d = runs[0].deployment
    st = d.setting
    own, plain = experts_fixed(d), experts_fixed(counted(d))
    errors = [r.error("itl_ms") or 0.0 for r in runs]
    median = statistics.median(abs(e) for e in errors)
    return {
        "mq_rows": fmt.count(len(runs), "runs"), "mq_model": st.model.name, "mq_chip": st.chip.name,
        "mq_fixed": fmt.quantity(own * 1e6, "µs", 1, show_unit=True),
        "mq_counted": fmt.quantity(plain * 1e6, "µs", 1, show_unit=True),
        "mq_median": fmt.percent(median), "mq_band": fmt.percent(band),
        # the runs come within the band priced at Marlin's own fixed cost, more than half again the count of kernels
        "mq_close": fmt.claim(len(runs) >= 5 and median <= band and own - plain > plain / 2,
                              f"median |ITL error| {median:.1%} over {len(runs)} runs; fixed a layer {own * 1e6:.1f} us, "
                              f"counted {plain * 1e6:.1f} us"),
    }

"""The engine from the command line: `python -m snippets.engine predict|size|search ...` prints one JSON object.

    python -m snippets.engine predict --model llama-3.1-405b --precision fp8 --accelerator h100-sxm \\
        --tp 8 --pp 1 --input-tokens 1000 --output-tokens 500 --concurrency 16
    python -m snippets.engine size --model llama-3.1-70b --precision bf16 --accelerator a100-80gb-sxm
    python -m snippets.engine search --model llama-3.1-70b --precision fp8 --accelerator h100-sxm \\
        --input-tokens 3000 --output-tokens 150 --ttft-ms 1000 --tpot-ms 50 --rate 20 --mode any

Ids are `data/` ids. `--concurrency max` serves as many sequences as the KV cache holds and `max_num_seqs`
admits. `--kv-precision` picks the KV cache's precision (default: the checkpoint's dtype, as vLLM's `auto` picks
it; the scenario's for a model with no checkpoint). The
object holds the prediction with its band (`tpot_ms_range`, `ttft_ms_range`, `output_tokens_per_s_range`,
each [low, high], and `regime`; `bands` says, for each metric, its regime, that regime's test rows, and whether
too few of them left it the span of the bands with enough rows), one decode step's seconds by kind of op (`breakdown`,
summing to `decode_step_ms`: the step alone, below `tpot_ms` wherever prompts share the steps), the dollars per
million output tokens with its range (`usd_per_mtok_output_range`: the throughput's band, inverted) and per
million prompt tokens (`usd_per_mtok_input`: the rent over prompts prefilled one after another, the same at any
load), and what the TP, EP and PP groups' links give them (`links`: `name`,
per-direction `gb_per_s`, `hop_us`). An unknown id (of any option: model, precision, KV precision, accelerator, node,
scenario, policies, draft),
a layout the engines refuse, or a model that does not fit exits non-zero with a one-line message, as do token
counts below 1, an input + output beyond the model's context (the limit is named), and a `--node` built from
another accelerator than `--accelerator` (`snippets.engine.requests.check_request`, the calculator's rule too).
A concurrency beyond what the KV cache admits is served as an engine serves it: `in_flight` run, `queued` wait.
`data/` is read through the build's loader (`--data DIR`), or an exported catalog (`--catalog FILE.json`), refused
if it holds NaN or infinity, a fraction outside (0, 1] or a size, count, bandwidth or price that is not positive.

`predict --request-rate R` (instead of `--concurrency`) predicts requests arriving R a second, an open loop: the
steady state in which they finish as fast as they arrive (`snippets.engine.serving.at_rate`), `mean_in_flight` the
requests it holds on average (the rate times a request's life), `in_flight` the whole number just above;
`saturated` true where R is at or above what the replica finishes with every slot it admits full (the queue then
grows as long as requests come; the figures are the full replica's). `request_rate` echoes R.

`predict --spec-tokens K --acceptance A [--draft mtp|eagle|MODEL]` predicts speculative decoding (k drafted tokens,
acceptance rate α; the draft: the model's MTP module where its config has one, an EAGLE head, or a draft model from
data/), and `--prefix-hit H` a prefix cache holding that share of each prompt (`--prefix-groups N` distinct
prefixes). `predict --wave` adds `wave`: the `--concurrency` requests run as one wave (a static batch, or an offline
run of no more requests than the deployment admits: every prompt there at the first step, no steady state), its
`requests`, `prefill_steps`, mean `ttft_ms` and `tpot_ms`, and `output_tokens_per_s` over the whole wave
(`snippets.engine.serving.wave`). `search` prints `frontier` (the throughput-interactivity frontier: each point's
mode, layout, concurrency, GPUs, output tokens/s per GPU and per user, TTFT, TPOT, $ per million output tokens;
disaggregated points also each pool's layout, workers and GPUs) and `best` (the cheapest point meeting `--ttft-ms`
and `--tpot-ms`; with `--rate`, the plan that carries that many requests a second instead: its replicas, or prefill
and decode workers, the rented `gpus` (`gpus_used` of them used) and `usd_per_hour`, each replica or decode worker
at its share of the rate (`snippets.engine.search.Served`: its TTFT, TPOT and requests in flight there, as
`mean_in_flight` and rounded as `concurrency`; the rate's output tokens; the plan's cost per million of them), the
point it scales nested as `configuration`), or `best: null` with `why` (the target that binds, by how much) and exit
status 1; `recommended` (the same shape: what the layout policy recommends deploying, the cheapest
aggregated configuration unless the cheapest disaggregated one saves at least its `disaggregation.min_saving`) and
`recommendation` (that share, and `cheapest_saving`: how much less `best` costs than `recommended`). A point's
figures are what `predict` gives for its configuration. `search --meet band` holds the slow edge of each
prediction's error band to the targets instead of the prediction (`snippets.engine.search.margins`); `targets`
echoes the targets with `meet`, the `margins` a prediction was multiplied by, and `predicted_at_most`, the
predictions that met them (the targets divided by the margins).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NoReturn

from snippets.engine.deployment import (
    GIVEN,
    Deployment,
    NoLayout,
    RefusedLayout,
    Setting,
    deploy,
    kv_precision_refusal,
    setting,
)
from snippets.engine.layout import Layout
from snippets.engine.memory import vision_bytes
from snippets.engine.requests import (
    Request,
    RequestError,
    UnknownId,
    check_request,
    deploy_admitting,
    load_catalog,
)
from snippets.engine.search import MEETS, MODES, Point, Search, Served, search
from snippets.engine.serving import (
    DisaggPrediction,
    Speculation,
    at_rate,
    predict,
    usd_per_mtok_input,
    wave,
)
from snippets.engine.specs import MOE_KERNELS, EngineCatalog
from snippets.engine.topology import links

GiB = 2**30


def _catalog(args: argparse.Namespace) -> EngineCatalog:
    if args.catalog:  # checked as strictly as data/: no NaN or infinity, fractions in (0, 1], sizes above zero
        try:
            with open(args.catalog, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise RequestError(f"--catalog {args.catalog}: {exc.strerror}") from None
        return load_catalog(text, f"--catalog {args.catalog}")
    from snippets.data import load  # the build's validating loader (pydantic); the engine itself needs none
    from snippets.data.export import engine_catalog

    if args.data is not None and not os.path.isdir(args.data):
        raise RequestError(f"--data {args.data}: not a directory (give the folder that holds the YAML files)")

    return engine_catalog(load(args.data))


class _Parser(argparse.ArgumentParser):
    """argparse's parser with its refusals on one line, as the command's own are (exit status 2, as argparse's)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} ({self.prog} --help lists the options)\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m snippets.engine", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("predict", "size", "search"):
        s = sub.add_parser(name)
        s.add_argument("--model", required=True)
        s.add_argument("--precision", required=True)
        s.add_argument("--accelerator", help="an accelerator id (its first node is used)")
        s.add_argument("--node", help="a node id, instead of --accelerator")
        s.add_argument("--scenario", default="reference")
        s.add_argument("--input-tokens", type=int)
        s.add_argument("--output-tokens", type=int)
        if name != "search":
            s.add_argument("--concurrency", default=None, help="sequences at once, or 'max'")
        if name == "size":  # predict is given its layout, so no policy chooses one there
            s.add_argument("--layout-policy", help="a layout policy id: how the layout is chosen")
        s.add_argument("--kv-precision", help="a precision id for the KV cache (default: the checkpoint's dtype, "
                       "else the scenario's)")
        s.add_argument("--memory-policy", help="a memory policy id: the engine's memory budget, limits and scheduling "
                       "(vllm-default, sglang-default, trtllm-serve, ...; default: the scenario's)")
        s.add_argument("--data", help="the data directory (default: the repository's data/)")
        s.add_argument("--catalog", help="an exported catalog (JSON) instead of data/")
        if name != "search":
            s.add_argument("--moe-kernel", choices=MOE_KERNELS,
                           help="the fused-MoE kernel the engine runs, where the command or the release decides it "
                                "(default: the memory policy's, else the engines' median); a kernel with no measured "
                                "figure on the chip and format takes the median too (assumptions.moe_kernel_measured); "
                                "an MXFP4 checkpoint's experts are held padded as that kernel lays them out "
                                "(assumptions.expert_padding)")
            s.add_argument("--text-only", action="store_true",
                           help="serve a multimodal checkpoint's text model alone: its image encoder is not built "
                                "(vLLM's --limit-mm-per-prompt with images 0, or --language-model-only); default: as the "
                                "memory policy's engine does (assumptions.vision_encoder)")
        if name == "predict":
            s.add_argument("--tp", type=int, required=True)
            s.add_argument("--pp", type=int, default=1)
            s.add_argument("--ep", type=int, default=1)
            s.add_argument("--dp", type=int, default=1)
            s.add_argument("--request-rate", type=float,
                           help="requests arriving a second (an open loop), instead of --concurrency")
        if name in ("predict", "search"):
            s.add_argument("--spec-tokens", type=int, help="speculative decoding: tokens drafted per step (k)")
            s.add_argument("--acceptance", type=float, help="speculative decoding: acceptance rate of a draft (0-1)")
            s.add_argument("--draft", help="the draft: mtp (the model's own module), eagle, or a model id")
            s.add_argument("--prefix-hit", type=float, default=0.0, help="share of each prompt in the prefix cache")
            s.add_argument("--prefix-groups", type=int, default=1, help="distinct cached prefixes held")
        if name == "predict":
            s.add_argument("--wave", action="store_true",
                           help="also run the --concurrency requests as one wave (a static batch)")
        if name == "search":
            s.add_argument("--ttft-ms", type=float, help="time-to-first-token target")
            s.add_argument("--tpot-ms", type=float, help="time-per-output-token target")
            s.add_argument("--rate", type=float, help="requests per second to carry")
            s.add_argument("--mode", default="any", choices=MODES)
            s.add_argument("--meet", default="prediction", choices=MEETS,
                           help="what must fall within the targets: the prediction (default), or the slow edge "
                                "of its error band (band)")
    return p


def speculation_of(eng: EngineCatalog, model: str, tokens: int | None, acceptance: float | None,
                   draft: str | None) -> Speculation | None:
    """The speculation the flags ask for, or None: the draft is `draft` (mtp, eagle or a model id), by default the
    model's own MTP module where its config has one."""
    if tokens is None and acceptance is None and draft is None:
        return None
    if tokens is None or acceptance is None:
        raise ValueError("speculative decoding needs both --spec-tokens and --acceptance")
    if draft is None:
        if eng.models[model].architecture.mtp_layers < 1:
            raise ValueError(f"{eng.models[model].name} has no MTP module: name a draft (--draft eagle or a model id)")
        draft = "mtp"
    if draft in ("mtp", "eagle"):
        return Speculation(tokens, acceptance, draft)
    return Speculation(tokens, acceptance, "draft-model", eng.models[draft])


def _q(value: float, unit: str) -> dict[str, Any]:
    return {"value": value, "unit": unit}


def report(d: Deployment, concurrency: int, n_in: int, n_out: int, *, speculation: Speculation | None = None,
           prefix_hit: float = 0.0, prefix_groups: int = 1, one_wave: bool = False,
           rate: float | None = None) -> dict[str, Any]:
    """The JSON the command prints: the prediction, the deployment and every assumption behind them; with
    `one_wave`, also the `concurrency` requests run as one wave; with `rate`, requests arriving at that rate
    (`snippets.engine.serving.at_rate`) instead of `concurrency` kept in flight."""
    if rate is None:
        x = predict(d, concurrency, n_in, n_out, speculation=speculation, prefix_hit=prefix_hit,
                    prefix_groups=prefix_groups)
    else:
        x = at_rate(d, rate, n_in, n_out, speculation=speculation, prefix_hit=prefix_hit, prefix_groups=prefix_groups)
        concurrency = x.concurrency
    w = None
    if one_wave:
        if speculation is not None or prefix_hit or rate is not None:
            raise ValueError("one wave is modelled without speculative decoding, a prefix cache or a request rate")
        w = wave(d, concurrency, n_in, n_out)
    st, m, tm = d.setting, d.memory, d.setting.time_model

    def ms(rng: tuple[float, float]) -> list[float]:
        return [rng[0] * 1e3, rng[1] * 1e3]

    return {
        "model": st.model.id, "precision": st.precision.id, "accelerator": st.chip.id, "node": st.node.id,
        "layout": d.layout.as_dict(), "layout_label": d.layout.label, "why": d.why,
        "gpus": d.gpus, "nodes": d.nodes, "gpus_rented": d.gpus_rented,
        "input_tokens": n_in, "output_tokens": n_out, "concurrency": concurrency,
        "max_concurrency": d.max_concurrency, "in_flight": x.in_flight, "queued": concurrency - x.in_flight,
        "request_rate": x.request_rate, "saturated": x.saturated, "mean_in_flight": x.mean_in_flight,
        "ttft_ms": x.ttft_s * 1e3, "tpot_ms": x.tpot_s * 1e3,
        "ttft_ms_range": ms(x.ttft_range), "tpot_ms_range": ms(x.tpot_range),
        "output_tokens_per_s": x.output_tokens_per_s, "output_tokens_per_s_range": list(x.throughput_range),
        "output_tokens_per_s_per_gpu": x.output_tokens_per_s_per_gpu,
        "output_tokens_per_s_per_gpu_range": [r / d.gpus for r in x.throughput_range],
        "regime": x.regime, "ttft_regime": x.ttft_regime, "mode": x.mode,
        "bands": {"tpot_ms": x.tpot_band.as_dict("tpot_ms", x.regime),
                  "ttft_ms": x.ttft_band.as_dict("ttft_ms", x.ttft_regime),
                  "output_tokens_per_s": x.throughput_band.as_dict("output_tokens_per_s", x.regime)},
        "output_tokens_per_s_per_user": x.output_tokens_per_s_per_user,
        "speculation": None if speculation is None else {**speculation.as_dict(), "draft_ms": x.draft_s * 1e3,
                                                          "verify_extra_ms": x.verify_extra_s * 1e3},
        "prefix_hit": x.prefix_hit, "cached_tokens": x.cached_tokens, "admitted": x.admitted,
        "wave": None if w is None else {"requests": w.requests, "prefill_steps": w.prefill_steps,
                                        "ttft_ms": w.ttft_s * 1e3, "tpot_ms": w.tpot_s * 1e3,
                                        "output_tokens_per_s": w.output_tokens_per_s},
        "breakdown": x.breakdown, "decode_step_ms": x.decode.total_s * 1e3,
        "links": {k: v.as_dict() for k, v in links(d).items()},
        "decode_bound": x.decode.bound, "allreduce_algorithm": x.decode.algorithm,
        "compute_format": d.compute_format, "weight_only": d.weight_only,
        "memory_per_gpu": {k: _q(v / GiB, "GiB") for k, v in (
            ("capacity", m.capacity), ("pool", m.pool), ("weights", m.weights), ("kv_cache", m.kv_cache),
            ("activations", m.activations), ("runtime", m.non_torch), ("free", m.free))},
        "kv_cache_size": d.kv_cache.as_dict(),
        "cost_per_hour": None if d.cost_per_hour is None else _q(d.cost_per_hour, "USD/hour"),
        "usd_per_mtok_output": x.usd_per_mtok_output,
        "usd_per_mtok_output_range": None if (c := x.usd_per_mtok_output_range) is None else list(c),
        "usd_per_mtok_input": usd_per_mtok_input(d, x),
        "assumptions": {
            "scenario": st.scenario.id, "memory_policy": st.memory_policy.id,
            "layout_policy": None if d.why == GIVEN else st.layout_policy.id,  # predict is given its layout
            "time_model": tm.id, "kv_precision": st.kv_precision.id,
            "hbm_fraction": tm.chip(st.chip.id).hbm, "kernel_us": tm.kernel_s * 1e6,
            "step_overhead_ms": tm.step_overhead_s * 1e3, "nvlink_hop_us": tm.nvlink_hop_s * 1e6,
            "gpu_memory_utilization": st.memory_policy.share(d.layout.tp, d.layout.pp),
            "mixed_steps": st.memory_policy.mixed_steps, "chunked_prefill": st.memory_policy.chunked_prefill,
            "moe_kernel": st.memory_policy.moe_kernel or None,
            # keyed by the weights' format, as the rates read the kernel's figures (not the format the matrix units
            # compute in: MXFP4 experts on an H100 compute in BF16)
            "moe_kernel_measured": (tm.chip(st.chip.id).measures_kernel(st.precision.tensor_format,
                                                                        st.memory_policy.moe_kernel)
                                    if st.memory_policy.moe_kernel and st.model.architecture.moe is not None else None),
            "gemm_kernel": st.memory_policy.gemm_kernel or None,
            # the multiples the engine's fused-MoE kernel pads an MXFP4 checkpoint's experts to in memory
            "expert_padding": None if st.expert_pad == (1, 1) else list(st.expert_pad),
            # the image encoder the engine builds beside the text model, held on each GPU (none: not built)
            "vision_encoder": (_q(vision_bytes(st.model.architecture, st.precision, d.layout.tp) / GiB, "GiB")
                               if st.vision else None),
            "price": None if st.price is None else {"usd_per_gpu_hour": st.price.usd_per_gpu_hour,
                                                     "gpus_per_unit": st.price.gpus_per_unit,
                                                     "provider": st.price.provider},
        },
    }


def _answer(pt: Point | None, served: Served | None) -> dict[str, Any] | None:
    """A configuration as `search` prints it: the point; with a rate, the plan that carries it at that rate
    (`Served`: its GPUs, its workers at their share of the rate, the tokens the rate asks for, the plan's cost per
    token), the point it scales nested as `configuration`."""
    if pt is None:
        return None
    if served is None:
        return pt.as_dict()
    plan, z = served.plan, served.prediction
    out: dict[str, Any] = {
        "mode": pt.mode, "layout": pt.layout.as_dict(), "layout_label": pt.layout.label, "rate": plan.rate,
        "replicas": plan.replicas if pt.mode == "aggregated" else None, "gpus": plan.rented_gpus,
        "gpus_used": plan.gpus, "rented_gpus": plan.rented_gpus, "usd_per_hour": plan.usd_per_hour,
        "concurrency": round(served.in_flight), "mean_in_flight": served.in_flight,
        "ttft_ms": served.ttft_s * 1e3, "tpot_ms": served.tpot_s * 1e3,
        "ttft_ms_range": [x * 1e3 for x in z.ttft_range], "tpot_ms_range": [x * 1e3 for x in z.tpot_range],
        "output_tokens_per_s": served.output_tokens_per_s, "output_tokens_per_s_per_gpu": served.per_gpu,
        "output_tokens_per_s_per_user": 1 / served.tpot_s, "usd_per_mtok_output": served.usd_per_mtok,
        "gpu_hours_per_mtok_output": served.gpu_hours_per_mtok, "regime": z.regime, "ttft_regime": z.ttft_regime,
        "speculation": None if pt.speculation is None else pt.speculation.as_dict(),
    }
    if isinstance(z, DisaggPrediction):
        assert pt.prefill_layout is not None  # noqa: S101 - a disaggregated point has one
        out.update({"prefill_layout": pt.prefill_layout.as_dict(), "decode_layout": pt.layout.as_dict(),
                    "prefill_workers": z.prefill_workers, "decode_workers": z.decode_workers,
                    "prefill_gpus": z.prefill_gpus, "decode_gpus": z.decode_gpus, "decode_batch": z.decode.batch,
                    "kv_transfer_ms": z.transfer_s * 1e3, "kv_link": z.link.name, "prefill_load": z.prefill_load})
    else:
        out.update({"gpus_per_replica": pt.gpus, "in_flight_per_replica": z.mean_in_flight})
    out["configuration"] = pt.as_dict()
    return out


def search_report(res: Search) -> dict[str, Any]:
    """The JSON `search` prints: the frontier, the cheapest point meeting the targets (`best`, with the plan for the
    rate) or why there is none; the configuration the layout policy recommends (`recommended`, the same shape) and
    how much cheaper the cheapest is (`cheapest_saving`, a share of the recommended's cost; 0 where they agree)."""
    st, t, held = res.setting, res.asked or res.targets, res.targets
    return {
        "model": st.model.id, "precision": st.precision.id, "accelerator": st.chip.id, "node": st.node.id,
        "memory_policy": st.memory_policy.id, "input_tokens": res.input_tokens, "output_tokens": res.output_tokens,
        "targets": {"ttft_ms": None if t.ttft_s is None else t.ttft_s * 1e3,
                    "tpot_ms": None if t.tpot_s is None else t.tpot_s * 1e3,
                    "meet": res.meet, "margins": {"ttft_ms": res.margins[0], "tpot_ms": res.margins[1]},
                    "predicted_at_most": {"ttft_ms": None if held.ttft_s is None else held.ttft_s * 1e3,
                                          "tpot_ms": None if held.tpot_s is None else held.tpot_s * 1e3}},
        "frontier": [p.as_dict() for p in res.frontier], "best": _answer(res.best, res.served),
        "recommended": _answer(res.recommended, res.recommended_served),
        "recommendation": {"layout_policy": st.layout_policy.id,
                           "disaggregated_min_saving": res.min_saving, "cheapest_saving": res.saving},
        "why": None if res.why is None else res.why.as_dict(),
        "evaluated": len(res.points), "layouts": [lay.as_dict() for lay in res.layouts], "pruned": res.pruned,
        "skipped": list(res.skipped),
    }


def _concurrency(text: str | None) -> int | str | None:
    """--concurrency as given: None, 'max', or a whole number (checked with the request)."""
    if text is None or text == "max":
        return text
    try:
        return int(text)
    except ValueError:
        raise RequestError(f"--concurrency must be a whole number or 'max', not {text!r}") from None


def _ids_known(eng: EngineCatalog, args: argparse.Namespace) -> None:
    """Refuse an id the catalog does not hold, naming its option (the request's own ids: `check_request`)."""
    for value, table, what in ((args.precision, eng.precisions, "precision"),
                               (args.kv_precision, eng.precisions, "KV precision"),
                               (getattr(args, "layout_policy", None), eng.layout_policies, "layout policy")):
        if value is not None and value not in table:
            raise UnknownId(f"unknown id {value!r} ({what}); known: {', '.join(sorted(table))}")
    kv_refused = None if args.kv_precision is None else kv_precision_refusal(eng, args.kv_precision)
    if kv_refused is not None:  # an invalid choice of the option, as argparse refuses one (exit status 2)
        raise UnknownId(f"--kv-precision {args.kv_precision!r}: {kv_refused}")
    draft = getattr(args, "draft", None)
    if draft is not None and draft not in ("mtp", "eagle") and draft not in eng.models:
        raise UnknownId(f"unknown draft {draft!r} (draft): mtp, eagle or a model id ({', '.join(sorted(eng.models))})")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        eng = _catalog(args)
        if args.scenario not in eng.scenarios:
            raise UnknownId(f"unknown id {args.scenario!r} (scenario); known: {', '.join(sorted(eng.scenarios))}")
        if args.memory_policy is not None and args.memory_policy not in eng.memory_policies:
            raise UnknownId(f"unknown id {args.memory_policy!r} (memory policy); known: "
                            f"{', '.join(sorted(eng.memory_policies))}")
        _ids_known(eng, args)
        sc = eng.scenarios[args.scenario]
        n_in = sc.input_tokens if args.input_tokens is None else args.input_tokens
        n_out = sc.output_tokens if args.output_tokens is None else args.output_tokens
        asked = None if args.command == "search" else _concurrency(args.concurrency)
        rate = getattr(args, "request_rate", None)
        if rate is not None and (asked is not None or not rate > 0 or rate == float("inf")):
            raise ValueError("--request-rate takes a positive number of requests a second, and no --concurrency")
        want_max = asked == "max"
        conc = sc.concurrency if asked is None else 1 if want_max else int(asked)
        req = check_request(eng, args.model, input_tokens=n_in, output_tokens=n_out, concurrency=conc,
                            node=args.node, accelerator=args.accelerator, scenario=args.scenario)
        if args.command == "search":
            return _search(eng, args, req)
        layout = None
        if args.command == "predict":
            layout = Layout(args.tp, args.pp, args.ep, args.dp)

        def make(k: int) -> Setting:
            return setting(eng, args.model, args.precision, args.scenario, node=req.node,
                           layout_policy=getattr(args, "layout_policy", None), concurrency=k,
                           context_tokens=n_in + n_out,
                           kv_precision=args.kv_precision, memory_policy=args.memory_policy,
                           moe_kernel=args.moe_kernel, text_only=args.text_only)

        d = deploy_admitting(make, conc, layout)
        if want_max:
            conc = d.max_concurrency
            if conc < 1:
                raise RefusedLayout(f"{d.layout.label}: not one sequence of {n_in + n_out} tokens fits")
            d = replace(deploy(make(conc), d.layout), why=d.why)  # the policy's layout, its reason kept
        spec = None if args.command != "predict" else speculation_of(eng, args.model, args.spec_tokens,
                                                                     args.acceptance, args.draft)
        out = report(d, conc, n_in, n_out, speculation=spec,
                     prefix_hit=args.prefix_hit if args.command == "predict" else 0.0,
                     prefix_groups=args.prefix_groups if args.command == "predict" else 1,
                     one_wave=args.command == "predict" and args.wave, rate=rate)
    except KeyError as exc:
        print(f"error: unknown id {exc}", file=sys.stderr)
        return 2
    except UnknownId as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (RefusedLayout, NoLayout, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except ArithmeticError as exc:  # no traceback: the catalog's checks should have refused what causes it
        print(f"error: the engine cannot compute this ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 1
    try:  # strict JSON: a figure that is not finite (a request rate too small to price) is refused, not printed
        text = json.dumps(out, indent=1, sort_keys=True, allow_nan=False)
    except ValueError:
        print("error: the engine cannot compute this (a figure is not finite: a request rate too small?)",
              file=sys.stderr)
        return 1
    print(text)
    return 0


def _search(eng: EngineCatalog, args: argparse.Namespace, req: Request) -> int:
    res = search(eng, args.model, args.precision, req.accelerator, req.input_tokens, req.output_tokens,
                 ttft_ms=args.ttft_ms, tpot_ms=args.tpot_ms, rate=args.rate, mode=args.mode,
                 speculation=speculation_of(eng, args.model, args.spec_tokens, args.acceptance, args.draft),
                 prefix_hit=args.prefix_hit, prefix_groups=args.prefix_groups, scenario=args.scenario,
                 kv_precision=args.kv_precision, node=args.node, memory_policy=args.memory_policy, meet=args.meet)
    print(json.dumps(search_report(res), indent=1, sort_keys=True))
    return 0 if res.best is not None else 1


if __name__ == "__main__":
    sys.exit(main())

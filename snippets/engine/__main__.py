"""The engine from the command line: `python -m snippets.engine predict|size ...` prints one JSON object.

    python -m snippets.engine predict --model llama-3.1-405b --precision fp8 --accelerator h100-sxm \\
        --tp 8 --pp 1 --input-tokens 1000 --output-tokens 500 --concurrency 16
    python -m snippets.engine size --model llama-3.1-70b --precision bf16 --accelerator a100-80gb-sxm

Ids are `data/` ids. `--concurrency max` serves as many sequences as the KV cache holds. `--kv-precision`
picks the KV cache's precision (default: the scenario's, or what the engine picks for the checkpoint). The
object holds the prediction with its band (`tpot_ms_range`, `ttft_ms_range`, `output_tokens_per_s_range`,
each [low, high], and `regime`), one decode step's seconds by kind of op (`breakdown`), and what the TP, EP
and PP groups' links give them (`links`: `name`, per-direction `gb_per_s`, `hop_us`). An unknown id,
a layout the engines refuse, or a model that does not fit exits non-zero with a one-line message.
`data/` is read through the build's loader (`--data DIR`), or an exported catalog (`--catalog FILE.json`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from snippets.engine.deployment import Deployment, NoLayout, RefusedLayout, deploy, setting
from snippets.engine.layout import Layout
from snippets.engine.serving import predict
from snippets.engine.specs import EngineCatalog
from snippets.engine.topology import links

GiB = 2**30


def _catalog(args: argparse.Namespace) -> EngineCatalog:
    if args.catalog:
        with open(args.catalog, encoding="utf-8") as f:
            return EngineCatalog.from_export(json.load(f))
    from snippets.data import load  # the build's validating loader (pydantic); the engine itself needs none
    from snippets.data.export import engine_catalog

    return engine_catalog(load(args.data))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m snippets.engine", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("predict", "size"):
        s = sub.add_parser(name)
        s.add_argument("--model", required=True)
        s.add_argument("--precision", required=True)
        s.add_argument("--accelerator", help="an accelerator id (its first node is used)")
        s.add_argument("--node", help="a node id, instead of --accelerator")
        s.add_argument("--scenario", default="reference")
        s.add_argument("--input-tokens", type=int)
        s.add_argument("--output-tokens", type=int)
        s.add_argument("--concurrency", default=None, help="sequences at once, or 'max'")
        s.add_argument("--layout-policy", help="a layout policy id (size)")
        s.add_argument("--kv-precision", help="a precision id for the KV cache (default: the scenario's)")
        s.add_argument("--data", help="the data directory (default: the repository's data/)")
        s.add_argument("--catalog", help="an exported catalog (JSON) instead of data/")
        if name == "predict":
            s.add_argument("--tp", type=int, required=True)
            s.add_argument("--pp", type=int, default=1)
            s.add_argument("--ep", type=int, default=1)
            s.add_argument("--dp", type=int, default=1)
    return p


def _q(value: float, unit: str) -> dict[str, Any]:
    return {"value": value, "unit": unit}


def report(d: Deployment, concurrency: int, n_in: int, n_out: int) -> dict[str, Any]:
    """The JSON the command prints: the prediction, the deployment and every assumption behind them."""
    x = predict(d, concurrency, n_in, n_out)
    st, m, tm = d.setting, d.memory, d.setting.time_model

    def ms(rng: tuple[float, float]) -> list[float]:
        return [rng[0] * 1e3, rng[1] * 1e3]

    return {
        "model": st.model.id, "precision": st.precision.id, "accelerator": st.chip.id, "node": st.node.id,
        "layout": d.layout.as_dict(), "layout_label": d.layout.label, "why": d.why,
        "gpus": d.gpus, "nodes": d.nodes, "gpus_rented": d.gpus_rented,
        "input_tokens": n_in, "output_tokens": n_out, "concurrency": concurrency,
        "max_concurrency": d.max_concurrency, "in_flight": x.in_flight,
        "ttft_ms": x.ttft_s * 1e3, "tpot_ms": x.tpot_s * 1e3,
        "ttft_ms_range": ms(x.ttft_range), "tpot_ms_range": ms(x.tpot_range),
        "output_tokens_per_s": x.output_tokens_per_s, "output_tokens_per_s_range": list(x.throughput_range),
        "output_tokens_per_s_per_gpu": x.output_tokens_per_s_per_gpu,
        "regime": x.regime, "ttft_regime": x.ttft_regime,
        "breakdown": x.breakdown,
        "links": {k: v.as_dict() for k, v in links(d).items()},
        "decode_bound": x.decode.bound, "allreduce_algorithm": x.decode.algorithm,
        "compute_format": d.compute_format, "weight_only": d.weight_only,
        "memory_per_gpu": {k: _q(v / GiB, "GiB") for k, v in (
            ("capacity", m.capacity), ("pool", m.pool), ("weights", m.weights), ("kv_cache", m.kv_cache),
            ("activations", m.activations), ("runtime", m.non_torch), ("free", m.free))},
        "cost_per_hour": None if d.cost_per_hour is None else _q(d.cost_per_hour, "USD/hour"),
        "usd_per_mtok_output": x.usd_per_mtok_output, "usd_per_mtok_input": x.usd_per_mtok_input,
        "assumptions": {
            "scenario": st.scenario.id, "memory_policy": st.memory_policy.id, "layout_policy": st.layout_policy.id,
            "time_model": tm.id, "kv_precision": st.kv_precision.id,
            "hbm_fraction": tm.chip(st.chip.id).hbm, "kernel_us": tm.kernel_s * 1e6,
            "step_overhead_ms": tm.step_overhead_s * 1e3, "nvlink_hop_us": tm.nvlink_hop_s * 1e6,
            "gpu_memory_utilization": st.memory_policy.utilization,
            "price": None if st.price is None else {"usd_per_gpu_hour": st.price.usd_per_gpu_hour,
                                                     "gpus_per_unit": st.price.gpus_per_unit,
                                                     "provider": st.price.provider},
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        eng = _catalog(args)
        sc = eng.scenarios[args.scenario]
        n_in = args.input_tokens or sc.input_tokens
        n_out = args.output_tokens or sc.output_tokens
        want_max = args.concurrency == "max"
        conc = 1 if want_max or args.concurrency is None else int(args.concurrency)
        if args.concurrency is None:
            conc = sc.concurrency
        layout = None
        if args.command == "predict":
            layout = Layout(args.tp, args.pp, args.ep, args.dp)
        st = setting(eng, args.model, args.precision, args.scenario, node=args.node, accelerator=args.accelerator,
                     layout_policy=args.layout_policy, concurrency=conc, context_tokens=n_in + n_out,
                     kv_precision=args.kv_precision)
        d = deploy(st, layout)
        if want_max:
            conc = d.max_concurrency
            if conc < 1:
                raise RefusedLayout(f"{d.layout.label}: not one sequence of {n_in + n_out} tokens fits")
            d = deploy(setting(eng, args.model, args.precision, args.scenario, node=args.node,
                               accelerator=args.accelerator, layout_policy=args.layout_policy, concurrency=conc,
                               context_tokens=n_in + n_out, kv_precision=args.kv_precision), d.layout)
        out = report(d, conc, n_in, n_out)
    except KeyError as exc:
        print(f"error: unknown id {exc}", file=sys.stderr)
        return 2
    except (RefusedLayout, NoLayout, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(out, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

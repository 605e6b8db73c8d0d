"""Cross-references between the files of data/: ids that must exist, prices that must be used, and the like."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from snippets.data.schema import (
    ChipCollectives,
    ChipNccl,
    Fabric,
    LayoutPolicy,
    MemoryPolicy,
    Network,
    Node,
    NVLink,
    NVSwitch,
    PCIe,
    TimeModel,
)
from snippets.data.schema.efficiencies import CHIP_EFFICIENCIES


def _check_references(cat: dict[str, dict[str, Any]], problems: list[str]) -> None:
    ics = cat["interconnects"]

    def ref(file: str, entry: str, field: str, target: str, *kinds: type) -> None:
        found = ics.get(target)
        if found is None:
            problems.append(f"data/{file}.yaml: entry '{entry}': field '{field}': unknown interconnect {target!r}")
        elif not isinstance(found, kinds):
            expected = " or ".join(f"a {k.__name__.lower()}" for k in kinds)
            problems.append(
                f"data/{file}.yaml: entry '{entry}': field '{field}': {target!r} is a "
                f"{found.kind}, expected {expected}"
            )

    for acc_id, acc in cat["accelerators"].items():
        if acc.host_link is not None:
            ref("accelerators", acc_id, "host_link", acc.host_link, PCIe)
        if acc.scale_up is not None:
            ref("accelerators", acc_id, "scale_up.fabric", acc.scale_up.fabric, NVLink, Fabric)
            link = ics.get(acc.scale_up.fabric)
            if isinstance(link, NVLink | Fabric) and link.per_link is not None:
                links = acc.scale_up.links or (link.links_per_gpu if isinstance(link, NVLink) else None)
                if links is None:
                    problems.append(
                        f"data/accelerators.yaml: entry '{acc_id}': field 'scale_up.links': required, "
                        f"{acc.scale_up.fabric} states a per-link rate"
                    )
                    continue
                from snippets.data.bandwidth import nvlink_per_gpu  # local: bandwidth imports this module

                derived = nvlink_per_gpu(links, link.per_link.bandwidth)
                stated = acc.scale_up.bandwidth.bandwidth
                one, two = derived.one_way().bytes_per_s, stated.one_way().bytes_per_s
                if abs(one - two) > 1e-6 * two:
                    problems.append(
                        f"data/accelerators.yaml: entry '{acc_id}': field 'scale_up.bandwidth': datasheet figure "
                        f"({two / 1e9:g} GB/s per direction) disagrees with {acc.scale_up.fabric}'s links x "
                        f"per-link rate ({links} x {link.per_link.bandwidth.one_way().bytes_per_s / 1e9:g} = "
                        f"{one / 1e9:g} GB/s per direction)"
                    )
    for ic_id, ic in ics.items():
        if isinstance(ic, NVSwitch):
            ref("interconnects", ic_id, "fabric", ic.fabric, NVLink)
        if isinstance(ic, Node):
            if ic.accelerator not in cat["accelerators"]:
                problems.append(
                    f"data/interconnects.yaml: entry '{ic_id}': field 'accelerator': unknown accelerator {ic.accelerator!r}"
                )
            acc = cat["accelerators"].get(ic.accelerator)
            packaged = acc is not None and acc.scale_up is not None and acc.scale_up.package is not None
            if acc is not None and (ic.fabric_shape == "paired_mesh") != packaged:
                problems.append(
                    f"data/interconnects.yaml: entry '{ic_id}': field 'fabric_shape': a paired mesh exactly when its "
                    f"accelerator ({ic.accelerator}) states a package link (scale_up.package) to its twin"
                )
            if ic.switch is not None:
                ref("interconnects", ic_id, "switch", ic.switch, NVSwitch)
            if ic.nic is not None:
                ref("interconnects", ic_id, "nic", ic.nic, Network)
    engines = {pol.engine for pol in cat.get("policies", {}).values() if getattr(pol, "kind", "") == "memory"}
    for prec_id, prec in cat["precisions"].items():
        for i, gap in enumerate(prec.kernel_gaps):
            where = f"data/precisions.yaml: entry '{prec_id}': field 'kernel_gaps.{i}"
            if gap.message is None and (prec.tensor_format != "int8" or gap.sm is None):
                # the engine words vLLM's error for a missing INT8 kernel from the SM version; any other gap quotes its
                # engine's message
                problems.append(f"{where}': a kernel gap of a {prec.tensor_format} format without the engine's message, "
                                "whose error the engine does not know (it words vLLM's for INT8 only, from sm)")
            if gap.message is not None and gap.sm is not None:
                problems.append(f"{where}': give the engine's message or the SM version it is worded from, not both")
            problems += [f"{where}.accelerators': unknown accelerator {a!r}" for a in sorted(gap.accelerators)
                         if a not in cat["accelerators"]]
            if engines and gap.engine not in engines:
                problems.append(f"{where}.engine': no memory policy in data/policies.yaml runs engine {gap.engine!r} "
                                f"(engines: {', '.join(sorted(engines))})")
    used: dict[str, list[str]] = {}
    for price_id, price in cat.get("prices", {}).items():
        if price.accelerator not in cat["accelerators"]:
            problems.append(
                f"data/prices.yaml: entry '{price_id}': field 'accelerator': unknown accelerator {price.accelerator!r}"
            )
        used.setdefault(price.accelerator, [])
        if price.site_uses:
            used[price.accelerator].append(price_id)
    pols = cat.get("policies", {})
    for sc_id, sc in cat.get("scenarios", {}).items():
        where = f"data/scenarios.yaml: entry '{sc_id}'"
        if not isinstance(ics.get(sc.node), Node):
            problems.append(f"{where}: field 'node': {sc.node!r} is not a node in interconnects.yaml")
        if not isinstance(pols.get(sc.memory_policy), MemoryPolicy):
            problems.append(f"{where}: field 'memory_policy': {sc.memory_policy!r} is not a memory policy")
        if not isinstance(pols.get(sc.layout_policy), LayoutPolicy):
            problems.append(f"{where}: field 'layout_policy': {sc.layout_policy!r} is not a layout policy")
        if not isinstance(pols.get(sc.time_model), TimeModel):
            problems.append(f"{where}: field 'time_model': {sc.time_model!r} is not a time model")
        if sc.kv_precision not in cat["precisions"]:
            problems.append(f"{where}: field 'kv_precision': unknown precision {sc.kv_precision!r}")
        elif not cat["precisions"][sc.kv_precision].kv_cache_dtype:
            problems.append(f"{where}: field 'kv_precision': {sc.kv_precision!r} is a weight format, not a "
                            "KV cache dtype (it has no kv_cache_dtype in data/precisions.yaml)")
    lats, effs = cat.get("latencies", {}), cat.get("efficiencies", {})
    for tm_id, tm in pols.items():
        if not isinstance(tm, TimeModel):
            continue
        where = f"data/policies.yaml: entry '{tm_id}'"
        for field, entries, kind, attr in (("link_efficiency", effs, "nvlink", "resource"),
                                           ("hop_latency_nvlink", lats, "nvlink", "path"),
                                           ("hop_latency_pcie", lats, "pcie", "path"),
                                           ("hop_latency_network", lats, "network", "path"),
                                           ("kernel_launch", lats, "kernel", "path"),
                                           ("host_dispatch", lats, "kernel", "path"),
                                           ("custom_allreduce_points", lats, "collective", "path"),
                                           ("nccl_allreduce_points", lats, "collective", "path"),
                                           ("alltoall_points", lats, "collective", "path")):
            target = entries.get(getattr(tm, field))
            if target is None or getattr(target, attr) != kind:
                problems.append(f"{where}: field '{field}': {getattr(tm, field)!r} is not a {kind} entry")
        for field in ("multimem_points", "symm_two_shot_points", "two_stage_points"):
            lid = getattr(tm, field)
            if lid is not None and getattr(lats.get(lid), "path", None) != "collective":
                problems.append(f"{where}: field '{field}': {lid!r} is not a collective entry")
        if (tm.multimem_points is None) != (tm.collectives.multimem is None) or \
                (tm.symm_two_shot_points is None) != (tm.collectives.symm_two_shot is None):
            problems.append(f"{where}: field 'collectives': give multimem and symm_two_shot with their points, "
                            "or neither")
        if tm.allreduce_timed_under is not None and not isinstance(pols.get(tm.allreduce_timed_under), MemoryPolicy):
            problems.append(f"{where}: field 'allreduce_timed_under': {tm.allreduce_timed_under!r} is not a memory "
                            "policy")
        for list_name, entries_of in (("chip_collectives", tm.chip_collectives), ("chip_nccl", tm.chip_nccl)):
            _check_chip_timings(where, list_name, entries_of, lats, cat["accelerators"], problems)
        engines = {p.engine for p in pols.values() if isinstance(p, MemoryPolicy)}
        for i, cc in enumerate(tm.chip_collectives):  # an engine no memory policy names would price no step
            if cc.engine not in engines:
                problems.append(f"{where}: field 'chip_collectives[{i}].engine': {cc.engine!r} is the engine of no "
                                f"memory policy ({', '.join(sorted(engines))})")
    for l_id, lat in lats.items():
        if lat.accelerator is not None and lat.accelerator not in cat["accelerators"]:
            problems.append(f"data/latencies.yaml: entry '{l_id}': field 'accelerator': unknown accelerator "
                            f"{lat.accelerator!r}")
    for p_id, pred in cat.get("predictors", {}).items():
        if pred.accelerator is not None and pred.accelerator not in cat["accelerators"]:
            problems.append(f"data/predictors.yaml: entry '{p_id}': field 'accelerator': unknown accelerator "
                            f"{pred.accelerator!r}")
    for e_id, eff in effs.items():
        if eff.accelerator not in cat["accelerators"]:
            problems.append(f"data/efficiencies.yaml: entry '{e_id}': field 'accelerator': unknown accelerator "
                            f"{eff.accelerator!r}")
    seen: dict[tuple[str, str, str | None, str | None, str | None], str] = {}
    for e_id, eff in effs.items():  # one figure per chip, resource, format (and MoE kernel, or KV read's engine)
        if eff.resource not in CHIP_EFFICIENCIES:
            continue
        key = (eff.accelerator, eff.resource, eff.tensor_format if eff.resource != "hbm" else None,
               getattr(eff, "kernel", None), getattr(eff, "engine", None))
        if key in seen:
            problems.append(f"data/efficiencies.yaml: entry '{e_id}': the time model already reads {seen[key]!r} "
                            f"for {key[0]}'s {key[1]}")
        seen[key] = e_id
    _check_measurements(cat, problems)
    _check_first_waves(cat, problems)
    _check_layouts(cat, problems)
    _check_physics(cat, problems)
    for pol_id, pol in pols.items():
        if isinstance(pol, MemoryPolicy):
            for i, t in enumerate(pol.allreduce_tables):
                for acc in t.accelerators:
                    if acc not in cat["accelerators"]:
                        problems.append(f"data/policies.yaml: entry '{pol_id}': field 'allreduce_tables[{i}]."
                                        f"accelerators': unknown accelerator {acc!r}")
            for i, e in enumerate(pol.mxfp4_experts):
                vendors = {cat["accelerators"][a].vendor for a in e.accelerators if a in cat["accelerators"]}
                problems += [f"data/policies.yaml: entry '{pol_id}': field 'mxfp4_experts[{i}].accelerators': "
                             f"unknown accelerator {a!r}" for a in e.accelerators if a not in cat["accelerators"]]
                if vendors - {e.vendor}:
                    problems.append(f"data/policies.yaml: entry '{pol_id}': field 'mxfp4_experts[{i}].accelerators': "
                                    f"a chip of {', '.join(sorted(vendors - {e.vendor}))} under vendor {e.vendor}")
            known = {c.vendor for c in cat["accelerators"].values()}
            problems += [f"data/policies.yaml: entry '{pol_id}': field 'vision_encoder_vendors': unknown vendor {v!r}"
                         for v in sorted(pol.vision_encoder_vendors - known)]
            if not pol.engine:
                problems.append(f"data/policies.yaml: entry '{pol_id}': field 'engine': name the serving engine whose "
                                "budget this is (vLLM, SGLang, TensorRT-LLM)")
            for acc in sorted(pol.large_device_excludes):
                if acc not in cat["accelerators"]:
                    problems.append(f"data/policies.yaml: entry '{pol_id}': field 'large_device_excludes': "
                                    f"unknown accelerator {acc!r}")
    for model_id, model in cat.get("models", {}).items():
        for field, ids in (("dtype", [model.dtype]), ("checkpoint_precision", [model.checkpoint_precision]),
                           ("other_checkpoint_precisions", model.other_checkpoint_precisions)):
            for pid in ids:
                if pid is not None and pid not in cat["precisions"]:
                    problems.append(f"data/models.yaml: entry '{model_id}': field '{field}': unknown precision {pid!r}")
        for pid in sorted(model.keeps_16bit):
            prec = cat["precisions"].get(pid)
            if prec is None:
                problems.append(f"data/models.yaml: entry '{model_id}': field 'keeps_16bit': unknown precision {pid!r}")
            elif prec.bits_per_param >= 16:
                problems.append(f"data/models.yaml: entry '{model_id}': field 'keeps_16bit': {pid!r} is not narrower "
                                "than 16 bits, so nothing in it is kept at 16 bits")
    for dep_id, dep in cat.get("deployments", {}).items():
        where = f"data/deployments.yaml: entry '{dep_id}'"
        for field, table in (("model", "models"), ("precision", "precisions"), ("accelerator", "accelerators")):
            if getattr(dep, field) not in cat[table]:
                problems.append(f"{where}: field '{field}': unknown {field} {getattr(dep, field)!r}")
    for file, table in (("deployments", "deployments"), ("measurements", "measurements")):
        for row_id, row in cat.get(table, {}).items():
            prec = cat["precisions"].get(row.precision)
            if row.keeps_16bit is not None and prec is not None and prec.bits_per_param >= 16:
                problems.append(f"data/{file}.yaml: entry '{row_id}': field 'keeps_16bit': {row.precision!r} is not "
                                "narrower than 16 bits, so nothing in it is kept at 16 bits")
    for acc_id, chosen in used.items():
        if len(chosen) != 1:
            problems.append(
                f"data/prices.yaml: accelerator '{acc_id}': field 'site_uses': exactly one price must be marked, "
                f"found {len(chosen)} ({', '.join(chosen) or 'none'})"
            )
            continue
        marked = cat["prices"][chosen[0]].price.value
        cheaper = sorted(p_id for p_id, p in cat["prices"].items()
                         if p.accelerator == acc_id and p.kind == "on-demand" and p.price.value < marked)
        if cheaper:
            problems.append(
                f"data/prices.yaml: entry '{chosen[0]}': field 'site_uses': the site uses the lowest on-demand "
                f"price recorded for an accelerator, and {', '.join(cheaper)} is lower"
            )


def _check_measurements(cat: dict[str, dict[str, Any]], problems: list[str]) -> None:
    """Every id a measurement names exists; expert parallelism only for a mixture of experts; a baseline is
    another row of the same model on the same accelerator, served plainly; a row's role matches its sources."""
    meas = cat.get("measurements", {})
    for m_id, m in meas.items():
        where = f"data/measurements.yaml: entry '{m_id}'"
        for field, table in (("model", "models"), ("precision", "precisions"), ("kv_precision", "precisions"),
                             ("accelerator", "accelerators")):
            if getattr(m, field) not in cat[table]:
                problems.append(f"{where}: field '{field}': unknown {field} {getattr(m, field)!r}")
        kv = cat["precisions"].get(m.kv_precision)
        if kv is not None and not kv.kv_cache_dtype:
            problems.append(f"{where}: field 'kv_precision': {m.kv_precision!r} is a weight format, not a KV "
                            "cache dtype (it has no kv_cache_dtype in data/precisions.yaml)")
        model = cat["models"].get(m.model)
        dis = m.mode.disaggregation
        layouts = [("layout", m.layout)]
        if dis is not None:
            layouts += [("mode.disaggregation.prefill.layout", dis.prefill and dis.prefill.layout),
                        ("mode.disaggregation.decode.layout", dis.decode and dis.decode.layout)]
        for field, lay in layouts:
            if lay is not None and lay.ep > 1 and model is not None and model.architecture.moe is None:
                problems.append(f"{where}: field '{field}.ep': EP {lay.ep} on {m.model}, which has no experts")
        lim = m.engine_limits
        if lim is not None and getattr(cat.get("policies", {}).get(lim.memory_policy), "kind", None) != "memory":
            problems.append(f"{where}: field 'engine_limits.memory_policy': {lim.memory_policy!r} is not a memory "
                            "policy of policies.yaml")
        pol = cat.get("policies", {}).get(lim.memory_policy) if lim is not None else None
        if m.engine.split()[0] == "SGLang" and getattr(pol, "engine", None) != "SGLang" and m.mixed_steps is None:
            problems.append(f"{where}: field 'mixed_steps': an SGLang row budgeted by another engine's memory policy "
                            "says whether its steps mix prompts with decoding (SGLang's default: they do not)")
        if m.baseline is not None:
            base = meas.get(m.baseline)
            if base is None or m.baseline == m_id:
                problems.append(f"{where}: field 'baseline': {m.baseline!r} is not another entry of measurements.yaml")
            elif (base.model, base.accelerator) != (m.model, m.accelerator) or not base.mode.plain:
                problems.append(f"{where}: field 'baseline': {m.baseline!r} is not the same model on the same "
                                "accelerator served without the row's mode")
        if (m.role == "calibration") != m.sourced_from_permitted:
            problems.append(
                f"{where}: field 'role': {m.role} rows come "
                + ("only from the sources issue 24 names for fitting (NIM LLM benchmarking 1.0.0, InferenceX, "
                   "Azure AI-benchmarking-guide)" if m.role == "calibration"
                   else "from other publications than the fitting sources")
            )


def _check_first_waves(cat: dict[str, dict[str, Any]], problems: list[str]) -> None:
    """A recorded first wave (`definitions.burst`) against the source's P99 TTFT (`ttft_p99_ms`), where it prints one.

    Of n requests, the P99 (numpy's, interpolated) is at least the m-th slowest TTFT, m = n - floor(0.99 (n - 1)). Had
    the client's first c requests reached the engine together, the m-th slowest of them would have waited for c - m + 1
    prompts' prefill, whatever order the engine took them in, and no prefill is faster than its matrix work at the GPUs'
    dense peak: 2 FLOPs per active parameter of the blocks (`params.block_params`) and prompt token, prompts of the row's
    mean length (the client draws lengths independently of that order), attention left out. A P99 below that floor
    says the first requests did not queue together, whatever the harness's code suggests: the row then says so
    (`burst.queued` false; the SGLang cookbook's Qwen3-235B run of 8,000-token prompts at 64 in flight), and its
    first wave is not checked or priced."""
    from snippets.engine.params import block_params
    from snippets.engine.specs import compute_format

    for m_id, m in cat.get("measurements", {}).items():
        burst, p99, c, n_in, lay = m.definitions.burst, m.ttft_p99_ms, m.concurrency, m.input_tokens, m.layout
        model, prec, acc = (cat["models"].get(m.model), cat["precisions"].get(m.precision),
                            cat["accelerators"].get(m.accelerator))
        if burst is None or not burst.queued or p99 is None or c is None or n_in is None or lay is None \
                or model is None or prec is None or acc is None:
            continue
        n = burst.prompts or burst.prompts_per_request * c
        rank = n - 99 * (n - 1) // 100  # numpy's P99 lies between sorted[99 (n - 1) // 100] and the next
        waited = c - rank + 1
        dense = {f: t.dense.flops_per_s for f, t in acc.tensor.items() if t.dense is not None}
        fmt = compute_format(dense, prec.tensor_format)
        if waited < 1 or fmt not in dense:
            continue
        dis = m.mode.disaggregation  # a disaggregated run's prompts go to its prefill pool
        pool = None if dis is None else dis.prefill
        if dis is not None and pool is None:
            continue
        gpus = pool.gpus if pool is not None else lay.tp * lay.pp * lay.dp
        least = waited * n_in * 2 * block_params(model.architecture, active=True) / (gpus * dense[fmt])
        if p99 < least * 1e3:
            problems.append(
                f"data/measurements.yaml: entry '{m_id}': field 'definitions.burst': the P99 of {n} requests is at least "
                f"their {_ordinal(rank)} slowest TTFT; had the first {c} reached the engine together, the {_ordinal(rank)} "
                f"slowest of those would have waited for the prefill of {waited} prompts of {n_in:,} tokens, at least "
                f"{least * 1e3:,.0f} ms of matrix work at the {gpus} GPUs' dense {fmt.upper()} peak, yet the source's "
                f"P99 TTFT (ttft_p99_ms) is {p99:,.0f} ms: that wave did not queue (burst.queued: false, the note "
                "saying why), or a figure is wrong")


def _ordinal(k: int) -> str:
    """1st, 2nd, 3rd, 4th ... 11th, 12th, 13th, 21st."""
    last = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{last}"


def _check_layouts(cat: dict[str, dict[str, Any]], problems: list[str]) -> None:
    """Each published layout of deployments.yaml and measurements.yaml against the engine's rules
    (`snippets.engine.layout.layout_problems`: TP against the heads, PP against the layers, EP against the experts,
    block quantization), and its `nodes` against its GPUs: at least the GPUs over the largest node of its
    accelerator, at most one node per GPU, the same number of GPUs on each (engines launch one group per node).
    A page that sizes the entry would otherwise refuse it without naming the file or the entry."""
    import math

    from snippets.engine.layout import Layout, layout_problems

    node_gpus: dict[str, int] = {}
    for node in cat["interconnects"].values():
        if isinstance(node, Node):
            node_gpus[node.accelerator] = max(node_gpus.get(node.accelerator, 0), node.gpus)

    def check(file: str, entry: str, model_id: str, precision_id: str, accelerator: str, field: str,
              lay: Any, gpus: int | None, nodes: int | None) -> None:
        where = f"data/{file}.yaml: entry '{entry}'"
        model, prec = cat["models"].get(model_id), cat["precisions"].get(precision_id)
        if lay is not None and model is not None:
            try:  # a precision entry is the engine's record (`PrecisionSpec`)
                found = layout_problems(model.architecture, Layout(lay.tp, lay.pp, lay.ep, lay.dp), prec)
            except (ValueError, TypeError, ZeroDivisionError) as exc:
                found = [f"the engine cannot read it: {exc}"]
            if found:
                problems.append(f"{where}: field '{field}': TP{lay.tp} PP{lay.pp} EP{lay.ep} DP{lay.dp} is not a "
                                f"layout the engines accept for {model_id}: {'; '.join(found)}")
        if gpus is None and lay is not None:
            gpus = lay.tp * lay.pp * lay.dp
        per_node = node_gpus.get(accelerator)
        if nodes is not None and gpus is not None:
            least = math.ceil(gpus / per_node) if per_node else 1
            if not least <= nodes <= gpus or gpus % nodes:
                problems.append(f"{where}: field 'nodes': {nodes} nodes for {gpus} GPUs; the largest node of "
                                f"{accelerator} in interconnects.yaml holds {per_node or '?'}, so it takes from "
                                f"{least} to {gpus} nodes, each with the same number of GPUs")

    for d_id, dep in cat.get("deployments", {}).items():
        check("deployments", d_id, dep.model, dep.precision, dep.accelerator, "layout", dep.layout, dep.gpus, dep.nodes)
    for m_id, m in cat.get("measurements", {}).items():
        check("measurements", m_id, m.model, m.precision, m.accelerator, "layout", m.layout, m.gpus, m.nodes)
        dis = m.mode.disaggregation
        for part in ("prefill", "decode"):
            pool = None if dis is None else getattr(dis, part)
            if pool is not None and pool.layout is not None:
                check("measurements", m_id, m.model, m.precision, m.accelerator,
                      f"mode.disaggregation.{part}.layout", pool.layout, None, None)


# ------------------------------------------------------------------------------------------------ physics
# Each field of an accelerator has its own plausible range (snippets/data/quantities.py); these are the checks a
# reviewer makes across fields, where one figure typed x10 or /10 stays inside its own range.

BANDWIDTH_PER_BYTE = (5.0, 100.0)
"""Memory bandwidth over memory capacity, per second (how many times a second the chip can read all its memory).
One memory device sets it: bandwidth per stack (or chip) over capacity per stack. HBM2 stacks of 4-8 GB at
256-307 GB/s give 38-77; HBM2e 16 GB at 410-460 GB/s, 26-29; HBM3 16-24 GB at 819 GB/s, 34-51; HBM3e 24-36 GB at
1.0-1.2 TB/s, 27-50; GDDR6 2 GB devices at 64-80 GB/s give 32-40, clamshell boards half that. Below 5 a chip
needs over 200 ms to read its memory once (LPDDR host memory, not an accelerator's); above 100 no memory device
ever shipped (first-generation HBM's 1 GB stacks at 128 GB/s reached 128). Data: 12.5 (L4) to 51 (TPU v5e)."""

STACK_PEAK = {"HBM2": 307e9, "HBM2e": 461e9, "HBM3": 819e9, "HBM3e": 1.23e12, "HBM4": 2.05e12, "HBM": 1.23e12}
"""The fastest one stack of each HBM generation runs, bytes per second: its widest interface times its fastest
pin rate in the JEDEC standard or a vendor's fastest part (1,024 bits at 2.4, 3.6, 6.4 and 9.6 Gb/s; HBM4 2,048
bits at 8 Gb/s); "HBM" unnamed is read as HBM3e, the fastest generation shipped in data/."""
MAX_STACKS = 12
"""No package carries more than 12 HBM stacks (the largest in data/ carry 8)."""
GDDR_PEAK = {"GDDR6": 24e9 * 512 / 8, "GDDR6X": 24e9 * 512 / 8, "GDDR7": 32e9 * 512 / 8}
"""A GDDR board's peak: the widest bus shipped (512 bits) at the fastest pin rate of its generation (24 and 32 Gb/s)."""

DENSE_16BIT_PER_WATT = (0.1e12, 5e12)
"""Dense tensor FLOP/s per watt of board power, for a format scaled to 16-bit work (x bits / 16). A 16-bit fused
multiply-add at 4-7 nm costs about 0.2 pJ a FLOP in the multiplier array alone: 5 TFLOP/s per watt is the whole
board spent on arithmetic, nothing on memory, I/O or leakage. V100 (12 nm) states 0.42, data/'s best 2.3 (MI350X):
below 0.1 or above 5 the figure or the power is a unit or a digit off, or a sparse figure typed as dense."""
FORMAT_BITS = {"fp32": 32, "tf32": 19, "bf16": 16, "fp16": 16, "fp8": 8, "fp6": 6, "fp4": 4, "int8": 8, "int4": 4}
"""Bits of each tensor format (TF32: 1 sign, 8 exponent and 10 mantissa bits)."""


SCALE_UP_PER_HBM = (0.02, 1.0)
"""A GPU's scale-up bandwidth, one direction, over its HBM bandwidth. Data: 0.067 (MI350X, 538 GB/s over 8 TB/s) to
0.244 (TPU v5e and v6e); H100 0.134, B200 0.117. Above 1 a GPU would send to a peer faster than it reads its own
memory, which is where what it sends comes from (no shipped fabric does); below 0.02 the fabric would be slower
than a PCIe 4 x16 slot beside a 1.6 TB/s memory, and no scale-up fabric sold is. A per-GPU total typed x10 lands
above 1 for every chip in data/."""
NIC_PER_SCALE_UP = (0.003, 1.0)
"""A node's network bandwidth per GPU (NICs per GPU x one port), one direction, over the GPU's scale-up bandwidth.
Data: 0.010 (a TPU v5p VM's data-centre network beside its ICI; AWS p3dn's 100 Gb/s shared by 8 V100s) to 0.143
(HLS-Gaudi3's six 800 Gb/s ports); HGX H100 0.111. At 1 or above the node's fabric would carry no more than its
network, and there would be no reason to build the node; below 0.003 a GPU's share of the network would be a third
of the thinnest in data/. A port typed x10 lands above 1 for every node in data/."""


def _check_fabrics(cat: dict[str, dict[str, Any]], problems: list[str]) -> None:
    """A GPU's scale-up fabric against its memory, and a node's network against its GPUs' fabric."""
    scale_up: dict[str, float] = {}
    for acc_id, acc in cat["accelerators"].items():
        if acc.scale_up is None:
            continue
        up = scale_up[acc_id] = acc.scale_up.bandwidth.bandwidth.one_way().bytes_per_s
        hbm = acc.memory_bandwidth.bandwidth.bytes_per_s
        low, high = SCALE_UP_PER_HBM
        if not low <= up / hbm <= high:
            problems.append(f"data/accelerators.yaml: entry '{acc_id}': fields 'scale_up.bandwidth' and "
                            f"'memory_bandwidth': {up / 1e9:,.0f} GB/s each way over {hbm / 1e12:,.2f} TB/s of memory is "
                            f"{up / hbm:.3f}; a GPU's fabric carries {low:g} to {high:g} of its memory bandwidth "
                            "(snippets/data/checks.py, SCALE_UP_PER_HBM): check the unit, the digits and the direction")
    for node_id, node in cat["interconnects"].items():
        if not isinstance(node, Node) or node.nic is None or node.nics_per_gpu is None:
            continue
        port = cat["interconnects"].get(node.nic)
        up = scale_up.get(node.accelerator)
        if not isinstance(port, Network) or up is None:
            continue
        nic = port.port.bandwidth.one_way().bytes_per_s * node.nics_per_gpu
        low, high = NIC_PER_SCALE_UP
        if not low <= nic / up < high:
            problems.append(f"data/interconnects.yaml: entry '{node_id}': fields 'nic' and 'nics_per_gpu': "
                            f"{nic / 1e9:,.1f} GB/s of network each way per GPU over {up / 1e9:,.0f} GB/s of "
                            f"{node.accelerator}'s scale-up fabric is {nic / up:.3f}; a node's network carries {low:g} "
                            f"to under {high:g} of it (snippets/data/checks.py, NIC_PER_SCALE_UP): check the unit and "
                            "the digits")


def _check_physics(cat: dict[str, dict[str, Any]], problems: list[str]) -> None:
    """An accelerator's figures against each other and against its memory generation (the module's constants)."""
    _check_fabrics(cat, problems)
    for acc_id, acc in cat["accelerators"].items():
        where = f"data/accelerators.yaml: entry '{acc_id}'"
        bw, cap = acc.memory_bandwidth.bandwidth.bytes_per_s, acc.memory.bytes
        low, high = BANDWIDTH_PER_BYTE
        if not low <= bw / cap <= high:
            problems.append(f"{where}: fields 'memory_bandwidth' and 'memory': {bw / 1e9:,.0f} GB/s over {cap / 1e9:,.0f} GB "
                            f"reads the memory {bw / cap:,.1f} times a second; every memory device shipped gives {low:g} "
                            f"to {high:g} (snippets/data/checks.py, BANDWIDTH_PER_BYTE): check the unit and the digits")
        kind = acc.memory_type.strip()
        peak = STACK_PEAK[kind] * MAX_STACKS if kind in STACK_PEAK else GDDR_PEAK.get(kind)
        if peak is not None and bw > peak:
            problems.append(f"{where}: field 'memory_bandwidth': {bw / 1e12:,.2f} TB/s is more than {kind} can carry "
                            f"({peak / 1e12:,.1f} TB/s: {MAX_STACKS} of its fastest stacks, or its widest bus; "
                            "snippets/data/checks.py): check the unit and the digits")
        dense = {f: t.dense.flops_per_s for f, t in acc.tensor.items() if t.dense is not None}
        if acc.power is not None:
            lo, hi = DENSE_16BIT_PER_WATT
            for f, flops in dense.items():
                per_watt = flops * FORMAT_BITS[f] / 16 / acc.power.watts
                if per_watt > hi or (FORMAT_BITS[f] == 16 and per_watt < lo):
                    problems.append(f"{where}: fields 'tensor.{f}' and 'power': {flops / 1e12:,.0f} TFLOP/s on "
                                    f"{acc.power.watts:,.0f} W is {per_watt / 1e12:.2f} TFLOP/s per watt of 16-bit "
                                    f"work; a chip gives {lo / 1e12:g} to {hi / 1e12:g} (snippets/data/checks.py, "
                                    "DENSE_16BIT_PER_WATT): check the unit, the digits and the sparsity")
        base = dense.get("bf16") or dense.get("fp16")
        for f in ("fp8", "fp6", "fp4"):
            if base is None or f not in dense:
                continue
            ratio, most = dense[f] / base, 2 * 16 / FORMAT_BITS[f]
            if not 0.99 <= ratio <= most:
                problems.append(f"{where}: fields 'tensor.{f}' and 'tensor.bf16': {f.upper()} at {ratio:.2f} times the "
                                f"16-bit rate; a narrower float runs at least as fast as 16-bit on the same units, and "
                                f"at most {most:g} times (twice the operands per multiplier width): check the digits")


def _check_chip_timings(where: str, list_name: str, entries: Sequence[ChipCollectives | ChipNccl],
                        lats: Mapping[str, Any], accelerators: Mapping[str, Any], problems: list[str]) -> None:
    """A time model's per-chip collective entries: each on a collective's timings, pricing the chip it was timed on,
    and no chip priced twice by one list (by one engine, for custom all-reduce: each engine ships its own kernel)."""
    priced: dict[tuple[str, str], str] = {}
    for i, cc in enumerate(entries):
        engine = cc.engine if isinstance(cc, ChipCollectives) else ""
        at = f"{where}: field '{list_name}[{i}]"
        target = lats.get(cc.points)
        if target is None or target.path != "collective":
            problems.append(f"{at}.points': {cc.points!r} is not a collective entry")
        elif target.accelerator not in cc.accelerators:
            problems.append(f"{at}.accelerators': {list(cc.accelerators)} leave out {target.accelerator!r}, the "
                            f"chip {cc.points!r} was timed on")
        for acc in cc.accelerators:
            if acc not in accelerators:
                problems.append(f"{at}.accelerators': unknown accelerator {acc!r}")
            elif (acc, engine) in priced:
                problems.append(f"{at}.accelerators': {acc!r} is already priced by {priced[acc, engine]!r}"
                                + (f" under {engine}" if engine else ""))
            priced.setdefault((acc, engine), cc.points)

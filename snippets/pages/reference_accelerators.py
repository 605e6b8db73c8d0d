"""Page model of the accelerators reference (docs/reference/accelerators.md).

One row per entry of data/accelerators.yaml; every figure is the datasheet's, converted only
for display (GB to GiB, a summed link figure to one way), and every row links its sources.
"""

from __future__ import annotations

from snippets.data import DISPUTABLE, TENSOR_FORMATS, Accelerator, Catalog, Fabric, NVLink, PCIe, required
from snippets.data.bandwidth import nvlink_per_gpu
from snippets.data.units import Bandwidth
from snippets.pages.base import Page
from snippets.pages.reference_common import as_of, as_stated, binary_bytes, dense_flops, flops, source_links
from snippets.render import fmt

QUANTITY_LABELS = {
    "memory": "Memory",
    "memory_bandwidth": "Memory bandwidth",
    "bf16": "BF16 throughput",
    "fp8": "FP8 throughput",
    "power": "Power",
    "scale_up.bandwidth": "Scale-up bandwidth",
}


def host_link_bandwidth(cat: Catalog, acc: Accelerator) -> Bandwidth | None:
    """Per-direction host-link bandwidth derived from the PCIe entry and the lane count; None if not stated."""
    if acc.host_link is None or acc.host_link_lanes is None:
        return None
    p = cat.interconnect(acc.host_link, PCIe)
    return p.lanes(acc.host_link_lanes)


def scale_up_derived(cat: Catalog, acc: Accelerator) -> tuple[int, Bandwidth] | None:
    """(links, links x per-link rate) where the fabric states a per-link rate; None otherwise."""
    if acc.scale_up is None:
        return None
    link = cat.interconnects[acc.scale_up.fabric]
    if not isinstance(link, NVLink | Fabric):
        raise TypeError(f"{acc.name}: scale-up fabric {acc.scale_up.fabric!r} is a {type(link).__name__}")
    links = acc.scale_up.links or (link.links_per_gpu if isinstance(link, NVLink) else None)
    if link.per_link is None or links is None:
        return None
    return links, nvlink_per_gpu(links, link.per_link.bandwidth)


def accelerators_table(cat: Catalog) -> str:
    """Memory, bandwidth, throughput, host link and power of every accelerator, with source links."""
    rows: list[list[fmt.Cell]] = []
    for acc in cat.accelerators.values():
        host = host_link_bandwidth(cat, acc)
        if acc.host_link is None:
            host_cell: fmt.Cell = "not PCIe (see notes)" if acc.host_link_other else "not stated (see notes)"
        elif host is None:
            host_cell = f"{cat.interconnect(acc.host_link, PCIe).name}, width not stated"
        else:
            host_cell = fmt.bandwidth(host, "GB/s", 1)
        host_name = (acc.host_link_other or "" if acc.host_link is None else
                     f"{cat.interconnect(acc.host_link, PCIe).name}"
                     + ("" if acc.host_link_lanes is None else f" x{acc.host_link_lanes}"))
        rows.append([
            acc.name,
            as_stated(acc.memory.value, acc.memory.unit, "as the vendor states it"),
            budgeted_gib(acc),
            reported_gib(acc),
            acc.memory_type,
            fmt.bandwidth(acc.memory_bandwidth.bandwidth, "GB/s"),
            dense_flops(acc.bf16),
            flops(acc.bf16),
            dense_flops(acc.fp8),
            flops(acc.fp8),
            host_name or "not stated",
            host_cell,
            "not stated" if acc.power is None else as_stated(acc.power.watts, "W"),
            source_links(acc) + (" †" if acc.disagreements else ""),
        ])
    return fmt.table(
        "accelerators",
        ["Accelerator", "Memory (as stated)", "Memory the engine budgets (GiB)", "Tool's total (GiB)", "Type",
         "Memory bandwidth (shared)",
         "BF16 dense TFLOP/s", "BF16 as stated", "FP8 dense TFLOP/s", "FP8 as stated", "Host link",
         "Host link, one way", "Power", "Sources"],
        rows,
        align="lrrrlrrrrrlrrl",
    ) + as_of(cat.accelerators.values())


def budgeted_gib(acc: Accelerator) -> fmt.Figure:
    """The capacity the engine budgets from, in GiB, saying which it is: the total the runtime reports (CUDA's,
    ROCm's), or the vendor's label where no runtime total is published (the notes say so)."""
    fig = binary_bytes(acc.capacity_bytes, "GiB", 2)
    rt = acc.memory_runtime
    if rt is None:
        return fmt.Figure(fig.value, fig.unit, f"{fig.text} (label)",
                          f"{fig.basis}; the vendor's label: no runtime total published (see the notes)")
    copy = f" (secondary: {rt.source.title})" if rt.source.secondary else ""
    return fmt.Figure(fig.value, fig.unit, f"{fig.text} ({rt.runtime})",
                      f"{fig.basis}; {rt.tool}: {rt.value:,g} {rt.unit}{copy}")


def reported_gib(acc: Accelerator) -> fmt.Cell:
    """The total a management tool shows (nvidia-smi, rocm-smi), in GiB; "not recorded" where none was found. It counts
    memory the driver keeps for itself, so it is shown beside the budget, never budgeted from."""
    if acc.memory_reported is None:
        return "not recorded (see notes)"
    r = acc.memory_reported
    fig = binary_bytes(r.bytes, "GiB", 1)
    copy = f" (secondary: {r.source.title})" if r.source.secondary else ""
    return fmt.Figure(fig.value, fig.unit, fig.text, f"{fig.basis}; {r.tool} reports {r.value:,.0f} {r.unit}{copy}")


def tensor_table(cat: Catalog) -> str:
    """Dense tensor throughput of every format each chip computes in (TFLOP/s; INT formats in TOPS)."""
    rows: list[list[fmt.Cell]] = []
    for acc in cat.accelerators.values():
        cells: list[fmt.Cell] = [acc.name]
        for f in TENSOR_FORMATS:
            flop = acc.tensor.get(f)  # type: ignore[call-overload]
            cells.append("—" if flop is None else dense_flops(flop))
        cells.append("sparse, halved (derived)" if any(x.sparsity == "sparse" for x in acc.tensor.values())
                     else "dense")
        cells.append(source_links(acc))
        rows.append(cells)
    return fmt.table("tensor", ["Accelerator", *(f.upper() for f in TENSOR_FORMATS), "As stated", "Sources"],
                     rows, align="l" + "r" * len(TENSOR_FORMATS) + "ll") + as_of(cat.accelerators.values())


def scale_up_table(cat: Catalog) -> str:
    """Scale-up fabric per device: the datasheet figure, one way, and links x per-link rate where stated."""
    rows: list[list[fmt.Cell]] = []
    entries = []
    for acc in cat.accelerators.values():
        if acc.scale_up is None:
            continue
        link = cat.interconnects[acc.scale_up.fabric]
        entries.append(link)
        bw = acc.scale_up.bandwidth
        derived = scale_up_derived(cat, acc)
        stated = as_stated(bw.value, bw.unit, bw.direction.label)
        one_way = fmt.bandwidth(bw.bandwidth.one_way(), "GB/s")
        if derived is None:
            links_cell: fmt.Cell = "not stated" if acc.scale_up.links is None else fmt.count(acc.scale_up.links, "links")
            check: fmt.Cell = "per-link rate not published"
            calc: fmt.Cell = "—"
        else:
            links, total = derived
            links_cell = fmt.count(links, "links")
            calc = fmt.bandwidth(total.one_way(), "GB/s")
            check = "matches the datasheet"  # the loader refuses data where it does not
        joins: fmt.Cell = ("every device of its node" if acc.scale_up.joins is None
                           else fmt.Phrase((("devices", fmt.count(acc.scale_up.joins, "devices")),
                                            " devices only (a bridge), not the node")))
        if acc.scale_up.package is not None:
            twin = fmt.bandwidth(acc.scale_up.package.bandwidth.one_way(), "GB/s")
            joins = fmt.Phrase(("its twin in the package over its own link (", ("twin", twin),
                                " each way), the rest of its node over these"))
        counts = acc.scale_up.basis or "every link it drives"
        rows.append([acc.name, link.name, links_cell, stated, one_way, calc, check, joins, counts, source_links(link)])
    return fmt.table(
        "scaleup",
        ["Accelerator", "Fabric", "Links", "Figure used", "One way", "Links × per-link rate, one way",
         "Check", "Joins", "What it counts", "Fabric sources"],
        rows,
        align="llrrrrllll",
    ) + as_of(entries)


def disagreements_table(cat: Catalog) -> str:
    """Every quantity on which sources disagree: the range, the site's value and why."""
    rows: list[list[fmt.Cell]] = []
    accs = []
    for acc in cat.accelerators.values():
        for d in acc.disagreements:
            accs.append(acc)
            used = required(acc.used_value(d.field), f"a value for {d.field} of {acc.name}")
            per_unit = DISPUTABLE[d.field][d.unit]
            rows.append([
                f"{acc.name}: {QUANTITY_LABELS[d.field]}",
                as_stated(d.range[0], d.unit),
                as_stated(d.range[1], d.unit),
                as_stated(round(used / per_unit, 6), d.unit, "the value the site uses"),
                " ".join(d.note.split()),
            ])
    return fmt.table("disagreements", ["Accelerator and quantity", "Low", "High", "Site uses", "Why"],
                     rows, align="lrrrl") + as_of(accs)


def not_stated_table(cat: Catalog) -> str:
    """Fields an accelerator leaves out, and why."""
    labels = {"memory_runtime": "Memory the runtime reports (the engine budgets the label)",
              "memory_reported": "Memory a management tool reports", "scale_up": "Scale-up fabric", "host_link": "Host link",
              "host_link_lanes": "Host link width", "power": "Power"}
    rows: list[list[fmt.Cell]] = []
    accs = []
    for acc in cat.accelerators.values():
        for key, why in acc.not_stated.items():
            accs.append(acc)
            rows.append([f"{acc.name}: {labels[key]}", " ".join(why.split())])
        for key, why in acc.tensor_notes.items():
            accs.append(acc)
            rows.append([f"{acc.name}: {key.upper()} tensor throughput", " ".join(why.split())])
    return fmt.table("notstated", ["Accelerator and field", "Why it is not given"], rows, align="ll") + as_of(accs)


def used_on_table(cat: Catalog) -> str:
    """Each accelerator with links to the pages that show it (filled in once every page is built: snippets.render.usage)."""
    from snippets.render.usage import placeholder

    rows: list[list[fmt.Cell]] = [[a.name, placeholder("accelerator", k)] for k, a in cat.accelerators.items()]
    return fmt.table("usedon", ["Accelerator", "Shown on"], rows, align="ll") + as_of(cat.accelerators.values())


class ReferenceAcceleratorsPage(Page):
    """Names the page's prose uses."""
    shows = (accelerators_table, tensor_table, scale_up_table, disagreements_table, not_stated_table, used_on_table)

    def __init__(self, cat: Catalog) -> None:
        super().__init__(cat)
        cat = self.cat
        accs = list(cat.accelerators.values())
        h100 = cat.accelerators["h100-sxm"]
        su = required(h100.scale_up, "a scale-up fabric for the H100")
        self.count = fmt.count(len(accs), "accelerators")
        self.vendors = fmt.count(len({a.vendor for a in accs}), "vendors")
        self.disputed = fmt.count(sum(1 for a in accs if a.disagreements), "accelerators")
        self.h100_nvlink_summed = as_stated(su.bandwidth.value, su.bandwidth.unit, su.bandwidth.direction.label)
        self.h100_nvlink_one_way = fmt.bandwidth(su.bandwidth.bandwidth.one_way())
        self.h100_name = h100.name
        self.gb = fmt.unit_definition("GB")
        self.gib = fmt.unit_definition("GiB")
        self.all_shared = fmt.claim(all(a.memory_bandwidth.direction.value == "shared" for a in accs),
                                    "every memory_bandwidth has direction 'shared'")
        self.sparse_count = fmt.count(sum(1 for a in accs if a.half.sparsity == "sparse"), "accelerators")
        self.derived_count = fmt.count(sum(1 for a in accs if a.half.sparse_speedup is not None), "accelerators")
        self.reported_count = fmt.count(sum(1 for a in accs if a.memory_reported is not None), "accelerators")
        self.runtime_count = fmt.count(sum(1 for a in accs if a.memory_runtime is not None), "accelerators")
        self.label_count = fmt.count(sum(1 for a in accs if a.memory_runtime is None), "accelerators")
        self.h100_reported_gib = binary_bytes(required(h100.memory_reported, "the H100's reported memory").bytes, "GiB", 2)
        self.h100_runtime_gib = binary_bytes(required(h100.memory_runtime, "the H100's runtime total").bytes, "GiB", 2)
        self.h100_label_gib = binary_bytes(h100.memory.bytes, "GiB", 1)


namespace = ReferenceAcceleratorsPage.namespace_of
sources = ReferenceAcceleratorsPage.sources_of

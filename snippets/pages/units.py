"""Figure constructors several page models share: times, prices, rates, labels. One definition each, so a
page's `ms(...)` and another's print the same way; a page with its own rounding keeps its own helper."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from snippets.engine.bands import Band
from snippets.engine.deployment import Deployment
from snippets.engine.params import total_params
from snippets.engine.search import Point, Word
from snippets.engine.serving import DisaggPrediction
from snippets.engine.specs import MONTHS, Arch, ChipSpec, MemoryPolicySpec, PriceSpec
from snippets.engine.timing import Prediction
from snippets.render import fmt
from snippets.render.fmt import Figure


def encoder_builders(policy: MemoryPolicySpec, chips: Iterable[ChipSpec]) -> str:
    """On which vendors' chips, of those in `chips`, the policy's engine builds a multimodal checkpoint's image
    encoder (`MemoryPolicySpec.vision_encoder_vendors`), and on which it does not: "on AMD, Intel and NVIDIA chips,
    not on AWS or Google chips"; "on no chip"."""
    vendors = sorted({c.vendor for c in chips})
    on = [v for v in vendors if v in policy.vision_encoder_vendors]
    off = [v for v in vendors if v not in policy.vision_encoder_vendors]

    def listed(names: list[str], last: str) -> str:
        return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"

    if not on:
        return "on no chip"
    return f"on {listed(on, 'and')} chips" + (f", not on {listed(off, 'or')} chips" if off else "")


def ms(seconds: float, digits: int = 1, basis: str = "") -> Figure:
    """A time in milliseconds, unit shown."""
    return fmt.quantity(seconds * 1e3, "ms", digits, show_unit=True, basis=basis)


def us(seconds: float, digits: int = 1, basis: str = "") -> Figure:
    """A time in microseconds, unit shown."""
    return fmt.quantity(seconds * 1e6, "µs", digits, show_unit=True, basis=basis)


MONTH_ORDER = {m: i for i, m in enumerate(MONTHS)}
"""A month's place in the year, for ordering "Sep 2026" labels."""


def price_basis(price: PriceSpec) -> str:
    """Where a cost's price comes from, for its tooltip: provider, tier, kind, the date read, a transcription or not."""
    tier = f" {price.tier}" if price.tier else ""
    copy = ", from a dated transcription of the price list" if price.secondary else ""
    return f"{price.provider}{tier}, {price.kind}, read {price.read}{copy}"


def dated(fig: Figure, price: PriceSpec) -> Figure:
    """A dollar figure with the month of the price it rests on beside it ("$0.57 (Sep 2026 price)"), and the price's
    provider and reading in its tooltip: every cost on the site shows how old its price is."""
    month = price.as_of or "undated"
    basis = f"{fig.basis}; {price_basis(price)}" if fig.basis else price_basis(price)
    return Figure(fig.value, fig.unit, f"{fig.text} ({month} price)", basis)


def price_of(d: Deployment) -> PriceSpec:
    """The price a deployment's costs rest on (the site's price for its accelerator); a page that shows a cost of an
    unpriced accelerator is an error."""
    p = d.setting.price
    if p is None:
        raise ValueError(f"{d.setting.chip.name}: a cost needs a price in data/prices.yaml")
    return p


def usd(x: float, price: PriceSpec, digits: int = 2) -> Figure:
    """Dollars at an indicative list price, the month that price was read beside them."""
    return dated(fmt.Figure(x, "USD", f"${fmt.number(x, digits)}", "indicative list price"), price)


def banded(fig: Figure, rng: tuple[float, float] | None, digits: int, basis: str) -> Figure:
    """A prediction with the range beside it that held 80 % of its regime's test measurements, as the calculator
    writes one ("28.8 ms, 26.2–66.8"), where the range comes from (`Band.basis`) in its title; the figure alone
    where there is no range (no test measurement of the metric in any regime)."""
    if rng is None or not rng[1] > rng[0]:
        return fig
    lo, hi = rng
    return replace(fig, text=f"{fig.text}, {fmt.number(lo, digits)}–{fmt.number(hi, digits)}",
                   basis="; ".join(x for x in (fig.basis, basis) if x))


def cost_basis(band: Band, regime: str) -> str:
    """Where a cost per token's range comes from: its throughput's band, inverted (`Band.inverse`)."""
    return f"the throughput's range, inverted: {band.basis('output_tokens_per_s', regime)}"


def usd_mtok(x: float, price: PriceSpec, rng: tuple[float, float] | None = None, basis: str = "") -> Figure:
    """Dollars per million tokens (three decimals below a dollar, two above), with its range where it has one
    (`banded`), dated by the price they rest on: "$2.25, 2.30–3.27 (Sep 2026 price)"."""
    digits = 3 if x < 1 else 2
    fig = fmt.Figure(x, "USD/Mtok", f"${fmt.number(x, digits)}", "indicative price ÷ predicted tokens")
    return dated(banded(fig, rng, digits, basis), price)


def usd_gpu_hour(price: PriceSpec) -> Figure:
    """A price per GPU-hour, the month it was read beside it."""
    x = price.usd_per_gpu_hour
    return dated(fmt.Figure(x, "USD/GPU-hour", f"${fmt.number(x, 2)}", "indicative list price"), price)


def usd_hour(x: float, price: PriceSpec) -> Figure:
    """Dollars per hour of rented GPUs, dated by the price they rest on."""
    return dated(fmt.Figure(x, "USD/hour", f"${fmt.number(x, 2)}", "indicative list price × GPUs rented"), price)


def tps(tokens_per_s: float) -> Figure:
    """Tokens per second: one decimal below 100, whole above."""
    return fmt.quantity(tokens_per_s, "tokens/s", 1 if tokens_per_s < 100 else 0)


def tps_banded(x: Prediction | DisaggPrediction, scale: float = 1.0, *, per_gpu: bool = False) -> Figure:
    """A prediction's output tokens a second times `scale` (replicas side by side: their count; a share of the hour;
    per GPU: 1 ÷ its GPUs, with `per_gpu`), the unit and the range beside them, scaled alike ("5,308 tokens/s,
    3,651–5,209")."""
    v = x.output_tokens_per_s * scale
    lo, hi = x.throughput_range
    digits = 1 if v < 100 else 0
    fig = Figure(v, "tokens/s/GPU" if per_gpu else "tokens/s", f"{fmt.number(v, digits)} tokens/s")
    return banded(fig, (lo * scale, hi * scale), digits, x.throughput_band.basis("output_tokens_per_s", x.regime))


def mtok_banded(x: Prediction | DisaggPrediction, price: PriceSpec, share: float = 1.0) -> Figure:
    """A prediction's dollars per million output tokens at `share` of its throughput (1: all of it), with its range,
    the throughput's inverted (`usd_per_mtok_output_range`), dated by the price it rests on."""
    c, rng = x.usd_per_mtok_output, x.usd_per_mtok_output_range
    if c is None or rng is None:
        raise ValueError("a cost per token needs a price for its accelerator in data/prices.yaml")
    return usd_mtok(c / share, price, (rng[0] / share, rng[1] / share), cost_basis(x.throughput_band, x.regime))


def point_mtok_banded(p: Point) -> Figure:
    """A configuration's dollars per million output tokens at its load, with its range (`Point.usd_per_mtok_range`:
    its throughput's, inverted), dated by the price it rests on."""
    c = p.usd_per_mtok
    if c is None:
        raise ValueError("a cost per token needs a price for its accelerator in data/prices.yaml")
    z = p.prediction
    return usd_mtok(c, price_of(p.deployment), p.usd_per_mtok_range, cost_basis(z.throughput_band, z.regime))


def tpot_banded(x: Prediction | DisaggPrediction, digits: int = 1) -> Figure:
    """A prediction's time per output token with its range."""
    lo, hi = x.tpot_range
    return banded(ms(x.tpot_s, digits), (lo * 1e3, hi * 1e3), digits, x.tpot_band.basis("tpot_ms", x.regime))


def ttft_banded(x: Prediction | DisaggPrediction, digits: int = 1) -> Figure:
    """A prediction's time to first token with its range (its prefill regime's)."""
    lo, hi = x.ttft_range
    return banded(ms(x.ttft_s, digits), (lo * 1e3, hi * 1e3), digits, x.ttft_band.basis("ttft_ms", x.ttft_regime))


def tbps(bytes_per_s: float) -> Figure:
    """HBM bandwidth in TB/s: one figure shared by reads and writes."""
    return fmt.quantity(bytes_per_s / 1e12, "TB/s", 2, show_unit=True, basis="shared by reads and writes")


def byte_count(n: float) -> Figure:
    """A small byte count written out: 327,680 bytes."""
    return fmt.quantity(n, "bytes", 0, show_unit=True)


NVIDIA = ("NVIDIA ",)
VENDORS = ("NVIDIA ", "AMD Instinct ")


def gpu_label(chip: ChipSpec | str, vendors: tuple[str, ...] = NVIDIA, *, bare: bool = False) -> str:
    """A chip's name without its vendor's prefix: "NVIDIA H100 SXM" -> "H100 SXM" (with `VENDORS`, also "AMD
    Instinct MI300X" -> "MI300X"); `bare` also drops a parenthesis ("B200 (HGX B200)" -> "B200"), for a chart's
    narrow label slot."""
    name = chip if isinstance(chip, str) else chip.name
    for vendor in vendors:
        name = name.replace(vendor, "")
    return name.split(" (")[0] if bare else name


WORD_UNITS = {"prefill_workers": "workers", "decode_workers": "workers", "in_flight": "requests", "replicas": "replicas"}
"""The unit of each count of a configuration's words (`snippets.engine.search.COUNTS`)."""


def configuration(words: Iterable[Word]) -> fmt.Phrase:
    """A configuration in the engine's words (`Point.words`, `configuration_words`), each count a figure under its
    key: "disaggregated 6 × TP4 prefill, 7 × TP8 decode, 409 requests in flight on each decode worker"."""
    return fmt.Phrase(tuple(w if isinstance(w, str) else (w[0], fmt.count(w[1], WORD_UNITS[w[0]])) for w in words))


def cheapest_aside(mode: str, gpus: int, saving: float) -> tuple[str | tuple[str, fmt.Figure], ...]:
    """Phrase parts naming the cheapest configuration beside the recommended one where it differs (`saving` above 0:
    how much less it costs, a share of the recommended's cost): "; the cheapest, disaggregated on 52 GPUs, is 3.1%
    cheaper"; none where they agree."""
    if not saving > 0:
        return ()
    return (f"; the cheapest, {mode} on ", ("cheapest_gpus", fmt.count(gpus)), " GPUs, is ",
            ("cheapest_saving", fmt.percent(saving, 1)), " cheaper")


def attention_kind(arch: Arch) -> str:
    """How a model's attention keeps its keys and values: MLA (one latent per token), MHA (a K and V per query head),
    MQA (one KV head) or GQA (query heads share KV heads)."""
    if arch.mla is not None:
        return "MLA"
    if arch.kv_heads == arch.attention_heads:
        return "MHA"
    return "MQA" if arch.kv_heads == 1 else "GQA"


def cached_attention(arch: Arch) -> str:
    """`attention_kind`, and which layers cache less than the whole context: a sliding window, or chunks (Llama 4's
    chunked local attention)."""
    kind = attention_kind(arch)
    if arch.sliding_window is not None:
        kind += " + sliding window"
    if arch.attention_chunk_size is not None:
        kind += " + chunked local attention"
    return kind


def active_as_counted(arch: Arch, excludes_embedding: bool) -> int:
    """Parameters one token uses, counted as its model card counts them: with the embedding table (most cards), or
    without it where the card says so (`stated_active_excludes_embedding`, gpt-oss: a token looks up one row)."""
    active = total_params(arch, active=True)
    return active - arch.vocab_size * arch.hidden_size if excludes_embedding else active

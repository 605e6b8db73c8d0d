"""Figure constructors several page models share: times, prices, rates, labels. One definition each, so a
page's `ms(...)` and another's print the same way; a page with its own rounding keeps its own helper."""

from __future__ import annotations

from snippets.engine.specs import ChipSpec
from snippets.render import fmt
from snippets.render.fmt import Figure


def ms(seconds: float, digits: int = 1, basis: str = "") -> Figure:
    """A time in milliseconds, unit shown."""
    return fmt.quantity(seconds * 1e3, "ms", digits, show_unit=True, basis=basis)


def us(seconds: float, digits: int = 1, basis: str = "") -> Figure:
    """A time in microseconds, unit shown."""
    return fmt.quantity(seconds * 1e6, "µs", digits, show_unit=True, basis=basis)


def usd(x: float, digits: int = 2) -> Figure:
    """Dollars, from an indicative on-demand list price."""
    return fmt.Figure(x, "USD", f"${fmt.number(x, digits)}", "indicative on-demand list price")


def tps(tokens_per_s: float) -> Figure:
    """Tokens per second: one decimal below 100, whole above."""
    return fmt.quantity(tokens_per_s, "tokens/s", 1 if tokens_per_s < 100 else 0)


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

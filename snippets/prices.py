"""Indicative hourly prices: the price the site uses for an accelerator, and what a deployment costs per hour."""

from __future__ import annotations

from snippets.data import Catalog, Price


def prices_of(cat: Catalog, accelerator_id: str) -> list[Price]:
    """Every recorded price of one accelerator, cheapest first."""
    return sorted((p for p in cat.prices.values() if p.accelerator == accelerator_id), key=lambda p: p.price.value)


def site_price(cat: Catalog, accelerator_id: str) -> Price | None:
    """The price marked `site_uses` for the accelerator (the loader ensures there is exactly one), or None if unpriced."""
    return next((p for p in prices_of(cat, accelerator_id) if p.site_uses), None)


def hourly_cost(gpus: int, usd_per_gpu_hour: float) -> float:
    """Dollars per hour to rent `gpus` accelerators at `usd_per_gpu_hour` each (8 x 2.99 = 23.92)."""
    if gpus <= 0 or usd_per_gpu_hour <= 0:
        raise ValueError("gpus and price must be positive")
    return gpus * usd_per_gpu_hour

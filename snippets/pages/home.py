"""Page model of the home page (docs/index.md)."""

from __future__ import annotations

from typing import Any

from snippets import fmt
from snippets.data import Catalog, Node
from snippets.units import BYTE_UNITS


def namespace(cat: Catalog) -> dict[str, Any]:
    node = cat.interconnect("hgx-h100-8", Node)
    return {
        "gb": fmt.Figure(BYTE_UNITS["GB"], "bytes", f"{fmt.number(BYTE_UNITS['GB'])} bytes"),
        "gib": fmt.Figure(BYTE_UNITS["GiB"], "bytes", f"{fmt.number(BYTE_UNITS['GiB'])} bytes"),
        "node_gpus": fmt.count(node.gpus),
    }

"""Page model of the home page (docs/index.md)."""

from __future__ import annotations

from typing import Any

from snippets import fmt
from snippets.data import Catalog, Node


def namespace(cat: Catalog) -> dict[str, Any]:
    node = cat.interconnect("hgx-h100-8", Node)
    return {
        "gb": fmt.unit_definition("GB"),
        "gib": fmt.unit_definition("GiB"),
        "node_gpus": fmt.count(node.gpus),
    }

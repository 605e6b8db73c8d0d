"""Page model of the home page (docs/index.md)."""

from __future__ import annotations

from typing import Any

from snippets import fmt
from snippets.data import Catalog
from snippets.pages.scenario import reference


def namespace(cat: Catalog) -> dict[str, Any]:
    node = reference(cat).node
    return {
        "gb": fmt.unit_definition("GB"),
        "gib": fmt.unit_definition("GiB"),
        "node_gpus": fmt.count(node.gpus),
    }

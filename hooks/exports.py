"""MkDocs hook: publish the sizing grid's records beside its page (reference/sizing.json and .csv), and the
validated catalog as the engine reads it (reference/engine-catalog.json: `python -m snippets.engine --catalog`).

The records are the engine's deployments of every grid row (`snippets.pages.reference_sizing.records`),
written after the pages, from the same catalog the build validated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def on_post_build(config: Any) -> None:
    import json

    from snippets.data import load
    from snippets.export import export
    from snippets.pages.reference_sizing import write_records

    out = Path(config.site_dir) / "reference"
    write_records(load(), out)
    # in data/'s order, not sorted: an accelerator's node is the first one built from it (EngineCatalog.node_of)
    (out / "engine-catalog.json").write_text(json.dumps(export(load()), indent=1) + "\n", encoding="utf-8")

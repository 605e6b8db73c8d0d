"""MkDocs hook: publish the sizing grid's records beside its page (reference/sizing.json and .csv).

The records are the engine's deployments of every grid row (`snippets.pages.reference_sizing.records`),
written after the pages, from the same catalog the build validated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def on_post_build(config: Any) -> None:
    from snippets.data import load
    from snippets.pages.reference_sizing import write_records

    write_records(load(), Path(config.site_dir) / "reference")

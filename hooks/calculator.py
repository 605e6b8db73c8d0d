"""MkDocs hook: ship the engine's modules to the calculator page (assets/calculator/py/), unchanged.

The page "Size your deployment" runs `snippets.engine` in the reader's browser with Pyodide. After the
build, this copies `snippets/__init__.py` and every `snippets/engine/*.py` byte for byte into the site,
with a manifest (path, bytes, sha256) the page's script reads to write them into Pyodide's filesystem.
The catalog the browser loads is reference/engine-catalog.json (hooks/exports.py).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = Path("assets") / "calculator" / "py"


def engine_sources(root: Path = ROOT) -> list[Path]:
    """The modules the browser imports: the package's (import-free) __init__ and the engine, standard library only."""
    return [root / "snippets" / "__init__.py", *sorted((root / "snippets" / "engine").glob("*.py"))]


def on_post_build(config: Any) -> None:
    out = Path(config.site_dir) / OUT
    files = []
    for src in engine_sources():
        rel = src.relative_to(ROOT).as_posix()
        data = src.read_bytes()
        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        files.append({"path": rel, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    (out / "manifest.json").write_text(json.dumps({"files": files}, indent=1) + "\n", encoding="utf-8")

"""Execute notebook pages beside the build: `python -m snippets.build.notebook_worker`.

Started by `snippets.build.notebooks` as the `serving` plugin is created (as MkDocs reads the
configuration); the plugin sends it its job from `on_config`.

It makes the conversion mkdocs-jupyter would make at the page (`nb2html` with the plugin's
options, then the page's table of contents and title) and writes it where the plugin's cache
looks, so the plugin finds it there. Anything that fails is skipped: the plugin then executes the
notebook itself and reports the error in its own words.

Protocol: one JSON job per line on stdin, `{"todo": [[notebook, cache file], ...], "options": {...},
"toc_depth": N, "env": {...}}`; one `done` line on stdout when a job's results are written. `env`
(optional) is the build's environment when it sent the job, which the worker and the kernels nbconvert
starts take: the worker starts before the plugin sets some of it. The worker exits when stdin closes.
`mkdocs build` sends one job and closes; `mkdocs serve` keeps the worker for the next edit.

It imports nbconvert and mkdocs-jupyter in a thread as soon as it starts, while the build is still
reading its configuration and the job has not come yet. nbconvert starts and stops the kernel itself,
through its public API (`nb2html`'s `execute=True`).
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

TIMEOUT_CLASS = "sa-cell-timeout"
"""The page a notebook whose cell timed out is cached as (snippets.build.guard.notebook_timeout_errors reads it)."""


def convert(src: str, cache_path: str, options: dict[str, Any], toc_depth: int) -> None:
    from mkdocs_jupyter import plugin as mj
    from mkdocs_jupyter.convert import nb2html

    try:
        body = nb2html(src, execute=True, **options)
        toc_tokens, title = mj._get_nb_toc_tokens(src, toc_depth)
    except Exception as exc:
        if type(exc).__name__ != "CellTimeoutError":
            return  # the plugin runs this notebook again and reports the error
        # a cell overran nbclient's `timeout` (set through the Jupyter config the build writes): running
        # it again in the build would hang as long again. The page is this marker; the build reports it
        # with the cell's line and removes this cache entry.
        body = f'<div class="{TIMEOUT_CLASS}" data-message="{html.escape(str(exc), quote=True)}"></div>'
        toc_tokens, title = [], None
    path = Path(cache_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(".part")
    part.write_text(json.dumps({"content": body, "toc_tokens": toc_tokens, "title": title}), encoding="utf-8")
    part.replace(path)


def _import_ahead() -> None:
    """Everything a job needs, the kernel's client first. Errors are left for the job to meet."""
    with contextlib.suppress(Exception):
        import jupyter_client  # noqa: F401
        import mkdocs_jupyter.convert
        import mkdocs_jupyter.plugin  # noqa: F401
        import nbconvert.preprocessors  # noqa: F401


NICENESS = 10
"""How much the worker (and the kernels nbconvert starts, which inherit it) yields the CPU to the build's own
process: the notebook page is converted last, so the notebook has the rest of the build to run in, while on
a machine with few cores the worker's imports, the kernel and the pages would otherwise share them evenly.
`SERVING_WORKER_NICE=0` leaves the worker at the build's priority (to measure what this saves)."""


def main() -> None:
    if hasattr(os, "nice") and os.environ.get("SERVING_WORKER_NICE", "1") != "0":
        with contextlib.suppress(OSError):
            os.nice(NICENESS)
    imports = threading.Thread(target=_import_ahead, daemon=True)
    imports.start()
    for line in sys.stdin:
        job = json.loads(line)
        if "env" in job:  # the build's environment now (its plugin sets the data directory, the date)
            os.environ.clear()
            os.environ.update(job["env"])
        imports.join()
        for src, cache_path in job["todo"]:
            convert(src, cache_path, job["options"], job["toc_depth"])
        print("done", flush=True)


if __name__ == "__main__":
    main()

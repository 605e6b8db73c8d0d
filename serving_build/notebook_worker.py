"""Execute notebook pages beside the build: `python -m serving_build.notebook_worker`.

Started by `serving_build.notebooks` (the `serving-notebooks` plugin, as MkDocs reads the
configuration); `hooks/serving.py` sends it its job.

It makes the conversion mkdocs-jupyter would make at the page (`nb2html` with the plugin's
options, then the page's table of contents and title) and writes it where the plugin's cache
looks, so the plugin finds it there. Anything that fails is skipped: the plugin then executes the
notebook itself and reports the error in its own words.

Protocol: one JSON job per line on stdin, `{"todo": [[notebook, cache file, kernel name], ...],
"options": {...}, "toc_depth": N, "env": {...}, "serving": bool}`; one `done` line on stdout when
a job's results are written. `env` (optional) is the build's environment when it sent the job,
which the worker and its kernels take: the worker starts before the build's hook sets some of it.
The worker exits when stdin closes. `mkdocs build` sends one job and closes; `mkdocs serve` keeps
the worker for the next edit.

What it does to be quick, since the build waits for it at the notebook's page:
- It imports jupyter_client, nbconvert and mkdocs-jupyter in a thread as soon as it starts, while
  the build is still reading its configuration and the job has not come yet.
- The Jupyter kernel is started as soon as the job comes, and boots while those imports finish;
  nbconvert's executor is then handed the running kernel, as its `km` argument allows.
- The kernel is shut down after `done`, not before.
- Serving, the next kernel is started as soon as a job is done, so an edit finds one ready.
The kernel is started as nbclient would start it: the same kernel name (the plugin's option, else
the notebook's kernelspec), the same extra argument, the same working directory and environment.
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
"""The page a notebook whose cell timed out is cached as (snippets.site.notebook_timeout_errors reads it)."""
# what nbclient passes to an IPython kernel it starts (NotebookClient.ipython_hist_file)
KERNEL_ARGS = ["--HistoryManager.hist_file=:memory:"]


def _run_sync(fn: Any) -> Any:
    from jupyter_core.utils import run_sync  # the event loop nbclient itself runs on

    return run_sync(fn)


def start_kernel(name: str) -> Any:
    """A started kernel manager, or None if that fails (nbconvert then starts its own)."""
    try:
        from jupyter_client.manager import AsyncKernelManager

        km = AsyncKernelManager(kernel_name=name)
        _run_sync(km.start_kernel)(extra_arguments=list(KERNEL_ARGS))
        return km
    except Exception:
        return None


def stop_kernel(km: Any) -> None:
    """Stop a kernel whose notebook is done (its outputs are written): at once, not gracefully,
    since a graceful shutdown waits on the kernel for up to a few seconds and keeps nothing more."""
    with contextlib.suppress(Exception):
        _run_sync(km.shutdown_kernel)(now=True)


class Kernels:
    """Kernels started ahead, by name; nbconvert's executor takes the next one for its notebook."""

    def __init__(self) -> None:
        self.ready: dict[str, Any] = {}
        self.used: list[Any] = []
        self.current = ""

    def prestart(self, name: str) -> None:
        if name and name not in self.ready:
            km = start_kernel(name)
            if km is not None:
                self.ready[name] = km

    def take(self) -> Any:
        km = self.ready.pop(self.current, None)
        if km is not None:
            self.used.append(km)
        return km

    def stop_used(self) -> None:
        while self.used:
            stop_kernel(self.used.pop())


def patch_executor(kernels: Kernels) -> None:
    """Hand nbconvert's executor the kernel started for its notebook (None: it starts its own)."""
    from nbconvert.preprocessors import ExecutePreprocessor

    original = ExecutePreprocessor.preprocess

    def preprocess(self: Any, nb: Any, resources: Any = None, km: Any = None) -> Any:
        return original(self, nb, resources, km=km if km is not None else kernels.take())

    ExecutePreprocessor.preprocess = preprocess  # type: ignore[method-assign]


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


def main() -> None:
    imports = threading.Thread(target=_import_ahead, daemon=True)
    imports.start()
    kernels = Kernels()
    patched = False
    for line in sys.stdin:
        job = json.loads(line)
        if "env" in job:  # the build's environment now (its hook sets the data directory, the date)
            os.environ.clear()
            os.environ.update(job["env"])
        for _, _, name in job["todo"]:
            kernels.prestart(name)  # boots while the imports finish
        if not patched:
            imports.join()
            patch_executor(kernels)
            patched = True
        for src, cache_path, name in job["todo"]:
            kernels.current = name
            convert(src, cache_path, job["options"], job["toc_depth"])
        print("done", flush=True)
        kernels.stop_used()
        if job.get("serving"):
            for _, _, name in job["todo"]:
                kernels.prestart(name)  # ready for the next edit
    kernels.stop_used()
    for km in kernels.ready.values():
        stop_kernel(km)


if __name__ == "__main__":
    main()

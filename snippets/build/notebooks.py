"""The notebook worker's client: start, submit, join, close, and the deferred import of nbconvert.

A cold build executes the notebook in a second process (`snippets.build.notebook_worker`), beside
the rest of the build. The sooner that process starts, the less the build waits for it at the
notebook's page, so the `serving` plugin starts it as it is created: listed first in mkdocs.yml,
it is created while MkDocs reads the configuration, before the other plugins are imported. The
worker imports nbconvert while the build's own process imports the rest; the plugin then sends the
job (which notebooks, with which options) from `on_config`, or stops the worker if there is nothing
to execute.

Two more things happen at that moment, both before mkdocs-jupyter is imported:

- `NBCONVERT_DISABLE_CONFIG_EXPORTERS=1` (nbconvert's own switch): importing nbconvert's
  command-line app otherwise instantiates every exporter installed, only to list their names in
  its `--help` text. Nothing here uses that command line.
- mkdocs-jupyter's `convert` module (which imports nbconvert) is loaded lazily, with the standard
  library's `importlib.util.LazyLoader`: when the worker has executed the notebook, the plugin finds
  the page in its cache and the build's own process never imports nbconvert. When
  it does need it (execution off, or the worker failed), the first use loads it, as before.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import subprocess
import sys

WORKER_MODULE = "snippets.build.notebook_worker"  # its protocol is in its docstring
WORKER_ENV = {"NBCONVERT_DISABLE_CONFIG_EXPORTERS": "1"}
DEFERRED = "mkdocs_jupyter.convert"


class Worker:
    """The second interpreter. `mkdocs build` gives it one job and lets it exit; `mkdocs serve`
    keeps it between rebuilds, so a data edit pays for the kernel and the cells, not the imports."""

    def __init__(self) -> None:
        self.serving = False
        self.proc: subprocess.Popen[str] | None = None
        self.pending = 0

    def start(self) -> None:
        """Make sure a worker is running and can take a job."""
        proc = self.proc
        if proc is None or proc.poll() is not None or proc.stdin is None or proc.stdin.closed:
            self.close()
            self.proc = subprocess.Popen(  # noqa: S603 - our own module, by the interpreter running the build
                [sys.executable, "-m", WORKER_MODULE], text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, env={**os.environ, **WORKER_ENV},
            )

    def submit(self, job: str) -> None:
        self.start()
        stdin = self.proc.stdin if self.proc is not None else None
        if stdin is None:
            return
        try:
            stdin.write(job + "\n")
            stdin.flush()
        except OSError:  # it died: the plugin executes the notebook itself
            return
        self.pending += 1
        if not self.serving:
            stdin.close()

    def join(self) -> None:
        """Wait until every job submitted has written its results (the worker may still be
        shutting its kernel down: `close` waits for that)."""
        proc = self.proc
        if proc is None:
            return
        while self.pending:
            self.pending -= 1
            if proc.stdout is None or not proc.stdout.readline():  # it exited early: nothing more will come
                self.pending = 0

    def discard(self) -> None:
        """Stop a worker that has no job and will get none (nothing to execute): at once, since
        it has started no kernel, rather than waiting for its imports to finish."""
        if self.proc is not None and not self.pending and not self.serving:
            self.proc.kill()
            self.close()

    def close(self) -> None:
        proc, self.proc, self.pending = self.proc, None, 0
        if proc is None:
            return
        if proc.stdin is not None and not proc.stdin.closed:
            proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


_worker: Worker | None = None


def worker() -> Worker:
    """The one worker of this process. `mkdocs serve` creates the plugin anew for every rebuild (it reads
    mkdocs.yml again), and the plugin drops the other `snippets` modules after each build; this module
    is kept (`plugin.KEPT`), so the worker outlives the rebuilds."""
    global _worker
    if _worker is None:
        _worker = Worker()
        atexit.register(_worker.close)
    return _worker


def defer(name: str) -> bool:
    """Load module `name` on its first use rather than now (if it is not loaded already).

    Works for `from package import module`, which is how mkdocs-jupyter imports `convert`.
    Returns whether the module was deferred.
    """
    if name in sys.modules:
        return False
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        return False
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return True

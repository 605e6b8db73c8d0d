"""The site's notebooks: each jupytext notebook executed with nbclient beside the build, cached, and handed to
mkdocs-jupyter as an executed `.ipynb`.

A notebook page is a jupytext percent script under docs/ (`notebooks/*.py`, the serving plugin's `notebooks`
option). For each, at the start of a build (`Notebooks.start`, from `on_config`):

- its key is the hash of the script, of every file under data/ and snippets/ it can read, and of whether
  execution is on; an executed notebook already cached under that key (`<cache_dir>/<key>/notebooks/NAME.ipynb`)
  is used as it is;
- otherwise a thread reads it with jupytext, executes it with nbclient's `NotebookClient` (a Jupyter kernel,
  a process of its own, started in the build's root with the root first on `PYTHONPATH` and `SERVING_DATA_DIR`
  pointing at its data/, so it reads the build's code and data; each cell limited to `cell_timeout` seconds)
  and writes the executed notebook there. The build converts its other pages meanwhile: notebook pages are
  converted last (`Notebooks.files`).

`Notebooks.files` points each script's page (same `src_uri`: same URL, same nav entry) at the executed `.ipynb`
as its source (`File.abs_src_path`), which mkdocs-jupyter (`include` names both, `execute: false`) converts with
its public options and caches itself; the script is published next to its page, as the page's first cell links
to it. A cell that raises or overruns is reported with the script's line (`errors`), and that
notebook is not cached. `close` waits for every execution and removes cache entries this build did not use.

Under `mkdocs serve` a notebook's kernel is started before the build that uses it (`Kernels`, held by the plugin
between builds): when a build ends, one kernel per notebook is started for the next, so a rebuild after an edit
runs the cells at once instead of first waiting a second and a half for a kernel to start. A kernel started
ahead is launched exactly as nbclient launches one (same kernel, directory, environment and arguments), is used by
one execution only and is shut down after it; the ones left are shut down when `serve` stops (`on_shutdown`).
Outside `serve` no kernel outlives the build.

While it waits, a kernel started ahead imports the modules its notebook's cells import (`notebook_imports`: the
top-level `import` statements, by module name, binding no name in the notebook's namespace, run silently so the
cells' execution counts stay those of a fresh kernel). It has read no data: data/ is read by the cells when they
run. The modules are those of snippets/ as they stood when it started, so the kernel is keyed on that
(`Launch.code`, the stamp of snippets/, and `Launch.imports`): after an edit of the code, or of the notebook's
imports, the next build's launch differs, and it runs in a fresh kernel, as it does if an import failed. Importing
the site's code is most of the notebook's first cell (about 0.6 of its 1.1 s, measured on 3 December 2026), which
the rebuild after a data edit otherwise waits for.
"""

from __future__ import annotations

import ast
import hashlib
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files

KEYED = (("data", (".yaml", ".yml")), ("snippets", (".py", ".txt")))
"""What a notebook can read besides itself: the folders, and the kinds of file in them, its cache key covers."""
HISTORY = "--HistoryManager.hist_file=:memory:"
"""The argument nbclient gives every IPython kernel it starts (its `ipython_hist_file`): no history file written."""


class Launch(NamedTuple):
    """How a notebook's kernel is started: the kernel (the notebook's kernelspec), its directory and environment,
    and what a kernel started ahead imports before its notebook runs. A tuple, so it compares equal to one made by
    this module imported anew (`serve` reimports edited code)."""

    kernel: str
    cwd: str
    env: tuple[tuple[str, str], ...]
    code: str = ""
    """`code_stamp` of the root's snippets/ when the kernel was asked for: the code its imports read."""
    imports: tuple[str, ...] = ()
    """The modules the notebook imports (`notebook_imports`), imported by a kernel started ahead as it waits."""


def code_stamp(root: Path) -> str:
    """The state of the code under snippets/ (each file's path, size and modification time)."""
    digest = hashlib.sha256()
    for path in sorted((root / "snippets").rglob("*")):
        if path.suffix in (".py", ".txt") and "__pycache__" not in path.parts:
            st = path.stat()
            digest.update(f"{path.relative_to(root).as_posix()} {st.st_size} {st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def notebook_imports(notebook: Any) -> tuple[str, ...]:
    """The modules a notebook's code cells import at their top level (`import a.b`, `from a.b import c`: `a.b`), in
    order, each once; a cell that is not plain Python (a magic) is passed over, and relative imports are left out."""
    found: dict[str, None] = {}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        try:
            body = ast.parse(cell.source).body
        except SyntaxError:
            continue
        for node in body:
            if isinstance(node, ast.Import):
                found.update(dict.fromkeys(alias.name for alias in node.names))
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found[node.module] = None
    return tuple(found)


def _warm(km: Any, imports: tuple[str, ...], timeout: float = 120) -> bool:
    """Import `imports` in the kernel of `km` (a client of its own, the code run silently: no output, no execution
    count, no name bound); whether the kernel answered and every import succeeded."""
    from jupyter_client.blocking.client import BlockingKernelClient

    kc = BlockingKernelClient()
    kc.load_connection_info(km.get_connection_info())
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=timeout)
        code = "\n".join(f"__import__({name!r})" for name in imports)
        msg_id = kc.execute(code, silent=True, store_history=False, allow_stdin=False)
        while True:
            reply = kc.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                return bool(reply["content"]["status"] == "ok")
    except Exception:  # no answer in time, or the kernel died: the build starts its own
        return False
    finally:
        kc.stop_channels()


@dataclass
class Kernels:
    """Kernels started ahead of the next build of `mkdocs serve`, one per notebook, by how each was launched.

    Held by the plugin between builds (serve only). `take` hands a build a kernel launched as its notebook's
    would be, alive and unused, or nothing (the build then starts one as nbclient does); `close` shuts down
    the ones left."""

    spare: dict[Launch, Any] = field(default_factory=dict)
    """jupyter_client `KernelManager`s, each with a kernel started and not yet used."""
    warming: dict[Launch, threading.Thread] = field(default_factory=dict)
    """The thread importing each spare kernel's `Launch.imports`, until it is taken or shut down."""
    warm: dict[Launch, bool] = field(default_factory=dict)
    """Whether each spare kernel's imports succeeded, once its thread has ended."""

    def start(self, launch: Launch) -> None:
        """A kernel for `launch`, unless one is waiting: the process is started and left to boot, then to import
        the notebook's modules in a thread of its own."""
        if launch in self.spare:
            return
        from jupyter_client.manager import KernelManager

        # a blocking manager (its calls run in any thread), whose client, made by nbclient in its own event loop
        # when the notebook runs, is asynchronous as nbclient's own kernels' are
        km = KernelManager(kernel_name=launch.kernel, client_class="jupyter_client.asynchronous.AsyncKernelClient")
        km.start_kernel(cwd=launch.cwd, env=dict(launch.env), stderr=subprocess.DEVNULL, extra_arguments=[HISTORY])
        self.spare[launch] = km
        if launch.imports:
            def warm() -> None:
                self.warm[launch] = _warm(km, launch.imports)

            thread = self.warming[launch] = threading.Thread(target=warm, name="kernel imports", daemon=True)
            thread.start()

    def _settle(self, launch: Launch) -> bool:
        """Wait for the imports of the kernel started for `launch`; whether they succeeded (or none were asked)."""
        thread = self.warming.pop(launch, None)
        if thread is None:
            return True
        thread.join()
        return self.warm.pop(launch, False)

    def take(self, launch: Launch) -> Any | None:
        """The kernel started for `launch`, once its imports are done, if it is still alive and they succeeded (it
        is the caller's from then on)."""
        km = self.spare.pop(launch, None)
        if km is None:
            return None
        if not self._settle(launch):
            shut_down(km)
            return None
        if not km.is_alive():
            km.cleanup_resources()
            return None
        return km

    def keep(self, launches: set[Launch]) -> None:
        """Shut down the kernels waiting for a launch not in `launches` (the environment changed, a kernel was
        renamed, a notebook removed): none waits for a build that will not take it."""
        for launch in [launch for launch in self.spare if launch not in launches]:
            self._settle(launch)  # its client closed before the kernel goes
            shut_down(self.spare.pop(launch))

    def close(self) -> None:
        """Shut down every kernel still waiting."""
        self.keep(set())


def shut_down(km: Any) -> None:
    """Stop a kernel this module started (`Kernels.start`) at once: its notebook is written, nothing is left to say."""
    if km.is_alive():
        km.shutdown_kernel(now=True)
    else:
        km.cleanup_resources()


@dataclass
class Notebook:
    """One notebook page of the build."""

    src_uri: str
    """The script's path under docs/ (`notebooks/size-your-deployment.py`): the page's URL and nav entry."""
    script: Path
    target: Path
    """The notebook mkdocs-jupyter converts: executed (or, with execution off, as written) and cached."""
    errors: list[str] = field(default_factory=list)
    thread: threading.Thread | None = None
    kernel: str | None = None
    """The kernel the notebook names (its kernelspec), once read."""
    imports: tuple[str, ...] = ()
    """The modules its cells import (`notebook_imports`), once read."""

    def join(self) -> list[str]:
        if self.thread is not None:
            self.thread.join()
            self.thread = None
        return self.errors


@dataclass
class Notebooks:
    """The notebooks of one build."""

    root: Path
    docs_dir: Path
    cache_dir: Path
    patterns: list[str]
    execute: bool = True
    timeout: int = 120
    """Seconds a cell may run (nbclient's `timeout`)."""
    kernels: Kernels | None = None
    """Kernels started ahead of this build (`mkdocs serve`), one of which a notebook's execution takes if launched
    as its own would be."""
    found: dict[str, Notebook] = field(default_factory=dict)
    code: str = ""
    """`code_stamp` of snippets/ as the build started: the code its kernels import."""
    environ: dict[str, str] = field(default_factory=dict)
    """The process's environment as the build started its notebooks (other plugins set variables for the length of
    a build: markdown-exec's `MKDOCS_CONFIG_DIR`): every kernel of the build, and the next build's started ahead,
    gets it."""

    def start(self) -> None:
        """Find the notebooks under docs/ and start executing those not cached."""
        self.environ = dict(os.environ)
        self.code = code_stamp(self.root)
        scripts = sorted(p for p in self.docs_dir.rglob("*.py")
                         if any(fnmatch(p.relative_to(self.docs_dir).as_posix(), pat) for pat in self.patterns))
        if not scripts:
            return
        common = self._shared_key()
        for script in scripts:
            src_uri = script.relative_to(self.docs_dir).as_posix()
            key = hashlib.sha256(common + script.read_bytes()).hexdigest()[:16]
            target = self.cache_dir / key / Path(src_uri).with_suffix(".ipynb")
            nb = self.found[src_uri] = Notebook(src_uri, script, target)
            if not target.is_file():
                nb.thread = threading.Thread(target=self._make, args=(nb,), name=f"notebook {src_uri}", daemon=True)
                nb.thread.start()

    def _shared_key(self) -> bytes:
        digest = hashlib.sha256(f"execute={self.execute}\n".encode())
        for folder, suffixes in KEYED:
            for path in sorted((self.root / folder).rglob("*")):
                if path.suffix in suffixes and path.is_file() and "__pycache__" not in path.parts:
                    digest.update(path.relative_to(self.root).as_posix().encode() + b"\0" + path.read_bytes())
        return digest.digest()

    def _make(self, nb: Notebook) -> None:
        """Read the script, execute it (if execution is on) and write the notebook where mkdocs-jupyter reads it;
        on a failure, record it (the notebook, as far as it ran, is written all the same, so the build reaches
        the end of its pages and reports every error at once, and `close` removes it from the cache)."""
        import jupytext
        import nbformat

        from snippets.build.drift import notebook_cells

        text = nb.script.read_text(encoding="utf-8")
        notebook = jupytext.reads(text, fmt="py:percent")
        for i, cell in enumerate(notebook.cells, 1):
            cell.id = f"cell-{i}"  # jupytext draws random ids: the same script gives the same notebook
        nb.kernel, nb.imports = kernel_name(notebook), notebook_imports(notebook)
        if self.execute:
            lines = [line for _, line, _ in notebook_cells(text)]
            failure = self._run(notebook, self.launch(nb.kernel, nb.imports))
            if failure is not None:
                index, message = failure
                at = f":{lines[index]}" if 0 <= index < len(lines) else ""
                nb.errors.append(f"docs/{nb.src_uri}{at}: {message}")
        nb.target.parent.mkdir(parents=True, exist_ok=True)
        part = nb.target.with_name(nb.target.name + ".part")
        nbformat.write(notebook, str(part))  # type: ignore[no-untyped-call]  # nbformat is unannotated
        part.replace(nb.target)

    def launch(self, kernel: str, imports: tuple[str, ...] = (), code: str | None = None) -> Launch:
        """How this build's kernels start: in the build's root, reading the build's data/ and the engine results its
        builds keep (`snippets.data.loader.load`'s `results_dir`), and importing the build's snippets/ (as it stood
        when the build started, unless `code` says otherwise), whatever else is on the path."""
        from snippets.data.errors import DATA_DIR_ENV, RESULTS_DIR_ENV

        path = os.pathsep.join([str(self.root), *filter(None, [self.environ.get("PYTHONPATH")])])
        env = {**self.environ, DATA_DIR_ENV: str(self.root / "data"), RESULTS_DIR_ENV: str(self.cache_dir),
               "PYTHONPATH": path}
        return Launch(kernel, str(self.root), tuple(sorted(env.items())), self.code if code is None else code, imports)

    def _run(self, notebook: Any, launch: Launch) -> tuple[int, str] | None:
        """Execute `notebook` in place with nbclient; the index of the failing cell and what to say, if one fails."""
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError, CellTimeoutError

        at = [-1]

        def cell_start(cell: Any, cell_index: int) -> None:
            at[0] = cell_index

        km = self.kernels.take(launch) if self.kernels is not None else None  # else nbclient starts its own
        client = NotebookClient(notebook, km=km, timeout=self.timeout, allow_errors=False, record_timing=False,
                                on_cell_start=cell_start)
        try:
            client.execute(cwd=launch.cwd, env=dict(launch.env), stderr=subprocess.DEVNULL)
        except CellTimeoutError:
            return at[0], (f"a notebook cell ran longer than {self.timeout} s and was stopped (nbclient's timeout; "
                           "the limit is the serving plugin's `cell_timeout`, in seconds)")
        except CellExecutionError as exc:
            return at[0], f"a notebook cell raised {exc.ename}: {exc.evalue}"
        except Exception as exc:  # the kernel did not start, or died
            return at[0], f"the notebook could not be executed: {type(exc).__name__}: {exc}"
        finally:
            if km is not None:  # a kernel started ahead: nbclient leaves a kernel it did not start running
                if client.kc is not None:
                    client.kc.stop_channels()
                shut_down(km)
        return None

    def files(self, files: Files, config: MkDocsConfig) -> Files:
        """Each notebook page (mkdocs-jupyter's file for the script) reading its notebook instead, converted last,
        and the script published next to its page. Every notebook goes last, executing or cached, so the order
        of pages (and with it sitemap.xml and the search index) is the same whatever the cache holds."""
        from mkdocs.structure.files import File

        for src_uri, nb in self.found.items():
            page = files.get_file_from_path(src_uri)
            if page is None:
                continue
            files.remove(page)
            page.abs_src_path = str(nb.target)  # MkDocs' File attribute: where the page's source is read from
            files.append(page)
            page_dir = Path(src_uri).with_suffix("").as_posix()
            files.append(File.generated(config, f"{page_dir}/{nb.script.name}", abs_src_path=str(nb.script)))
        return files

    def source(self, src_uri: str) -> str | None:
        """The script of notebook `src_uri`, once its notebook is ready (None: not a notebook of this build)."""
        nb = self.found.get(src_uri)
        if nb is None:
            return None
        nb.join()
        return nb.script.read_text(encoding="utf-8")

    def wait(self, src_uri: str) -> None:
        """Until notebook `src_uri` is written (nothing to wait for: not a notebook of this build)."""
        nb = self.found.get(src_uri)
        if nb is not None:
            nb.join()

    def errors(self, src_uri: str) -> list[str]:
        nb = self.found.get(src_uri)
        return nb.join() if nb is not None else []

    def prepare(self, kernels: Kernels) -> None:
        """Start in `kernels` a kernel for each notebook, for the next build to take (`mkdocs serve`, as a build
        ends), and shut down any other waiting there; none with execution off."""
        launches = set()
        code = code_stamp(self.root)  # now, before the kernels import it: an edit from here on makes another launch
        for nb in self.found.values() if self.execute else ():
            if nb.kernel is None:  # cached: not read by this build
                import jupytext

                notebook = jupytext.read(nb.script, fmt="py:percent")
                nb.kernel, nb.imports = kernel_name(notebook), notebook_imports(notebook)
            launches.add(self.launch(nb.kernel, nb.imports, code))
        kernels.keep(launches)  # those of an earlier build launched otherwise (a commit moves SOURCE_DATE_EPOCH)
        for launch in sorted(launches):
            kernels.start(launch)

    def close(self) -> None:
        """Wait for every execution (no kernel this build started outlives it) and drop the cache entries it did not
        use."""
        for nb in self.found.values():
            if nb.join():
                nb.target.unlink(missing_ok=True)  # a failed execution is never a cache hit
        used = {nb.target.relative_to(self.cache_dir).parts[0] for nb in self.found.values()}
        if self.cache_dir.is_dir() and self.found:
            for entry in self.cache_dir.iterdir():
                if entry.is_dir() and entry.name not in used:
                    shutil.rmtree(entry, ignore_errors=True)


def kernel_name(notebook: Any) -> str:
    """The kernel nbclient runs `notebook` in: the one its kernelspec names, else jupyter_client's default."""
    from jupyter_client.kernelspec import NATIVE_KERNEL_NAME

    name = notebook.metadata.get("kernelspec", {}).get("name")
    return str(name) if name else NATIVE_KERNEL_NAME

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
notebook is not cached. Nothing here outlives the build: `close` waits for every execution (no kernel outlives
it) and removes cache entries this build did not use.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files

KEYED = (("data", (".yaml", ".yml")), ("snippets", (".py", ".txt")))
"""What a notebook can read besides itself: the folders, and the kinds of file in them, its cache key covers."""


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
    found: dict[str, Notebook] = field(default_factory=dict)

    def start(self) -> None:
        """Find the notebooks under docs/ and start executing those not cached."""
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
        if self.execute:
            lines = [line for _, line, _ in notebook_cells(text)]
            failure = self._run(notebook)
            if failure is not None:
                index, message = failure
                at = f":{lines[index]}" if 0 <= index < len(lines) else ""
                nb.errors.append(f"docs/{nb.src_uri}{at}: {message}")
        nb.target.parent.mkdir(parents=True, exist_ok=True)
        part = nb.target.with_name(nb.target.name + ".part")
        nbformat.write(notebook, str(part))  # type: ignore[no-untyped-call]  # nbformat is unannotated
        part.replace(nb.target)

    def _run(self, notebook: Any) -> tuple[int, str] | None:
        """Execute `notebook` in place with nbclient; the index of the failing cell and what to say, if one fails."""
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError, CellTimeoutError

        at = [-1]

        def cell_start(cell: Any, cell_index: int) -> None:
            at[0] = cell_index

        client = NotebookClient(notebook, timeout=self.timeout, allow_errors=False, record_timing=False,
                                on_cell_start=cell_start)
        # the kernel reads the build's data/ and imports the build's snippets/, whatever else is on its path
        path = os.pathsep.join([str(self.root), *filter(None, [os.environ.get("PYTHONPATH")])])
        env = {**os.environ, "SERVING_DATA_DIR": str(self.root / "data"), "PYTHONPATH": path}
        try:
            client.execute(cwd=str(self.root), env=env, stderr=subprocess.DEVNULL)
        except CellTimeoutError:
            return at[0], (f"a notebook cell ran longer than {self.timeout} s and was stopped (nbclient's timeout; "
                           "the limit is the serving plugin's `cell_timeout`, in seconds)")
        except CellExecutionError as exc:
            return at[0], f"a notebook cell raised {exc.ename}: {exc.evalue}"
        except Exception as exc:  # the kernel did not start, or died
            return at[0], f"the notebook could not be executed: {type(exc).__name__}: {exc}"
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

    def close(self) -> None:
        """Wait for every execution (no kernel outlives the build) and drop the cache entries it did not use."""
        for nb in self.found.values():
            if nb.join():
                nb.target.unlink(missing_ok=True)  # a failed execution is never a cache hit
        used = {nb.target.relative_to(self.cache_dir).parts[0] for nb in self.found.values()}
        if self.cache_dir.is_dir() and self.found:
            for entry in self.cache_dir.iterdir():
                if entry.is_dir() and entry.name not in used:
                    shutil.rmtree(entry, ignore_errors=True)

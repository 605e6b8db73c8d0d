"""The notebook pages (snippets/build/notebooks.py), in process: a script executed with nbclient beside the caller,
cached on its content and on data/ and snippets/, failures named by the script's line and never cached."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from snippets.build.notebooks import Kernels, Launch, Notebooks, code_stamp

HEADER = "# ---\n# jupyter:\n#   kernelspec:\n#     display_name: Python 3\n#     language: python\n#     name: python3\n# ---\n"


def _site(tmp_path: Path, body: str) -> Notebooks:
    (tmp_path / "docs" / "notebooks").mkdir(parents=True)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "models.yaml").write_text("x: 1\n")
    (tmp_path / "docs" / "notebooks" / "nb.py").write_text(HEADER + body)
    return _notebooks(tmp_path)


def _notebooks(root: Path, *, execute: bool = True, timeout: int = 60, kernels: Kernels | None = None) -> Notebooks:
    return Notebooks(root, root / "docs", root / ".cache" / "serving", ["notebooks/*.py"], execute=execute,
                     timeout=timeout, kernels=kernels)


def _outputs(path: Path) -> list[list[str]]:
    cells = json.loads(path.read_text())["cells"]
    return [["".join(o.get("text", "")) for o in c.get("outputs", [])] for c in cells]


def _counts(path: Path) -> list[int | None]:
    return [c.get("execution_count") for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def test_a_notebook_is_executed_once_for_its_content(tmp_path: Path) -> None:
    nbs = _site(tmp_path, "# %% [markdown]\n# Six sevens.\n\n# %%\nprint(6 * 7)\n")
    nbs.start()
    nb = nbs.found["notebooks/nb.py"]
    assert nb.thread is not None and nbs.source("notebooks/nb.py") == (tmp_path / "docs/notebooks/nb.py").read_text()
    assert nbs.errors("notebooks/nb.py") == []
    assert _outputs(nb.target) == [[], ["42\n"]]
    assert [c["id"] for c in json.loads(nb.target.read_text())["cells"]] == ["cell-1", "cell-2"]
    first = nb.target.read_bytes()
    nbs.close()
    again = _notebooks(tmp_path)
    again.start()  # the same script, data/ and snippets/: the cached notebook, nothing executed
    assert again.found["notebooks/nb.py"].thread is None and again.found["notebooks/nb.py"].target.read_bytes() == first
    (tmp_path / "data" / "models.yaml").write_text("x: 2\n")  # a data edit: executed anew, the old entry evicted
    edited = _notebooks(tmp_path)
    edited.start()
    assert edited.found["notebooks/nb.py"].target != nb.target
    edited.close()
    assert not nb.target.exists() and edited.found["notebooks/nb.py"].target.is_file()


def test_a_raising_cell_is_named_by_its_line_and_not_cached(tmp_path: Path) -> None:
    nbs = _site(tmp_path, "# %%\nx = 1\n\n# %%\nraise ValueError('boom in a notebook cell')\n")
    nbs.start()
    assert nbs.errors("notebooks/nb.py") == ["docs/notebooks/nb.py:12: a notebook cell raised ValueError: boom in a "
                                             "notebook cell"]
    target = nbs.found["notebooks/nb.py"].target
    assert target.is_file()  # rendered as far as it ran, so every page's errors are reported at once
    nbs.close()
    assert not target.exists()


def test_a_cell_that_hangs_is_stopped_at_its_time_limit(tmp_path: Path) -> None:
    nbs = _site(tmp_path, "# %%\nimport time\n\nwhile True:\n    time.sleep(0.1)\n")
    nbs.timeout = 2
    nbs.start()
    assert nbs.errors("notebooks/nb.py") == [
        "docs/notebooks/nb.py:9: a notebook cell ran longer than 2 s and was stopped (nbclient's timeout; the limit is "
        "the serving plugin's `cell_timeout`, in seconds)"]
    nbs.close()


def test_with_execution_off_the_notebook_is_written_as_it_is(tmp_path: Path) -> None:
    nbs = _site(tmp_path, "# %%\nprint(6 * 7)\n")
    nbs.execute = False
    nbs.start()
    assert nbs.errors("notebooks/nb.py") == [] and _outputs(nbs.found["notebooks/nb.py"].target) == [[]]


@pytest.mark.parametrize("pattern", ["notebooks/*.py", "*/nb.py"])
def test_only_the_scripts_the_patterns_name_are_notebooks(tmp_path: Path, pattern: str) -> None:
    nbs = _site(tmp_path, "# %%\nprint(1)\n")
    (tmp_path / "docs" / "other.py").write_text("x = 1\n")
    nbs.patterns = [pattern]
    nbs.execute = False
    nbs.start()
    assert list(nbs.found) == ["notebooks/nb.py"]


def test_a_kernel_started_ahead_runs_the_next_execution_once(tmp_path: Path) -> None:
    """`mkdocs serve`: as a build ends, a kernel is started for each notebook (`prepare`); the next build's execution
    runs in it (the cell prints the kernel's process id), it is shut down after, and `close` stops what is left."""
    nbs = _site(tmp_path, "# %%\nimport os\n\nprint(os.getpid(), os.environ['SERVING_DATA_DIR'])\n")
    kernels = Kernels()
    nbs.start()
    nbs.close()  # executed in a kernel of nbclient's own
    nbs.prepare(kernels)
    [(launch, km)] = kernels.spare.items()
    assert launch == nbs.launch("python3", ("os",)) and km.is_alive()
    assert dict(launch.env)["SERVING_RESULTS_DIR"] == str(tmp_path / ".cache" / "serving")  # the build's cache
    pid = km.provisioner.pid
    (tmp_path / "data" / "models.yaml").write_text("x: 2\n")  # an edit: executed anew, in the kernel started ahead
    again = _notebooks(tmp_path, kernels=kernels)
    again.start()
    assert again.errors("notebooks/nb.py") == [] and kernels.spare == {}
    assert _outputs(again.found["notebooks/nb.py"].target) == [[f"{pid} {tmp_path / 'data'}\n"]]
    assert not km.is_alive()  # used once, then shut down
    again.close()
    again.prepare(kernels)
    [spare] = kernels.spare.values()
    kernels.close()
    assert kernels.spare == {} and not spare.is_alive()


def test_a_kernel_started_for_another_launch_or_dead_is_not_taken(tmp_path: Path) -> None:
    """A kernel started with another environment (or directory, or kernel) is not the notebook's: it waits, unused,
    and the notebook runs in a kernel of nbclient's own, until the build ends and shuts it down; one that died is
    dropped when asked for."""
    nbs = _site(tmp_path, "# %%\nprint(6 * 7)\n")
    kernels = Kernels()
    nbs.kernels = kernels
    nbs.start()
    mine = nbs.launch("python3")  # the cell imports nothing
    other = Launch(mine.kernel, mine.cwd, (*mine.env, ("SERVING_TEST_OTHER", "1")))
    kernels.start(other)
    assert nbs.errors("notebooks/nb.py") == [] and _outputs(nbs.found["notebooks/nb.py"].target) == [["42\n"]]
    assert list(kernels.spare) == [other]
    km = kernels.spare[other]
    km.shutdown_kernel(now=True)
    assert kernels.take(other) is None and kernels.spare == {}
    kernels.start(other)
    km = kernels.spare[other]
    nbs.close()
    nbs.prepare(kernels)  # as a build ends: its own notebook's kernel started, any other shut down
    assert list(kernels.spare) == [mine] and not km.is_alive()
    kernels.close()


PROBE = """# %%
import sys

print("snippets.probe" in sys.modules, "VALUE" in dir(), get_ipython().execution_count)

# %%
from snippets.probe import VALUE

print(VALUE)
"""


def test_a_kernel_started_ahead_imports_the_notebooks_modules_of_the_code_it_was_started_for(tmp_path: Path) -> None:
    """A kernel started ahead imports, as it waits, the modules its notebook imports, binding no name and counting no
    execution: the notebook's output is a fresh kernel's but for the module already imported. After an edit of
    snippets/ the next build does not take it (it imported the old code): it runs in a fresh kernel, which imports the
    edit."""
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "__init__.py").write_text("")
    (tmp_path / "snippets" / "probe.py").write_text("VALUE = 1\n")
    nbs = _site(tmp_path, PROBE)
    kernels = Kernels()
    nbs.start()
    assert nbs.errors("notebooks/nb.py") == []
    [[fresh], printed] = _outputs(nbs.found["notebooks/nb.py"].target)  # run in nbclient's own kernel
    assert fresh.startswith("False False ") and printed == ["1\n"]
    counts = _counts(nbs.found["notebooks/nb.py"].target)
    nbs.close()
    nbs.prepare(kernels)
    [launch] = kernels.spare
    assert launch.imports == ("sys", "snippets.probe") and launch == nbs.launch("python3", launch.imports)

    (tmp_path / "data" / "models.yaml").write_text("x: 2\n")  # a data edit: the kernel started ahead is taken
    again = _notebooks(tmp_path, kernels=kernels)
    again.start()
    assert again.errors("notebooks/nb.py") == [] and kernels.spare == {}
    assert _outputs(again.found["notebooks/nb.py"].target) == [[fresh.replace("False", "True", 1)], ["1\n"]]
    assert _counts(again.found["notebooks/nb.py"].target) == counts  # the silent imports counted no execution
    again.close()
    again.prepare(kernels)
    [stale] = kernels.spare.values()

    (tmp_path / "snippets" / "probe.py").write_text("VALUE = 22\n")  # a code edit: that kernel imported the old code
    edited = _notebooks(tmp_path, kernels=kernels)
    edited.start()
    assert edited.errors("notebooks/nb.py") == []
    assert _outputs(edited.found["notebooks/nb.py"].target) == [[fresh], ["22\n"]]
    assert stale.is_alive()  # not taken; the build's end shuts it down
    edited.close()
    edited.prepare(kernels)
    assert not stale.is_alive() and [k.code for k in kernels.spare] == [code_stamp(tmp_path)]
    kernels.close()


def test_a_kernel_whose_imports_fail_is_not_taken(tmp_path: Path) -> None:
    """A module the notebook imports fails to import in the kernel started ahead: the build does not take that kernel,
    and the notebook runs in a fresh one, which reports the error at its cell's line."""
    nbs = _site(tmp_path, "# %%\nimport no_such_module_here\n")
    kernels = Kernels()
    nbs.kernels = kernels
    nbs.environ = dict(os.environ)  # as `start` will set it
    launch = nbs.launch("python3", ("no_such_module_here",), code_stamp(tmp_path))
    kernels.start(launch)
    km = kernels.spare[launch]
    nbs.start()
    assert nbs.errors("notebooks/nb.py") == ["docs/notebooks/nb.py:9: a notebook cell raised ModuleNotFoundError: No "
                                             "module named 'no_such_module_here'"]
    assert kernels.spare == {} and not km.is_alive()
    nbs.close()

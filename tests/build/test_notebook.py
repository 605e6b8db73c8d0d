"""The notebook in builds of copies: a raising cell stops the build; the worker converts as mkdocs-jupyter does."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import run_build


@pytest.mark.build
def test_a_raising_notebook_cell_fails_the_build(site_copy: Path) -> None:
    nb = site_copy / "docs/notebooks/size-your-deployment.py"
    nb.write_text(nb.read_text().replace("cat = load()", "cat = load()\nraise ValueError('boom in a notebook cell')", 1))
    b = run_build(site_copy)
    assert b.returncode != 0
    assert "boom in a notebook cell" in b.output


@pytest.mark.build
def test_the_notebook_worker_converts_as_mkdocs_jupyter_does(tmp_path: Path) -> None:
    """snippets/build/notebook_worker.py converts the notebook in a second process; the page must not differ
    from mkdocs-jupyter's own conversion (jupytext's random cell ids aside: the plugin renumbers them)."""
    import json
    import os
    import re
    import subprocess
    import sys

    from ..conftest import ROOT

    src = str(ROOT / "docs/notebooks/size-your-deployment.py")
    options = {"kernel_name": "", "theme": "", "allow_errors": False, "show_input": True, "no_input": False,
               "no_prompt": False, "remove_tag_config": {}, "highlight_extra_classes": "",
               "include_requirejs": False, "custom_mathjax_url": ""}
    env = {**os.environ, "SERVING_DATA_DIR": str(ROOT / "data")}
    job = {"todo": [[src, str(tmp_path / "worker.json")]], "options": options, "toc_depth": 6}
    worker = subprocess.run([sys.executable, "-m", "snippets.build.notebook_worker"], input=json.dumps(job) + "\n",
                            capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert worker.stdout == "done\n", worker.stderr[-2000:]
    plain = f"""
import json
from mkdocs_jupyter import plugin as mj
from mkdocs_jupyter.convert import nb2html
body = nb2html({src!r}, execute=True, **json.loads({json.dumps(options)!r}))
toc, title = mj._get_nb_toc_tokens({src!r}, 6)
print(json.dumps({{"content": body, "toc_tokens": toc, "title": title}}))
"""
    own = subprocess.run([sys.executable, "-c", plain], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert own.returncode == 0, own.stderr[-2000:]

    def norm(text: str) -> str:
        return re.sub(r"cell-id=[0-9a-f-]+", "cell-id=N", text)

    ours = json.loads((tmp_path / "worker.json").read_text(encoding="utf-8"))
    theirs = json.loads(own.stdout)
    assert ours["title"] == theirs["title"] and ours["toc_tokens"] == theirs["toc_tokens"]
    assert "jp-OutputArea-output" in ours["content"]  # executed
    assert norm(ours["content"]) == norm(theirs["content"])

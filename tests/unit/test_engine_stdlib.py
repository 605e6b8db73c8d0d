"""The engine needs only the standard library: it runs from the exported catalog with pydantic and PyYAML absent,
as it must in a browser, and gives the same answers as in the build."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from snippets.data import load
from snippets.data.export import engine_catalog, export
from snippets.engine import Layout, deploy, setting
from snippets.engine.codec import encode
from snippets.engine.timing import predict

from ..conftest import ROOT

SCRIPT = r"""
import json, sys
for name in ("pydantic", "pydantic_core", "yaml", "_yaml"):
    sys.modules[name] = None  # importing them now raises ImportError
from snippets.engine.codec import decode
from snippets.engine.specs import EngineCatalog
from snippets.engine import Layout, deploy, setting
from snippets.engine.timing import predict
eng = decode(EngineCatalog, json.load(open(sys.argv[1])))
d = deploy(setting(eng, "llama-3.1-70b", "fp8", "reference", node="hgx-h100-8", concurrency=16, context_tokens=2000),
           Layout(2))
x = predict(d, 16, 1000, 1000)
chosen = deploy(setting(eng, "deepseek-v3", "bf16", "reference", node="hgx-h100-8"))
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("pydantic", "yaml") and sys.modules[m] is not None)
print(json.dumps({"tpot": x.tpot_s, "tput": x.output_tokens_per_s, "weights": d.memory.weights,
                  "chosen": chosen.layout.label, "loaded": loaded}))
"""


def test_engine_runs_from_the_exported_catalog_without_pydantic(tmp_path: Path) -> None:
    cat = load()
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(encode(export(cat))), encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    eng = engine_catalog(cat)
    d = deploy(setting(eng, "llama-3.1-70b", "fp8", "reference", node="hgx-h100-8", concurrency=16,
                       context_tokens=2000), Layout(2))
    x = predict(d, 16, 1000, 1000)
    assert got["tpot"] == x.tpot_s and got["tput"] == x.output_tokens_per_s and got["weights"] == d.memory.weights
    assert got["chosen"] == deploy(setting(eng, "deepseek-v3", "bf16", "reference", node="hgx-h100-8")).layout.label
    assert got["loaded"] == []

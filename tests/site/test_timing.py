"""The time model on hand-worked cases: a memory-bound decode, a compute-bound prefill, a latency-bound and a
bandwidth-bound all-reduce; and the engine's command line."""

from __future__ import annotations

import json
import subprocess
import sys

from ..conftest import ROOT


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "snippets.engine", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_cli_reads_the_published_catalog(built):
    path = built.site / "reference" / "engine-catalog.json"
    out = _cli("size", "--model", "llama-3.1-405b", "--precision", "fp8", "--accelerator", "h100-sxm",
               "--catalog", str(path))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["layout"] == {"tp": 8, "pp": 1, "ep": 1, "dp": 1}

"""scripts/bench.py's part f: which kind of process each of the suite's processes is, and the sampler that finds
them under the test runner (Chromium's processes are not reaped into pytest's rusage, so bench reads /proc)."""

from __future__ import annotations

import runpy
import subprocess
import sys
import threading
from pathlib import Path

import pytest

BENCH = runpy.run_path(str(Path(__file__).resolve().parents[2] / "scripts" / "bench.py"), run_name="bench_script")


@pytest.mark.parametrize(("cmdline", "kind"), [
    ("/usr/lib/chromium/chromium --type=renderer --headless --lang=en-US", "chromium renderer"),
    ("/usr/lib/chromium/chromium --headless --no-sandbox --remote-debugging-pipe", "chromium browser"),
    ("/usr/lib/chromium/chromium --type=zygote --no-zygote-sandbox", "chromium zygote"),
    ("/venv/lib/python3.11/site-packages/playwright/driver/node /venv/.../cli.js run-driver", "playwright driver"),
    ("/venv/bin/python -m mkdocs build --strict -q -d /tmp/x", "mkdocs build"),
    ("/venv/bin/python -m ipykernel_launcher -f /tmp/kernel.json", "notebook kernel"),
    ("/venv/bin/python -u -c import sys;exec(eval(sys.stdin.readline()))", "test runner and workers"),
    ("/venv/bin/python -m pytest -q -p no:cacheprovider tests -n 2", "test runner and workers"),
    ("/bin/sh -c true", "other"),
    ("", "other"),
])
def test_each_process_of_the_suite_is_put_in_its_kind(cmdline: str, kind: str) -> None:
    assert BENCH["process_kind"](cmdline) == kind


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the sampler reads Linux's /proc")
def test_the_sampler_finds_the_root_and_its_children_and_nothing_else() -> None:
    # a shell (the root) that starts a Python child and waits for it; this test's own process is outside the tree
    child = "import time; time.sleep(1.5)"
    proc = subprocess.Popen(["/bin/sh", "-c", f'"{sys.executable}" -c "{child}"; true'])
    seen: dict[tuple[int, int], list[object]] = {}
    stop = threading.Event()
    sampler = threading.Thread(target=BENCH["sample_tree"], args=(proc.pid, stop, seen))
    sampler.start()
    proc.wait()
    stop.set()
    sampler.join()
    pids = {pid for pid, _ in seen}
    assert proc.pid in pids
    assert len(pids) == 2, seen  # the shell and its Python child, each once
    assert {kind for kind, _ in seen.values()} == {"other"}
    assert all(isinstance(cpu, float) and cpu >= 0 for _, cpu in seen.values())

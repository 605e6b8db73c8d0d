"""Build and test timings: `python3 -m nox -s bench` (or `python scripts/bench.py [--runs N]`).

Measures, each as the median of N runs (3 by default), in temporary copies of the site, so the
repository's own files are never touched:

  a. the strict build of the whole site with execution on (markdown-exec blocks run, the notebook
     is executed by a Jupyter kernel; the caches emptied before every run, as in a fresh clone or
     CI) against the same pages with execution off (a generated config that INHERITs mkdocs.yml,
     drops markdown-exec and sets the serving plugin's `execute: false`; the plugin still runs).
     Also the build with execution on and the notebook cache warm, as on a second build.
  b. the rebuild after a one-line data edit, in one process as `mkdocs serve` does it: load the
     config, build once to warm up, then for each run wait `--pause` seconds (3 by default: a contributor's
     next save; what a build leaves running for the next one, the notebook's kernel, starts meanwhile), change
     one YAML value and rebuild, as `nox -s serve` builds (SERVING_SEARCH=false: no search index); then the same with
     Material's search index built (SERVING_SEARCH=true), as `mkdocs serve` alone builds.
  c. the test suite without the browser tests (`-m "not browser"`), as the brief's command runs it.
  d. the calculator page (docs/calculator.md) in headless Chromium (Debian's /usr/bin/chromium), the built
     site served from 127.0.0.1 with `Cache-Control: max-age=600` (as GitHub Pages serves it): the time
     from the navigation's start to the first live answer (the engine starts in a Web Worker as the page
     loads; the page records `data-first-answer-ms`) with an empty browser cache (a fresh context every
     run) and with the cache warm (the same context, the page reloaded), the time of one recomputation
     (measured in the worker, the engine's call: `data-last-ms`; and from the form's change to the answer
     written, in the test's clock) for a concurrency and for a latency target (the search), and the bytes
     transferred by the page and by the engine's start (cold). `--site DIR` measures an already built site.
  e. the engine in CPython (CPU time, each run in a fresh interpreter so no memo of an earlier run helps): the
     calculator's recomputation as the worker runs it (`snippets.engine.calc.Calculator.answer_json` on its default
     form): the concurrency changed each time (the search the calculator keeps is reused), and the TPOT target
     changed each time (searched anew, in the space the calculator keeps: the predictions reused); one `predict`
     of that form's deployment, the search
     per sizing record (`at_scenario` at the serving scenario's target without the frontier's sweep, as the grid
     runs one per record, over every model x {fp8, bf16} x four accelerators; and with the sweep, as the
     calculator runs it), and sizing a pasted config.json of 1,000 layers (the calculator's answer without a
     target: the policy's layout, its memory and its times), the first call in the process.
  f. the whole suite as CI runs it (`-n 2 --dist worksteal`, the browser tests included) against a built site
     (`--site DIR`, else one is built), with its CPU by kind of process: the test workers, each of Chromium's
     processes by type, Playwright's driver, the builds the tests start, the notebook kernels. Chromium's processes
     are never reaped into the test runner's rusage, so the tree under pytest is sampled from /proc every half
     second (Linux only; a process's CPU after its last sample, under half a second of it, is not counted).

Wall time is what you wait; CPU time (user + system, this process and its children, the Jupyter
kernel included) is less disturbed by other work on the machine. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
SITE_PARTS = ("mkdocs.yml", "docs", "data", "snippets")
TEST_PARTS = (*SITE_PARTS, "tests", "scripts", "pyproject.toml", "noxfile.py")  # a test reads scripts/bench.py
OFF_CONFIG = "mkdocs-noexec.yml"
EDIT_FILE = "data/assumptions.yaml"
# the first figure of the edited file, e.g. `value: {value: 12.5, unit: "%"}`
EDIT_RE = re.compile(r"(value:\s*\{\s*value:\s*)([0-9]+(?:\.[0-9]+)?)")


def env() -> dict[str, str]:
    """Environment of every build: quiet about MkDocs 2, a fixed date and hash seed, the copy's own data."""
    out = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "SOURCE_DATE_EPOCH": "1700000000", "PYTHONHASHSEED": "0",
           "SERVING_SEARCH": "true"}
    out.pop("SERVING_DATA_DIR", None)
    out.pop("SERVING_SITE_DIR", None)
    return out


def copy_tree(dest: Path, parts: tuple[str, ...] = SITE_PARTS) -> Path:
    """Copy what a build (or the test suite) reads into `dest`; caches and build output stay behind."""
    dest.mkdir(parents=True, exist_ok=True)
    # not "site": the parts never hold the built site/, and the pattern would drop tests/site
    ignore = shutil.ignore_patterns("__pycache__", ".cache", ".pytest_cache")
    for part in parts:
        src = ROOT / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, dest / part)
    return dest


@dataclass(frozen=True)
class Tagged:
    """A tagged YAML scalar (`!ENV X`, `!!python/name:...`), kept so the generated config can write it back."""

    tag: str
    value: str


class _Loader(yaml.SafeLoader):
    """Reads mkdocs.yml keeping tagged scalars as `Tagged`."""


class _Dumper(yaml.SafeDumper):
    """Writes `Tagged` back with its tag."""


_Loader.add_multi_constructor("", lambda loader, tag, node: Tagged(tag, str(getattr(node, "value", ""))))
_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, tag, node: Tagged(
    "tag:yaml.org,2002:python/" + tag, str(getattr(node, "value", ""))))
_Dumper.add_representer(Tagged, lambda dumper, t: dumper.represent_scalar(t.tag, t.value))

# Without markdown-exec's fence, superfences refuses a fence with an unknown option (`exec="on"`)
# and the block reaches the page as raw text. This fence accepts the options (markdown-exec's
# validator only reads them) and shows the block as plain code: nothing is run.
PLAIN_PYTHON_FENCE = {
    "name": "python",
    "class": "python",
    "validator": Tagged("tag:yaml.org,2002:python/name:markdown_exec.validator", ""),
    "format": Tagged("tag:yaml.org,2002:python/name:pymdownx.superfences.fence_code_format", ""),
}


def _entries(items: list[Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for entry in items:
        yield (entry, {}) if isinstance(entry, str) else next(iter(entry.items()))


def write_noexec_config(root: Path) -> Path:
    """A config that INHERITs mkdocs.yml with markdown-exec dropped and the notebooks not executed.

    Lists are replaced, not merged, by INHERIT, so `plugins` and `markdown_extensions` are written
    whole: the parent's, with those changes. Everything else is inherited.
    """
    parent = yaml.load((root / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)  # noqa: S506 - SafeLoader subclass
    plugins: list[Any] = []
    for name, options in _entries(parent.get("plugins", [])):
        if name == "markdown-exec":
            continue
        if name == "serving":
            options = {**(options or {}), "execute": False}
        plugins.append({name: options} if options else name)
    extensions: list[Any] = []
    for name, options in _entries(parent.get("markdown_extensions", [])):
        if name == "pymdownx.superfences":
            options = dict(options or {})
            options["custom_fences"] = [*options.get("custom_fences", []), PLAIN_PYTHON_FENCE]
        extensions.append({name: options} if options else name)
    out = root / OFF_CONFIG
    body = {"INHERIT": "mkdocs.yml", "plugins": plugins, "markdown_extensions": extensions}
    out.write_text("# generated by scripts/bench.py: the site with execution off\n"
                   + yaml.dump(body, Dumper=_Dumper, sort_keys=False), encoding="utf-8")
    return out


@dataclass
class Timing:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


@contextmanager
def timed(into: Timing, children_only: bool = True) -> Iterator[None]:
    """Wall and CPU time of the block; CPU of finished child processes (and this one, unless children_only)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p0 = time.process_time()
    t0 = time.perf_counter()
    yield
    t1 = time.perf_counter()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if not children_only:
        cpu += time.process_time() - p0
    into.wall.append(t1 - t0)
    into.cpu.append(cpu)


def mkdocs_build(root: Path, config: str, site: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", config, "-d", str(site)],
        cwd=root, env=env(), capture_output=True, text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"build with {config} failed in {root}:\n{proc.stdout}{proc.stderr}")


def notebook_executed(site: Path) -> bool | None:
    """Whether every built notebook page shows cell outputs (None: the site has no notebook page)."""
    from bs4 import BeautifulSoup

    pages = sorted(site.glob("notebooks/*/index.html"))
    if not pages:
        return None
    return all(BeautifulSoup(p.read_text(encoding="utf-8"), "html.parser").select(".jp-OutputArea-output")
               for p in pages)


def count_figures(site: Path) -> int:
    numbers = json.loads((site / "numbers.json").read_text(encoding="utf-8"))
    return sum(len(page["figures"]) for page in numbers.values())


def bench_builds(runs: int, work: Path, notes: list[str]) -> dict[str, Timing]:
    root = copy_tree(work / "builds")
    write_noexec_config(root)
    out = {"on": Timing(), "on_warm": Timing(), "off": Timing()}
    for i in range(runs):
        # the warm build right after the cold one reuses its notebook; "off" keeps its own cache apart
        for key, config, cold in (("on", "mkdocs.yml", True), ("on_warm", "mkdocs.yml", False), ("off", OFF_CONFIG, True)):
            if cold:
                shutil.rmtree(root / ".cache", ignore_errors=True)
            site = work / f"site-{key}"
            shutil.rmtree(site, ignore_errors=True)
            with timed(out[key]):
                mkdocs_build(root, config, site)
            print(f"  a. run {i + 1}/{runs} {key:8s} {out[key].wall[-1]:6.2f} s wall {out[key].cpu[-1]:6.2f} s CPU", flush=True)
    on, off = work / "site-on", work / "site-off"
    notes.append(
        f"execution on: notebook executed={notebook_executed(on)}, {count_figures(on)} figures in numbers.json; "
        f"execution off: notebook executed={notebook_executed(off)}, {count_figures(off)} figures "
        "(inline figures only: the hook still ran)"
    )
    return out


def bench_rebuild(runs: int, work: Path, pause: float, search: bool) -> Timing:
    """Run the in-process rebuild loop in a fresh interpreter inside the copy (its own `snippets`), with Material's
    search index built or not (mkdocs.yml reads SERVING_SEARCH)."""
    root = copy_tree(work / f"rebuild-{'search' if search else 'serve'}")
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "_rebuild", str(root), str(runs), str(pause)],
        cwd=root, env={**env(), "SERVING_SEARCH": "true" if search else "false"}, capture_output=True, text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"rebuild loop failed:\n{proc.stdout}{proc.stderr}")
    for line in proc.stdout.splitlines():
        if line.startswith("  b."):
            print(line, flush=True)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return Timing(result["wall"], result["cpu"])


def rebuild_loop(root: Path, runs: int, pause: float) -> None:
    """Inside the copy: warm build, then `runs` times wait `pause` seconds, edit one YAML value and rebuild, like
    `mkdocs serve`."""
    os.chdir(root)
    sys.path.insert(0, str(root))
    import logging

    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    log = logging.getLogger("mkdocs")
    log.setLevel(logging.WARNING)  # strict: a warning fails the build, so show it
    log.addHandler(logging.StreamHandler(sys.stderr))
    site = root / "site-serve"

    def build_once(first: bool = False) -> Any:
        config = load_config(config_file=str(root / "mkdocs.yml"), strict=True, site_dir=str(site))
        if first:
            config.plugins.on_startup(command="serve", dirty=False)
        build(config)
        return config

    config = build_once(first=True)
    path = root / EDIT_FILE
    text = path.read_text(encoding="utf-8")
    m = EDIT_RE.search(text)
    if m is None:
        raise SystemExit(f"no `value: {{value: N` line to edit in {EDIT_FILE}")
    base = float(m.group(2))
    timing = Timing()
    numbers = (site / "numbers.json").read_text(encoding="utf-8")
    for i in range(1, runs + 1):
        new = f"{base - 0.01 * i:g}"  # a new value every run, so no cache can answer it; small, so no claim flips
        time.sleep(pause)
        path.write_text(text[: m.start(2)] + new + text[m.end(2):], encoding="utf-8")
        with timed(timing, children_only=False):
            config = build_once()
        after = (site / "numbers.json").read_text(encoding="utf-8")
        if after == numbers:
            raise SystemExit(f"the rebuild after setting {m.group(1)}{new} in {EDIT_FILE} changed no figure")
        numbers = after
        print(f"  b. run {i}/{runs} {EDIT_FILE}: {m.group(2)} -> {new}  "
              f"{timing.wall[-1]:6.2f} s wall {timing.cpu[-1]:6.2f} s CPU", flush=True)
    config.plugins.on_shutdown()  # as `serve` ends
    print(json.dumps({"wall": timing.wall, "cpu": timing.cpu}))


def bench_tests(runs: int, work: Path, workers: str, notes: list[str]) -> Timing:
    root = copy_tree(work / "tests", TEST_PARTS)
    timing = Timing()
    for i in range(runs):
        args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", "-m", "not browser"]
        if workers != "0":
            args += ["-n", workers, "--dist", "worksteal"]  # as noxfile.py runs them
        with timed(timing):
            proc = subprocess.run(args, cwd=root, env=env(), capture_output=True, text=True)
        last = (proc.stdout.strip().splitlines() or [""])[-1]
        if proc.returncode != 0:  # still timed: say so beside the table rather than stop
            notes.append(f"test suite run {i + 1} exited {proc.returncode}: {last}")
        print(f"  c. run {i + 1}/{runs} {timing.wall[-1]:6.2f} s wall {timing.cpu[-1]:6.2f} s CPU  ({last})", flush=True)
    return timing


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
RECOMPUTES = 10
"""Recomputations per run of d: the concurrency field set to a new value each time."""


def _serve(site: Path) -> tuple[Any, str]:
    import http.server
    import threading

    class Handler(http.server.SimpleHTTPRequestHandler):
        def end_headers(self) -> None:
            self.send_header("Cache-Control", "max-age=600")
            super().end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def _record_size(into: list[int], request: Any) -> None:
    into.append(request.sizes()["responseBodySize"])


def _first_answer(page: Any, parts: dict[str, list[float]] | None = None, visible: list[float] | None = None) -> float:
    """Seconds from the navigation's start to the first live answer, as the page records it; with `visible`, the
    seconds from the page's first contentful paint to that answer are appended to it; with `parts`, where
    that time went (ms, each from the navigation's start): the page starting the worker, its script starting, the worker's
    marks (Pyodide's module, Pyodide loaded, the engine's files written, the engine imported, the catalog read; the
    worker's clock starts when it receives the start message) and the first answer's computation."""
    page.wait_for_function("document.getElementById('sa-calc').dataset.answers >= 1", timeout=300_000)
    first = float(page.get_attribute("#sa-calc", "data-first-answer-ms") or "nan")
    if visible is not None:  # the page's first contentful paint, from the navigation's start (Paint Timing)
        paint = page.evaluate("performance.getEntriesByName('first-contentful-paint').map((e) => e.startTime)")
        visible.append((first - paint[0]) / 1e3 if paint else float("nan"))
    if parts is not None:
        script = float(page.get_attribute("#sa-calc", "data-script-start-ms") or "nan")
        worker = float(page.get_attribute("#sa-calc", "data-worker-start-ms") or "nan")
        marks = json.loads(page.get_attribute("#sa-calc", "data-start-parts") or "{}")
        parts.setdefault("worker", []).append(worker)
        parts.setdefault("script", []).append(script)
        for k, v in marks.items():
            parts.setdefault(k, []).append(v)
        parts.setdefault("first compute", []).append(float(page.get_attribute("#sa-calc", "data-last-ms") or "nan"))
        parts.setdefault("first answer", []).append(first)
    return first / 1e3


def _recompute(page: Any, field: str, value: str) -> tuple[float, float]:
    """(the engine's seconds in the worker, seconds from the change to the answer written) for one change. A value the
    field already holds changes nothing and brings no answer (the form's TPOT target starts at 30 ms, which the 11th
    run's first change would write): another is taken, 100 above it."""
    if page.input_value(f"[name={field}]") == value:
        value = str(int(value) + 100)
    answers = int(page.get_attribute("#sa-calc", "data-answers") or 0)
    t0 = time.perf_counter()
    page.fill(f"[name={field}]", value)
    page.wait_for_function(f"document.getElementById('sa-calc').dataset.answers > {answers}", timeout=120_000)
    return float(page.get_attribute("#sa-calc", "data-last-ms") or "nan") / 1e3, time.perf_counter() - t0


def bench_calculator(runs: int, work: Path, notes: list[str], built: Path | None = None) -> list[str]:
    """Part d: navigation to first live answer (cold, warm), recomputations, and the transfer sizes."""
    if not CHROMIUM.is_file():
        notes.append(f"d. skipped: {CHROMIUM} is missing (apt-get install chromium)")
        return []
    from playwright.sync_api import sync_playwright

    site = built or work / "site-on"
    if not (site / "calculator" / "index.html").is_file():
        root = copy_tree(work / "calculator")
        site = work / "site-calculator"
        mkdocs_build(root, "mkdocs.yml", site)
    server, base = _serve(site)
    cold: list[float] = []
    warm: list[float] = []
    cold_seen: list[float] = []
    warm_seen: list[float] = []
    page_bytes: list[int] = []
    engine: dict[str, list[float]] = {"concurrency": [], "tpot_ms": []}
    seen: dict[str, list[float]] = {"concurrency": [], "tpot_ms": []}
    start_parts: dict[str, list[float]] = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            for i in range(runs):
                context = browser.new_context(service_workers="block")
                context.route(lambda url: not url.startswith(base), lambda route: route.abort("blockedbyclient"))
                sizes: list[int] = []
                context.on("requestfinished", functools.partial(_record_size, sizes))
                page = context.new_page()
                page.goto(base + "calculator/", wait_until="domcontentloaded")
                cold.append(_first_answer(page, start_parts, cold_seen))
                page.wait_for_load_state("networkidle")
                page_bytes.append(sum(sizes))
                for n in range(RECOMPUTES):
                    for field, value in (("concurrency", str(2 + n + i)), ("tpot_ms", str(20 + n + i))):
                        e, w = _recompute(page, field, value)
                        engine[field].append(e)
                        seen[field].append(w)
                page.reload(wait_until="domcontentloaded")
                warm.append(_first_answer(page, visible=warm_seen))
                context.close()
                print(f"  d. run {i + 1}/{runs} first answer {cold[-1]:6.2f} s cold, {warm[-1]:6.2f} s warm; "
                      f"recomputation median {statistics.median(engine['concurrency'][-RECOMPUTES:]) * 1e3:.1f} ms "
                      f"(concurrency), {statistics.median(engine['tpot_ms'][-RECOMPUTES:]) * 1e3:.1f} ms (target)",
                      flush=True)
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    notes.append(f"d. calculator transfer (cold): {statistics.median(page_bytes) / 1e6:,.2f} MB in all, the page and "
                 f"the engine's start (Pyodide, the engine's modules, the catalog); recomputations: "
                 f"{sum(map(len, engine.values()))}, in the worker; from the change to the answer written: "
                 f"{statistics.median(seen['concurrency']) * 1e3:,.0f} ms (concurrency), "
                 f"{statistics.median(seen['tpot_ms']) * 1e3:,.0f} ms (target), medians")
    if start_parts:
        notes.append("d. the first live answer, cold (medians, ms): the page starts the worker at "
                     + f"{statistics.median(start_parts.pop('worker')):,.0f} ms from the navigation's start (its "
                     + f"script runs at {statistics.median(start_parts.pop('script')):,.0f} ms); in the "
                     + "worker, from its start message: "
                     + ", ".join(f"{k} {statistics.median(v):,.0f}" for k, v in start_parts.items()
                                 if k not in ("first compute", "first answer"))
                     + f"; the first answer's computation {statistics.median(start_parts['first compute']):,.0f} ms; "
                     + f"first answer at {statistics.median(start_parts['first answer']):,.0f} ms")
    return [wall_row("d. calculator: navigation to first live answer, empty browser cache", cold, 1, "s"),
            wall_row("d. calculator: navigation to first live answer, browser cache warm", warm, 1, "s"),
            wall_row("d. calculator: page visible (first paint) to first live answer, empty cache", cold_seen, 1, "s"),
            wall_row("d. calculator: page visible (first paint) to first live answer, cache warm", warm_seen, 1, "s"),
            wall_row(f"d. calculator: one recomputation, concurrency ({RECOMPUTES} a run)", engine["concurrency"],
                     1e3, "ms"),
            wall_row(f"d. calculator: one recomputation, latency target and search ({RECOMPUTES} a run)",
                     engine["tpot_ms"], 1e3, "ms")]


ENGINE_ACCELERATORS = ("h100-sxm", "b200", "mi300x", "l4")
ENGINE_LAYERS = 1_000
"""The pasted config's layers: the most `snippets.engine.requests` admits (num_hidden_layers)."""


def engine_loop(root: Path) -> None:
    """Inside a fresh interpreter: part e's timings of the engine, printed as one JSON line (milliseconds)."""
    sys.path.insert(0, str(root))
    from snippets.data import load
    from snippets.data.export import engine_catalog
    from snippets.engine.calc import Calculator, answer, defaults, read
    from snippets.engine.deployment import deploy, setting
    from snippets.engine.search import at_scenario
    from snippets.engine.serving import predict

    eng = engine_catalog(load(root / "data"))
    cpu = time.process_time
    form = defaults(eng).query()
    # sizing first, while no memo of the engine holds anything
    llama = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
             "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
             "num_hidden_layers": ENGINE_LAYERS, "vocab_size": 128256, "max_position_embeddings": 131072,
             "tie_word_embeddings": False, "torch_dtype": "bfloat16", "hidden_act": "silu"}
    sizing: dict[str, float] = {}
    for label, extra in (("H100", {}), ("L4, fewest GPUs", {"accelerator": "l4", "layout_policy": "fewest-gpus"})):
        t0 = cpu()
        out = answer(eng, {**form, "model": "custom", "config": json.dumps(llama), "ttft_ms": "", "tpot_ms": "",
                           **extra})
        sizing[label] = (cpu() - t0) * 1e3
        if not out["ok"]:
            raise SystemExit(f"e. the {ENGINE_LAYERS}-layer config was refused: {out['error']}")
        sizing[label + " layout"] = out["outputs"]["layout"]["text"]
    calc: list[float] = []
    calc_target: list[float] = []
    worker = Calculator(eng)
    worker.answer_json(json.dumps(form))  # the worker's first answer is apart (part d's first live answer)
    for n in range(RECOMPUTES):
        t0 = cpu()
        worker.answer_json(json.dumps({**form, "concurrency": str(2 + n)}))
        calc.append((cpu() - t0) * 1e3)
    for n in range(RECOMPUTES):
        t0 = cpu()
        worker.answer_json(json.dumps({**form, "tpot_ms": str(31 + n)}))
        calc_target.append((cpu() - t0) * 1e3)
    inputs = read(eng, form)
    d = deploy(setting(eng, inputs.model, inputs.precision, "serving", accelerator=inputs.accelerator,
                       concurrency=inputs.concurrency, context_tokens=inputs.context))
    preds: list[float] = []
    for _ in range(RECOMPUTES):
        t0 = cpu()
        predict(d)
        preds.append((cpu() - t0) * 1e3)
    records: list[float] = []
    for model in eng.models:
        for precision in ("fp8", "bf16"):
            for chip in ENGINE_ACCELERATORS:
                t0 = cpu()
                try:
                    at_scenario(eng, model, precision, "serving", accelerator=chip, sweep=False)
                except (ValueError, KeyError):
                    continue  # a record the grid leaves out (a precision the chip cannot run, a context too long)
                records.append((cpu() - t0) * 1e3)
    swept: list[float] = []
    for model in eng.models:
        t0 = cpu()
        try:
            at_scenario(eng, model, "fp8", "serving", accelerator="h100-sxm")
        except (ValueError, KeyError):
            continue
        swept.append((cpu() - t0) * 1e3)
    print(json.dumps({"calc": calc, "calc_target": calc_target, "predict": preds, "records": records, "swept": swept,
                      "sizing": sizing}))


def bench_engine(runs: int, notes: list[str]) -> list[str]:
    """Part e: the engine's timings in CPython, each run in a fresh interpreter over this tree's own code."""
    got: dict[str, list[float]] = {"calc": [], "calc_target": [], "predict": [], "records": [], "swept": []}
    sizing: dict[str, list[float]] = {}
    layouts: dict[str, str] = {}
    for i in range(runs):
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "_engine", str(ROOT)],
                              cwd=ROOT, env=env(), capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"engine loop failed:\n{proc.stdout}{proc.stderr}")
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        for k in got:
            got[k] += result[k]
        for k, v in result["sizing"].items():
            if isinstance(v, str):
                layouts[k.removesuffix(" layout")] = v
            else:
                sizing.setdefault(k, []).append(v)
        print(f"  e. run {i + 1}/{runs} calculator {statistics.median(result['calc']):.1f} ms (concurrency), "
              f"{statistics.median(result['calc_target']):.1f} ms (target), predict "
              f"{statistics.median(result['predict']):.2f} ms, search per record "
              f"{statistics.median(result['records']):.1f} ms ({len(result['records'])} records), "
              f"{ENGINE_LAYERS}-layer sizing "
              + ", ".join(f"{k} {v:.1f} ms" for k, v in result["sizing"].items() if not isinstance(v, str)),
              flush=True)
    notes.append(f"e. CPU time in CPython, medians; search per record over {len(got['records']) // runs} records "
                 f"(every model x fp8, bf16 x {', '.join(ENGINE_ACCELERATORS)}: {sum(got['records']) / runs / 1e3:.1f} s "
                 f"a run); the {ENGINE_LAYERS}-layer config sized to "
                 + ", ".join(f"{v} ({k})" for k, v in layouts.items()))
    rows = [cpu_row(f"e. engine: the calculator's recomputation, concurrency, search kept ({RECOMPUTES} a run)",
                    got["calc"]),
            cpu_row(f"e. engine: the calculator's recomputation, TPOT target, searched in the kept space ({RECOMPUTES} a run)",
                    got["calc_target"]),
            cpu_row("e. engine: one predict (the calculator's default deployment)", got["predict"]),
            cpu_row("e. engine: one search per sizing record, no sweep", got["records"]),
            cpu_row("e. engine: one search with the frontier's sweep (every model, fp8, H100)", got["swept"])]
    rows += [cpu_row(f"e. engine: sizing a pasted {ENGINE_LAYERS}-layer config, {k} (first call)", v)
             for k, v in sizing.items()]
    return rows


def cpu_row(label: str, values: list[float]) -> str:
    """A row of the table for an engine timing in milliseconds of CPU (this machine's wall time is shared)."""
    med = statistics.median(values)
    return f"| {label} | {len(values)} | — | {med:.2f} ms | {min(values):.2f}–{max(values):.2f} ms CPU |"


def wall_row(label: str, values: list[float], scale: float, unit: str) -> str:
    """A row of the table for a browser timing: wall time only (the browser's CPU is not this process's)."""
    med, lo, hi = (scale * statistics.median(values), scale * min(values), scale * max(values))
    digits = 1 if unit == "ms" else 2
    return f"| {label} | {len(values)} | {med:.{digits}f} {unit} | — | {lo:.{digits}f}–{hi:.{digits}f} {unit} |"


def ratio(x: list[float], y: list[float]) -> float:
    return statistics.median(x) / statistics.median(y)


def row(label: str, t: Timing) -> str:
    return (f"| {label} | {len(t.wall)} | {statistics.median(t.wall):.2f} | {statistics.median(t.cpu):.2f} | "
            f"{min(t.wall):.2f}–{max(t.wall):.2f} |")


PROC = Path("/proc")
SAMPLE_S = 0.5


def process_kind(cmdline: str) -> str:
    """What a process of the suite's tree is, by its command line."""
    args = cmdline.split()
    if not args:
        return "other"
    if "chrom" in Path(args[0]).name:
        kind = next((a.split("=", 1)[1] for a in args if a.startswith("--type=")), "browser")
        return f"chromium {kind}"
    if Path(args[0]).name == "node" or "playwright" in args[0]:
        return "playwright driver"
    if "mkdocs" in cmdline:
        return "mkdocs build"
    if "ipykernel" in cmdline:
        return "notebook kernel"
    if "pytest" in cmdline or "execnet" in cmdline or "sys.stdin.readline" in cmdline:
        return "test runner and workers"
    return "other"


def _stat(pid: str) -> tuple[int, int, float] | None:
    """(parent pid, start time in clock ticks, CPU seconds) of process `pid`, None once it has gone."""
    try:
        fields = (PROC / pid / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), int(fields[19]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sample_tree(root: int, stop: threading.Event, into: dict[tuple[int, int], list[Any]]) -> None:
    """Until `stop` is set, record the CPU seconds of `root` and every process under it, keyed by (pid, start time)
    so a reused pid is another process: [kind, CPU at its last sample]. The kind is read again at every sample: a
    process Chromium's zygote forks carries the zygote's command line until it takes its own (a renderer's)."""
    while not stop.is_set():
        stats = {pid: st for pid in os.listdir(PROC) if pid.isdigit() and (st := _stat(pid)) is not None}
        parents = {int(pid): st[0] for pid, st in stats.items()}
        for pid, (_, start, cpu) in stats.items():
            p, seen = int(pid), 0
            while p not in (root, 0, 1) and seen < 64:  # walk up to the root (or to init: not ours)
                p, seen = parents.get(p, 0), seen + 1
            if p != root:
                continue
            try:
                cmd = (PROC / pid / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            key = (int(pid), start)
            old = into.get(key)
            kind = old[0] if old and not cmd.strip() else process_kind(cmd)  # an exited, unreaped one has no cmdline
            into[key] = [kind, max(cpu, old[1] if old else 0.0)]
        stop.wait(SAMPLE_S)


def bench_suite(runs: int, work: Path, workers: str, notes: list[str], built: Path | None = None) -> list[str]:
    """Part f: the whole suite as CI runs it, wall time and CPU by kind of process."""
    if not PROC.is_dir():
        notes.append("f. skipped: no /proc to sample (Linux only)")
        return []
    if not CHROMIUM.is_file():
        notes.append(f"f. skipped: {CHROMIUM} is missing (apt-get install chromium): the browser tests would not run")
        return []
    site = built
    if site is None:
        site = work / "site-suite"
        mkdocs_build(copy_tree(work / "suite-site"), "mkdocs.yml", site)
    root = copy_tree(work / "suite", TEST_PARTS)
    timing = Timing()
    kinds: dict[str, list[float]] = {}
    for i in range(runs):
        args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
        if workers != "0":
            args += ["-n", workers, "--dist", "worksteal"]
        seen: dict[tuple[int, int], list[Any]] = {}
        stop = threading.Event()
        t0 = time.perf_counter()
        proc = subprocess.Popen(args, cwd=root, env={**env(), "SERVING_SITE_DIR": str(site.resolve()), "CI": "1"},
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        sampler = threading.Thread(target=sample_tree, args=(proc.pid, stop, seen), daemon=True)
        sampler.start()
        out, _ = proc.communicate()
        stop.set()
        sampler.join()
        timing.wall.append(time.perf_counter() - t0)
        by_kind: dict[str, float] = {}
        for kind, cpu in seen.values():
            by_kind[kind] = by_kind.get(kind, 0.0) + cpu
        timing.cpu.append(sum(by_kind.values()))
        for kind, cpu in by_kind.items():
            kinds.setdefault(kind, []).append(cpu)
        lines = out.strip().splitlines() or [""]
        last = lines[-1]
        if proc.returncode != 0:  # still timed; the end of its output shows what failed
            notes.append(f"suite run {i + 1} exited {proc.returncode}: {last}")
            print("\n".join(lines[-60:]), flush=True)
        print(f"  f. run {i + 1}/{runs} {timing.wall[-1]:6.2f} s wall {timing.cpu[-1]:7.2f} s CPU  ({last})", flush=True)
    label = "f. whole suite as CI runs it" + (f", -n {workers}" if workers != "0" else "") + ", CPU sampled from /proc"
    median_cpu = statistics.median(timing.cpu)
    share = median_cpu / statistics.median(timing.wall)
    parts = sorted(((statistics.median(v), k) for k, v in kinds.items()), reverse=True)
    notes.append(f"f. CPU by kind of process (medians over {runs} run(s), {share:.2f} cores on average): "
                 + "; ".join(f"{k} {cpu:.0f} s" for cpu, k in parts))
    return [row(label, timing)]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_rebuild"]:
        rebuild_loop(Path(argv[1]), int(argv[2]), float(argv[3]))
        return 0
    if argv[:1] == ["_engine"]:
        engine_loop(Path(argv[1]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per measurement (median reported); default 3")
    ap.add_argument("--only", default="abcde",
                    help="which parts: any of a (builds), b (rebuild), c (tests), d (calculator), e (engine), f (the "
                         "whole suite's CPU by process, about eight minutes a run); default abcde")
    ap.add_argument("--workers", default="2", help="pytest-xdist workers for parts c and f; 0 for none; default 2")
    ap.add_argument("--pause", type=float, default=3.0,
                    help="part b: seconds between a build and the next edit (a contributor's next save); default 3")
    ap.add_argument("--site", type=Path, help="parts d and f: an already built site (else one is built)")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"bench: {args.runs} run(s) each, {os.cpu_count()} CPUs, load average {load:.1f} at start", flush=True)
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):  # CPython's default is to write them
        print("bench: PYTHONDONTWRITEBYTECODE is set: every process (a notebook's kernel too) compiles what it "
              "imports from snippets/ anew", flush=True)
    rows: list[str] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="serving-bench-") as tmp:
        work = Path(tmp)
        if "a" in args.only:
            t = bench_builds(args.runs, work, notes)
            rows += [row("a. strict build, execution on (cold notebook cache)", t["on"]),
                     row("a. strict build, execution off", t["off"]),
                     row("a. strict build, execution on (warm notebook cache)", t["on_warm"])]
            paired = [on / off for on, off in zip(t["on"].wall, t["off"].wall, strict=True)]
            notes.insert(0, f"execution on / off: {ratio(t['on'].wall, t['off'].wall):.2f}x wall, "
                            f"{ratio(t['on'].cpu, t['off'].cpu):.2f}x CPU (cold notebook cache); "
                            f"{ratio(t['on_warm'].wall, t['off'].wall):.2f}x wall with a warm cache; "
                            f"run by run (each run builds on, then off, a few seconds apart): median "
                            f"{statistics.median(paired):.2f}x, range {min(paired):.2f}-{max(paired):.2f}x wall")
        if "b" in args.only:
            label = f"b. rebuild in process after a one-line edit of {EDIT_FILE}, {args.pause:g} s after the last"
            rows.append(row(f"{label}, as `nox -s serve` (no search index)",
                            bench_rebuild(args.runs, work, args.pause, search=False)))
            rows.append(row(f"{label}, with Material's search index", bench_rebuild(args.runs, work, args.pause, search=True)))
        if "c" in args.only:
            rows.append(row('c. test suite, -m "not browser"' + (f", -n {args.workers}" if args.workers != "0" else ""),
                            bench_tests(args.runs, work, args.workers, notes)))
        if "d" in args.only:
            rows += bench_calculator(args.runs, work, notes, args.site)
        if "e" in args.only:
            rows += bench_engine(args.runs, notes)
        if "f" in args.only:
            rows += bench_suite(args.runs, work, args.workers, notes, args.site)
    print()
    print("| measurement | runs | median wall (s) | median CPU (s) | wall range (s) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print("\n".join(rows))
    for note in notes:
        print(f"\n{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

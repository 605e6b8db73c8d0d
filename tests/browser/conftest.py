"""Browser fixtures: the built site served on 127.0.0.1, Debian's Chromium driven by Playwright.

Chromium is Debian's (/usr/bin/chromium, installed by .ci/run), never a browser that Playwright
downloads. Without it the browser tests skip locally, and fail under CI.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from xml.etree import ElementTree

import pytest

from ..conftest import Build

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    # without these Chromium calls Google hosts by itself
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    # V8's tiers up to Maglev, not TurboFan: a page here lives a few seconds, and TurboFan's compiles of Material's
    # bundle and axe-core cost more CPU than they save (a sweep's CPU, one worker, 3 December 2026: desktop 189 ->
    # 175 CPU-s, phone median 41 -> 37 over six and four runs); WebAssembly's tiers (the calculator's Pyodide) are V8's own
    "--js-flags=--max-opt=2",
]
VENDOR = Path(__file__).resolve().parent / "vendor"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 740}


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _unavailable(reason: str) -> None:
    """Skip with `reason` on a developer machine; under CI a missing browser is a failure."""
    if _in_ci():
        pytest.fail(f"{reason} (CI is set: browser tests must run; .ci/run installs Debian's chromium)")
    pytest.skip(f"{reason}; install it with `apt-get install chromium` (CI installs it and fails without it)")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="session")
def site_url(built: Build) -> Iterator[str]:
    """The built site served by http.server on a free port of 127.0.0.1; its base URL ends in /."""
    handler = functools.partial(_QuietHandler, directory=str(built.site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def page_paths(site: Path) -> list[str]:
    """Every HTML page of the built site as a URL path relative to the root ('' is the home page)."""
    paths = []
    for html in sorted(site.rglob("*.html")):
        rel = html.relative_to(site).as_posix()
        paths.append(rel[: -len("index.html")] if rel.endswith("index.html") else rel)
    return paths


def sitemap_paths(site: Path, site_url_config: str) -> list[str]:
    """The pages sitemap.xml lists, relative to the configured site_url."""
    sitemap = site / "sitemap.xml"
    if not sitemap.is_file():
        return []
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    base = urlsplit(site_url_config).path
    root = ElementTree.parse(sitemap).getroot()  # noqa: S314 - the site's own build output
    locs = [el.text or "" for el in root.findall("s:url/s:loc", ns)]
    return [urlsplit(loc).path.removeprefix(base) for loc in locs]


@pytest.fixture(scope="session")
def pages(built: Build) -> list[str]:
    found = page_paths(built.site)
    assert "" in found, f"no index.html in {built.site}"
    return found


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Debian Chromium for the whole session (per xdist worker)."""
    if not CHROMIUM.is_file():
        _unavailable(f"{CHROMIUM} is missing")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the Python package playwright is not installed (it is in the `test` extra)")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@dataclass
class Log:
    """What one browser context did: every request URL, and anything that went wrong."""

    base: str
    requests: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        return [f"request to another host: {u}" for u in self.foreign] + self.errors

    def clear(self) -> None:
        self.requests.clear()
        self.foreign.clear()
        self.errors.clear()


class Reader:
    """A fresh browser context on the served site that records every request and every error.

    Requests to any host but the site's own are recorded and aborted, so nothing leaves 127.0.0.1
    even while a test is failing.
    """

    def __init__(self, browser: Any, base: str, **context: Any) -> None:
        self.base = base
        self.log = Log(base)
        self.context = browser.new_context(service_workers="block", **context)
        self.context.route(lambda url: not url.startswith(base), self._abort)
        self.context.on("request", self._on_request)
        self.context.on("requestfailed", self._on_failed)
        self.context.on("response", self._on_response)
        self.context.set_default_timeout(15_000)
        self.context.set_default_navigation_timeout(60_000)
        self.page = self.context.new_page()
        self.page.on("console", self._on_console)
        self.page.on("pageerror", lambda exc: self.log.errors.append(f"uncaught script error: {exc}"))
        self.page.on("websocket", lambda ws: self.log.foreign.append(ws.url))

    def _abort(self, route: Any) -> None:
        route.abort("blockedbyclient")

    def _on_request(self, request: Any) -> None:
        self.log.requests.append(request.url)
        if not request.url.startswith(self.base) and not request.url.startswith(("data:", "blob:", "about:")):
            self.log.foreign.append(request.url)

    def _on_failed(self, request: Any) -> None:
        # ERR_ABORTED: the next navigation cancelled a request still in flight (e.g. the favicon);
        # a missing file shows as an HTTP status instead
        if request.url.startswith(self.base) and "ERR_ABORTED" not in (request.failure or ""):
            self.log.errors.append(f"request failed: {request.url} ({request.failure})")

    def _on_response(self, response: Any) -> None:
        if response.url.startswith(self.base) and response.status >= 400 and not response.url.endswith("404.html"):
            self.log.errors.append(f"HTTP {response.status}: {response.url}")

    def _on_console(self, message: Any) -> None:
        if message.type == "error":
            self.log.errors.append(f"console error: {message.text} (at {message.location.get('url', '?')})")

    def open(self, path: str) -> Any:
        """Load a page of the site and wait until the network is quiet."""
        self.page.goto(self.base + path, wait_until="networkidle")
        return self.page

    def scroll_to_end(self) -> None:
        """Scroll the page to its end two screens at a time, pausing at each, then wait for the network to be quiet:
        whatever loads only when scrolled to (a lazy image, an iframe) is requested and recorded. Two screens, because
        Chromium starts a lazy load 1,250 px or more before it enters the viewport (web.dev, "Browser-level image
        lazy loading": 1,250 px on 4G, 2,500 px on slower links), so steps of up to a screen plus twice that leave
        no element unasked; one screen a step took about a minute on the sizing grid's page
        (test_a_lazy_request_for_another_host_is_caught_only_by_scrolling shows the need)."""
        self.page.evaluate("""async () => {
            const pause = () => new Promise(done => setTimeout(done, 40));
            for (let y = 0; y < document.documentElement.scrollHeight; y += 2 * window.innerHeight) {
                window.scrollTo(0, y);
                await pause();
            }
            window.scrollTo(0, document.documentElement.scrollHeight);
            await pause();
        }""")
        self.page.wait_for_load_state("networkidle")

    def close(self) -> None:
        self.context.close()

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@pytest.fixture
def reader(browser: Any, site_url: str) -> Iterator[Reader]:
    """A fresh desktop reader in the light palette."""
    with Reader(browser, site_url, viewport=DESKTOP, color_scheme="light") as r:
        yield r


def assert_quiet(reader: Reader, where: str) -> None:
    """Nothing left 127.0.0.1 and nothing went wrong while the reader was at `where`."""
    problems = reader.log.problems()
    assert not problems, f"{where}:\n  " + "\n  ".join(problems)


@pytest.fixture(scope="session")
def axe_source() -> str:
    return (VENDOR / "axe.min.js").read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def sweeps(browser: Any, site_url: str, pages: list[str], axe_source: str, built: Build,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Every page loaded once per reading, with what each check measured in that load (sweep.py); under xdist the
    workers share the results through the session's common temporary directory."""
    from .sweep import Sweeps

    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = tmp_path_factory.getbasetemp().parent / "browser-sweeps"  # one for all the workers of this session
    else:
        shared = tmp_path_factory.mktemp("browser-sweeps")
    found = Sweeps(browser, site_url, pages, axe_source, shared, (built.site / "search" / "search_index.json").read_bytes())
    yield found
    found.close()

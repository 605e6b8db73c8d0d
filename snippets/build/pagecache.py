"""Pages kept across the rebuilds of `mkdocs serve`: a page whose inputs are all as they were is not converted again.

A page's conversion (its page model, its exec blocks, Python-Markdown, the claims' checks and every guard) is a
function of:

- its source (the Markdown file, front matter included) and its path;
- the tables of data/ it read: every table the build's `ReadLog` noted while the page was converted
  (`snippets.data.loader`: a lookup, a walk, a count or a membership test of any table, directly, through a
  recording view or through what is computed once per catalog and handed out again, `derive`: the engine's records,
  the page models, the calibration's rows, the engine's results), each keyed by the text of its file;
- what every page shares (`build_key`): the code (the plugin drops what it keeps when snippets/ changes), mkdocs.yml,
  the plugin's options, docs/'s other files (the glossary, the stylesheets, the calculator's assets), the site's
  files and their URLs (links are rewritten and checked against them), the catalog's texts (the guard's allowlist of
  data text), the site URL and the build date (`SOURCE_DATE_EPOCH`).

A page that read something the build has no key of is never kept, nor a notebook page, nor a page with an error. The
sizing grid's searches as the build found them are keyed by the build (`SizingTargets.state`, noted as read under
`reference_sizing.TARGETS`): the sizing page is kept where they and the tables it read are as they were.

What is kept is what a conversion leaves: the page's HTML as the plugin hands it on, its table of contents, title
and anchors, the links to other pages' anchors MkDocs checks after every page (checked again, against this build's
pages), the figures and claims `numbers.json` lists, and the text the reference pages' "used by" links are found in
(recorded again, against this build's names). A page kept from an earlier build is byte-identical to the same page
converted anew (tests/build/test_serve.py edits data between builds in one process and compares with a clean build;
what is noted as read: tests/unit/test_reads.py).

Only the serving plugin's object holds it, across the builds of one `mkdocs` process (`PageCache`); it is dropped when
the code changes. A build's part (`BuildPages`) goes with the build's context.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page

    from snippets.build.computed import PageState
    from snippets.data.loader import ReadLog


@dataclass
class KeptPage:
    """What converting one page left, and what it depended on."""

    key: str
    """`page_key` of the page's path, source and the build's shared inputs."""
    reads: dict[str, str]
    """Each table of data/ the conversion read, and the hash of its file's text then."""
    content: str
    toc: Any
    title: str | None
    anchors: set[str] | None
    links: dict[str, dict[str, str]] | None
    """MkDocs' links from the page to other pages' anchors, by the target's path under docs/ (checked each build)."""
    figures: list[dict[str, Any]]
    claims: list[dict[str, Any]]
    opaque_claims: list[str]
    shown: str | None
    """The page's visible text as the "used by" links read it, or None where it was not recorded."""


@dataclass
class PageCache:
    """The pages the last builds converted without an error, by path under docs/ (the plugin's, across builds)."""

    pages: dict[str, KeptPage] = field(default_factory=dict)
    hits: int = 0
    """How many pages were answered from it (the tests read it)."""
    replayed: list[str] = field(default_factory=list)
    """The pages the last build that succeeded answered from it, and those it converted anew (the tests read them)."""
    converted: list[str] = field(default_factory=list)


def table_keys(data_dir: Path, names: tuple[str, ...]) -> dict[str, str]:
    """The hash of each data file's text, by table name."""
    out = {}
    for name in names:
        path = data_dir / f"{name}.yaml"
        out[name] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"
    return out


def build_key(root: Path, docs_dir: Path, config_file: Path, options: object, data_texts: frozenset[str],
              site_url: str | None) -> str:
    """The hash of what every page's conversion shares (the module's docstring), files of the site aside."""
    digest = hashlib.sha256()
    digest.update(config_file.read_bytes() + b"\0")
    digest.update(repr(options).encode() + b"\0")
    digest.update(f"{site_url}\0{os.environ.get('SOURCE_DATE_EPOCH', '')}\0".encode())
    for path in sorted(docs_dir.rglob("*")):  # a page's own source is in its key; every other file in all of them
        if path.is_file() and path.suffix != ".md":
            st = path.stat()
            digest.update(f"{path.relative_to(root).as_posix()} {st.st_size} {st.st_mtime_ns}\0".encode())
    for path in sorted((docs_dir / "includes").rglob("*")) if (docs_dir / "includes").is_dir() else []:
        if path.is_file():
            digest.update(path.read_bytes() + b"\0")
    digest.update(hashlib.sha256("\0".join(sorted(data_texts)).encode()).digest())
    return digest.hexdigest()


def files_key(files: Files) -> str:
    """The hash of the site's files: each one's path, destination and URL, and whether it is published."""
    rows = sorted((f.src_uri, f.dest_uri, f.url, str(f.inclusion)) for f in files)
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()


@dataclass
class BuildPages:
    """One build's use of the `PageCache`: which pages it answers, and what this build's conversions leave."""

    cache: PageCache
    build_key: str
    tables: dict[str, str]
    """`table_keys` of this build's data/."""
    log: ReadLog
    files: str | None = None
    """`files_key`, the first time a page asks."""
    replayed: dict[str, KeptPage] = field(default_factory=dict)
    reading: dict[str, set[str]] = field(default_factory=dict)
    """The record of what each page being converted reads (`ReadLog.open`)."""
    fresh: dict[str, KeptPage] = field(default_factory=dict)

    def page_key(self, src: str, source: str, files: Files) -> str:
        if self.files is None:
            self.files = files_key(files)
        return hashlib.sha256(f"{self.build_key}\0{self.files}\0{src}\0{source}".encode()).hexdigest()

    def lookup(self, src: str, source: str, files: Files) -> KeptPage | None:
        """The page kept for `src` if its source and every input it read are as they were; else None, and what the
        page reads from now on is recorded."""
        key = self.page_key(src, source, files)
        kept = self.cache.pages.get(src)
        if kept is not None and kept.key == key and all(self.tables.get(t) == h for t, h in kept.reads.items()):
            self.replayed[src] = kept
            self.cache.hits += 1
            return kept
        self.reading[src] = self.log.open()
        return None

    def replay(self, page: Page, files: Files) -> str:
        """The kept page's HTML, with what MkDocs' conversion would have set on `page`."""
        kept = self.replayed[page.file.src_uri]
        page.toc = copy.deepcopy(kept.toc)
        if page.title != kept.title:
            page.title = kept.title
        page.present_anchor_ids = None if kept.anchors is None else set(kept.anchors)
        if kept.links is not None:
            links = {}
            for src, anchors in kept.links.items():
                target = files.get_file_from_path(src)
                if target is not None:
                    links[target] = dict(anchors)
            page.links_to_anchors = links
        return kept.content

    def state(self, src: str, kept: KeptPage, markdown: str, model: str | None) -> PageState:
        """The page's state as its conversion left it (what `numbers.json` and `on_env` read)."""
        from snippets.build.computed import PageState

        # the records themselves are shared: nothing changes a page's figures or claims once it is converted
        return PageState(src=src, markdown=markdown, model=model, figures=list(kept.figures),
                         claims=list(kept.claims), opaque_claims=list(kept.opaque_claims))

    def converted(self, page: Page, html: str, state: PageState, shown: str | None, files: Files) -> None:
        """A page converted anew: kept for the next build if it had no error and read only data/'s tables."""
        src = page.file.src_uri
        reading = self.reading.pop(src, None)
        if reading is None:
            return
        self.log.close(reading)
        if state.errors or not reading <= self.tables.keys():
            return
        links = None
        if page.links_to_anchors is not None:
            links = {f.src_uri: dict(a) for f, a in page.links_to_anchors.items()}
        self.fresh[src] = KeptPage(
            key=self.page_key(src, state.markdown, files), reads={t: self.tables[t] for t in sorted(reading)},
            content=html, toc=copy.deepcopy(page.toc), title=page.title,
            anchors=None if page.present_anchor_ids is None else set(page.present_anchor_ids), links=links,
            figures=list(state.figures), claims=list(state.claims),
            opaque_claims=list(state.opaque_claims), shown=shown)

    def keep(self) -> None:
        """The build succeeded: what it converted anew is kept for the next."""
        self.cache.pages.update(self.fresh)
        self.cache.replayed, self.cache.converted = sorted(self.replayed), sorted(self.fresh)
        self.fresh = {}

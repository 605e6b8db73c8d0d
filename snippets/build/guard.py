"""What the reader reads: the guards the plugin runs on each converted page.

- `Guard.page_text_errors`, `Guard.notebook_text_errors`, `Guard.block_output_errors`: hand-typed quantities
  in a rendered page's visible text and attributes, in a notebook's Markdown cells, in what an exec block or
  cell printed (named by the block's or the page model's line), each page parsed once for all of them;
- `notebook_link_errors`: a notebook's links (MkDocs validates only Markdown pages' links).

The exec blocks' own limits (time, something printed, no shared state changed) are `snippets.build.blocks`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from snippets.build import drift
from snippets.build.blocks import BLOCK_OUTPUT_CLOSE
from snippets.build.computed import PageState

_IMPORTED_MODEL = re.compile(r"^\s*from\s+snippets\.pages\.(\w+)\s+import", re.M)
_BLOCK_OUTPUT = re.compile(f'<div class="{drift.BLOCK_OUTPUT_CLASS}" data-block="[0-9]+">|{re.escape(BLOCK_OUTPUT_CLOSE)}')
"""What `Blocks.fence` wraps a block's output in while the page converts, so the page is parsed once for every
scan: `block_output_errors` reads each wrapped output, the page scan leaves them out, and
`unwrap_block_outputs` removes the wrappers."""


def unwrap_block_outputs(html_text: str) -> str:
    """The page as published: each block's output in place, without the wrapper the scans used."""
    return _BLOCK_OUTPUT.sub("", html_text)


class Guard:
    """The scans of one build: its prose scanner (allowlist and the catalog's texts), the folders of included
    Markdown, and the quantities typed in each page model's string literals (read once a build, from
    `pages_dir`, the build's snippets/pages/)."""

    def __init__(self, scanner: drift.Scanner, include_dirs: list[Path], pages_dir: Path) -> None:
        self.scanner = scanner
        self.include_dirs = include_dirs
        self.pages_dir = pages_dir
        self._models: dict[str, list[tuple[str, dict[str, list[tuple[str, int]]]]]] = {}

    def model_literals(self, module: str) -> list[tuple[str, dict[str, list[tuple[str, int]]]]]:
        """The files of page model `module` (a module, or a package of section modules) and the quantities typed in
        each one's string literals, by token."""
        hit = self._models.get(module)
        if hit is None:
            path = self.pages_dir / f"{module}.py"
            files = [path] if path.is_file() else sorted((self.pages_dir / module).glob("*.py"))
            hit = [(f"snippets/pages/{f.relative_to(self.pages_dir).as_posix()}",
                    self.scanner.literal_quantities(f.read_text(encoding="utf-8"))) for f in files]
            self._models[module] = hit
        return hit

    def source_errors(self, state: PageState, prose: str, meta: Mapping[str, Any]) -> list[str]:
        """Hand-typed quantities in a page's source: its prose (`prose`: a Markdown page's source, or a notebook's
        Markdown cells at their lines) and its front matter's title and description, which reach the reader too
        (`<title>`, the meta description). Each prose one is noted in `state.reported`, so the rendered-text scan
        does not report it again."""
        errors: list[str] = []
        for lit in self.scanner.typed_quantities(prose):
            state.reported.add((lit.line, lit.token))
            errors.append(
                f"docs/{state.src}:{lit.line}: hand-typed quantity {lit.token!r} in prose: \"{lit.context}\". "
                "Compute it with {{ ... }}, or if it is a name, add it to snippets/allowed_names.txt"
            )
        for lit in drift.code_span_quantities(prose):
            state.reported.add((lit.line, lit.token))
            errors.append(
                f"docs/{state.src}:{lit.line}: hand-typed quantity {lit.token!r} in a code span: \"{lit.context[:100]}\". "
                "A code span shows code as typed; compute the quantity with {{ ... }} outside it"
            )
        for lit in drift.hand_written_figures(prose):
            errors.append(
                f"docs/{state.src}:{lit.line}: {lit.token!r}... is written by hand with the markup of a computed figure, "
                "claim or block output: only the build writes it; show a figure with {{ name }}"
            )
        lines = state.markdown.splitlines()
        for key in ("title", "description"):
            value = meta.get(key)
            if not isinstance(value, str):
                continue
            line = next((i for i, ln in enumerate(lines, 1) if ln.startswith(f"{key}:")), 1)
            for lit in self.scanner.typed_quantities(value + "\n"):
                errors.append(
                    f"docs/{state.src}:{line}: hand-typed quantity {lit.token!r} in the front matter's {key}: "
                    f"\"{lit.context}\". Compute it in the prose instead, or if it is a name, add it to "
                    "snippets/allowed_names.txt"
                )
        return errors

    def scan_output(self, where: str, shown: list[drift.Shown], code: str, code_line: int,
                    models: list[str]) -> list[str]:
        """Hand-typed quantities in what code printed: a token is typed by hand if it is not part of a text
        from data/ and is typed in a string literal of the code that ran (the block or cell itself, or
        the page model it calls); any other digit was computed."""
        errors: list[str] = []
        own: dict[str, list[tuple[str, int]]] | None = None  # read only when a piece shows a quantity
        typed: list[tuple[str, dict[str, list[tuple[str, int]]]]] = []
        for piece in shown:
            for lit in self.scanner.quantities_in(piece.text):
                if own is None:
                    own = self.scanner.literal_quantities(code)
                    typed = [found for m in models for found in self.model_literals(m)]
                in_code = drift.typed_in(lit.token, piece.text, own)
                if in_code is not None:
                    at = f"{where}:{code_line + in_code}:"
                else:
                    at = next((f"{rel}:{n}" for rel, found in typed
                               if (n := drift.typed_in(lit.token, piece.text, found)) is not None), "")
                    if not at:
                        continue
                    at = f"{where}:{code_line}: the block prints, from {at},"
                shown_as = "text" if piece.where == "text" else f"the {piece.where} attribute"
                errors.append(
                    f"{at} hand-typed quantity {lit.token!r} in {shown_as} of its output: \"{lit.context[:100]}\". "
                    "Compute it (a Figure from the page model, printed with fmt.fig_html or in fmt.table), or if it "
                    "is a name, add it to snippets/allowed_names.txt"
                )
        return errors

    def block_output_errors(self, state: PageState, root: object) -> list[str]:
        """Scan what each exec block of a rendered page printed (`root`, the page parsed, which loses what is read):
        each output is the element `Blocks.fence` wrapped it in, named by its block's line and read against its
        code."""
        errors: list[str] = []
        models = [state.model] if state.model else []
        for code, line in state.block_runs:
            if (n := hand_made_markup(code)) is not None:
                errors.append(f"docs/{state.src}:{line + n}: the block writes the markup of a computed figure or claim "
                              "(sa-fig, sa-claim, sa-text) in a string: only fmt.fig_html and the build write it; print "
                              "a Figure from the page model with fmt.fig_html or in fmt.table")
        for el in root.xpath(f'.//div[@class="{drift.BLOCK_OUTPUT_CLASS}"]'):  # type: ignore[attr-defined]
            code, line = state.block_runs[int(el.get("data-block"))]
            errors += self.scan_output(f"docs/{state.src}", drift.shown_text(el), code, line, models)
        return errors

    def page_text_errors(self, state: PageState, root: object) -> list[str]:
        """Scan a rendered Markdown page (`root`, its parsed content, which loses what is not read) for visible
        text and attributes, outside what its blocks printed (`block_output_errors` read that)."""
        errors: list[str] = []
        for piece in drift.shown_text(root, outside_blocks=True):
            for lit in self.scanner.quantities_in(piece.text):
                line = state.source_line(lit.token)
                where = f"docs/{state.src}:{line}" if line else ""
                if not where:
                    for folder in self.include_dirs:
                        for inc in sorted(folder.glob("*.md")):
                            n = next((i for i, ln in enumerate(inc.read_text(encoding="utf-8").splitlines(), 1)
                                      if lit.token in ln), None)
                            if n and not where:
                                where = f"docs/{inc.parent.name}/{inc.name}:{n} (shown on docs/{state.src})"
                if (line or 0, lit.token) in state.reported:
                    continue
                state.reported.add((line or 0, lit.token))
                shown_as = "the rendered text" if piece.where == "text" else f"the {piece.where} attribute"
                errors.append(
                    f"{where or 'docs/' + state.src}: hand-typed quantity {lit.token!r} in {shown_as}: "
                    f"\"{lit.context[:100]}\". Compute it with {{{{ ... }}}}, or if it is a name, add it to "
                    "snippets/allowed_names.txt"
                )
        return errors

    def notebook_text_errors(self, state: PageState, html_text: str) -> list[str]:
        """Scan a rendered notebook: Markdown cells against the allowlist, outputs for quantities typed in
        the cell (or a page model it imports), each named by the cell's line in the notebook."""
        cells = drift.notebook_cells(state.markdown)
        root = drift.fragment(html_text)
        if root is None:
            return []
        # one rendered cell per source cell: the outermost jp-Cell of each (mkdocs-jupyter wraps a code cell's
        # jp-Cell in another of the same classes, so only a cell inside no other is one)
        cell = 'contains(concat(" ", normalize-space(@class), " "), " jp-Cell ")'
        divs = root.xpath(f"//div[{cell}][not(ancestor::div[{cell}])]")  # type: ignore[attr-defined]
        groups = [("markdown" if "jp-MarkdownCell" in div.get("class", "") else "code", div) for div in divs]
        source_cells = [c for c in cells if c[0] in {"markdown", "code"}]
        where = f"docs/{state.src}"
        if len(groups) != len(source_cells):
            return [f"{where}: the notebook renders {len(groups)} cells for its {len(source_cells)} Markdown and code "
                    "cells, so its rendered text cannot be checked cell by cell (mkdocs-jupyter's markup changed?)"]
        models = _IMPORTED_MODEL.findall(state.markdown)
        errors: list[str] = []
        for n, ((kind, el), (src_kind, line, text)) in enumerate(zip(groups, source_cells, strict=True), 1):
            if kind != src_kind:
                errors.append(f"{where}:{line}: the notebook's cell {n} renders as {kind} where the script has "
                              f"{src_kind}, so its rendered text cannot be checked against its source")
                continue
            # a Markdown cell's rendered text sits in its input area, which the scan leaves out for a code cell's
            # source: read the rendered Markdown itself
            parts = el.xpath('.//div[contains(concat(" ", normalize-space(@class), " "), " jp-RenderedMarkdown ")]') \
                if kind == "markdown" else [el]
            if not parts:
                errors.append(f"{where}:{line}: the notebook's Markdown cell {n} renders no jp-RenderedMarkdown, so its "
                              "text cannot be read (mkdocs-jupyter's markup changed?)")
                continue
            shown = [s for part in parts for s in drift.shown_text(part)]
            if kind == "markdown":
                for piece in shown:
                    for lit in self.scanner.quantities_in(piece.text):
                        at = next((line + i for i, ln in enumerate(text.splitlines()) if lit.token in ln), line)
                        if (at, lit.token) in state.reported:
                            continue
                        state.reported.add((at, lit.token))
                        errors.append(f"{where}:{at}: hand-typed quantity {lit.token!r} in a Markdown cell: "
                                      f"\"{lit.context[:100]}\". Compute it in a code cell, or if it is a name, add it "
                                      "to snippets/allowed_names.txt")
            else:
                errors += self.scan_output(where, shown, text, line - 1, models)
        return errors


_HAND_MARKUP = re.compile(r"\bsa-(?:fig|claim|text)\b")


def hand_made_markup(code: str) -> int | None:
    """The line (1-based, in `code`) of a string literal that writes a figure's or claim's class by hand, else None.
    A block that printed `<span class="sa-fig" data-value="80">80 GB</span>` would publish a typed number as one the
    build computed: the rendered-text scans leave figure spans out."""
    import ast

    if not _HAND_MARKUP.search(code):
        return None  # most blocks hold none: skip the parse
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _HAND_MARKUP.search(node.value):
            return node.lineno
    return None


_HREF_SKIP = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)


def notebook_link_errors(state: PageState, html_text: str, page_url: str, targets: dict[str, set[str] | None],
                         own_anchors: set[str]) -> list[str]:
    """Links of a rendered notebook (MkDocs validates only Markdown pages' links): each relative link
    must reach a page or file of the site, and its `#anchor` an id of that page.

    `targets` maps each URL of the site to its page's anchor ids (None: a file, or a page whose ids are
    not known); `own_anchors` are the notebook page's own ids.
    """
    import posixpath
    from urllib.parse import unquote, urlsplit

    root = drift.fragment(html_text)
    if root is None:
        return []
    base = page_url if page_url.endswith("/") or not page_url else posixpath.dirname(page_url) + "/"
    errors: list[str] = []
    for a in root.iter("a"):  # type: ignore[attr-defined]
        href = a.get("href")
        if not href or _HREF_SKIP.match(href) or "headerlink" in (a.get("class") or ""):
            continue
        parts = urlsplit(href)
        path, anchor = unquote(parts.path), unquote(parts.fragment)
        line = state.source_line(href) or state.source_line(path or "#" + anchor)
        where = f"docs/{state.src}" + (f":{line}" if line else "")
        if not path:
            anchors: set[str] | None = own_anchors
            target = page_url
        else:
            target = posixpath.normpath(posixpath.join(base, path)).lstrip("./")
            if path.endswith("/") and not target.endswith("/"):
                target += "/"
            if target == ".":
                target = ""
            if target not in targets and target + "/" in targets:
                target += "/"
            if target not in targets:
                errors.append(f"{where}: the link {href!r} in a Markdown cell reaches no page or file of the site "
                              f"(it resolves to {target!r} from {page_url!r}; link to the page's URL, e.g. '../../hbm/')")
                continue
            anchors = targets[target]
        if anchor and anchors is not None and anchor not in anchors:
            errors.append(f"{where}: the link {href!r} in a Markdown cell names the anchor #{anchor}, which "
                          f"{target or 'the home page'!r} does not have")
    return errors


def anchor_ids(html_text: str) -> set[str]:
    root = drift.fragment(html_text)
    return {str(i) for i in root.xpath("//@id")} if root is not None else set()  # type: ignore[attr-defined]

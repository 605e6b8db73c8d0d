"""What the reader reads, and blocks that keep to themselves: the guards the plugin runs on each page.

- `page_text_errors`, `notebook_text_errors`, `block_output_errors`: hand-typed quantities in a rendered
  page's visible text and attributes, in a notebook's Markdown cells, in what an exec block or cell
  printed (named by the block's or the page model's line), each page parsed once for all of them;
- `run_block`: every `python exec="on"` block, through markdown-exec's public `formatters` table: a
  time limit, something printed, no shared state changed;
- the notebook's cell time limit (nbclient's `timeout`, through the Jupyter config) and links.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from types import FunctionType
from typing import Any

from markdown import Markdown

from snippets.build import drift
from snippets.build.computed import Pages, PageState, describe_block_failure


@functools.lru_cache(maxsize=64)
def model_literals(module: str) -> tuple[str, dict[str, list[tuple[str, int]]]]:
    """The file of page model `module` and the quantities typed in its string literals, by token."""
    import importlib.util

    spec = importlib.util.find_spec(f"snippets.pages.{module}")
    if spec is None or spec.origin is None:
        return "", {}
    path = Path(spec.origin)
    rel = f"snippets/pages/{path.name}"
    return rel, drift.literal_quantities(path.read_text(encoding="utf-8"))


def scan_output(where: str, shown: list[drift.Shown], code: str, code_line: int, models: list[str],
                data_text: frozenset[str]) -> list[str]:
    """Hand-typed quantities in what code printed: a token is typed by hand if it is not part of a text
    from data/ and is typed in a string literal of the code that ran (the block or cell itself, or
    the page model it calls); any other digit was computed."""
    errors: list[str] = []
    own: dict[str, list[tuple[str, int]]] | None = None  # read only when a piece shows a quantity
    typed: list[tuple[str, dict[str, list[tuple[str, int]]]]] = []
    for piece in shown:
        for lit in drift.quantities_in(piece.text, data_text):
            if own is None:
                own, typed = drift.literal_quantities(code), [model_literals(m) for m in models]
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


def block_output_errors(state: PageState, root: object, data_text: frozenset[str]) -> list[str]:
    """Scan what each exec block of a rendered page printed (`root`, the page parsed, which loses what is read):
    each output is the element `run_block` wrapped it in, named by its block's line and read against its code."""
    errors: list[str] = []
    models = [state.model] if state.model else []
    for el in root.xpath(f'.//div[@class="{drift.BLOCK_OUTPUT_CLASS}"]'):  # type: ignore[attr-defined]
        code, line = state.block_runs[int(el.get("data-block"))]
        errors += scan_output(f"docs/{state.src}", drift.shown_text(el), code, line, models, data_text)
    return errors


def page_text_errors(state: PageState, root: object, include_dirs: list[Path], data_text: frozenset[str]) -> list[str]:
    """Scan a rendered Markdown page (`root`, its parsed content, which loses what is not read) for visible
    text and attributes, outside what its blocks printed (`block_output_errors` read that)."""
    errors: list[str] = []
    for piece in drift.shown_text(root, outside_blocks=True):
        for lit in drift.quantities_in(piece.text, data_text):
            line = state.source_line(lit.token)
            where = f"docs/{state.src}:{line}" if line else ""
            if not where:
                for folder in include_dirs:
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


_IMPORTED_MODEL = re.compile(r"^\s*from\s+snippets\.pages\.(\w+)\s+import", re.M)


def notebook_text_errors(state: PageState, html_text: str, data_text: frozenset[str]) -> list[str]:
    """Scan a rendered notebook: Markdown cells against the allowlist, outputs for quantities typed in
    the cell (or a page model it imports), each named by the cell's line in the notebook."""
    cells = drift.notebook_cells(state.markdown)
    root = drift.fragment(html_text)
    if root is None:
        return []
    divs = root.xpath('//div[contains(concat(" ", normalize-space(@class), " "), " jp-Cell ")]')  # type: ignore[attr-defined]
    groups: list[tuple[str, list[Any]]] = []
    for div in divs:
        kind = "markdown" if "jp-MarkdownCell" in div.get("class", "") else "code"
        if groups and groups[-1][0] == kind == "code":
            groups[-1][1].append(div)
        else:
            groups.append((kind, [div]))
    source_cells = [c for c in cells if c[0] in {"markdown", "code"}]
    models = _IMPORTED_MODEL.findall(state.markdown)
    errors: list[str] = []
    where = f"docs/{state.src}"
    for (kind, els), (src_kind, line, text) in zip(groups, source_cells, strict=False):
        shown = [s for el in els for s in drift.shown_text(el)]
        if kind == "markdown" and src_kind == "markdown":
            for piece in shown:
                for lit in drift.quantities_in(piece.text, data_text):
                    at = next((line + i for i, ln in enumerate(text.splitlines()) if lit.token in ln), line)
                    if (at, lit.token) in state.reported:
                        continue
                    state.reported.add((at, lit.token))
                    errors.append(f"{where}:{at}: hand-typed quantity {lit.token!r} in a Markdown cell: "
                                  f"\"{lit.context[:100]}\". Compute it in a code cell, or if it is a name, add it "
                                  "to snippets/allowed_names.txt")
        elif kind == "code" and src_kind == "code":
            errors += scan_output(where, shown, text, line - 1, models, data_text)
    return errors


_WRAPPED = "__serving_original__"


def wrap_python_formatters(pages: Pages) -> None:
    """Run every `python exec="on"` block through `run_block`, by replacing markdown-exec's formatters
    for python/py in its public `markdown_exec.formatters` table (once; a rebuild rewraps the original)."""
    import markdown_exec

    for lang in ("python", "py"):
        current = markdown_exec.formatters[lang]
        original = getattr(current, _WRAPPED, current)

        def run(*, code: str, md: Markdown, _original: Any = original, **options: Any) -> Any:
            return run_block(pages, _original, code, md, options)

        setattr(run, _WRAPPED, original)
        markdown_exec.formatters[lang] = run


BLOCK_TIMEOUT_ENV = "SERVING_BLOCK_TIMEOUT"
"""Seconds an exec block may run (default 60): a block that sleeps or loops stops the build, not CI."""


class BlockTimeout(BaseException):
    """Raised in a block that overran its time (a BaseException: markdown-exec catches Exception)."""


ModuleState = tuple[tuple[str, ...], tuple[int, ...], tuple[str, ...], tuple[object, ...]]
"""One module as a block found it: its names, the identity of each value, its functions' names and what
could change in their defaults (see `shared_state`)."""


def shared_state() -> dict[str, ModuleState]:
    """What one page's block could change for the pages after it, by module: every module-level value of the
    loaded `snippets` modules (by identity) and the defaults of their functions (by identity, and by value
    where a default could change in place: a list, a dict). Compared with `changed_state`."""
    import sys

    out: dict[str, ModuleState] = {}
    for mod_name, mod in list(sys.modules.items()):
        if not (mod_name == "snippets" or mod_name.startswith("snippets.")) or mod_name.startswith("snippets.build"):
            continue
        names = vars(mod)
        funcs = tuple(k for k, v in names.items() if type(v) is FunctionType)
        out[mod_name] = (tuple(names), tuple(map(id, names.values())), funcs,
                         tuple(_defaults(names[k]) for k in funcs))
    return out


def changed_state(before: dict[str, ModuleState], after: dict[str, ModuleState]) -> list[str]:
    """What changed between two `shared_state`s, named as `snippets.render.fmt.DEFAULT` (a value) or
    `snippets.render.fmt.quantity defaults`; a name a module gained (an import) is no change."""
    changed: list[str] = []
    for mod_name, was in before.items():
        now = after.get(mod_name)
        if now == was:
            continue  # the common case, compared in C
        if now is None:
            changed.append(f"{mod_name} (removed)")
            continue
        ids, had = dict(zip(now[0], now[1], strict=True)), dict(zip(was[0], was[1], strict=True))
        changed += [f"{mod_name}.{k}" for k, v in had.items() if not k.startswith("__") and ids.get(k) != v]
        defaults = dict(zip(now[2], now[3], strict=True))
        changed += [f"{mod_name}.{k} defaults" for k, v in zip(was[2], was[3], strict=True)
                    if ids.get(k) == had[k] and defaults.get(k, v) != v]  # the same function, other defaults
    return sorted(changed)


_ATOMS = (type(None), bool, int, float, complex, str, bytes, range, type)


def _immutable(values: tuple[Any, ...]) -> bool:
    """Whether default values cannot change in place (numbers, text, None, classes, tuples of them)."""
    return all(isinstance(v, _ATOMS) or (isinstance(v, tuple | frozenset) and _immutable(tuple(v))) for v in values)


_CLASSIFIED: dict[int, tuple[object, bool]] = {}
"""`_immutable` of each defaults tuple seen, by identity (holding the tuple, so its id is not reused): a block
makes a snapshot of some 700 functions, whose defaults tuples stay the same objects from block to block."""


def _immutable_tuple(d: tuple[Any, ...] | None) -> bool:
    if d is None:
        return True
    hit = _CLASSIFIED.get(id(d))
    if hit is None or hit[0] is not d:
        hit = _CLASSIFIED[id(d)] = (d, _immutable(d))
    return hit[1]


def _defaults(f: FunctionType) -> object:
    """A function's defaults as a block could change them: the identity of its defaults (a block that assigns
    `__defaults__`), and their repr where one could change in place (a list default edited)."""
    d, kw = f.__defaults__, f.__kwdefaults__
    if d is None and kw is None:
        return None
    kw_values = tuple(kw.values()) if kw else ()
    if _immutable_tuple(d) and _immutable(kw_values):
        return (id(d), tuple(map(id, kw_values)))  # the keyword defaults' dict can be edited in place
    return repr((d, kw))


def _block_line(state: PageState) -> int:
    starts = state.block_starts()
    return starts[state.blocks_run - 1] if 0 < state.blocks_run <= len(starts) else 0


def run_block(pages: Pages, original: Any, code: str, md: Markdown, options: dict[str, Any]) -> Any:
    """One exec block of the page being converted: run it with a time limit, then check that it
    printed something, changed no shared state and typed no quantity."""
    import os
    import signal
    import threading

    state = pages.current
    state.blocks_run += 1
    where = f"docs/{state.src}:{_block_line(state)}"
    limit = float(os.environ.get(BLOCK_TIMEOUT_ENV, "60"))
    before = pages.state_after_block or shared_state()
    failures = len(state.block_failures)
    timed = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")

    def overrun(signum: int, frame: Any) -> None:
        raise BlockTimeout

    if options.get("session"):
        state.errors.append(f"{where}: session={options['session']!r}: a session shares one block's state with the "
                            "blocks after it; each block computes from the page model alone")
        return ""
    previous = signal.signal(signal.SIGALRM, overrun) if timed else None
    if timed:
        signal.setitimer(signal.ITIMER_REAL, limit)
    pages.in_block += 1
    try:
        out = original(code=code, md=md, **options)
    except BlockTimeout:
        state.errors.append(f"{where}: the Python block ran longer than {limit:g} s and was stopped "
                            f"(the limit is ${BLOCK_TIMEOUT_ENV}, in seconds)")
        return ""
    finally:
        pages.in_block -= 1
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    for message in state.block_failures[failures:]:
        state.errors.append(describe_block_failure(state, message, _block_line(state)))
    after = pages.state_after_block = shared_state()
    changed = changed_state(before, after)
    if changed:
        state.errors.append(f"{where}: the Python block changed shared state the pages after it would see: "
                            f"{', '.join(changed[:5])}. A block only prints; keep its changes local")
    if options.get("html") and (markdown := markdown_in_html(str(out))):
        state.errors.append(f'{where}: the html="true" block printed Markdown, which would be published as typed: '
                            f"{markdown[:80]!r}. Print HTML only (fmt.table writes a table as HTML unless a cell "
                            "holds a relative link), or drop html=\"true\"")
    if not str(out).strip() and len(state.block_failures) == failures:
        state.errors.append(f'{where}: the python exec="on" block printed nothing: a block prints the table or '
                            "text it stands for; remove it or print what it computes")
    # what it printed is scanned with the page (block_output_errors), named by this block's line
    state.block_runs.append((code, _block_line(state)))
    return f'<div class="{drift.BLOCK_OUTPUT_CLASS}" data-block="{len(state.block_runs) - 1}">{out}{BLOCK_OUTPUT_CLOSE}'


def markdown_in_html(output: str) -> str:
    """The first line of an html="true" block's output (which skips Markdown) that does not start with a tag:
    prose, a list, a table or a heading printed as Markdown would be published as typed; "" if none.

    Text inside a tag's line is not judged: a table cell may show data text that holds `**` or `[x](y)`,
    escaped to show as typed, exactly as the Markdown path shows it."""
    line = next((ln for ln in output.splitlines() if ln.strip() and not ln.lstrip().startswith("<")), None)
    return "" if line is None else line.strip()


BLOCK_OUTPUT_CLOSE = f"</div><!--/{drift.BLOCK_OUTPUT_CLASS}-->"
_BLOCK_OUTPUT = re.compile(f'<div class="{drift.BLOCK_OUTPUT_CLASS}" data-block="[0-9]+">|{re.escape(BLOCK_OUTPUT_CLOSE)}')
"""What `run_block` wraps a block's output in while the page converts, so the page is parsed once for every
scan: `block_output_errors` reads each wrapped output, the page scan leaves them out, and
`unwrap_block_outputs` removes the wrappers."""


def unwrap_block_outputs(html_text: str) -> str:
    """The page as published: each block's output in place, without the wrapper the scans used."""
    return _BLOCK_OUTPUT.sub("", html_text)


CELL_TIMEOUT_ENV = "SERVING_CELL_TIMEOUT"
"""Seconds a notebook cell may run (default 120): nbclient's `timeout`, through the Jupyter config."""


def write_cell_timeout_config(folder: Path) -> None:
    """Give nbconvert's ExecutePreprocessor (nbclient) a cell time limit, the documented way: a
    `jupyter_nbconvert_config.json` on `JUPYTER_CONFIG_PATH`, which mkdocs-jupyter's NbConvertApp
    loads (`load_config_file`). The notebook worker and any fallback in the build read it alike."""
    import os

    limit = int(float(os.environ.get(CELL_TIMEOUT_ENV, "120")))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "jupyter_nbconvert_config.json").write_text(
        # NotebookClient, the ExecutePreprocessor's base: mkdocs-jupyter replaces the ExecutePreprocessor
        # section of the config with its own options, and traitlets applies a base class's section too
        json.dumps({"NotebookClient": {"timeout": limit}}) + "\n", encoding="utf-8")
    paths = [p for p in os.environ.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep) if p and p != str(folder)]
    os.environ["JUPYTER_CONFIG_PATH"] = os.pathsep.join([str(folder), *paths])


def notebook_timeout_errors(state: PageState, html_text: str) -> list[str]:
    """A notebook whose cell overran its time limit: the worker cached a marker with nbclient's message
    (which quotes the cell); name the cell's line."""
    import os

    from snippets.build.notebook_worker import TIMEOUT_CLASS

    if TIMEOUT_CLASS not in html_text:
        return []
    root = drift.fragment(html_text)
    found = root.xpath(f'//div[@class="{TIMEOUT_CLASS}"]') if root is not None else []  # type: ignore[attr-defined]
    message = str(found[0].get("data-message")) if found else ""
    line = 0
    for kind, first, text in drift.notebook_cells(state.markdown):
        head = next((ln for ln in text.splitlines() if ln.strip()), None)
        if kind == "code" and head and head in message:
            line = first
    limit = os.environ.get(CELL_TIMEOUT_ENV, "120")
    return [f"docs/{state.src}" + (f":{line}" if line else "") + f": a notebook cell ran longer than {limit} s and "
            f"was stopped (nbclient's timeout; the limit is ${CELL_TIMEOUT_ENV}, in seconds)"]


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

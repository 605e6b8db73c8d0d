"""Build integration: computed values and checked claims in Markdown prose.

Syntax, in any page whose front matter names a page model (`model: interconnect`):

- `{{ expr }}` shows a computed figure. `expr` is a Python expression over the names that
  `snippets.pages.<model>.namespace(catalog)` returns, and must give a `Figure` (or a `str`
  taken from data, such as a model's name). Bare numbers are refused: a figure has a unit.
- `{{ claim expr }}words{{ /claim }}` marks a sentence that depends on data. `expr` must give a
  `Claim` (or a bool); if it does not hold, the build stops naming page, line and claim.

Both are inline patterns placed after code spans, so code spans and fenced code are left alone.
Errors are collected per page and stop the build (`PluginError`), strict or not.
"""

from __future__ import annotations

import ast
import difflib
import functools
import html
import importlib
import json
import logging
import re
import xml.etree.ElementTree as etree
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markdown import Extension, Markdown
from markdown.inlinepatterns import InlineProcessor
from markdown.util import AtomicString

from snippets import drift
from snippets.fmt import Claim, Figure

VALUE_RE = r"\{\{\s*(?!claim\s)(?!/claim)(?P<expr>[^{}]+?)\s*\}\}"
CLAIM_RE = r"(?s)\{\{\s*claim\s+(?P<expr>[^{}]+?)\s*\}\}(?P<words>.+?)\{\{\s*/claim\s*\}\}"


@dataclass
class PageState:
    """What the hook knows about the page being converted."""

    src: str = ""
    """The page's path under docs/."""
    markdown: str = ""
    model: str | None = None
    namespace: dict[str, Any] | None = None
    errors: list[str] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    occurrences: dict[str, list[int]] | None = None
    """Line of every `{{ expr }}` / `{{ claim expr }}` of the page body, by expression, in page order."""
    current_line: int | None = None
    """Line of the occurrence being evaluated: `where` reports it."""
    blocks_run: int = 0
    """How many exec blocks of the page have run (the next one is the block after them)."""
    block_texts: set[str] = field(default_factory=set)
    """The rendered text the page's exec blocks printed (normalized): scanned at the block, not again."""
    block_failures: list[str] = field(default_factory=list)
    """markdown-exec's record of each block that raised, as the blocks run."""
    reported: set[tuple[int, str]] = field(default_factory=set)
    """(line, token) of every hand-typed quantity already reported on the page."""

    def block_starts(self) -> list[int]:
        return [self.markdown.count("\n", 0, m.start()) + 1 for m in _EXEC_FENCE.finditer(self.markdown)]

    def source_line(self, token: str) -> int | None:
        """The first line of the page's source (front matter aside) that holds `token`."""
        body = _FRONT_MATTER.sub(_blank, self.markdown)
        for i, ln in enumerate(body.splitlines(), 1):
            if token in ln:
                return i
        return None

    def line_of(self, needle: str) -> int | None:
        idx = self.markdown.find(needle)
        if idx < 0:
            return None
        return self.markdown.count("\n", 0, idx) + 1

    def take_line(self, kind: str, expr: str) -> int | None:
        """The line of the next occurrence of `{{ expr }}` (kind "value") or `{{ claim expr }}` (kind "claim").

        The Markdown processor meets the occurrences of one expression in page order, so each is
        reported at its own line (not the first one's); front matter and code are not searched.
        """
        if self.occurrences is None:
            self.occurrences = computed_occurrences(self.markdown)
        queue = self.occurrences.get(f"{kind} {expr}")
        line = (queue.pop(0) if len(queue) > 1 else queue[0]) if queue else None
        self.current_line = line
        return line

    def where(self, expr: str = "") -> str:
        return f"docs/{self.src}" + (f":{self.current_line}" if self.current_line else "")


_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}).*?^(?P=indent)?[ \t]*(?P=fence)[ \t]*$", re.S | re.M)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_OPENING = re.compile(r"\{\{\s*(?P<claim>claim\s+)?(?P<expr>[^{}]+?)\s*\}\}")


def _blank(m: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", m.group(0))


def computed_occurrences(markdown: str) -> dict[str, list[int]]:
    """Line of every computed value and claim opening in a page's body, keyed "value expr" / "claim expr"."""
    body = markdown
    for pattern in (_FRONT_MATTER, _FENCE, _HTML_COMMENT, _CODE_SPAN):
        body = pattern.sub(_blank, body)
    out: dict[str, list[int]] = {}
    for m in _OPENING.finditer(body):
        expr = " ".join(m.group("expr").split())
        if expr.startswith("/claim"):
            continue
        kind = "claim" if m.group("claim") else "value"
        out.setdefault(f"{kind} {expr}", []).append(body.count("\n", 0, m.start()) + 1)
    return out


CURRENT = PageState()
"""The page being converted. The hook replaces it at the start of every page."""


def begin_page(src: str, markdown: str, model: str | None) -> PageState:
    global CURRENT
    CURRENT = PageState(src=src, markdown=markdown, model=model)
    return CURRENT


def _namespace(state: PageState) -> dict[str, Any] | None:
    if state.namespace is not None:
        return state.namespace
    if state.model is None:
        state.errors.append(
            f"docs/{state.src}: uses {{{{ ... }}}} computed values but its front matter names no `model:`"
        )
        state.namespace = {}
        return None
    from snippets.data import load

    try:
        module = importlib.import_module(f"snippets.pages.{state.model}")
        state.namespace = dict(module.namespace(load()))
    except Exception as exc:
        state.errors.append(
            f"docs/{state.src}: page model snippets.pages.{state.model} failed: {type(exc).__name__}: {exc}"
        )
        state.namespace = {}
        return None
    return state.namespace


FAILED = object()
"""What `evaluate` returns when it has recorded an error (None is itself a result, and refused)."""


def _names_used(expr: str) -> set[str] | None:
    """The free names an expression reads; None if it does not parse."""
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError:
        return None
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def evaluate(state: PageState, expr: str, what: str = "value") -> Any:
    """Evaluate `expr` in the page's namespace; record an error and return FAILED on any failure.

    The expression must read at least one name of the page's namespace: a constant (`{{ "80 GB" }}`,
    `{{ None }}`, `{{ claim 1 == 1 }}`, `{{ claim True }}`) would publish as computed or checked
    what nothing computed or checked.
    """
    ns = _namespace(state)
    if ns is None:
        return FAILED
    shown = f"{{{{ claim {expr} }}}}" if what == "claim" else f"{{{{ {expr} }}}}"
    names = _names_used(expr)
    try:
        result = eval(expr, {"__builtins__": {}}, ns)  # noqa: S307 - site authors' own expressions, no builtins
    except NameError as exc:
        missing = getattr(exc, "name", None) or ""
        close = difflib.get_close_matches(missing, list(ns), n=3)
        hint = f"did you mean {', '.join(close)}?" if close else f"known names: {', '.join(sorted(ns))}"
        state.errors.append(
            f"{state.where(expr)}: unknown name in {{{{ {expr} }}}}: {exc}; {hint} "
            f"(names come from snippets/pages/{state.model}.py)"
        )
        return FAILED
    except Exception as exc:
        state.errors.append(f"{state.where(expr)}: {shown} failed: {type(exc).__name__}: {exc}")
        return FAILED
    if names is not None and not names & set(ns):
        state.errors.append(
            f"{state.where(expr)}: {shown} uses no name from the page's namespace: a {what} must be computed "
            f"from data, not typed (names come from snippets/pages/{state.model}.py)"
        )
        return FAILED
    if result is None:
        state.errors.append(f"{state.where(expr)}: {shown} gave None: nothing would be shown")
        return FAILED
    return result


_IN_BLOCK: list[bool] = []
"""Non-empty while an exec block runs and markdown-exec converts what it printed (`run_block`)."""


def _in_block_output(md: Markdown) -> bool:
    """True while markdown-exec converts an exec block's output: `run_block` (the build's formatter for
    python blocks, through markdown-exec's public `formatters` table) is on the stack.

    Block output is text the block printed, often from data: it is never read for `{{ }}` syntax.
    tests/test_build_failures.py::test_block_output_is_not_read_for_computed_syntax fails if it is.
    """
    return bool(_IN_BLOCK)


def _refuse_in_block_output(state: PageState, text: str) -> None:
    state.errors.append(
        f"docs/{state.src}: {' '.join(text.split())[:80]!r} in the output of an exec block: block output is "
        "never read for {{ }} values or claims; return a Figure from the page model and print it with "
        "snippets.fmt.fig_html instead"
    )


def figure_element(fig: Figure, name: str) -> etree.Element:
    el = etree.Element("span")
    el.set("class", "sa-fig")
    el.set("data-name", name)
    el.set("data-value", f"{fig.value:.10g}")
    el.set("data-unit", fig.unit)
    if fig.basis:
        el.set("data-basis", fig.basis)
        el.set("title", fig.basis)
    el.text = AtomicString(fig.text)  # inserted as text: later inline patterns cannot reinterpret it
    return el


class ValueProcessor(InlineProcessor):
    def handleMatch(self, m: re.Match[str], data: str) -> tuple[etree.Element | None, int, int]:  # type: ignore[override]
        state = CURRENT
        if _in_block_output(self.md):
            _refuse_in_block_output(state, m.group(0))
            return None, m.start(0), m.end(0)
        expr = m.group("expr").strip()
        bare = " ".join(expr.split())
        el = etree.Element("span")
        if bare.startswith("claim ") or bare == "claim":
            state.take_line("claim", bare.removeprefix("claim").strip())
            state.errors.append(
                f"{state.where()}: {{{{ {bare} }}}} is never closed: a claim needs its words and a "
                "{{ /claim }} after them, in the same paragraph"
            )
            return el, m.start(0), m.end(0)
        if bare.startswith("/claim"):
            state.errors.append(f"docs/{state.src}: {{{{ /claim }}}} without an opening {{{{ claim ... }}}}")
            return el, m.start(0), m.end(0)
        state.take_line("value", bare)
        result = evaluate(state, expr)
        if isinstance(result, Figure):
            el = figure_element(result, expr)
            state.figures.append({"name": expr, "value": result.value, "unit": result.unit, "text": result.text})
        elif isinstance(result, str):
            el.set("class", "sa-text")
            el.set("data-name", expr)
            el.text = AtomicString(result)  # data text: no later inline pattern reads it as Markdown
        elif result is not FAILED:
            state.errors.append(
                f"{state.where(expr)}: {{{{ {expr} }}}} gave a {type(result).__name__}, not a Figure: "
                "wrap numbers with a snippets.fmt constructor so they carry a unit"
            )
        return el, m.start(0), m.end(0)


class ClaimProcessor(InlineProcessor):
    def handleMatch(self, m: re.Match[str], data: str) -> tuple[etree.Element | None, int, int]:  # type: ignore[override]
        state = CURRENT
        if _in_block_output(self.md):
            _refuse_in_block_output(state, m.group(0))
            return None, m.start(0), m.end(0)
        expr = m.group("expr").strip()
        words = m.group("words")
        state.take_line("claim", " ".join(expr.split()))
        result = evaluate(state, expr, "claim")
        el = etree.Element("span")
        el.set("class", "sa-claim")
        el.set("data-claim", expr)
        el.text = words
        if isinstance(result, bool):
            result = Claim(result, "")
        if isinstance(result, Claim):
            flat = " ".join(words.split())
            state.claims.append({"claim": expr, "words": flat, "holds": result.holds, "basis": result.basis})
            if result.holds:
                if result.basis:
                    el.set("title", f"Checked at build time: {result.basis}")
            else:
                state.errors.append(
                    f"{state.where(expr)}: claim {expr!r} no longer holds: \"{flat}\""
                    + (f" — the numbers say: {result.basis}" if result.basis else "")
                )
        elif result is not FAILED:
            state.errors.append(
                f"{state.where(expr)}: claim {expr!r} gave a {type(result).__name__}, not a Claim or bool"
            )
        return el, m.start(0), m.end(0)


class ComputedExtension(Extension):
    """Registers the two inline patterns just after code spans (priority 190)."""

    def extendMarkdown(self, md: Markdown) -> None:
        md.inlinePatterns.register(ClaimProcessor(CLAIM_RE, md), "sa-claim", 186)
        md.inlinePatterns.register(ValueProcessor(VALUE_RE, md), "sa-value", 185)


_EXEC_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})\s*(?:python|py)\b[^\n]*\bexec=\"(?:on|true|1)\"", re.M)
_BLOCK_FRAME = re.compile(r'File "<code block: n(\d+)>", line (\d+)')


def describe_block_failure(state: PageState, log_message: str, block_start: int | None = None) -> str:
    """One actionable line for a raising exec block: page, line of the block, the error, the failing line."""
    lines = [ln.rstrip() for ln in log_message.splitlines() if ln.strip()]
    error = next((ln.strip() for ln in reversed(lines) if re.match(r"^\s*\w+(Error|Exception|Exit)\b", ln)),
                 lines[-1].strip() if lines else "unknown error")
    where = f"docs/{state.src}"
    frames = _BLOCK_FRAME.findall(log_message)
    detail = ""
    if block_start is not None:  # the block that raised is known: markdown-exec numbers blocks build-wide
        in_block = re.findall(r'File "<code block: [^>]*>", line (\d+)', log_message)
        if in_block:
            n = int(in_block[-1])
            where += f":{block_start + n}"
            detail = f" (line {n} of the block that starts at line {block_start})"
        else:
            where += f":{block_start}"
    elif frames:
        block_no, line_in_block = (int(x) for x in frames[-1])
        starts = [state.markdown.count("\n", 0, m.start()) + 1 for m in _EXEC_FENCE.finditer(state.markdown)]
        if 0 < block_no <= len(starts):
            where += f":{starts[block_no - 1] + line_in_block}"
            detail = f" (line {line_in_block} of the block that starts at line {starts[block_no - 1]})"
    return (f"{where}: a Python block raised {error}{detail}. "
            "Hint: run the block's code in `python` after `pip install -e .` to see the full traceback")


class ExecWarningCatcher(logging.Handler):
    """Collects markdown-exec's warnings (a raising block) so the hook can stop the build on them."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        CURRENT.block_failures.append(record.getMessage())


def reset_markdown_exec() -> None:
    """Nothing to forget: `run_block` refuses markdown-exec's `session` option, the only state one
    block could leave for another (each block otherwise runs in fresh globals)."""


def collect(html_text: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """Read a page's rendered content: its figures, its claims, and any sign of broken output.

    Figures are every `span.sa-fig` (inline values and table cells alike), one per name; a name
    shown twice with two values is itself a problem. Broken output is a traceback, an error block
    left by a raising exec block, or a `{{`/`}}` that was never evaluated, outside code.

    The page is parsed with lxml (libxml2's HTML parser): the sizing grid alone holds thousands of
    figures, and a Python-level tree (BeautifulSoup) took most of a second to build for it.
    """
    import lxml.html

    if not html_text.strip():
        return [], [], []
    root = lxml.html.fragment_fromstring(html_text, create_parent="div")
    problems: list[str] = []
    figs: dict[str, dict[str, Any]] = {}
    for el in root.xpath('//span[contains(concat(" ", normalize-space(@class), " "), " sa-fig ")]'):
        name = str(el.get("data-name"))
        shown = el.text_content()
        fig: dict[str, Any] = {"name": name, "value": float(str(el.get("data-value"))), "unit": str(el.get("data-unit")),
                               "text": shown}
        if not shown.strip():
            problems.append(f"figure {name!r} renders empty")
        seen = figs.setdefault(name, fig)
        if seen != fig:
            problems.append(f"figure {name!r} is shown with two values: {seen['text']!r} and {fig['text']!r}")
    claims = [
        {"claim": str(el.get("data-claim")), "words": " ".join(el.text_content().split())}
        for el in root.xpath('//span[contains(concat(" ", normalize-space(@class), " "), " sa-claim ")]')
    ]
    # code is shown as written: a `{{` there is code, not a missed value; a traceback there is not
    for code in root.xpath("//pre | //code[not(ancestor::pre)]"):
        if "Traceback (most recent call last)" in code.text_content():
            problems.append("a traceback is published in a code block")
        code.drop_tree()  # keeps the text that follows it
    for el in root.xpath("//style | //script"):  # not prose (a notebook page carries its CSS inline)
        el.drop_tree()
    prose = " ".join(root.itertext())
    for marker in ("{{", "}}", "Traceback (most recent call last)", 'exec="on"'):
        if marker in prose:
            idx = prose.index(marker)
            problems.append(f"unrendered {marker!r} in the page: ...{' '.join(prose[max(0, idx - 40):idx + 40].split())}...")
    return sorted(figs.values(), key=lambda f: f["name"]), claims, problems


_CELL_ID = re.compile(r'\bid="cell-id=[^"]*"')


def stable_cell_ids(html_text: str) -> str:
    """Number a rendered notebook's cells in order (`cell-1`, `cell-2`, ...).

    jupytext assigns random cell ids when it reads a percent script, and nbconvert writes them into
    the page, so two builds of one commit would differ by those ids alone.
    """
    counter = iter(range(1, 1_000_000))
    return _CELL_ID.sub(lambda _: f'id="cell-{next(counter)}"', html_text)


def numbers_json(pages: dict[str, PageState]) -> str:
    """Every computed figure and checked claim on the site, by page, as stable JSON."""
    out = {src: {"figures": st.figures, "claims": st.claims} for src, st in sorted(pages.items())}
    return json.dumps(out, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def escape(text: str) -> str:
    return html.escape(text, quote=True)


# ---------------------------------------------------------------- what the reader reads


DATA_TEXT: frozenset[str] = frozenset()
"""Every text of the catalog (normalized), set by the build once data/ is loaded: see drift.data_text."""


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
                ) -> list[str]:
    """Hand-typed quantities in what code printed: a token is typed by hand if it is not part of a text
    from data/ and is typed in a string literal of the code that ran (the block or cell itself, or
    the page model it calls); any other digit was computed."""
    own = drift.literal_quantities(code)
    typed = [model_literals(m) for m in models]
    errors: list[str] = []
    for piece in shown:
        for lit in drift.quantities_in(piece.text, DATA_TEXT):
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


def block_output_errors(state: PageState, code: str, html_out: str) -> list[str]:
    """Scan an exec block's rendered output (called as the block finishes, so it is named by its line)."""
    starts = state.block_starts()
    line = starts[state.blocks_run - 1] if 0 < state.blocks_run <= len(starts) else 0
    shown = drift.shown_text(drift.fragment(html_out))
    state.block_texts.update(drift.normalize(s.text) for s in shown)
    return scan_output(f"docs/{state.src}", shown, code, line, [state.model] if state.model else [])


def page_text_errors(state: PageState, html_text: str, include_dirs: list[Path]) -> list[str]:
    """Scan a rendered Markdown page's visible text and attributes, outside what its blocks printed."""
    errors: list[str] = []
    for piece in drift.shown_text(drift.fragment(html_text)):
        if drift.normalize(piece.text) in state.block_texts:
            continue
        for lit in drift.quantities_in(piece.text, DATA_TEXT):
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


def notebook_text_errors(state: PageState, html_text: str) -> list[str]:
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
                for lit in drift.quantities_in(piece.text, DATA_TEXT):
                    at = next((line + i for i, ln in enumerate(text.splitlines()) if lit.token in ln), line)
                    if (at, lit.token) in state.reported:
                        continue
                    state.reported.add((at, lit.token))
                    errors.append(f"{where}:{at}: hand-typed quantity {lit.token!r} in a Markdown cell: "
                                  f"\"{lit.context[:100]}\". Compute it in a code cell, or if it is a name, add it "
                                  "to snippets/allowed_names.txt")
        elif kind == "code" and src_kind == "code":
            errors += scan_output(where, shown, text, line - 1, models)
    return errors


_WRAPPED = "__serving_original__"


def wrap_python_formatters() -> None:
    """Run every `python exec="on"` block through `run_block`, by replacing markdown-exec's formatters
    for python/py in its public `markdown_exec.formatters` table (once; a rebuild rewraps the original)."""
    import markdown_exec

    for lang in ("python", "py"):
        current = markdown_exec.formatters[lang]
        original = getattr(current, _WRAPPED, current)

        def run(*, code: str, md: Markdown, _original: Any = original, **options: Any) -> Any:
            return run_block(_original, code, md, options)

        setattr(run, _WRAPPED, original)
        markdown_exec.formatters[lang] = run


BLOCK_TIMEOUT_ENV = "SERVING_BLOCK_TIMEOUT"
"""Seconds an exec block may run (default 60): a block that sleeps or loops stops the build, not CI."""


class BlockTimeout(BaseException):
    """Raised in a block that overran its time (a BaseException: markdown-exec catches Exception)."""


def shared_state() -> dict[str, Any]:
    """What one page's block could change for the pages after it: every module-level value of the
    loaded `snippets` modules (by identity) and the defaults of their functions (by value)."""
    import sys
    import types

    out: dict[str, Any] = {}
    for mod_name, mod in list(sys.modules.items()):
        if not (mod_name == "snippets" or mod_name.startswith("snippets.")) or mod_name == __name__:
            continue
        for key, val in list(vars(mod).items()):
            if key.startswith("__"):
                continue
            out[f"{mod_name}.{key}"] = id(val)
            if isinstance(val, types.FunctionType):
                out[f"{mod_name}.{key} defaults"] = repr((val.__defaults__, val.__kwdefaults__))
    return out


def _block_line(state: PageState) -> int:
    starts = state.block_starts()
    return starts[state.blocks_run - 1] if 0 < state.blocks_run <= len(starts) else 0


def run_block(original: Any, code: str, md: Markdown, options: dict[str, Any]) -> Any:
    """One exec block of the page being converted: run it with a time limit, then check that it
    printed something, changed no shared state and typed no quantity."""
    import os
    import signal
    import threading

    state = CURRENT
    state.blocks_run += 1
    where = f"docs/{state.src}:{_block_line(state)}"
    limit = float(os.environ.get(BLOCK_TIMEOUT_ENV, "60"))
    before = shared_state()
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
    _IN_BLOCK.append(True)
    try:
        out = original(code=code, md=md, **options)
    except BlockTimeout:
        state.errors.append(f"{where}: the Python block ran longer than {limit:g} s and was stopped "
                            f"(the limit is ${BLOCK_TIMEOUT_ENV}, in seconds)")
        return ""
    finally:
        _IN_BLOCK.pop()
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    for message in state.block_failures[failures:]:
        state.errors.append(describe_block_failure(state, message, _block_line(state)))
    after = shared_state()
    changed = sorted(k for k in before if before[k] != after.get(k))  # a module imported now adds names: fine
    if changed:
        state.errors.append(f"{where}: the Python block changed shared state the pages after it would see: "
                            f"{', '.join(changed[:5])}. A block only prints; keep its changes local")
    if not str(out).strip() and len(state.block_failures) == failures:
        state.errors.append(f'{where}: the python exec="on" block printed nothing: a block prints the table or '
                            "text it stands for; remove it or print what it computes")
    state.errors.extend(block_output_errors(state, code, str(out)))
    return out


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

    from serving_build.notebook_worker import TIMEOUT_CLASS

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

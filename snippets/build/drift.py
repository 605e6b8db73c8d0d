"""Drift guard: no hand-typed quantities in a page's prose.

Prose is what remains of a page's Markdown source after removing front matter, fenced code
(exec blocks included), inline code, `{{ computed values }}` and claim tags, HTML tags and
comments, link targets and ordered-list markers. Any digit left there is a quantity typed by
hand, unless it belongs to a name on the reviewed allowlist (`snippets/allowed_names.txt`).

A `Scanner` reads the allowlist once and remembers what it has scanned (a grid repeats its cells): the build
makes one per build (`snippets.build.context.BuildContext`), so an edited allowlist or data/ is read by the next
build, and nothing is kept at module level. What it read in Python code's string literals (`literal_quantities`:
a syntax tree a file, the page models' every build) is a function of the code, the allowlist and this module's
code alone, and what it found in a piece of rendered text (`quantities_in`) of the text, the allowlist, this
module's code and the catalog's texts: the build keeps both in its cache directory (`Scanner.load`, `Scanner.save`),
keyed on the allowlist, this module and `syntax`, the Python that runs them (and the catalog's texts, for the
pieces), each entry by the code (its hash) or the text it read.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snippets.build import syntax

ALLOWLIST = Path(__file__).resolve().parent.parent / "allowed_names.txt"
KEPT_PREFIX = "guard-"
"""The cache files of `Scanner.literal_quantities` and `Scanner.quantities_in` (`<cache_dir>/guard-literals-<key>.json`,
`<cache_dir>/guard-pieces-<key>.json`)."""

_HTML_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_ATTR_LIST = re.compile(r"\{:?[ \t]*[#.][^}]*\}")
_ORDERED_MARKER = re.compile(r"^([ \t]*)\d+[.)](?=[ \t])", re.M)
NUMERIC = ("\\d\u00b2\u00b3\u00b9\u00bc-\u00be\u2070-\u2079\u2080-\u2089\u2150-\u2189\u2460-\u24ff\u2776-\u2793"
           "\u3251-\u325f\u32b1-\u32bf")
"""What counts as a digit in prose: decimal digits of any script (`\\d`), and the characters that write a number
without one: superscripts and subscripts (`10³`), vulgar fractions (`½`), Roman numerals (`Ⅻ`), circled,
parenthesized and dingbat numbers (`⑧`). Each is `str.isnumeric()`, as the scans of rendered text test it."""
_DIGIT_WORD = re.compile(f"[^\\s]*[{NUMERIC}][^\\s]*")
_DIGIT = re.compile(f"[{NUMERIC}]")


@dataclass(frozen=True)
class Literal:
    line: int
    token: str
    context: str


def allowed_names(path: Path = ALLOWLIST) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each allowlisted name with its pattern, longest first ("HBM3e" before "HBM3")."""
    return names_of(path.read_text(encoding="utf-8"))


def names_of(text: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """`allowed_names` of the allowlist's text."""
    names = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    names.sort(key=len, reverse=True)
    return tuple((n, re.compile(r"(?<![\w.])" + re.escape(n) + r"(?![\w])")) for n in names)


def _blank(match: re.Match[str]) -> str:
    """Replace a match by as many newlines as it spans, so line numbers survive."""
    return "\n" * match.group(0).count("\n") + " "


def prose(markdown: str) -> str:
    """The page's prose: the source with code, computed values and markup blanked out."""
    text = syntax.FRONT_MATTER.sub(_blank, markdown)
    text = syntax.FENCE.sub(_blank, text)
    text = syntax.HTML_COMMENT.sub(_blank, text)
    text = syntax.ANY_COMPUTED.sub(_blank, text)
    text = syntax.CODE_SPAN.sub(_blank, text)
    text = _HTML_TAG.sub(" ", text)
    text = _LINK_TARGET.sub("] ", text)
    text = _ATTR_LIST.sub(" ", text)
    text = _ORDERED_MARKER.sub(r"\1", text)
    return text


def typed_quantities(markdown: str, allowed: tuple[tuple[str, re.Pattern[str]], ...]) -> list[Literal]:
    """Every digit-bearing token in the prose that is not an allowlisted name (`allowed_names`), and every number in
    ASCII Roman numerals followed by a unit (`XII GB`), with its line."""
    found: list[Literal] = []
    for lineno, line in enumerate(prose(markdown).splitlines(), 1):
        if not _DIGIT.search(line):
            found += [Literal(lineno, m.group(0), line.strip()) for m in _ROMAN_QUANTITY.finditer(line)]
            continue  # no digit, no quantity: names are struck out only to keep their digits
        found += [Literal(lineno, m.group(0), line.strip()) for m in _ROMAN_QUANTITY.finditer(line)]
        stripped = line
        for name, pat in allowed:
            if name in stripped:  # a match holds the name: most lines hold none, and skip the regex
                stripped = pat.sub(" ", stripped)
        for m in _DIGIT_WORD.finditer(stripped):
            found.append(Literal(lineno, m.group(0).strip(".,;:()*_\"'"), line.strip()))
    return found


_NUMBER_WORD = (r"two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|"
                r"sixty|seventy|eighty|ninety|hundreds?|thousands?|millions?|billions?|trillions?")
_UNIT_WORD = (r"(?:[kMGTP]i?B|[kMGTP]B/s|bytes?|kilobytes?|megabytes?|gigabytes?|terabytes?|bits?|GPUs?|cards?|nodes?|"
              r"tokens?|layers?|heads?|experts?|ms|µs|seconds?|milliseconds?|microseconds?|hours?|watts?|dollars?|"
              r"percent|TFLOP/s|FLOP/s|FLOPs?|parameters?|times)")
_COUNT_WORD = re.compile(rf"\b(?:(?:{_NUMBER_WORD})(?:[ -](?:{_NUMBER_WORD}))*[ -]{_UNIT_WORD}\b|twice|thrice|"
                         r"(?:two|three|four|five|ten|hundred)fold|double|triple|quadruple|halve[sd]?)\b", re.I)


_ROMAN_QUANTITY = re.compile(rf"\b(?=[MDCLXVI]{{2,}}\b)M{{0,3}}(?:CM|CD|D?C{{0,3}})(?:XC|XL|L?X{{0,3}})(?:IX|IV|V?I{{0,3}})"
                             rf"[ \u00a0]+{_UNIT_WORD}(?![\w/])")
"""A number in ASCII Roman numerals with a unit after it (`XII GB`, `IV GPUs`): a quantity without a digit. Two
letters at least, so the pronoun and a placeholder `X` stay prose; the Unicode numerals (`Ⅻ`) are in `NUMERIC`."""


_CODE_QUANTITY = re.compile(rf"(?<![\w.])[{NUMERIC}][{NUMERIC},.]*(?:[ \u00a0]?(?:{_UNIT_WORD}|%|k?W)|×)(?![\w/])")
"""A number written with a unit (`80 GB`, `3.35 TB/s`, `700W`, `2×`): what a code span may not hold. A code span's
bare numbers are code (`--tp 2`, `(p − 1) / (m + p − 1)`, `2 × (N − 1)`), its numbers with a unit are quantities."""


def _outside_code_and_values(markdown: str) -> str:
    text = syntax.FRONT_MATTER.sub(_blank, markdown)
    text = syntax.FENCE.sub(_blank, text)
    text = syntax.HTML_COMMENT.sub(_blank, text)
    return syntax.ANY_COMPUTED.sub(_blank, text)


def code_span_quantities(markdown: str) -> list[Literal]:
    """Numbers with a unit typed in the page's inline code spans (fences are code and left alone)."""
    text = _outside_code_and_values(markdown)
    found: list[Literal] = []
    for span in syntax.CODE_SPAN.finditer(text):
        for m in _CODE_QUANTITY.finditer(span.group(0)):
            line = text.count("\n", 0, span.start() + m.start()) + 1
            found.append(Literal(line, m.group(0), " ".join(span.group(0).split())))
    return found


_FIGURE_MARKUP = re.compile(r"<[A-Za-z][^>]*?(?:\bdata-(?:name|value|unit|basis|claim|block)\b|"
                            r"\bclass\s*=\s*[\"']?[^\"'>]*\bsa-(?:fig|claim|text|out)\b)[^>]*>", re.I)
"""An element written with the attributes or classes of a computed figure, claim or block output."""


def hand_written_figures(markdown: str) -> list[Literal]:
    """Elements in a page's source dressed as what the build computes (`<span class="sa-fig" data-name=...>`):
    only the build writes them, from a `{{ }}` value, a claim or a block's `fmt.fig_html`."""
    text = _outside_code_and_values(markdown)
    text = syntax.CODE_SPAN.sub(_blank, text)
    return [Literal(text.count("\n", 0, m.start()) + 1, m.group(0)[:60], m.group(0)[:120])
            for m in _FIGURE_MARKUP.finditer(text)]


def count_words(markdown: str) -> list[Literal]:
    """Quantities written as words in the prose ("eighty gigabytes", "twice"): a warning, not an error,
    since most are plain English ("twice as fast" may be a computed ratio, or a figure of speech)."""
    return [Literal(lineno, m.group(0), line.strip())
            for lineno, line in enumerate(prose(markdown).splitlines(), 1) for m in _COUNT_WORD.finditer(line)
            if not line[:m.start()].rstrip().lower().endswith("per")]  # "$ per million tokens" is a unit


def notebook_cells(source: str) -> list[tuple[str, int, str]]:
    """A jupytext notebook's cells as (cell type, first line in the file, source), read with jupytext.

    jupytext decides what is a cell and what kind (`[markdown]`, its alias `[md]`, raw, code); the
    file is read only to find the line each cell's text starts at, so messages name the file's line.
    """
    import jupytext

    nb = jupytext.reads(source, fmt="py:percent")
    lines = source.splitlines()
    pos, out = 0, []
    for cell in nb.cells:
        text = str(cell.source)
        first = next((ln for ln in text.splitlines() if ln.strip()), "")
        line = pos + 1
        if first:
            for i in range(pos, len(lines)):
                if first.strip() in lines[i]:
                    line, pos = i + 1, i + 1
                    break
        out.append((str(cell.cell_type), line, text))
    return out


def notebook_markdown(source: str) -> str:
    """The Markdown cells of a jupytext notebook at their lines in the file, every other line blank."""
    width = source.count("\n") + 1
    out = [""] * width
    for kind, line, text in notebook_cells(source):
        if kind != "markdown":
            continue
        for i, ln in enumerate(text.splitlines()):
            if line - 1 + i < width:
                out[line - 1 + i] = ln
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- what the reader reads

_SKIP_XPATH = (
    './/span[contains(concat(" ", normalize-space(@class), " "), " sa-fig ")]'
    ' | .//span[contains(concat(" ", normalize-space(@class), " "), " sa-text ")]'
    ' | .//code | .//pre | .//*[local-name()="svg"] | .//style | .//script'
    ' | .//*[contains(@class, "jp-InputPrompt") or contains(@class, "jp-OutputPrompt")]'
    ' | .//*[contains(concat(" ", normalize-space(@class), " "), " jp-InputArea ")]'
)
BLOCK_OUTPUT_CLASS = "sa-out"
"""The class of the element the build wraps each exec block's output in while it converts a page: the block
scan reads it, named by the block's line, and the page scan leaves it out (the wrapper is gone once it has)."""
_SKIP_BLOCKS_XPATH = _SKIP_XPATH + f' | .//div[@class="{BLOCK_OUTPUT_CLASS}"]'
READ_ATTRIBUTES = ("title", "alt", "aria-label")
_BLOCKS = ("p", "li", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "dt", "dd", "figcaption", "caption",
           "summary", "blockquote", "div")


@dataclass(frozen=True)
class Shown:
    """A piece of rendered text: `where` is "text" or the attribute it was read from."""

    where: str
    text: str


def shown_text(root: object, *, outside_blocks: bool = False) -> list[Shown]:
    """Visible text and title/alt/aria-label attributes of an lxml element, outside computed spans,
    code, pre and SVG (and a claim's tooltip: the build writes it from the claim's numbers); with
    `outside_blocks`, outside what exec blocks printed too. The element loses what is left out."""
    from lxml import etree as lx

    el_root = root if isinstance(root, lx._Element) else None
    if el_root is None:
        return []
    for el in el_root.xpath(_SKIP_BLOCKS_XPATH if outside_blocks else _SKIP_XPATH):
        el.drop_tree()
    out: list[Shown] = []
    # text by block (a paragraph, a cell, a list item, a heading): inline markup (an abbreviation, a
    # link, emphasis) does not cut "PCIe 5.0" in two
    blocks = list(el_root.iter(*_BLOCKS))
    outer = {anc for el in blocks for anc in el.iterancestors(*_BLOCKS)}  # blocks holding another block
    for el in blocks:
        text = el.text_content() if el not in outer else _own_text(el)
        if text.strip():
            out.append(Shown("text", text))
    for el in el_root.iter():
        if not isinstance(el.tag, str):
            continue
        is_claim = "sa-claim" in (el.get("class") or "").split()
        for attr in READ_ATTRIBUTES:
            value = el.get(attr)
            if value and value.strip() and not (is_claim and attr == "title"):
                out.append(Shown(attr, value))
    return out


def _own_text(el: object) -> str:
    """The text of a block that holds other blocks, outside them: a list item's words before its sublist, or
    text a block printed straight into the page beside a table (its inline children's text included)."""
    parts = [el.text or ""]  # type: ignore[attr-defined]
    for child in el:  # type: ignore[attr-defined]
        if isinstance(child.tag, str) and child.tag not in _BLOCKS:
            # an element holding blocks (a table, its rows): only its text outside them; the blocks are read whole
            parts.append(_own_text(child) if next(child.iter(*_BLOCKS), None) is not None else child.text_content())
        parts.append(child.tail or "")
    return "".join(parts)


def fragment(html_text: str) -> object:
    import lxml.html

    return lxml.html.fragment_fromstring(html_text, create_parent="div") if html_text.strip() else None


def normalize(text: str) -> str:
    return " ".join(text.replace('"', "'").split())


def data_text(obj: object) -> frozenset[str]:
    """Every text the catalog holds (names, notes, source titles, ids, dates as ISO), normalized:
    text printed from data/ has a source of its own and is not typed on a page."""
    import dataclasses
    import datetime

    found: set[str] = set()
    seen: set[int] = set()

    def walk(x: object) -> None:
        if id(x) in seen:
            return
        seen.add(id(x))
        if isinstance(x, str):
            found.add(normalize(x))
        elif isinstance(x, datetime.date):
            found.add(x.isoformat())
        elif isinstance(x, dict | Mapping):
            for k, v in x.items():
                walk(k)
                walk(v)
        elif isinstance(x, list | tuple | set | frozenset):
            for v in x:
                walk(v)
        elif isinstance(fields := getattr(type(x), "model_fields", None), dict):
            for name in fields:
                walk(getattr(x, name, None))
        elif dataclasses.is_dataclass(x) and not isinstance(x, type):  # an engine record the data validates into
            for f in dataclasses.fields(x):
                if f.name != "derived":  # a catalog's: what the build computed from it, not its texts
                    walk(getattr(x, f.name))

    walk(obj)
    return frozenset(s for s in found if _DIGIT.search(s) and len(s) >= 2)


class Scanner:
    """The prose scanner of one build: the allowlist as it was when the build started, the catalog's texts
    (`data_text`), and what it has already scanned (a grid repeats its cells, page models their words)."""

    def __init__(self, data: frozenset[str] = frozenset(), allowlist: Path = ALLOWLIST) -> None:
        self.data = data
        text = allowlist.read_bytes()
        self.allowed = names_of(text.decode("utf-8"))
        self._pieces: dict[str, tuple[Literal, ...]] = {}
        self._words: dict[str, tuple[str, ...]] = {}
        self._holding: dict[str, tuple[str, ...]] = {}
        self._literals: dict[str, dict[str, list[tuple[str, int]]]] = {}
        """`literal_quantities` by the hash of the code: read from the cache directory, or computed this build."""
        self._used: dict[str, set[str]] = {"literals": set(), "pieces": set()}
        """The entries of each kept table this build asked for (what `save` keeps)."""
        self._fresh: set[str] = set()
        """The kept tables this build computed an entry of."""
        self._kept_pieces: set[str] = set()
        """The rendered pieces read from the cache directory (`load`)."""
        digest = hashlib.sha256(sys.version.encode() + b"\0allowlist\0" + text + b"\0")
        for path in (Path(__file__), Path(syntax.__file__)):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        self.literals_key = digest.hexdigest()[:16]
        """The hash of what `literal_quantities` depends on besides the code: the allowlist as this scanner read it,
        this module's and `syntax`'s code, the Python version."""
        digest.update(b"\0data\0" + "\0".join(sorted(data)).encode("utf-8", "surrogatepass"))
        self.pieces_key = digest.hexdigest()[:16]
        """What `quantities_in` depends on besides the text: the same, and the catalog's texts."""

    def _path(self, cache_dir: Path, table: str) -> Path:
        key = self.literals_key if table == "literals" else self.pieces_key
        return cache_dir / f"{KEPT_PREFIX}{table}-{key}.json"

    def load(self, cache_dir: Path) -> None:
        """Take what a build with the same allowlist, code (and catalog texts, for the rendered pieces) kept in
        `cache_dir` (`save`)."""
        for table in ("literals", "pieces"):
            path = self._path(cache_dir, table)
            try:
                kept = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
                if table == "literals":
                    literals = {code_hash: {tok: [(str(w), int(n)) for w, n in places] for tok, places in found.items()}
                                for code_hash, found in kept.items()}
                else:
                    pieces = {str(piece): tuple(Literal(int(line), str(token), str(context))
                                                for line, token, context in lits) for piece, lits in kept.items()}
            except (ValueError, TypeError, AttributeError):  # a damaged file: scanned anew, and replaced
                continue
            if table == "literals":
                self._literals.update(literals)
            else:
                self._pieces.update(pieces)
                self._kept_pieces.update(pieces)

    def save(self, cache_dir: Path) -> None:
        """Keep what this build scanned (the entries it asked for) in `cache_dir`, for each table of which it scanned
        anything anew, and remove the files of other keys."""
        for table in sorted(self._fresh):
            cache_dir.mkdir(parents=True, exist_ok=True)
            path = self._path(cache_dir, table)
            if table == "literals":
                body: dict[str, Any] = {k: self._literals[k] for k in sorted(self._used[table])}
            else:
                body = {k: [[x.line, x.token, x.context] for x in self._pieces[k]] for k in sorted(self._used[table])}
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(body), encoding="utf-8")
            tmp.replace(path)
            for old in cache_dir.glob(f"{KEPT_PREFIX}{table}-*.json"):
                if old != path:
                    old.unlink(missing_ok=True)

    def typed_quantities(self, markdown: str) -> list[Literal]:
        """`typed_quantities` of a page's Markdown source with this build's allowlist."""
        return typed_quantities(markdown, self.allowed)

    def quantities_in(self, text: str) -> tuple[Literal, ...]:
        """The hand-typed quantities of one piece of rendered text (line 1); a token inside a text from
        data/ that the piece shows whole is not one."""
        hit = self._pieces.get(text)
        if hit is not None:
            if text in self._kept_pieces:
                self._used["pieces"].add(text)
            return hit
        found: tuple[Literal, ...] = ()
        if any(ch.isnumeric() for ch in text) or _ROMAN_QUANTITY.search(text):
            flat = normalize(text)
            found = tuple(lit for lit in typed_quantities(flat + "\n", self.allowed)
                          if not any(d in flat for d in self._texts_holding(lit.token)))
            self._used["pieces"].add(text)  # kept across builds: only what took a scan
            self._fresh.add("pieces")
        self._pieces[text] = found
        return found

    def _texts_holding(self, token: str) -> tuple[str, ...]:
        """The catalog's texts that hold `token` (the pages repeat their tokens: each is looked for once)."""
        hit = self._holding.get(token)
        if hit is None:
            hit = self._holding[token] = tuple(d for d in self.data if token in d)
        return hit

    def _word_tokens(self, word: str) -> tuple[str, ...]:
        """The quantities `typed_quantities` finds in one word (the page models repeat their words)."""
        hit = self._words.get(word)
        if hit is None:
            hit = self._words[word] = tuple(lit.token for lit in typed_quantities(word + "\n", self.allowed))
        return hit

    def literal_quantities(self, code: str) -> dict[str, list[tuple[str, int]]]:
        """Digit-bearing tokens typed in the string literals of Python code (docstrings aside): for each,
        the words around it in the literal and the literal's line. What a block or page model can print
        that no value computed is one of these, shown with the same words around it. Read once per code (the
        class's docstring)."""
        key = hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()
        self._used["literals"].add(key)
        hit = self._literals.get(key)
        if hit is None:
            hit = self._literals[key] = self._read_literals(code)
            self._fresh.add("literals")
        return hit

    def _read_literals(self, code: str) -> dict[str, list[tuple[str, int]]]:
        import ast

        try:
            tree = ast.parse(code)
        except SyntaxError:
            return {}
        docs: set[int] = set()
        texts: list[tuple[ast.Constant, str]] = []  # one walk: the docstrings are known once it ends
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant):
                if isinstance(node.value, str) and any(ch.isnumeric() for ch in node.value):
                    texts.append((node, node.value))  # only digit-bearing tokens are quantities
            elif isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.body:
                first = node.body[0]
                if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                    docs.add(id(first.value))
        out: dict[str, list[tuple[str, int]]] = {}
        code_lines = code.splitlines()

        def line_of(node: ast.Constant, token: str, window: str) -> int:
            # an implicitly joined (f-)string reports its first line for every part: find the part's own
            span = range(node.lineno, (node.end_lineno or node.lineno) + 1)
            for needle in (window, token):
                for n in span:
                    if n <= len(code_lines) and needle in normalize(code_lines[n - 1]):
                        return n
            return node.lineno

        for node, value in texts:
            if id(node) not in docs:
                for line in prose(value + "\n").splitlines():
                    words = normalize(line).split(" ")
                    for i, word in enumerate(words):
                        if not any(ch.isnumeric() for ch in word):
                            continue  # typed_quantities finds only digit-bearing tokens: skip its regexes
                        for token in self._word_tokens(word):
                            window = " ".join(words[max(0, i - 1):i + 2])
                            out.setdefault(token, []).append((window, line_of(node, token, window)))
        return out


def typed_in(token: str, shown: str, literals: dict[str, list[tuple[str, int]]]) -> int | None:
    """The line of a literal that types `token` with the words `shown` has around it, else None."""
    flat = normalize(shown)
    return next((line for window, line in literals.get(token, []) if window in flat), None)

"""Drift guard: no hand-typed quantities in a page's prose.

Prose is what remains of a page's Markdown source after removing front matter, fenced code
(exec blocks included), inline code, `{{ computed values }}` and claim tags, HTML tags and
comments, link targets and ordered-list markers. Any digit left there is a quantity typed by
hand, unless it belongs to a name on the reviewed allowlist (`snippets/allowed_names.txt`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ALLOWLIST = Path(__file__).with_name("allowed_names.txt")

_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,}).*?^(?P=indent)?[ \t]*(?P=fence)[ \t]*$", re.S | re.M)
_COMPUTED = re.compile(r"\{\{.*?\}\}", re.S)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_HTML_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_ATTR_LIST = re.compile(r"\{:?[ \t]*[#.][^}]*\}")
_ORDERED_MARKER = re.compile(r"^([ \t]*)\d+[.)](?=[ \t])", re.M)
_DIGIT_WORD = re.compile(r"[^\s]*\d[^\s]*")


@dataclass(frozen=True)
class Literal:
    line: int
    token: str
    context: str


@lru_cache(maxsize=4)
def _allowed(path: Path = ALLOWLIST) -> tuple[re.Pattern[str], ...]:
    names = [
        ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()
        if ln.strip() and not ln.lstrip().startswith("#")
    ]
    names.sort(key=len, reverse=True)  # longest first: "HBM3e" before "HBM3"
    return tuple(re.compile(r"(?<![\w.])" + re.escape(n) + r"(?![\w])") for n in names)


def _blank(match: re.Match[str]) -> str:
    """Replace a match by as many newlines as it spans, so line numbers survive."""
    return "\n" * match.group(0).count("\n") + " "


def prose(markdown: str) -> str:
    """The page's prose: the source with code, computed values and markup blanked out."""
    text = _FRONT_MATTER.sub(_blank, markdown)
    text = _FENCE.sub(_blank, text)
    text = _HTML_COMMENT.sub(_blank, text)
    text = _COMPUTED.sub(_blank, text)
    text = _CODE_SPAN.sub(_blank, text)
    text = _HTML_TAG.sub(" ", text)
    text = _LINK_TARGET.sub("] ", text)
    text = _ATTR_LIST.sub(" ", text)
    text = _ORDERED_MARKER.sub(r"\1", text)
    return text


def typed_quantities(markdown: str) -> list[Literal]:
    """Every digit-bearing token in the prose that is not an allowlisted name, with its line."""
    found: list[Literal] = []
    for lineno, line in enumerate(prose(markdown).splitlines(), 1):
        stripped = line
        for pat in _allowed():
            stripped = pat.sub(" ", stripped)
        for m in _DIGIT_WORD.finditer(stripped):
            found.append(Literal(lineno, m.group(0).strip(".,;:()*_\"'"), line.strip()))
    return found


def notebook_markdown(source: str) -> str:
    """The Markdown cells of a jupytext percent notebook, other lines blanked (line numbers kept)."""
    out: list[str] = []
    in_markdown = False
    for line in source.splitlines():
        if line.startswith("# %%"):
            in_markdown = "[markdown]" in line
            out.append("")
        elif in_markdown and (line.startswith("# ") or line == "#"):
            out.append(line[2:])
        else:
            out.append("")
    return "\n".join(out) + "\n"

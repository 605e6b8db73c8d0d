"""What a page may link to and load, and what the site's own files show outside the pages.

- `page_link_errors`: a link (`<a href>`, `<area href>`) is relative, an anchor, or `https://`; `javascript:`,
  `data:`, `http:`, `mailto:`, `file:` and any other scheme are refused. An element that loads something (`img`,
  `script`, `iframe`, `link`, `source`, `video`, `audio`, `track`, `embed`, `object`, `input`, `image`,
  `use`, lazy or not, with `src`, `srcset`, `href`, `poster`, `data` or `xlink:href`), and a `style` that loads
  a `url()` or an `@import`, only from the site itself: a relative address or a `data:` one, never another host.
  The site makes no third-party request, which the offline browser test checks only for what a page loads
  before it is scrolled.
- `stylesheet_errors`: in the site's stylesheets, `url()` and `@import` from another host, and quantities typed in
  generated `content` (a reader sees it as text).
- `nav_errors`: quantities typed in mkdocs.yml's nav titles (a reader sees them on every page).

Each error names the file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from snippets.build import drift
from snippets.build.computed import PageState

_SCHEME = re.compile(r"^\s*([a-z][a-z0-9+.\-]*):", re.I)
_LOADERS = {
    "img": ("src", "srcset"), "script": ("src",), "iframe": ("src",), "frame": ("src",), "link": ("href",),
    "source": ("src", "srcset"), "video": ("src", "poster"), "audio": ("src",), "track": ("src",),
    "embed": ("src",), "object": ("data",), "input": ("src",), "image": ("href", "xlink:href"),
    "use": ("href", "xlink:href"), "portal": ("src",),
}
_CSS_URL = re.compile(r"""url\(\s*(['"]?)(?P<url>[^'")]*)\1\s*\)|@import\s+(['"])(?P<imp>[^'"]*)\3""", re.I)
_CSS_CONTENT = re.compile(r"(?<![\w-])content\s*:\s*(?P<value>[^;}]*)", re.I)
_CSS_STRING = re.compile(r"""(['"])(?P<s>(?:\\.|(?!\1).)*)\1""")
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)


def _strip_controls(url: str) -> str:
    """The address as a browser reads it: whitespace and control characters inside a scheme do not hide it
    (`java\tscript:`), and character references are already decoded by the HTML parser."""
    return "".join(ch for ch in url if ch > " " and ch != "\x7f")


def link_problem(url: str) -> str | None:
    """Why `url` may not be a link's target, or None: relative, an anchor, or https:// with a host."""
    plain = _strip_controls(url)
    if plain.startswith("//"):
        return "a scheme-relative address, which follows the page's scheme: write https://"
    m = _SCHEME.match(plain)
    if m is None:
        return None
    scheme = m.group(1).lower()
    if scheme == "https":
        has_host = plain[len("https:"):].startswith("//") and len(plain) > len("https://")
        return None if has_host else "an https: link without a host"
    return f"a {scheme}: link: a page links only to https:// addresses or within the site"


def load_problem(url: str) -> str | None:
    """Why an element may not load `url`, or None: a relative address or a `data:` one (the site's own bytes)."""
    plain = _strip_controls(url)
    if not plain:
        return None
    if plain.startswith("//"):
        return "loads from another host (a scheme-relative address)"
    m = _SCHEME.match(plain)
    if m is None or m.group(1).lower() == "data":
        return None
    return f"loads from another host ({m.group(1).lower()}:)" if m.group(1).lower() in ("http", "https") else \
        f"loads a {m.group(1).lower()}: address"


def _srcset_urls(value: str) -> list[str]:
    return [part.strip().split()[0] for part in value.split(",") if part.strip()]


def _line(state: PageState, needle: str) -> str:
    line = state.source_line(needle) if needle else None
    if line is None and needle:  # written with whitespace or entities Markdown changed: compare without whitespace
        flat = "".join(needle.split())
        line = next((i for i, ln in enumerate(state.markdown.splitlines(), 1) if flat in "".join(ln.split())), None)
    return f"docs/{state.src}:{line}" if line else f"docs/{state.src}"


def page_link_errors(state: PageState, root: Any) -> list[str]:
    """Links and loads of a rendered page (`root`, its parsed content; read only)."""
    errors: list[str] = []
    for el in root.iter():
        tag = el.tag if isinstance(el.tag, str) else ""
        tag = tag.rsplit("}", 1)[-1].lower()
        if tag in ("a", "area"):
            href = el.get("href")
            if href is not None and (why := link_problem(href)) is not None:
                errors.append(f"{_line(state, href)}: the link {href[:80]!r} is {why}")
        for attr in _LOADERS.get(tag, ()):
            value = el.get(attr) or el.get("{http://www.w3.org/1999/xlink}" + attr.removeprefix("xlink:"))
            if not value:
                continue
            if tag == "link" and not _loads(el):
                if (why := link_problem(value)) is not None:
                    errors.append(f"{_line(state, value)}: <link href={value[:80]!r}> is {why}")
                continue
            for url in _srcset_urls(value) if attr == "srcset" else [value]:
                if (why := load_problem(url)) is not None:
                    errors.append(f"{_line(state, url)}: <{tag} {attr}={url[:80]!r}> {why}: the site makes no "
                                  "third-party request (copy the file under docs/ and link it relatively)")
        style = el.get("style")
        if style:
            errors += [f"{_line(state, url)}: a style attribute {why}" for url, why in css_loads(style)]
        if tag == "style" and el.text:
            errors += [f"{_line(state, url)}: a <style> element {why}" for url, why in css_loads(el.text)]
    return errors


def _loads(el: Any) -> bool:
    """Whether a `<link>` loads what it names (a stylesheet, an icon, a preload) rather than only naming a page."""
    rel = set((el.get("rel") or "").lower().split())
    return bool(rel - {"canonical", "alternate", "author", "help", "license", "next", "prev", "search", "bookmark",
                       "external", "nofollow", "noopener", "noreferrer", "tag", "me"})


def css_loads(css: str) -> list[tuple[str, str]]:
    """Each `url()` or `@import` of `css` that would load from another host, with why."""
    out = []
    for m in _CSS_URL.finditer(_CSS_COMMENT.sub(" ", css)):
        url = m.group("url") if m.group("url") is not None else m.group("imp")
        if url is not None and (why := load_problem(url)) is not None:
            out.append((url, f"{why} through url() or @import"))
    return out


_CSS_ESCAPE = re.compile(r"\\[0-9a-fA-F]{1,6}\s?")
"""A CSS escape (`\\25B6 `, an icon's code point): a character, not digits a reader sees."""


def content_quantities(css: str, scanner: drift.Scanner) -> list[tuple[int, str, str]]:
    """(line, token, the string) of each quantity typed in the generated `content` of `css`."""
    blanked = _CSS_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), css)
    out = []
    for m in _CSS_CONTENT.finditer(blanked):
        line = blanked.count("\n", 0, m.start()) + 1
        for s in _CSS_STRING.finditer(m.group("value")):
            for lit in scanner.typed_quantities(_CSS_ESCAPE.sub("", s.group("s")) + "\n"):
                out.append((line, lit.token, s.group(0)[:60]))
    return out


def stylesheet_errors(path: Path, rel: str, scanner: drift.Scanner) -> list[str]:
    """A stylesheet of the site: loads from another host, and quantities typed in generated `content`."""
    css = path.read_text(encoding="utf-8")
    blanked = _CSS_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), css)
    errors = []
    for m in _CSS_URL.finditer(blanked):
        url = m.group("url") if m.group("url") is not None else m.group("imp")
        if url is not None and (why := load_problem(url)) is not None:
            errors.append(f"{rel}:{blanked.count(chr(10), 0, m.start()) + 1}: url({url[:80]!r}) {why}")
    errors += [f"{rel}:{line}: hand-typed quantity {token!r} in generated content ({text}): a reader sees it as text; "
               "write it in the page, computed" for line, token, text in content_quantities(css, scanner)]
    return errors


def page_style_errors(state: PageState, root: Any, scanner: drift.Scanner) -> list[str]:
    """Quantities typed in the generated `content` of a Markdown page's own `<style>` elements."""
    errors = []
    for el in root.iter("style"):
        for _, token, text in content_quantities(el.text or "", scanner):
            errors.append(f"{_line(state, token)}: hand-typed quantity {token!r} in generated content of a <style> "
                          f"({text}): a reader sees it as text; write it in the page, computed")
    return errors


def _titles(nav: Any) -> Iterable[str]:
    if isinstance(nav, list):
        for item in nav:
            yield from _titles(item)
    elif isinstance(nav, dict):
        for title, value in nav.items():
            if isinstance(title, str):
                yield title
            yield from _titles(value)


def nav_errors(nav: Any, config_text: str, scanner: drift.Scanner, config_name: str = "mkdocs.yml") -> list[str]:
    """Quantities typed in the nav's titles, named by their line in mkdocs.yml."""
    lines = config_text.splitlines()
    errors = []
    for title in _titles(nav):
        for lit in scanner.typed_quantities(title + "\n"):
            line = next((i for i, ln in enumerate(lines, 1) if title in ln), 0)
            errors.append(f"{config_name}:{line}: hand-typed quantity {lit.token!r} in the nav title {title!r}: "
                          "a reader sees it on every page; name the page without it, or if it is a name, add it "
                          "to snippets/allowed_names.txt")
    return errors


def config_asset_errors(extra_css: Iterable[object], extra_javascript: Iterable[object]) -> list[str]:
    """mkdocs.yml's extra_css and extra_javascript: the site's own files, never another host's."""
    errors = []
    for key, items in (("extra_css", extra_css), ("extra_javascript", extra_javascript)):
        for item in items:
            url = str(getattr(item, "path", item))
            if (why := load_problem(url)) is not None:
                errors.append(f"mkdocs.yml: {key} {url[:80]!r} {why}")
    return errors

"""Hostile and careless input: data text is published as text, never as markup, links or computed values.

The payload build plants markup in every free-text field of every data table, with the schema's
plain-text checks switched off in that copy (as if a field type had forgotten them), and scans the
built HTML for any script, event-handler attribute or script URL that a clean build does not have:
the escaping where data is written must hold on its own.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from bs4 import BeautifulSoup

import snippets.data as data_mod
from snippets.render import charts, fmt

from ..conftest import ROOT, Build, run_build, without_sizing_searches

PAYLOAD = ' <script>alert(1)</script><img src=x onerror=alert(2)> [x](javascript:alert(3)) **b** `c` "\'><b onmouseover=alert(4)>'
SHORT_PAYLOAD = "<b onclick>"

"""For names and what chart labels show: a chart refuses a label too long for its slot (at 375 px a bar's line
holds about 44 characters, a group's slot about 20), which the long payload would be. A name is also cut to a
short stem, numbered to stay unique: "NVID7<b onclick>"."""

SHORT_FIELDS = ("name", "memory_type")
URL_PAYLOAD = 'https://example.org/a"><script>alert(5)</script>(x) y'
_ENTRY = re.compile(r"^data/(?P<file>\w+)\.yaml: entry '(?P<entry>[^']+)': field '(?P<field>[^']+)'")


def _disable_text_checks(copy: Path) -> None:
    """In the copy only: let any text and URL through the schema (the build imports the copy's snippets/)."""
    path = copy / "snippets" / "data" / "base.py"
    text = path.read_text()
    for name in ("def check_text(value: str) -> str:\n", "def _check_url(url: str) -> str:\n"):
        assert name in text
        text = text.replace(name, name + "    return value\n" if "check_text" in name else name + "    return url\n")
    path.write_text(text)


def _leaves(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], str]]:
    out: list[tuple[tuple[Any, ...], str]] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _leaves(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _leaves(v, (*path, i))
    elif isinstance(doc, str):
        out.append((path, doc))
    return out


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for p in path[:-1]:
        doc = doc[p]
    doc[path[-1]] = value


def _load_problems(data_dir: Path) -> list[str]:
    """What the copy's own loader (its text checks disabled by `_disable_text_checks`) says of `data_dir`: a
    second interpreter imports the copy's snippets/, so this process's modules stay as they are."""
    code = ("import json, sys\nimport snippets.data as d\ntry:\n    d.load(sys.argv[1])\n"
            "except d.DataError as exc:\n    print(json.dumps(exc.problems))\nelse:\n    print('[]')\n")
    proc = subprocess.run([sys.executable, "-c", code, str(data_dir)], capture_output=True, text=True, timeout=120,
                          cwd=data_dir.parent,  # `-c` puts the working directory first on sys.path
                          env={**os.environ, "PYTHONPATH": str(data_dir.parent)}, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    problems: list[str] = json.loads(proc.stdout)
    return problems


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
"""libyaml's, where PyYAML has it: the pure-Python emitter took most of a minute to write data/ four times."""


def plant_payloads(data_dir: Path) -> int:
    """Append PAYLOAD to every string field the loader (text checks off) still accepts; return how many."""
    docs = {f: yaml.load((data_dir / f"{f}.yaml").read_text(), Loader=_LOADER) for f in data_mod.FILES}  # noqa: S506
    planted: dict[str, dict[tuple[Any, ...], str]] = {f: {} for f in docs}  # file -> path -> the value before
    names = 0
    for f, doc in docs.items():
        for path, value in _leaves(doc):
            if len(path) < 2 or (f == "precisions" and path[-1] == "name"):  # legend: no room for a payload
                continue
            if path[-1] == "url":
                new = URL_PAYLOAD
            elif path[-1] == "name":
                names += 1
                new = f"{re.sub(r'[^A-Za-z]', '', value)[:4]}{names}{SHORT_PAYLOAD}"
            else:
                new = value + (SHORT_PAYLOAD if path[-1] in SHORT_FIELDS else PAYLOAD)
            _set(doc, path, new)
            planted[f][path] = value
    changed = set(docs)
    for _ in range(20):  # revert the fields that must be ids, units or other fixed words
        for f in sorted(changed):
            (data_dir / f"{f}.yaml").write_text(yaml.dump(docs[f], Dumper=_DUMPER, sort_keys=False, allow_unicode=True))
        problems = _load_problems(data_dir)
        if not problems:
            break
        bad = [_ENTRY.match(p) for p in problems]
        if not all(bad):
            pytest.fail(f"unexpected load errors: {problems}")
        refused: dict[str, set[tuple[Any, ...]]] = {}  # file -> the paths (or their parents) the loader refused
        for m in bad:
            assert m is not None
            refused.setdefault(m["file"], set()).add(
                (m["entry"], *(int(x) if x.isdigit() else x for x in m["field"].split(".")))
                if m["field"] != "(entry)" else (m["entry"],))
        for f, prefixes in refused.items():
            for path in [p for p in planted[f] if any(p[:k] in prefixes for k in range(1, len(p) + 1))]:
                _set(docs[f], path, planted[f].pop(path))
        changed = set(refused)
    else:
        pytest.fail("could not plant payloads")
    return sum(map(len, planted.values()))


def _active(site: Path) -> dict[str, set[str]]:
    """Per page: every script element, event-handler attribute and script URL, as a signature."""
    out: dict[str, set[str]] = {}
    for page in sorted(site.rglob("*.html")):
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        found: set[str] = set()
        for el in soup.find_all(True):
            if el.name in ("script", "iframe", "object", "embed"):
                found.add(f"<{el.name} src={el.get('src')}> {el.get_text()[:200]}")
            for attr, val in el.attrs.items():
                v = " ".join(val) if isinstance(val, list) else str(val)
                if attr.lower().startswith("on"):
                    found.add(f"<{el.name} {attr}={v}>")
                if re.match(r"(?i)\s*(javascript|vbscript|data):", v) and attr.lower() in ("href", "src", "action",
                                                                                             "formaction", "xlink:href"):
                    found.add(f"<{el.name} {attr}={v}>")
        out[str(page.relative_to(site))] = found
    return out


@pytest.mark.build
def test_payloads_in_every_text_field_publish_nothing_active(tmp_path: Path, built: Build) -> None:
    from ..conftest import copy_site

    copy = copy_site(tmp_path / "copy")
    _disable_text_checks(copy)
    count = plant_payloads(copy / "data")
    assert count > 80, count  # names, titles, notes, rationales, offerings...
    without_sizing_searches(copy)
    b = run_build(copy)
    assert b.returncode == 0, b.output[-4000:]
    clean, hostile = _active(built.site), _active(b.site)
    new = {page: sorted(hostile[page] - clean.get(page, set())) for page in hostile}
    new = {page: sigs for page, sigs in new.items() if sigs}
    assert not new, new
    # the payload is there, as text
    html = (b.site / "reference/accelerators/index.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_table_text_cells_are_text() -> None:
    out = fmt.table("t", ["A <b>", "B"], [[PAYLOAD.strip() + " {{ x }}", fmt.Md("`code` [ok](https://example.org)")]])
    import markdown

    html = markdown.Markdown(extensions=["tables"]).convert(out)
    assert "<script>" not in html and "<img" not in html and "<b " not in html
    assert 'href="javascript' not in html and "<strong>" not in html and "{{ x }}" in html
    assert "&lt;b&gt;" in html  # headers too
    assert "<code>code</code>" in html and '<a href="https://example.org">ok</a>' in html  # authored Markdown stays


def test_html_table_text_cells_are_escaped() -> None:
    out = fmt.html_table("t", ["A"], [["<script>x</script>"]])
    assert "<script>" not in out and "&lt;script&gt;" in out


def test_links_encode_the_url_and_escape_text_and_title() -> None:
    md = fmt.link("[t](javascript:x) <i>", 'https://example.org/a"><script>(1) b', 'ti"tle <x>')
    assert md.startswith(r"[\[t\]\(javascript:x\) &lt;i&gt;](")
    href = md[md.index("](") + 2:md.index(" ", md.index("]("))]
    assert re.fullmatch(r"https://example\.org/[A-Za-z0-9%/._~-]*", href), href
    assert '"tle' not in md
    with pytest.raises(ValueError):
        fmt.link("x", "javascript:alert(1)")


def test_a_link_title_with_quotes_and_parentheses_stays_one_title() -> None:
    """A source title with a quoted word before a closing parenthesis ("column 'vllm cr')") once ended the link's
    title there for Python-Markdown, and the rest of the title was read as Markdown: a live javascript: link."""
    import markdown

    title = "ROCm/aiter#801 (kernel table; column 'vllm cr')" + PAYLOAD
    soup = BeautifulSoup(markdown.markdown(fmt.link("1", "https://example.org/a", title)), "html.parser")
    links = soup.find_all("a")
    assert len(links) == 1 and links[0]["href"] == "https://example.org/a" and links[0].get_text() == "1"
    assert links[0]["title"].startswith("ROCm/aiter#801 (kernel table; column \u2019vllm cr\u2019)")
    assert "[x](javascript:alert(3))" in links[0]["title"]
    assert not soup.find("script") and not soup.find("strong") and not soup.find("b")


def test_chart_labels_are_escaped() -> None:
    svg = charts.bars("c", [charts.Bar("<script>alert(1)</script>", 1.0)], "x <b>", "t <i>", "d <u>")
    assert "<script>" not in svg and "<b>" not in svg and "&lt;script&gt;" in svg


def test_data_sources_are_linked_safely() -> None:
    from snippets.pages.reference_common import source_links
    from snippets.pages.sources import sources_list

    cat = data_mod.load(ROOT / "data")
    links = source_links(cat.accelerators["h100-sxm"])
    assert isinstance(links, fmt.Md) and links.startswith("[1](https://")
    import markdown

    listing = markdown.markdown(sources_list(cat, [("accelerators", "h100-sxm")]))
    # a Markdown list (fmt.bullets): the name as text, the link percent-encoded
    assert "<li><strong>NVIDIA H100 SXM</strong> (<code>data/accelerators.yaml</code>, <code>h100-sxm</code>)" in listing
    assert '<a href="https://' in listing and "<script" not in listing

"""No module of snippets/ keeps state: no cache at module level, no `global` rebinding, no module-level container
filled at run time. What a build computes lives on its context (snippets/build/context.py) or on its catalog
(`Catalog.derived`), and goes with them; tests/build/test_serve.py builds twice in one process, with every module
imported twice, and compares the bytes.

Five memos of pure functions remain in modules other helpers own, listed below with the reason each is harmless
(their arguments are frozen values and their results depend on nothing else); each is to go with its module's
rework: the list only shrinks."""

from __future__ import annotations

import ast
from pathlib import Path

from ..conftest import ROOT

ALLOWED_MEMOS = {
    # engine (issue 24 helpers): keyed on frozen records, a pure function of its arguments
    ("snippets/engine/memory.py", "stage_weights"),
    ("snippets/engine/memory.py", "kv_bytes_per_sequence"),
    ("snippets/engine/memory.py", "forward_peak_bytes"),
    ("snippets/engine/step.py", "stage_plan"),
    # data schema (issue 25's record-type rework): keyed on a type annotation, a pure function of the code
    ("snippets/data/base.py", "_scalar_kinds"),
}
CACHES = {"lru_cache", "cache", "cached_property"}
EMPTY = {"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "WeakValueDictionary", "WeakKeyDictionary"}


def _name(node: ast.expr) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _state(path: Path) -> list[str]:
    rel = path.relative_to(ROOT).as_posix()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found.append(f"{rel}:{node.lineno}: global {', '.join(node.names)}")
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (rel, node.name) not in ALLOWED_MEMOS:
            found += [f"{rel}:{node.lineno}: {node.name} is memoized at module level ({_name(d)})"
                      for d in node.decorator_list if _name(d) in CACHES and node.col_offset == 0]
    for node in tree.body:  # a module-level name bound to an empty container, to be filled while the program runs
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) and all(
            isinstance(t, ast.Name) for t in targets) else None
        empty = isinstance(value, ast.Dict | ast.List | ast.Set) and not getattr(value, "keys", getattr(value, "elts", None))
        if value is not None and (empty or (isinstance(value, ast.Call) and _name(value) in EMPTY and not value.args)):
            found.append(f"{rel}:{node.lineno}: a module-level container, filled at run time")
    return sorted(found, key=lambda s: int(s.split(":")[1]))


def test_no_module_keeps_state() -> None:
    files = sorted((ROOT / "snippets").rglob("*.py"))
    assert len(files) > 40
    assert [s for f in files for s in _state(f)] == []


def test_the_check_finds_each_kind_of_state(tmp_path: Path) -> None:
    bad = ROOT / "snippets" / "_probe_state.py"
    bad.write_text("import functools\n_CACHE: dict[str, int] = {}\n_SEEN = set()\n\n\n@functools.lru_cache\n"
                   "def f() -> int:\n    global _CACHE\n    return 1\n")
    try:
        assert [s.split(": ", 1)[1] for s in _state(bad)] == [
            "a module-level container, filled at run time", "a module-level container, filled at run time",
            "f is memoized at module level (lru_cache)", "global _CACHE"]
    finally:
        bad.unlink()

"""The build's searches of the sizing grid (`snippets.build.sizing`): worker processes answer what the page code answers
in-process, the answers are kept by the content of what they read and read back, and a key moves when data does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from snippets.build.sizing import KEYED, KEYED_FILES, SizingTargets, cache_key
from snippets.data import load
from snippets.pages.reference_sizing import target_queries, targets_of
from snippets.pages.sizing_records import Written, records, records_csv, write_records

ROOT = Path(__file__).resolve().parents[2]
QUERIES = [("llama-3.1-8b", "fp8", "h100-sxm"), ("llama-3.1-405b", "bf16", "h100-sxm"), ("mixtral-8x7b", "fp8", "mi300x")]


def _json(found: dict) -> str:
    return json.dumps(sorted([list(q), t] for q, t in found.items()), sort_keys=True)


def test_workers_answer_as_the_page_code_and_the_cache_keeps_it(tmp_path: Path) -> None:
    first = SizingTargets(ROOT, ROOT / "data", tmp_path, workers=1)
    first.start(lambda: QUERIES)
    assert first.pool is not None  # nothing cached yet: searched in a worker
    got = first.result()
    assert first.pool is None and first.path.is_file()
    assert _json(got) == _json(targets_of(load(ROOT / "data"), QUERIES))
    assert got[QUERIES[0]] is not None and got[QUERIES[0]]["met"]
    assert got[QUERIES[1]] is not None and not got[QUERIES[1]]["met"]  # 405B BF16 misses 30 ms on any H100 layout

    again = SizingTargets(ROOT, ROOT / "data", tmp_path, workers=1)
    again.start(lambda: QUERIES)
    assert again.pool is None  # read from the cache
    assert _json(again.result()) == _json(got)

    fewer = SizingTargets(ROOT, ROOT / "data", tmp_path, workers=1)
    fewer.start(lambda: QUERIES[:1])  # other queries under the same key are not taken for these
    assert fewer.pool is not None
    fewer.result()
    assert [p.name for p in tmp_path.iterdir()] == [fewer.path.name]  # one entry kept


def test_queries_that_cannot_be_listed_start_nothing(tmp_path: Path) -> None:
    def broken() -> list[tuple[str, str, str]]:
        raise KeyError("reference")

    s = SizingTargets(ROOT, ROOT / "data", tmp_path)
    s.start(broken)
    assert s.skipped and s.pool is None and not list(tmp_path.iterdir())


def test_the_key_covers_data_the_engine_and_the_page_code(tmp_path: Path) -> None:
    for folder, _ in KEYED:
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for f in KEYED_FILES:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, tmp_path / f)
    key = cache_key(tmp_path)
    assert key == cache_key(ROOT)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "cost.md").write_text("not read by the searches\n")
    assert cache_key(tmp_path) == key
    for edited in ("data/prices.yaml", "snippets/engine/search.py", KEYED_FILES[0]):
        path = tmp_path / edited
        text = path.read_text()
        path.write_text(text + "\n# edited\n")
        assert cache_key(tmp_path) != key, edited
        path.write_text(text)
    assert cache_key(tmp_path) == key


@pytest.fixture(scope="module")
def cat():
    return load(ROOT / "data")


def test_records_take_the_searches_they_are_handed(cat) -> None:
    queries = target_queries(cat)
    marked = {q: {"met": False, "query": list(q)} for q in queries}
    recs = records(cat, targets=True, found=marked)
    searched = [r for r in recs if r["at_target"] is not None]
    assert len(searched) == len(queries) > 1000
    assert all(r["at_target"]["query"] == [r["model"], r["precision"], r["accelerator"]] for r in searched)
    # a record with no node, or a format its chip refuses, is not searched
    assert all(r["why_not"] == "no node in data" or r["why_not"].startswith("refused")
               for r in recs if r["at_target"] is None)
    with pytest.raises(ValueError, match="lack the search"):
        records(cat, targets=True, found=dict(list(marked.items())[1:]))


def test_records_equal_to_the_last_written_are_written_as_then(tmp_path: Path, cat) -> None:
    """`write_records(..., last=)`: the text of the last records is written again where the records are equal (a
    rebuild of `serve`), and encoded anew where one differs; the files are those written without `last`."""
    queries = target_queries(cat)
    marked = {q: {"met": False, "query": list(q)} for q in queries}
    last = Written()
    write_records(cat, tmp_path / "a", targets=True, found=marked, last=last)
    recs = records(cat, targets=True, found=marked)
    assert last.records == recs and last.csv == records_csv(recs)
    text = last.json
    write_records(cat, tmp_path / "b", targets=True, found=marked, last=last)
    assert last.json is text  # equal records: the text kept, not encoded again
    write_records(cat, tmp_path / "c", targets=True, found=marked)
    for name in ("sizing.json", "sizing.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes() \
            == (tmp_path / "c" / name).read_bytes()
    q = queries[0]
    write_records(cat, tmp_path / "d", targets=True, found={**marked, q: {"met": False, "query": ["moved"]}}, last=last)
    assert last.json is not text and '"moved"' in last.json
    assert (tmp_path / "d" / "sizing.json").read_text(encoding="utf-8") == last.json


def test_off_searches_nothing_and_the_page_says_so(tmp_path: Path, cat) -> None:
    """`sizing_targets: off` (the builds of tests that edit data/ for another purpose): no worker, no cache, and the
    sizing page's note and records say the targets were not searched instead of computing them in the page."""
    from snippets.pages.reference_sizing import NOT_SEARCHED, TARGETS, grid_targets, target_note

    s = SizingTargets(ROOT, ROOT / "data", tmp_path, mode="off")
    s.start(lambda: QUERIES)
    assert s.not_searched and s.pool is None and not list(tmp_path.iterdir())
    fresh = load(ROOT / "data")
    s.ready(fresh)
    assert fresh.derived[TARGETS] == NOT_SEARCHED and grid_targets(fresh) is None
    assert "this build did not search it" in target_note(fresh)
    assert all("at_target" not in r for r in records(fresh, targets=True))


def test_cached_reads_the_cache_and_searches_nothing_on_a_miss(tmp_path: Path) -> None:
    """`cached` (a rebuild of `mkdocs serve`): what the cache holds for this data and code, else nothing at once."""
    miss = SizingTargets(ROOT, ROOT / "data", tmp_path, workers=1, mode="cached")
    miss.start(lambda: QUERIES[:1])
    assert miss.not_searched and miss.pool is None
    first = SizingTargets(ROOT, ROOT / "data", tmp_path, workers=1)
    first.start(lambda: QUERIES[:1])
    found = first.result()
    hit = SizingTargets(ROOT, ROOT / "data", tmp_path, workers=1, mode="cached")
    hit.start(lambda: QUERIES[:1])
    assert not hit.not_searched and hit.pool is None and _json(hit.result()) == _json(found)

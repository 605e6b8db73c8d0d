"""What the build keeps across builds by content (`snippets.data.results`: the time models' error bands, keyed on the
engine's inputs; `snippets.build.drift.Scanner`: what the guard read in code's string literals): an edit of what a
result depends on computes it anew, an edit of anything else reuses it, and a reused result is the computed one."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from snippets.build import drift
from snippets.data import load
from snippets.data.export import export
from snippets.data.loader import Parsed
from snippets.data.results import CODE, CODE_FILES, EngineResults, inputs_key, results_of

ROOT = Path(__file__).resolve().parents[2]


def _tree(dest: Path) -> Path:
    """A copy of data/ and of the code the results are computed by."""
    shutil.copytree(ROOT / "data", dest / "data")
    for folder, _ in CODE:
        shutil.copytree(ROOT / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for f in CODE_FILES:
        shutil.copy2(ROOT / f, dest / f)
    (dest / "snippets" / "pages").mkdir()
    shutil.copy2(ROOT / "snippets" / "pages" / "home.py", dest / "snippets" / "pages" / "home.py")
    return dest


def _edit(path: Path, pattern: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    edited, n = re.subn(pattern, new, text, count=1, flags=re.M)
    assert n == 1, pattern
    path.write_text(edited, encoding="utf-8")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tree(tmp_path_factory.mktemp("results"))


@pytest.fixture(scope="module")
def unedited(tree: Path) -> tuple[Parsed, str]:
    """The copy's data/ as parsed once, and its key before any edit."""
    parsed = Parsed()
    return parsed, inputs_key(load(tree / "data", parsed_before=parsed), tree)


def _key(root: Path, parsed: Parsed) -> str:
    """The key of `root`, its data/ loaded as a build's rebuild loads it: only the files whose text differs from
    `parsed`'s are parsed again (every file is still checked against the others)."""
    return inputs_key(load(root / "data", parsed_before=Parsed(dict(parsed.files), parsed.schemas)), root)


# each edit: (file, pattern, replacement), as a contributor makes it
REUSED = {
    "an assumption (bench b's edit)": ("data/assumptions.yaml", r"(value: \{value: )12\.5", r"\g<1>12.4"),
    "a source's title": ("data/accelerators.yaml", r'(title: "bottlerocket-os/bottlerocket#3873)', r"\1 (read again)"),
    "a page model": ("snippets/pages/home.py", r"^", "# edited\n"),
}
RECOMPUTED = {
    "a price the engine costs with": ("data/prices.yaml", r"(price): \{value: (2\.69),",  # RunPod's H100, site_uses
                                      r"\1: {value: 2.59,"),  # still the lowest H100 price, as the loader asks
    "a measured time the bands are computed from": ("data/measurements.yaml", r"^(  ttft_ms: )406\.77", r"\g<1>406.78"),
    "a latency the time model reads": ("data/latencies.yaml", r"^(  value: \{value: )2(, unit: us\})", r"\g<1>2.1\2"),
    "the engine's code": ("snippets/engine/serving.py", r"^", "# edited\n"),
    "the calibration's code": ("snippets/calibration.py", r"^", "# edited\n"),
    "the schema's code": ("snippets/data/schema/measurements.py", r"^", "# edited\n"),
    "a range the fit searches (not exported)": ("data/policies.yaml", r"^(  step_overhead_range: \[0\.000)1", r"\g<1>2"),
    "a measured efficiency": ("data/efficiencies.yaml", r"^(  achieved: \{value: )376", r"\g<1>375"),
}


@pytest.mark.parametrize(("what", "moves"), [(w, False) for w in REUSED] + [(w, True) for w in RECOMPUTED])
def test_the_key_moves_with_what_the_results_depend_on_and_nothing_else(
    tree: Path, unedited: tuple[Parsed, str], what: str, moves: bool,
) -> None:
    """An edit that does not reach the engine keeps the key (`REUSED`); one of what the results depend on moves it
    (`RECOMPUTED`)."""
    file, pattern, new = (RECOMPUTED if moves else REUSED)[what]
    path = tree / file
    parsed, before = unedited
    text = path.read_text(encoding="utf-8")
    assert _key(tree, parsed) == before  # the copy is as the module found it
    try:
        _edit(path, pattern, new)
        assert (_key(tree, parsed) != before) is moves
    finally:
        path.write_text(text, encoding="utf-8")


def test_kept_bands_are_the_computed_ones_and_are_reused(tmp_path: Path) -> None:
    cold = export(load(ROOT / "data"))  # a catalog outside a build: computed, nothing kept
    cat = load(ROOT / "data")
    first = cat.derived[EngineResults] = EngineResults.load(cat, ROOT, tmp_path)
    assert export(cat) == cold and first.hits == 0 and first.fresh
    first.save(tmp_path)
    (kept,) = tmp_path.glob("engine-results-*.json")

    again = load(ROOT / "data")
    second = again.derived[EngineResults] = EngineResults.load(again, ROOT, tmp_path)
    assert export(again) == cold
    assert second.hits == len(cold.time_models) and not second.fresh
    second.save(tmp_path)  # nothing new: the file is left as it is
    assert list(tmp_path.glob("engine-results-*.json")) == [kept]

    other = EngineResults("0" * 16, fresh={'["x"]': "1"})
    other.save(tmp_path)  # another key's file replaces it
    assert list(tmp_path.glob("engine-results-*.json")) == [other.path(tmp_path)]


def test_a_load_given_a_builds_cache_reads_its_kept_results_and_keeps_nothing(tmp_path: Path) -> None:
    """A notebook the build executes loads data/ with the build's cache directory (`results_dir`, set for its kernel
    as $SERVING_RESULTS_DIR): it reads the bands the build kept, the same as computed, and writes nothing."""
    cold = export(load(ROOT / "data"))
    computing = load(ROOT / "data", results_dir=tmp_path)  # nothing kept yet: computed, as without the directory
    assert export(computing) == cold and results_of(computing).hits == 0
    assert list(tmp_path.iterdir()) == []
    build = load(ROOT / "data")
    build.derived[EngineResults] = EngineResults.load(build, ROOT, tmp_path)
    export(build)
    results_of(build).save(tmp_path)  # what a build keeps as it ends
    kept = sorted(tmp_path.iterdir())
    reading = load(ROOT / "data", results_dir=tmp_path)
    assert export(reading) == cold and results_of(reading).hits == len(cold.time_models)
    assert sorted(tmp_path.iterdir()) == kept
    # as in the notebook's kernel: a plain `load()` in a process whose environment names the directory
    script = ("from snippets.data import load\nfrom snippets.data.export import export\n"
              "from snippets.data.results import results_of\ncat = load()\nexport(cat)\nprint(results_of(cat).hits)")
    env = {**os.environ, "SERVING_RESULTS_DIR": str(tmp_path), "SERVING_DATA_DIR": str(ROOT / "data")}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(len(cold.time_models))]


def test_the_kept_fit_is_the_computed_one_and_notes_what_the_fit_notes(tmp_path: Path) -> None:
    from snippets import calibration
    from snippets.pages import calibrated
    from snippets.pages.sources import recording

    computed = calibration.fit(load(ROOT / "data"))
    for _ in range(2):  # computed, then read back
        cat = load(ROOT / "data")
        store = cat.derived[EngineResults] = EngineResults.load(cat, ROOT, tmp_path)
        view, plain = recording(cat), recording(load(ROOT / "data"))
        assert calibrated.fit(view) == computed
        calibration.fit(plain)
        assert view.reads == plain.reads and view.reads
        store.save(tmp_path)
    assert store.hits == 1


def test_a_damaged_store_or_unexportable_data_computes_anew(tmp_path: Path) -> None:
    from dataclasses import replace

    cat = load(ROOT / "data")
    store = EngineResults.load(cat, ROOT, tmp_path)
    store.stored['["a"]'] = "not json"
    assert store.get(("a",), lambda: [2.5]) == [2.5] and store.hits == 0 and '["a"]' in store.fresh
    # data the export cannot read (an accelerator that is not one): a store that keeps nothing, the pages report it
    broken = replace(cat, accelerators={"x": None}, derived={})
    assert not EngineResults.load(broken, ROOT, tmp_path).key


def test_a_store_outside_a_build_keeps_nothing() -> None:
    cat = load(ROOT / "data")
    store = results_of(cat)
    assert store.get(("a",), lambda: [1.5]) == [1.5]
    assert not store.fresh and not store.key
    with pytest.raises(TypeError):
        store.get(("a", 1), lambda: 0)  # type: ignore[arg-type]


def test_the_guard_reuses_what_it_read_in_the_same_code_and_allowlist(tmp_path: Path) -> None:
    code = (ROOT / "snippets" / "pages" / "home.py").read_text(encoding="utf-8")
    allow = tmp_path / "allowed_names.txt"
    shutil.copy2(drift.ALLOWLIST, allow)
    cache = tmp_path / "cache"

    first = drift.Scanner(allowlist=allow)
    first.load(cache)
    read = first.literal_quantities(code)
    first.save(cache)
    assert read and len(list(cache.glob("guard-literals-*.json"))) == 1
    assert not list(cache.glob("guard-pieces-*.json"))  # no rendered text scanned

    again = drift.Scanner(allowlist=allow)
    again.load(cache)
    assert again.literal_quantities(code) == read
    assert not again._fresh  # read from the cache
    assert again.literal_quantities(code + "\nx = 'an edit of the code: 80 GB'\n") != read
    assert again._fresh == {"literals"}  # the edited code is read anew

    allow.write_text(allow.read_text(encoding="utf-8") + "\nH100 80GB\n", encoding="utf-8")
    edited = drift.Scanner(allowlist=allow)
    assert edited.literals_key != first.literals_key
    edited.load(cache)
    assert edited.literal_quantities(code) == read and edited._fresh == {"literals"}  # another allowlist: read anew


def test_the_catalog_texts_are_its_data_not_what_the_build_keeps_with_it() -> None:
    cat = load(ROOT / "data")
    texts = drift.data_text(cat)
    cat.derived[EngineResults] = EngineResults("0" * 16, stored={'["x"]': '{"value": 12.5}'})
    assert drift.data_text(cat) == texts  # the guard's key (the catalog's texts) is the same on a warm build


def test_the_guard_reuses_what_it_found_in_the_same_text_with_the_same_catalog_texts(tmp_path: Path) -> None:
    piece, data = "The node holds 640 GB, as NVIDIA H100 SXM 80GB says", frozenset({"NVIDIA H100 SXM 80GB"})
    first = drift.Scanner(data)
    first.load(tmp_path)
    found = first.quantities_in(piece)
    assert [lit.token for lit in found] == ["640"]  # the 80GB of a text from data/ is not typed by hand
    assert first.quantities_in("no digit here") == ()
    first.save(tmp_path)

    again = drift.Scanner(data)
    again.load(tmp_path)
    assert again.quantities_in(piece) == found and not again._fresh  # read from the cache
    again.save(tmp_path)  # nothing new: kept as it is
    assert len(list(tmp_path.glob("guard-pieces-*.json"))) == 1

    for damaged in tmp_path.glob("guard-*.json"):  # a damaged file is scanned anew
        damaged.write_text('{"x": 1}')
    fresh = drift.Scanner(data)
    fresh.load(tmp_path)
    assert fresh.quantities_in(piece) == found and fresh._fresh == {"pieces"}

    other = drift.Scanner(data | {"The node holds 640 GB"})  # the catalog's texts changed: scanned anew
    assert other.pieces_key != first.pieces_key and other.literals_key == first.literals_key
    other.load(tmp_path)
    assert other.quantities_in(piece) == () and other._fresh == {"pieces"}

"""The engine's records to JSON and back (`snippets.engine.codec`): one rule for every record, read from its field
types; the published catalog reads back to the build's records; what is not a record's JSON form is refused, named."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

import pytest

from snippets.data import Catalog
from snippets.data.export import engine_catalog
from snippets.engine.bands import BandEntry
from snippets.engine.codec import KEY, decode, encode
from snippets.engine.specs import (
    Arch,
    ChipSpec,
    EngineCatalog,
    MemoryPolicySpec,
    PrecisionSpec,
    TimeModelSpec,
    WeightBlock,
)


@dataclass(frozen=True, slots=True)
class Inner:
    id: str = field(metadata=KEY)
    size: float = 1.0


@dataclass(frozen=True, slots=True)
class Outer:
    name: str
    count: int
    table: Mapping[str, Inner]
    pairs: tuple[tuple[int, float], ...]
    fixed: tuple[int, float, float] | None
    tags: frozenset[str]
    flag: bool = False
    inner: Inner | None = None
    kind: Literal["a", "b"] = "a"
    size: Literal["auto"] | int = "auto"


OBJ = {"name": "x", "count": 3, "table": {"a": {"size": 2}, "b": {}}, "pairs": [[1, 0.5], [256, 0.25]],
       "fixed": [2, 0.6, 0.8], "tags": ["z", "a"], "inner": {"id": "c", "size": 4.5}}


def test_a_record_is_built_from_its_json_by_its_field_types() -> None:
    got = decode(Outer, OBJ)
    assert got == Outer("x", 3, MappingProxyType({"a": Inner("a", 2), "b": Inner("b")}), ((1, 0.5), (256, 0.25)),
                        (2, 0.6, 0.8), frozenset({"a", "z"}), False, Inner("c", 4.5))
    assert isinstance(got.table, MappingProxyType) and list(got.table) == ["a", "b"]  # read-only, in the JSON's order
    assert isinstance(got.pairs, tuple) and isinstance(got.pairs[0], tuple) and isinstance(got.fixed, tuple)
    assert type(got.table["a"].size) is int  # a JSON integer in a float field is kept as written
    # written back: fields in declared order, a table's records without their key, a frozenset sorted
    assert encode(got) == {"name": "x", "count": 3, "table": {"a": {"size": 2}, "b": {"size": 1.0}},
                           "pairs": [[1, 0.5], [256, 0.25]], "fixed": [2, 0.6, 0.8], "tags": ["a", "z"],
                           "flag": False, "inner": {"id": "c", "size": 4.5}, "kind": "a", "size": "auto"}
    assert decode(Outer, {**OBJ, "kind": "b"}).kind == "b"
    assert decode(Outer, {**OBJ, "size": 31}).size == 31  # a word or a number: the first that reads it
    assert decode(Outer, encode(got)) == got


@pytest.mark.parametrize(("edit", "words"), [
    ({"colour": "red"}, "Outer: the engine does not model colour"),
    ({"table": {"a": {"id": "a"}}}, "Inner: the engine does not model id (at Outer.table.a)"),
    ({"table": {"a": {"weight": 1}}}, "Inner: the engine does not model weight (at Outer.table.a)"),
    ({"count": 3.0}, "Outer.count: expected an integer, got float 3.0"),
    ({"count": True}, "Outer.count: expected an integer, got bool True"),
    ({"flag": 1}, "Outer.flag: expected true or false, got int 1"),
    ({"name": None}, "Outer.name: expected a string, got null"),
    ({"pairs": [[1, "0.5"]]}, "Outer.pairs[0][1]: expected a number, got str '0.5'"),
    ({"fixed": [2, 0.6]}, "Outer.fixed: expected 3 items, got 2"),
    ({"tags": "ab"}, "Outer.tags: expected a list, got str 'ab'"),
    ({"table": [1]}, "Outer.table: expected an object, got list [1]"),
    ({"kind": "c"}, "Outer.kind: expected one of 'a', 'b', got str 'c'"),
    ({"kind": None}, "Outer.kind: expected one of 'a', 'b', got null"),
    ({"size": "all"}, "Outer.size: expected one of 'auto', got str 'all'; or expected an integer, got str 'all'"),
    ({"size": None}, "Outer.size: expected one of 'auto', got null; or expected an integer, got null"),
])
def test_what_is_not_a_records_json_is_refused_with_the_record_and_the_path(edit: dict[str, object],
                                                                           words: str) -> None:
    with pytest.raises(ValueError) as exc:
        decode(Outer, {**OBJ, **edit})
    assert str(exc.value) == words


def test_a_field_without_a_default_is_required() -> None:
    with pytest.raises(ValueError, match=r"^Outer: Outer lacks count$"):
        decode(Outer, {k: v for k, v in OBJ.items() if k != "count"})


def test_a_record_filed_under_another_key_is_not_written() -> None:
    with pytest.raises(ValueError, match="Inner 'b' is filed under 'a'"):
        encode({"a": Inner("b")})


def test_the_published_catalog_reads_back_to_the_builds_records(catalog: Catalog) -> None:
    eng = engine_catalog(catalog)
    text = json.dumps(encode(eng), indent=1)
    back = decode(EngineCatalog, json.loads(text))
    assert back == eng
    assert json.dumps(encode(back), indent=1) == text
    # the forms the catalog holds, each as data/ gives it
    h100 = back.chips["h100-sxm"]
    assert h100.id == "h100-sxm" and isinstance(h100.dense_flops, MappingProxyType)
    # the H100 SXM datasheet's sparse 1,979 and 3,958 TFLOP/s, halved
    assert h100.dense_flops["bf16"] == 989.5e12 and h100.dense_flops["fp8"] == 1979e12
    assert isinstance(h100.dense_derived, frozenset) and isinstance(h100.time_sources[0], tuple)
    assert isinstance(back.models["llama-3.1-8b"].architecture, Arch) and back.models["llama-3.1-8b"].architecture.layers == 32
    fp8_block = back.precisions["fp8-block"]
    assert fp8_block.weight_block == WeightBlock(128, 128)
    assert fp8_block.bits_per_param == 8 + 32 / 16384  # one FP32 scale per 128 x 128 block
    tm = next(iter(back.time_models.values()))
    assert isinstance(tm, TimeModelSpec) and all(isinstance(b, BandEntry) for b in tm.bands) and tm.bands
    assert isinstance(back.memory_policies["vllm-default"], MemoryPolicySpec)
    assert back.prices["h100-sxm"].accelerator == "h100-sxm"  # a price is filed by its accelerator, and says so
    assert isinstance(back.precisions["fp8"], PrecisionSpec)


def test_a_chips_record_refuses_a_figure_the_engine_does_not_model(catalog: Catalog) -> None:
    d = json.loads(json.dumps(encode(engine_catalog(catalog))))
    d["chips"]["h100-sxm"]["sparse_flops"] = {}
    with pytest.raises(ValueError, match=r"^ChipSpec: the engine does not model sparse_flops \(at "
                                         r"EngineCatalog.chips.h100-sxm\)$"):
        decode(EngineCatalog, d)
    assert [f for f in ChipSpec.__dataclass_fields__ if f == "sparse_flops"] == []

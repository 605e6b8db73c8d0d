"""The engine's records as JSON and back: one rule for every record, read from its declared field types.

`encode(record)` is a record's JSON form: a record is an object of its fields in their declared order, a `Mapping` an
object, a tuple a list, a `frozenset` a sorted list. `decode(cls, obj)` builds the record of type `cls` back from that
form (the build's reference/engine-catalog.json, which the calculator loads in the browser, or a catalog file the
command line is handed), checking each value against its field's type (`dataclasses.fields`, `typing.get_type_hints`):
a nested record, `Mapping[str, X]` (kept read-only, a `MappingProxyType`), `tuple[X, ...]`, a fixed tuple,
`frozenset[X]`, `X | None`, `str`, `int`, `float` (which takes a JSON integer as written: an int is a float to the
type system, and the record keeps what the data says), `bool` and `Literal[...]` (one of its choices). A key the
record has no field for is refused with the record's name: a figure the engine does not model must not pass silently.
A field left out takes its default; a field without one is required.

A table of records (`Mapping[str, X]` where `X` marks a field with `KEY`, as `ModelSpec.id`) names each record once,
by its key: `encode` leaves the key field out of the record's object and `decode` takes it from the key.

Standard library only, like the rest of the engine: it runs in the reader's browser.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TypeVar

T = TypeVar("T")

KEY: Mapping[str, bool] = MappingProxyType({"key": True})
"""Field metadata of a record's key in its table: `id: str = field(metadata=KEY)`."""


def key_field(cls: type) -> str | None:
    """The name of `cls`'s key field (`KEY`), or None."""
    return next((f.name for f in dataclasses.fields(cls) if f.metadata.get("key")), None)


def encode(value: Any) -> Any:
    """`value` (a record, or any value a record's field holds) as JSON-ready data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {k: _encode_entry(k, v) for k, v in value.items()}
    if isinstance(value, frozenset | set):
        return sorted(encode(v) for v in value)
    if isinstance(value, tuple | list):
        return [encode(v) for v in value]
    return value


def _encode_entry(k: str, v: Any) -> Any:
    """An entry of a table: a keyed record without its key, which the table states."""
    out = encode(v)
    name = key_field(type(v)) if dataclasses.is_dataclass(v) else None
    if name is not None:
        if out[name] != k:
            raise ValueError(f"{type(v).__name__} {out[name]!r} is filed under {k!r}: a table names a record by its "
                             f"{name}")
        del out[name]
    return out


def decode(cls: type[T], obj: object) -> T:
    """The record of type `cls` whose JSON form is `obj`; ValueError, naming the record and the path to the value,
    where `obj` is not one."""
    out: T = _Decoder().read(cls, obj, cls.__name__)
    return out


class _Decoder:
    """One decoding: each record class's fields and resolved types read once (a catalog has hundreds of records of
    ten classes, and resolving a class's annotations costs more than building a record from them)."""

    def __init__(self) -> None:
        self.classes: dict[type, tuple[dict[str, dataclasses.Field[Any]], dict[str, Any], str | None]] = {}

    def read(self, tp: Any, obj: object, path: str, key: str | None = None) -> Any:
        return _decode(tp, obj, path, self, key)

    def of(self, cls: type) -> tuple[dict[str, dataclasses.Field[Any]], dict[str, Any], str | None]:
        found = self.classes.get(cls)
        if found is None:
            found = self.classes[cls] = ({f.name: f for f in dataclasses.fields(cls) if f.init},
                                         typing.get_type_hints(cls), key_field(cls))
        return found


def _decode(tp: Any, obj: object, path: str, dec: _Decoder, key: str | None = None) -> Any:
    origin = typing.get_origin(tp)
    if origin is types.UnionType or origin is typing.Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if obj is None and len(args) < len(typing.get_args(tp)):
            return None
        if len(args) == 1:
            return _decode(args[0], obj, path, dec)
        misses = []  # X | Y: the first alternative that reads it (a choice of words, or a number)
        for a in args:
            try:
                return _decode(a, obj, path, dec)
            except ValueError as exc:
                misses.append(str(exc).removeprefix(f"{path}: "))
        raise ValueError(f"{path}: {'; or '.join(misses)}")
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _record(tp, obj, path, dec, key)
    if origin is typing.Literal:
        choices = typing.get_args(tp)
        if any(obj == c and type(obj) is type(c) for c in choices):
            return obj
        raise ValueError(f"{path}: expected one of {', '.join(repr(c) for c in choices)}, got {_what(obj)}")
    if origin is not None and issubclass(origin, Mapping):
        key_type, value_type = typing.get_args(tp)
        if key_type is not str:
            raise TypeError(f"{path}: the decoder reads Mapping[str, X], not {tp}")
        if not isinstance(obj, Mapping) or not all(isinstance(k, str) for k in obj):
            raise ValueError(f"{path}: expected an object, got {_what(obj)}")
        return MappingProxyType({k: _decode(value_type, v, f"{path}.{k}", dec, k) for k, v in obj.items()})
    if origin is tuple or origin is frozenset:
        if not isinstance(obj, list | tuple):
            raise ValueError(f"{path}: expected a list, got {_what(obj)}")
        items = typing.get_args(tp)
        if origin is frozenset:
            return frozenset(_decode(items[0], v, f"{path}[{i}]", dec) for i, v in enumerate(obj))
        if len(items) == 2 and items[1] is Ellipsis:
            return tuple(_decode(items[0], v, f"{path}[{i}]", dec) for i, v in enumerate(obj))
        if len(obj) != len(items):
            raise ValueError(f"{path}: expected {len(items)} items, got {len(obj)}")
        return tuple(_decode(a, v, f"{path}[{i}]", dec) for i, (a, v) in enumerate(zip(items, obj, strict=True)))
    if tp is float:
        if isinstance(obj, int | float) and not isinstance(obj, bool):
            return obj
        raise ValueError(f"{path}: expected a number, got {_what(obj)}")
    if tp is int or tp is str or tp is bool:
        if isinstance(obj, tp) and (tp is bool or not isinstance(obj, bool)):
            return obj
        raise ValueError(f"{path}: expected {_NAMES[tp]}, got {_what(obj)}")
    raise TypeError(f"{path}: the decoder does not read {tp}")


_NAMES: Mapping[type, str] = MappingProxyType({int: "an integer", str: "a string", bool: "true or false"})


def _what(obj: object) -> str:
    return "null" if obj is None else f"{type(obj).__name__} {obj!r}"[:80]


def _record(cls: type, obj: object, path: str, dec: _Decoder, key: str | None) -> Any:
    if not isinstance(obj, Mapping):
        raise ValueError(f"{path}: expected an object, got {_what(obj)}")
    fields, hints, keyed = dec.of(cls)
    unknown = sorted(set(obj) - set(fields))
    name = keyed if key is not None else None
    if name is not None and name in obj:
        unknown.append(name)  # a table states the key; the record does not repeat it
    if unknown:
        raise ValueError(f"{cls.__name__}: the engine does not model {', '.join(map(str, unknown))}"
                         + ("" if path == cls.__name__ else f" (at {path})"))
    values: dict[str, Any] = {}
    for f in fields.values():
        if f.name == name:
            values[f.name] = key
        elif f.name in obj:
            values[f.name] = _decode(hints[f.name], obj[f.name], f"{path}.{f.name}", dec)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ValueError(f"{path}: {cls.__name__} lacks {f.name}")
    return cls(**values)

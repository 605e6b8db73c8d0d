"""What every entry is made of: strict scalars, plain text, checked URLs, a dated `Source`."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import re
import types
from collections.abc import Callable, Hashable, Mapping
from functools import cache
from types import MappingProxyType
from typing import Annotated, Any, TypeVar, Union, cast, get_args, get_origin, get_type_hints

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, ValidationError

from snippets.engine.codec import key_field

_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
_MARKUP: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"[<>]"), "an angle bracket (HTML markup)"),
    (re.compile(r"\]\s*[(\[]|\[[^\]]*\]:"), "Markdown link syntax"),
    (re.compile(r"`"), "a backtick (Markdown code)"),
    (re.compile(r"\{\{|\}\}|\{%|%\}|\{#|#\}"), "template syntax ({{ }}, {% %})"),
    (re.compile(r"(?i)\b(?:javascript|vbscript|data)\s*:"), "a script URL scheme"),
)


def check_text(value: str) -> str:
    """Data text is shown as text: refuse markup, template syntax and control characters in it.

    Every page escapes data where it writes it; this keeps the data itself free of anything that
    would mean something to Markdown, HTML or the computed-value syntax if one place did not.
    """
    bad = _CONTROL.search(value)
    if bad:
        raise ValueError(f"text holds the control or invisible character U+{ord(bad.group(0)):04X}")
    for pattern, what in _MARKUP:
        found = pattern.search(value)
        if found:
            raise ValueError(f"text holds {what}: {found.group(0)!r}; data is plain text")
    return value


def _check_texts(value: Any) -> Any:
    if isinstance(value, str):
        check_text(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_texts(k)
            _check_texts(v)
    elif isinstance(value, list | tuple):
        for v in value:
            _check_texts(v)
    return value


_SCALARS = (bool, int, float, dt.date)


@cache
def _scalar_kinds(tp: Any) -> frozenset[type]:  # tp: a field's annotation
    """The bare scalar types a field accepts (bool, int, float, date), or {object} if it takes anything else."""
    origin = get_origin(tp)
    if origin is Annotated:
        if any(isinstance(m, BeforeValidator) for m in tp.__metadata__):
            return frozenset({object})  # its validator reads the form as written (a measure, a record) and checks it
        return _scalar_kinds(get_args(tp)[0])
    if origin is Union or origin is types.UnionType:
        out: set[type] = set()
        for arg in get_args(tp):
            if arg is not type(None):
                out |= _scalar_kinds(arg)
        return frozenset(out)
    if tp in _SCALARS:
        return frozenset({tp})
    return frozenset({object})


def _strict_scalar(kinds: frozenset[type], value: Any) -> Any:
    """Refuse the coercions pydantic's lax mode would make: "96" or "yes" read as a number or a bool."""
    if object in kinds or value is None:
        return value
    if isinstance(value, bool):
        if bool not in kinds:
            raise ValueError("a boolean")
    elif isinstance(value, int | float):
        if kinds == {bool}:
            raise ValueError("a number: write true or false")
        if float not in kinds and not (int in kinds and isinstance(value, int)):
            raise ValueError("not a whole number" if int in kinds else "a number")
    elif isinstance(value, str):
        if kinds == {dt.date}:
            return value  # a quoted date is still a date: pydantic parses YYYY-MM-DD and refuses the rest
        raise ValueError("text: write numbers, true/false and YYYY-MM-DD dates unquoted, in those forms only")
    elif isinstance(value, dt.datetime) or not isinstance(value, dt.date) or dt.date not in kinds:
        raise ValueError(f"a {type(value).__name__}")
    return value


class _Refused:
    """A scalar in the wrong form ("96" for a number): no field type accepts it, so pydantic reports it at its field."""

    __slots__ = ("reason", "value")

    def __init__(self, value: Any, reason: str) -> None:
        self.value, self.reason = value, reason

    def __repr__(self) -> str:
        return f"{self.value!r}, {self.reason}"


class _Strict(BaseModel):
    """Base of every schema class: no unknown keys, immutable, strict scalars, plain-text strings.

    Every field of every subclass (new ones too) gets two checks: a number, bool or date field
    takes only that scalar as YAML wrote it (`"96"`, `yes` or `1` for a bool are refused, not
    coerced), and every string anywhere in a field is plain text (`check_text`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)

    @model_validator(mode="before")
    @classmethod
    def _scalars_as_written(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        out = None
        for key, value in data.items():
            fld = cls.model_fields.get(key) if isinstance(key, str) else None
            if fld is None:
                continue
            try:
                _strict_scalar(_scalar_kinds(cast(Hashable, fld.annotation)), value)
            except ValueError as exc:
                out = dict(data) if out is None else out
                out[key] = _Refused(value, str(exc))  # pydantic refuses it at the field, naming the field
        return data if out is None else out

    @field_validator("*", mode="after")
    @classmethod
    def _plain_text(cls, value: Any) -> Any:
        return _check_texts(value)


R = TypeVar("R")


def _record_fields(cls: type) -> Mapping[str, Any]:
    """A record's fields and their types, resolved (the engine writes them as strings: `from __future__`)."""
    hints = get_type_hints(cls, include_extras=True)
    return MappingProxyType({f.name: hints[f.name] for f in dataclasses.fields(cls)})


def _record_of(tp: Any) -> type | None:
    """The record class a field holds (a dataclass, alone or with None), or None for a scalar field."""
    if get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    args = get_args(tp) if get_origin(tp) in (Union, types.UnionType) else (tp,)
    return next((a for a in args if dataclasses.is_dataclass(a) and isinstance(a, type)), None)


def _records_of(tp: Any) -> type | None:
    """The record class a `tuple[X, ...]` field holds each item of, or None."""
    args = get_args(tp)
    return _record_of(args[0]) if get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis else None


@dataclasses.dataclass(frozen=True)
class _Plan:
    """What `_as_written` checks of one record class, read from its field types once, when the schema is defined: by
    field, the scalar kinds it takes, and the plan of the record it holds (alone or as `tuple[X, ...]` items)."""

    kinds: Mapping[str, frozenset[type]]
    inner: Mapping[str, _Plan]
    items: Mapping[str, _Plan]


def _plan(cls: type) -> _Plan:
    fields = _record_fields(cls)
    inner = {n: _plan(r) for n, tp in fields.items() if (r := _record_of(tp)) is not None}
    items = {n: _plan(r) for n, tp in fields.items() if (r := _records_of(tp)) is not None}
    return _Plan(MappingProxyType({n: _scalar_kinds(tp) for n, tp in fields.items()}), MappingProxyType(inner),
                 MappingProxyType(items))


def _as_written(plan: _Plan, body: dict[Any, Any], loc: tuple[str, ...], unknown: list[InitErrorDetails]) -> dict[Any, Any]:
    """What `_Strict` checks of a schema's own fields, for a record's: each scalar as written (a wrong one becomes
    `_Refused`, which pydantic refuses at its field), plain text, nested records likewise; unknown keys are collected
    in `unknown`, each at its own field."""
    out = dict(body)
    for key, value in body.items():
        kinds = plan.kinds.get(key) if isinstance(key, str) else None
        if kinds is None:
            unknown.append(InitErrorDetails(type="extra_forbidden", loc=(*loc, str(key)), input=value))
            continue
        inner, items = plan.inner.get(key), plan.items.get(key)
        if inner is not None and isinstance(value, dict):
            out[key] = _as_written(inner, value, (*loc, key), unknown)
            continue
        if items is not None and isinstance(value, list):
            out[key] = [_as_written(items, v, (*loc, key, str(i)), unknown) if isinstance(v, dict) else v
                        for i, v in enumerate(value)]
            continue
        try:
            _strict_scalar(kinds, value)
            _check_texts(value)
        except ValueError as exc:
            out[key] = _Refused(value, str(exc))
    return out


def as_written(cls: type) -> BeforeValidator:
    """For an engine record (a frozen standard-library dataclass), or a schema subclass of one that adds its
    provenance, so that the data validates into the record itself and one class is both the schema and what the
    engine reads: the mapping is checked as every schema class is (`_Strict`: no unknown key, scalars as written,
    plain text), each problem at its own field, before pydantic makes the record. A record filed in a table by its
    key (`codec.KEY`, as `LayoutPolicySpec.id`) takes it from the entry's id in its file (the loader's validation
    context, `key`), which the entry does not repeat. Use with `obeys` where the record has rules of its own:
    `Annotated[Arch, as_written(Arch), obeys(...)]`."""

    key, plan = key_field(cls), _plan(cls)

    def before(value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, dict):
            return value
        unknown: list[InitErrorDetails] = []
        if key is not None and key in value:
            unknown.append(InitErrorDetails(type="value_error", loc=(key,), input=value[key], ctx={
                "error": f"an entry's {key} is its key in the file, not a field"}))
        checked = _as_written(plan, {k: v for k, v in value.items() if k != key}, (), unknown)
        if unknown:
            raise ValidationError.from_exception_data(cls.__name__, unknown)
        if key is not None and isinstance(info.context, Mapping) and "key" in info.context:
            checked[key] = info.context["key"]
        return checked

    return BeforeValidator(before)


def as_record(cls: type[R], entry: Any) -> R:
    """The engine's record `cls` of an entry that validated into it (`cls` itself, or a schema subclass that adds
    provenance): the record's own fields, its nested records made plain likewise; what the subclass adds (rationale,
    sources, notes, ranges) stays with the entry. A plain conversion, no figure computed."""
    values: dict[str, Any] = {}
    for name, tp in _record_fields(cls).items():
        value = getattr(entry, name)
        inner, items = _record_of(tp), _records_of(tp)
        if inner is not None and value is not None and type(value) is not inner:
            value = as_record(inner, value)
        elif items is not None:
            value = tuple(as_record(items, v) for v in value)
        values[name] = value
    return cls(**values)


def obeys(rules: Callable[[Any], list[tuple[str, str]]]) -> AfterValidator:
    """The record's own rules (the engine's, or a schema's on its provenance: (dotted field, why) pairs), each broken
    one refused at its field, showing that field's value."""

    def after(value: R) -> R:
        found = rules(value)
        if found:
            raise ValidationError.from_exception_data(type(value).__name__, [
                InitErrorDetails(type="value_error", loc=tuple(int(p) if p.isdigit() else p for p in field.split(".")),
                                 input=_at(value, field), ctx={"error": why})
                for field, why in found])
        return value

    return AfterValidator(after)


def _at(record: Any, dotted: str) -> Any:
    """The value at a dotted field path (`non_torch_by_tp.1.memory`: an index in a tuple), None where there is none."""
    for name in dotted.split("."):
        if name.isdigit() and isinstance(record, tuple):
            record = record[int(name)] if int(name) < len(record) else None
        else:
            record = getattr(record, name, None)
    return record


PositiveFloat = Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True)]
PositiveInt = Annotated[int, Field(gt=0, strict=True)]
Text = Annotated[str, AfterValidator(check_text)]


def _read_only(table: Mapping[Any, Any]) -> Mapping[Any, Any]:
    """A mapping field as a read-only view: a block that edits an entry's figures raises, for every page."""
    return MappingProxyType(dict(table))
"""Plain text from data: no markup, template syntax or control characters (every str field is checked so)."""

_HOST = re.compile(r"^(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
_URL_CHARS = re.compile(r"^https://[A-Za-z0-9._~:/?#@!$&*+,;=%()-]+$")


def _check_url(url: str) -> str:
    """An https:// URL to a named host, with nothing that could end a Markdown link or an HTML attribute."""
    from urllib.parse import urlsplit

    if not _URL_CHARS.match(url):
        raise ValueError("a source URL is https:// followed only by URL characters (no spaces, quotes, "
                         "angle brackets, backticks, braces or backslashes)")
    parts = urlsplit(url)
    if "@" in parts.netloc or not parts.hostname or not _HOST.match(parts.hostname) or parts.netloc != parts.netloc.lower():
        raise ValueError(f"a source URL needs a proper lower-case host name (got {parts.netloc!r})")
    return url


def build_date() -> dt.date:
    """The latest date a source can have been read: today, or the build's SOURCE_DATE_EPOCH if later."""
    today = dt.datetime.now(dt.UTC).date()
    stamp = os.environ.get("SOURCE_DATE_EPOCH", "")
    if stamp.isdigit():
        today = max(today, dt.datetime.fromtimestamp(int(stamp), dt.UTC).date())
    return today


def _not_future(day: dt.date) -> dt.date:
    if day > build_date():
        raise ValueError(f"read {day.isoformat()} is after the build date {build_date().isoformat()}")
    return day


class Source(_Strict):
    """Where a figure was read: a primary source (a vendor datasheet, a standard, a model's config.json), or, where
    no primary one could be read, a dated transcription of one (`secondary`, naming the document it `copies`)."""

    url: Annotated[str, Field(max_length=2000), AfterValidator(_check_url)]
    title: Annotated[Text, Field(min_length=3)]
    read: Annotated[dt.date, AfterValidator(_not_future)]
    """The date the figure was read: for a transcription, the date of the copy (when it read its own source), not
    the day the site read the copy; never after the build date."""
    note: Text | None = None
    secondary: bool = False
    """True for a transcription (a repository's table, a tool's catalog, a benchmark's notes) of a primary document
    that could not be read here; pages show it as secondary."""
    copies: Annotated[Text, Field(min_length=3)] | None = None
    """The primary document a secondary source transcribes, by name (and address where known)."""

    @model_validator(mode="after")
    def _secondary_names_its_primary(self) -> Source:
        if self.secondary and self.copies is None:
            raise ValueError("copies: a secondary source names the primary document it transcribes")
        if self.copies is not None and not self.secondary:
            raise ValueError("copies: only a secondary source copies another document (set secondary: true)")
        return self


Sources = Annotated[tuple[Source, ...], Field(min_length=1)]

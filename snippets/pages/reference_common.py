"""Helpers shared by the reference pages' models: source links, "as of" dates, throughput figures."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from snippets.data import Flops, Measurement, entry_sources
from snippets.render import fmt


def source_links(entry: Any) -> fmt.Md:
    """Markdown links to an entry's sources, numbered: "[1](url) [2](url) (secondary)"; the title, the date read and,
    for a transcription, the document it copies show on hover, and a secondary source says so beside its link.

    Title and URL come from data: `fmt.link` escapes the one and percent-encodes the other.
    """
    return fmt.Md(" ".join(fmt.link(str(i), s.url, f"{s.title}, read {s.read.isoformat()}"
                                    + ("" if s.copies is None else f"; secondary, a transcription of {s.copies}"))
                           + (" (secondary)" if s.secondary else "")
                           for i, s in enumerate(entry_sources(entry), 1)))


def latest_read(entries: Iterable[Any]) -> dt.date:
    """The latest `read` date among the entries' sources."""
    dates: list[dt.date] = [s.read for e in entries for s in entry_sources(e)]
    return max(dates)


def as_of_text(entries: Iterable[Any]) -> str:
    """The sentence under a table: the latest date any of its rows was read from its source."""
    return f"As of {latest_read(entries).isoformat()}: the latest date any row above was read from its source."


def as_of(entries: Iterable[Any]) -> str:
    """`as_of_text` as an emphasised Markdown paragraph, for a block's output."""
    return f"\n*{fmt.escape_markdown(as_of_text(entries))}*\n"


def flops(f: Flops | None) -> fmt.Figure | str:
    """Peak tensor throughput in TFLOP/s, saying dense or sparse; "not stated" when absent."""
    if f is None:
        return "not stated"
    v = f.per_s / 1e12
    label = "dense" if f.sparsity == "dense" else "sparse, as stated"
    digits = 0 if v == int(v) else (1 if v * 10 == int(v * 10) else 2)
    return fmt.Figure(v, "TFLOP/s", f"{fmt.number(v, digits)} ({label})", f.sparsity)


def as_stated(value: float, unit: str, basis: str = "") -> fmt.Figure:
    """A figure exactly as its source states it, without trailing zeros: 3.35 TB/s, 80 GB."""
    text = f"{value:,.3f}".rstrip("0").rstrip(".")
    return fmt.Figure(value, unit, f"{text} {unit}", basis)


def dense_flops(f: Flops | None) -> fmt.Figure | str:
    """Dense tensor throughput in TFLOP/s: as stated, or derived from a sparse figure (labelled derived).

    "not stated" when the chip lacks the format; "dense not stated" for a sparse figure without a stated speedup.
    """
    if f is None:
        return "not stated"
    d = f.dense
    if d is None:
        return "dense not stated"
    v = d.flops_per_s / 1e12
    text = fmt.number(v, exact_digits(v))
    if d.derived:
        return fmt.Figure(v, "TFLOP/s", f"{text} (derived)", "dense, derived from the sparse figure")
    return fmt.Figure(v, "TFLOP/s", text, "dense")


def exact_digits(v: float, most: int = 3) -> int:
    """The fewest decimals (up to `most`) that show `v` without rounding it: 12.5 -> 1, 989.5 -> 1, 450 -> 0."""
    for d in range(most + 1):
        if abs(round(v, d) - v) < 1e-9 * max(1.0, abs(v)):
            return d
    return most


def binary_bytes(n: float, unit: str, digits: int = 1) -> fmt.Figure:
    """A byte count in a binary unit (KiB, MiB, GiB) with the tooltip of that unit, not GiB's."""
    power = {"KiB": 10, "MiB": 20, "GiB": 30, "TiB": 40}[unit]
    v = n / 2.0**power
    return fmt.Figure(v, unit, f"{fmt.number(v, digits)} {unit}", f"{unit} = 2^{power} bytes")


CAL_BAND = 0.15
"""The band the predictions page states for NIM's rows' ITL and throughput (tests/unit/test_calibration.py holds each
row to it), and the one it holds the runs on a GPU a source names to (`reference_misses`)."""

SOURCES = (
    ("docs.nvidia.com/nim/", "NIM benchmarking page"),
    ("github.com/semianalysisai/inferencex", "InferenceX"),
    ("inferencex.semianalysis.com", "InferenceX"),
    ("github.com/azure/ai-benchmarking-guide", "Azure benchmarking guide"),
    ("github.com/nvidia/tensorrt-llm", "TensorRT-LLM docs"),
    ("github.com/dstackai/", "dstack benchmarks"),
    ("blogs.oracle.com", "Oracle blog"),
    ("github.com/ai-dynamo/", "Dynamo docs"),
    ("lmsys.org", "LMSYS blog"),
    ("arxiv.org/abs/2412.19437", "DeepSeek-V3 report (arXiv)"),
    ("arxiv.org/html/2503.01840", "EAGLE-3 paper (arXiv)"),
    ("github.com/wxsms/sgl-project", "SGLang docs"),
    ("github.com/gpustack/", "GPUStack Performance Lab"),
    ("github.com/sgl-project/sgl-cookbook", "SGLang cookbook"),
)
"""A short name for each source a row can cite, by the start of its address (lower case, without https://)."""


def source_label(m: Measurement) -> str:
    """The short name of the row's first source, marked when the row transcribes another document."""
    url = m.sources[0].url.lower()
    where = url.split("://", 1)[1]
    name = next((label for start, label in SOURCES if where.startswith(start)), urlsplit(url).hostname or url)
    return f"{name} (secondary)" if m.secondary else name

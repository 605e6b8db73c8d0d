"""Exec blocks: every `python exec="on"` fence of a page, run by the build with the build's catalog.

markdown-exec's plugin registers a superfences custom fence per language (`markdown_exec.validator` and
`markdown_exec.formatter`); the `serving` plugin gives the python/py fences `Blocks.fence` as their format
instead (superfences' documented `custom_fences` option, in the build's own config), which formats through
markdown-exec's public `base_format` with `Blocks.run` as the code runner. So a block:

- runs in a namespace of its own that holds `catalog`, the catalog this build loaded (validated once per build;
  outside a build, `snippets.data.load()` gives one), and a `print` whose text becomes the block's output;
- has a time limit (`block_timeout`, SIGALRM), must print something, and must leave the loaded `snippets`
  modules as it found them (`shared_state`: their values and function defaults);
- reports a failure itself, once, at the page's line (`docs/page.md:LINE: a Python block raised ...`): nothing
  is logged through markdown-exec, and the build stops when every page is converted;
- prints Markdown (converted by markdown-exec's `MarkdownConverter` with the page's extensions, then kept in
  Python-Markdown's HTML stash) or, with `html="true"`, HTML only (a Markdown line there is refused: it would
  be published as typed). The figure spans `snippets.render.fmt` writes into Markdown (a table's cells, a worked
  example's figures) are set aside before the conversion and put back after it, through the converter's own
  `stash`, as mkdocstrings' AutoDocProcessor stores its HTML: Markdown's inline patterns never read them, which
  halves what a table costs to convert.

`{{ }}` syntax in what a block prints is never evaluated (`snippets.build.computed`, `Pages.in_block`).
"""

from __future__ import annotations

import operator
import re
import signal
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from io import StringIO
from types import CodeType, FunctionType
from typing import TYPE_CHECKING, Any

from snippets.build import drift
from snippets.build.computed import Pages, PageState
from snippets.render.fmt import FIGURE_SPAN

if TYPE_CHECKING:
    from markdown import Markdown

    from snippets.data import Catalog

CATALOG_NAME = "catalog"
"""The name under which a block finds the build's catalog."""


class BlockTimeout(BaseException):
    """Raised in a block that overran its time (a BaseException, so the block's own `except Exception` cannot
    swallow it)."""


ModuleState = tuple[tuple[str, ...], tuple[int, ...], tuple[str, ...], tuple[object, ...]]
"""One module as a block found it: its names, the identity of each value, its functions' names and what
could change in their defaults (see `shared_state`)."""

_ATOMS = (type(None), bool, int, float, complex, str, bytes, range, type)


def _immutable(values: tuple[Any, ...]) -> bool:
    """Whether default values cannot change in place (numbers, text, None, classes, tuples of them)."""
    return all(isinstance(v, _ATOMS) or (isinstance(v, tuple | frozenset) and _immutable(tuple(v))) for v in values)


_DEFAULTS = operator.attrgetter("__defaults__")
_KWDEFAULTS = operator.attrgetter("__kwdefaults__")


@dataclass
class SharedState:
    """Snapshots of what one page's block could change for the pages after it: every module-level value of the
    loaded `snippets` modules (by identity) and the defaults of their functions (by identity, and by value where
    a default could change in place: a list, a dict). Compared with `changed_state`.

    It remembers which defaults tuples it found immutable (a block's snapshot walks some 1,500 functions, whose
    defaults stay the same objects from block to block): one per build, like everything the build keeps. A
    function's defaults are read with C-level maps (`attrgetter` over all of a module's functions at once); only
    the few with keyword defaults or a mutable default take a Python step each."""

    _classified: dict[int, tuple[object, bool]] = field(default_factory=dict)
    _kw_classified: dict[tuple[int, ...], tuple[tuple[Any, ...], bool]] = field(default_factory=dict)
    _last: dict[str, _Seen] = field(default_factory=dict)
    """Each module as the last snapshot read it: a module whose names and defaults are the same objects is compared
    without walking its functions again."""

    def _immutable_tuple(self, d: tuple[Any, ...] | None) -> bool:
        if d is None:
            return True
        hit = self._classified.get(id(d))
        if hit is None or hit[0] is not d:  # the tuple is held, so its id is not reused while it is here
            hit = self._classified[id(d)] = (d, _immutable(d))
        return hit[1]

    def _defaults(self, f: FunctionType) -> object:
        """A function's defaults as a block could change them: the identity of its defaults (a block that assigns
        `__defaults__`), and their repr where one could change in place (a list default edited)."""
        return self._of(f.__defaults__, f.__kwdefaults__)

    def _of(self, d: tuple[Any, ...] | None, kw: dict[str, Any] | None) -> object:
        if d is None and kw is None:
            return None
        kw_values = tuple(kw.values()) if kw else ()
        kw_ids = tuple(map(id, kw_values))
        if self._immutable_tuple(d) and self._immutable_values(kw_ids, kw_values):
            return (id(d), kw_ids)  # the keyword defaults' dict can be edited in place
        return repr((d, kw))

    def _immutable_values(self, ids: tuple[int, ...], values: tuple[Any, ...]) -> bool:
        """`_immutable(values)`, remembered by the values' identities (held, so no id is reused while here)."""
        if not ids:
            return True
        hit = self._kw_classified.get(ids)
        if hit is None:
            hit = self._kw_classified[ids] = (values, _immutable(values))
        return hit[1]

    def snapshot(self) -> dict[str, ModuleState]:
        import sys

        out: dict[str, ModuleState] = {}
        classified, last_seen = self._classified, self._last
        for mod_name, mod in list(sys.modules.items()):
            if not (mod_name == "snippets" or mod_name.startswith("snippets.")) or mod_name.startswith("snippets.build"):
                continue
            names = vars(mod)
            keys, ids = tuple(names), tuple(map(id, names.values()))
            last = last_seen.get(mod_name)
            if last is not None and last.keys == keys and last.ids == ids:
                funcs, fs = last.funcs, last.fs  # the same objects under the same names: held, so ids are not reused
            else:
                funcs = tuple(k for k, v in names.items() if type(v) is FunctionType)
                fs = tuple(map(names.__getitem__, funcs))
            ds, kws = tuple(map(_DEFAULTS, fs)), tuple(map(_KWDEFAULTS, fs))
            d_ids, kw_ids = tuple(map(id, ds)), tuple(map(id, kws))
            if last is not None and last.fs is fs and last.d_ids == d_ids and last.kw_ids == kw_ids:
                # the same defaults objects as last time (held there): only what can change in place is read again
                states = list(last.states)
                for i in last.slow:
                    states[i] = self._of(ds[i], kws[i])
                slow = last.slow
            else:
                states = []
                slow_at: list[int] = []
                append = states.append
                for i, (d, kw) in enumerate(zip(ds, kws, strict=True)):  # the common cases inline, as `_of` gives them
                    if kw is None:
                        if d is None:
                            append(None)
                            continue
                        hit = classified.get(id(d))
                        if hit is not None and hit[0] is d and hit[1]:
                            append((id(d), ()))
                            continue
                    slow_at.append(i)
                    append(self._of(d, kw))
                slow = tuple(slow_at)
            state = tuple(states)
            last_seen[mod_name] = _Seen(keys, ids, funcs, fs, ds, kws, d_ids, kw_ids, state, slow)
            out[mod_name] = (keys, ids, funcs, state)
        return out


@dataclass(frozen=True)
class _Seen:
    """One module as the last snapshot read it, holding what it read (so no id in it is reused while it is here):
    its names and their values' ids, its functions and their defaults, and which functions' defaults can change in
    place (`slow`: keyword defaults, or a positional default that is not immutable), read again every time."""

    keys: tuple[str, ...]
    ids: tuple[int, ...]
    funcs: tuple[str, ...]
    fs: tuple[Any, ...]
    ds: tuple[Any, ...]
    kws: tuple[Any, ...]
    d_ids: tuple[int, ...]
    kw_ids: tuple[int, ...]
    states: tuple[object, ...]
    slow: tuple[int, ...]


def shared_state() -> dict[str, ModuleState]:
    """A snapshot of the loaded `snippets` modules (`SharedState.snapshot`, without memory between calls)."""
    return SharedState().snapshot()


def changed_state(before: dict[str, ModuleState], after: dict[str, ModuleState]) -> list[str]:
    """What changed between two snapshots, named as `snippets.render.fmt.DEFAULT` (a value) or
    `snippets.render.fmt.quantity defaults`; a name a module gained (an import) is no change."""
    changed: list[str] = []
    for mod_name, was in before.items():
        now = after.get(mod_name)
        if now == was:
            continue  # the common case, compared in C
        if now is None:
            changed.append(f"{mod_name} (removed)")
            continue
        ids, had = dict(zip(now[0], now[1], strict=True)), dict(zip(was[0], was[1], strict=True))
        changed += [f"{mod_name}.{k}" for k, v in had.items() if not k.startswith("__") and ids.get(k) != v]
        defaults = dict(zip(now[2], now[3], strict=True))
        changed += [f"{mod_name}.{k} defaults" for k, v in zip(was[2], was[3], strict=True)
                    if ids.get(k) == had[k] and defaults.get(k, v) != v]  # the same function, other defaults
    return sorted(changed)


def markdown_in_html(output: str) -> str:
    """The first line of an html="true" block's output (which skips Markdown) that does not start with a tag:
    prose, a list, a table or a heading printed as Markdown would be published as typed; "" if none.

    Text inside a tag's line is not judged: a table cell may show data text that holds `**` or `[x](y)`,
    escaped to show as typed, exactly as the Markdown path shows it."""
    line = next((ln for ln in output.splitlines() if ln.strip() and not ln.lstrip().startswith("<")), None)
    return "" if line is None else line.strip()


BLOCK_OUTPUT_CLOSE = f"</div><!--/{drift.BLOCK_OUTPUT_CLASS}-->"
"""The end of the element a block's output is wrapped in while the page converts (`snippets.build.guard`
reads each output by it, and removes the wrappers)."""


def _block_line(state: PageState) -> int:
    starts = state.block_starts()
    return starts[state.blocks_run - 1] if 0 < state.blocks_run <= len(starts) else 0


def _print(buffer: StringIO, *texts: object, sep: str = " ", end: str = "\n", **_: object) -> None:
    buffer.write(sep.join(str(t) for t in texts) + end)


@dataclass
class Blocks:
    """The exec blocks of one build: the catalog they see, the page cursor, the time limit, the state check."""

    pages: Pages
    catalog: Catalog
    timeout: float = 60.0
    """Seconds a block may run: a block that sleeps or loops stops the build, not CI (`block_timeout`)."""
    shared: SharedState = field(default_factory=SharedState)
    _failed: bool = False

    def fence(self, source: str, language: str, css_class: str, options: dict[str, Any], md: Markdown,
              **kwargs: Any) -> str:
        """A superfences custom fence's `format` for python/py: one exec block of the page being converted."""
        from markdown_exec import MarkdownConverter, base_format

        pages = self.pages
        state = pages.current
        state.blocks_run += 1
        line = _block_line(state)
        where = f"docs/{state.src}:{line}"
        if options.get("session"):
            state.errors.append(f"{where}: session={options['session']!r}: a session shares one block's state with "
                                "the blocks after it; each block computes from the page model alone")
            return ""
        if options.get("source") or options.get("result"):  # what the block prints is converted here, once
            state.errors.append(f"{where}: source= and result= are not supported: a block prints what it stands for "
                                "(show its code in a fenced block of its own)")
            return ""
        before = pages.state_after_block or self.shared.snapshot()
        self._failed = False
        pages.in_block += 1
        try:
            # markdown-exec runs the block and reports nothing itself (`run` does); what it printed comes back as
            # written (html), and Markdown output is converted here, with its figure spans set aside
            out = str(base_format(language=language, run=partial(self.run, state, line), code=source, md=md,
                                  **{**options, "html": True}))
            if not options.get("html") and out.strip():
                spans: dict[str, str] = {}

                def aside(m: re.Match[str]) -> str:
                    spans[key := f"<!--sa-figure-{id(spans)}-{len(spans)}-->"] = m.group(0)
                    return key

                prefix = options.get("id_prefix")
                prefix = prefix if prefix is not None else (f"{options['id']}-" if options.get("id") else None)
                out = str(MarkdownConverter(md, update_toc=options.get("update_toc", True)).convert(
                    FIGURE_SPAN.sub(aside, out), stash=spans, id_prefix=prefix))
        finally:
            pages.in_block -= 1
        after = pages.state_after_block = self.shared.snapshot()
        if changed := changed_state(before, after):
            state.errors.append(f"{where}: the Python block changed shared state the pages after it would see: "
                                f"{', '.join(changed[:5])}. A block only prints; keep its changes local")
        if options.get("html") and (markdown := markdown_in_html(out)):
            state.errors.append(f'{where}: the html="true" block printed Markdown, which would be published as '
                                f"typed: {markdown[:80]!r}. Print HTML only, or drop html=\"true\" so Markdown "
                                "converts what the block prints")
        if not out.strip() and not self._failed:
            state.errors.append(f'{where}: the python exec="on" block printed nothing: a block prints the table or '
                                "text it stands for; remove it or print what it computes")
        # what it printed is scanned with the page (guard.block_output_errors), named by this block's line
        state.block_runs.append((source, line))
        return f'<div class="{drift.BLOCK_OUTPUT_CLASS}" data-block="{len(state.block_runs) - 1}">{out}{BLOCK_OUTPUT_CLOSE}'

    def run(self, state: PageState, line: int, code: str, **_: Any) -> str:
        """markdown-exec's `run` for `base_format`: execute one block, with its time limit, and return what it
        printed. A block that raises or overruns is reported here (page, line, error) and prints nothing."""
        buffer = StringIO()
        namespace: dict[str, Any] = {"__name__": "__serving_block__", "print": partial(_print, buffer),
                                     CATALOG_NAME: self.catalog}
        name = f"<exec block at docs/{state.src}:{line}>"
        try:
            compiled: CodeType = compile(code, name, "exec")
            self._with_limit(lambda: exec(compiled, namespace))  # noqa: S102 - the site's own pages' blocks
        except BlockTimeout:
            self._failed = True
            state.errors.append(f"docs/{state.src}:{line}: the Python block ran longer than {self.timeout:g} s and "
                                "was stopped (the limit is the serving plugin's `block_timeout`, in seconds)")
            return ""
        except Exception as exc:
            self._failed = True
            state.errors.append(describe_failure(state.src, line, name, exc))
            return ""
        return buffer.getvalue()

    def _with_limit(self, call: Callable[[], None]) -> None:
        """`call()`, stopped with `BlockTimeout` after `timeout` seconds (on the main thread, where signals are)."""
        timed = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
        if not timed:
            call()
            return

        def overrun(signum: int, frame: Any) -> None:
            raise BlockTimeout

        previous = signal.signal(signal.SIGALRM, overrun)
        signal.setitimer(signal.ITIMER_REAL, self.timeout)
        try:
            call()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def describe_failure(src: str, start: int, filename: str, exc: BaseException) -> str:
    """One actionable line for a block that raised: the page's line of the failing statement (the block's last
    frame), the error, where it is in the block."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    if isinstance(exc, SyntaxError) and exc.filename == filename and exc.lineno:
        n: int | None = exc.lineno
    else:
        n = frames[-1].lineno if frames else None
    error = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1]
    if isinstance(exc, KeyError):  # a data entry the code looks up by id: say so, and where (one cause, one message)
        from snippets.build.computed import failure

        error = failure(exc)
    if n is None:
        return (f"docs/{src}:{start}: a Python block raised {error}. "
                "Hint: run the block's code in `python` after `pip install -e .` to see the full traceback")
    return (f"docs/{src}:{start + n}: a Python block raised {error} (line {n} of the block that starts at line "
            f"{start}). Hint: run the block's code in `python` after `pip install -e .` (with `catalog = "
            "snippets.data.load()`) to see the full traceback")

"""Convert a page in process as the build does, without MkDocs: the `{{ }}` extension, the exec blocks' fence
(markdown-exec's validator, `Blocks.fence`) and the rendered-text scans, over the session's catalog."""

from __future__ import annotations

from dataclasses import dataclass

import markdown
import markdown_exec

from snippets.build import drift
from snippets.build.blocks import Blocks
from snippets.build.computed import ComputedExtension, Pages, PageState, collect
from snippets.build.guard import Guard, unwrap_block_outputs
from snippets.data import Catalog

from ..conftest import ROOT


@dataclass
class Converted:
    html: str
    state: PageState
    guard: Guard

    @property
    def errors(self) -> list[str]:
        return self.state.errors

    def scanned(self) -> list[str]:
        """The page's errors once its rendered text is scanned, as the plugin's on_page_content does."""
        root = drift.fragment(self.html)
        _, _, problems = collect(self.html)
        out = [*self.state.errors, *(f"docs/{self.state.src}: {p}" for p in problems)]
        if root is not None:
            out += self.guard.block_output_errors(self.state, root) + self.guard.page_text_errors(self.state, root)
        return out

    @property
    def published(self) -> str:
        return unwrap_block_outputs(self.html)


def convert(source: str, catalog: Catalog, *, model: str | None = "interconnect", timeout: float = 60,
            src: str = "page.md") -> Converted:
    """`source` (a page body, no front matter) converted with page model `model`."""
    pages = Pages(catalog=catalog)
    blocks = Blocks(pages, catalog, timeout=timeout)
    state = pages.begin(src, source, model)
    fence = {"name": "python", "class": "python", "validator": markdown_exec.validator, "format": blocks.fence}
    extensions = ["tables", "pymdownx.superfences", ComputedExtension(pages)]
    configs = {"pymdownx.superfences": {"custom_fences": [fence]}}
    md = markdown.Markdown(extensions=extensions, extension_configs=configs)
    guard = Guard(drift.Scanner(drift.data_text(catalog)), [ROOT / "docs" / "includes"], ROOT / "snippets" / "pages")
    # markdown-exec converts what a block prints with the extensions its MkDocs plugin saved from the config
    markdown_exec.markdown_config.save(extensions, configs)  # type: ignore[arg-type]
    try:
        return Converted(md.convert(source), state, guard)
    finally:
        markdown_exec.markdown_config.reset()

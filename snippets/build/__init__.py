"""The build: one MkDocs plugin, `serving` (`snippets.build.plugin`), and what it runs.

- `plugin`           the plugin: every build event, state on the plugin object
- `computed`         `{{ value }}` and `{{ claim ... }}` in Markdown: the extension and the page's state
- `guard`            what the reader reads (hand-typed quantities in rendered text and block output),
                     exec blocks' limits, the notebook's cell limit and links
- `drift`            the prose scanner and the allowlist of names (`snippets/allowed_names.txt`)
- `notebooks`        the notebook worker's client, kept between `mkdocs serve` rebuilds
- `notebook_worker`  the worker: `python -m snippets.build.notebook_worker`
"""

"""The build: one MkDocs plugin, `serving` (`snippets.build.plugin`), and what it runs.

- `plugin`     the plugin: its options, every build event, top to bottom
- `context`    one `BuildContext` a build: everything the build knows, made in `on_config`, dropped at its end
- `computed`   `{{ value }}` and `{{ claim ... }}` in Markdown: the extension and the page's state
- `syntax`     the page syntax the extension and the prose scanner read, written once
- `blocks`     the `python exec="on"` blocks: the build's catalog in their namespace, limits, the state check
- `guard`      what the reader reads: hand-typed quantities in rendered text, block and cell output; notebook links
- `drift`      the prose scanner and the allowlist of names (`snippets/allowed_names.txt`)
- `abbr`       a term's tooltip on its first mention in each section
- `notebooks`  the notebook pages, executed with nbclient beside the build and handed to mkdocs-jupyter
"""

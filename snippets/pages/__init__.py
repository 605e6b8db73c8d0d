"""One module per page: `namespace(catalog)` gives the names its `{{ ... }}` values use,
and its table functions give the Markdown its blocks print."""

"""Serving Arithmetic: the shared, typed arithmetic behind every number on the site.

Pages, notebooks and tests call these functions; none of them re-implements the math.

- `snippets.units`     unit tables (GB = 10^9 B, GiB = 2^30 B) and bandwidths that carry a direction basis
- `snippets.data`      the loader and validator of `data/`
- `snippets.capacity`  weight bytes, usable memory, GPU counts
- `snippets.bandwidth` link bandwidths derived from their parts, transfer times
- `snippets.fmt`       figures (value + unit + display text) and their HTML
- `snippets.pages`     one module per page: the named figures, claims and tables that page shows
"""

__all__ = ["bandwidth", "capacity", "data", "fmt", "units"]

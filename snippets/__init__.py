"""Serving Arithmetic: the shared, typed arithmetic behind every number on the site.

Pages, the grid, the notebook and the tests call these modules; none of them re-derives a result.

- `snippets.engine`      the serving engine (standard library only): layouts, memory, deployment, time
- `snippets.data`        the loader and validator of `data/` (pydantic)
- `snippets.export`      the validated catalog as the engine's records (`engine_catalog`)
- `snippets.calibration` the time model against the measurements: the fit and each row's error
- `snippets.units`       unit tables (GB = 10^9 B, GiB = 2^30 B), bandwidths with a direction, FLOP/s with a kind
- `snippets.bandwidth`   link bandwidths derived from their parts, transfer times
- `snippets.fmt`         figures (value + unit + display text), tables and their HTML
- `snippets.charts`      SVG charts drawn at build time
- `snippets.pages`       one page model per page: selection and presentation
"""

__all__ = ["bandwidth", "calibration", "data", "engine", "export", "fmt", "units"]

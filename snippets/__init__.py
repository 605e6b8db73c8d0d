"""Serving Arithmetic: the shared, typed arithmetic behind every number on the site.

The code flows one way, data -> engine -> pages -> build; nothing re-derives what a package before it computes.

- `snippets.data`         `data/` loaded and validated (pydantic): units and quantities, the schema, the YAML
                          loader, cross-checks; bandwidths derived from their parts; the catalog as the engine's
                          records (`data.export`)
- `snippets.engine`       the serving engine, standard library only (it also runs in the browser): layouts,
                          memory, deployments, time, cost
- `snippets.calibration`  the time model against the measurements: the fit and each row's error
- `snippets.teaching`     arithmetic the pages teach that sizes nothing: float formats, what parallelism sends,
                          the source page's rounded sizing
- `snippets.render`       figures (value + unit + text), tables, SVG charts and diagrams, "used by" links
- `snippets.pages`        one page model per page on the `Page` base: selection and presentation, sources recorded
- `snippets.build`        the MkDocs plugin `serving`: computed values, claims, guards, the notebook worker

This module imports nothing: the calculator page ships it, with `snippets/engine/`, to the reader's browser.
"""

__all__ = ["build", "calibration", "data", "engine", "pages", "render", "teaching"]

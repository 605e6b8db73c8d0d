"""Build plumbing that must be installed rather than loaded from `hooks/`.

MkDocs imports plugins, in the order `mkdocs.yml` lists them, before it loads any hook. The
notebook worker is started from a plugin listed first (`serving-notebooks`), so its imports run
beside the rest of the configuration's loading; `hooks/serving.py` gives it its job.

- `serving_build.notebooks`        the worker's client (start, submit, join, close) and the plugin
- `serving_build.notebook_worker`  the worker itself: `python -m serving_build.notebook_worker`
"""
